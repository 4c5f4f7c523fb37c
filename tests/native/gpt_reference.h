// An independent double-precision GPT forward for the tests, written from nanoGPT's model.py and reading only the
// state dict (names and shapes as PyTorch has them: nn.Linear weights [out, in]). It shares no code with the
// engine's model: the engine's gradients are checked against finite differences of this, and its logits too.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ref {

struct GPTShape {
  std::size_t vocab, context, d, heads, kv_heads, layers;
  bool mlp, bias, tied;
  bool rope = false;  // rotary positions (pairs (i, i + headDim/2), base 10000) instead of wpe
};

using StateDict = std::map<std::string, std::vector<double>>;

// Logits [batch·seq × vocab] of nanoGPT's forward over the state dict. Each tensor is looked up by name once per
// use, outside the loops over its elements: the finite-difference checks run this forward twice per parameter.
inline std::vector<double> gpt_logits(const GPTShape& s, const StateDict& w, const std::vector<std::int32_t>& tokens,
                                      std::size_t seq) {
  const std::size_t n = tokens.size(), batch = n / seq, d = s.d, dh = d / s.heads, kvw = s.kv_heads * dh;
  auto W = [&](const std::string& name) -> const std::vector<double>& { return w.at(name); };
  // The tensor, or null where the state dict has none (no biases, rotary positions).
  auto find = [&](const std::string& name) -> const double* {
    const auto it = w.find(name);
    return it == w.end() ? nullptr : it->second.data();
  };
  // y[r, o] = Σᵢ x[r, i]·W[o, i] + b[o]
  auto linear = [&](const std::vector<double>& x, std::size_t in, const std::string& name, std::size_t out) {
    std::vector<double> y(n * out);
    const auto& m = W(name + ".weight");
    const double* bias = find(name + ".bias");
    for (std::size_t r = 0; r < n; ++r)
      for (std::size_t o = 0; o < out; ++o) {
        double acc = bias ? bias[o] : 0.0;
        for (std::size_t i = 0; i < in; ++i) acc += x[r * in + i] * m[o * in + i];
        y[r * out + o] = acc;
      }
    return y;
  };
  auto layernorm = [&](const std::vector<double>& x, const std::string& name) {
    std::vector<double> y(n * d);
    const auto& weight = W(name + ".weight");
    const double* bias = find(name + ".bias");
    for (std::size_t r = 0; r < n; ++r) {
      double mean = 0, var = 0;
      for (std::size_t i = 0; i < d; ++i) mean += x[r * d + i];
      mean /= double(d);
      for (std::size_t i = 0; i < d; ++i) var += (x[r * d + i] - mean) * (x[r * d + i] - mean);
      var /= double(d);
      for (std::size_t i = 0; i < d; ++i)
        y[r * d + i] = (x[r * d + i] - mean) / std::sqrt(var + 1e-5) * weight[i] + (bias ? bias[i] : 0.0);
    }
    return y;
  };
  std::vector<double> x(n * d);
  const auto& wte = W("transformer.wte.weight");
  const double* wpe = find("transformer.wpe.weight");
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t i = 0; i < d; ++i)
      x[r * d + i] = wte[std::size_t(tokens[r]) * d + i] + (wpe ? wpe[(r % seq) * d + i] : 0.0);
  for (std::size_t l = 0; l < s.layers; ++l) {
    const std::string p = "transformer.h." + std::to_string(l) + ".";
    auto qkv = linear(layernorm(x, p + "ln_1"), d, p + "attn.c_attn", d + 2 * kvw);
    if (s.rope) {  // rotate every query and key head by its token's position
      const std::size_t half = dh / 2;
      for (std::size_t r = 0; r < n; ++r)
        for (std::size_t h = 0; h < s.heads + s.kv_heads; ++h) {
          double* v = &qkv[r * (d + 2 * kvw) + h * dh];
          for (std::size_t i = 0; i < half; ++i) {
            const double theta = double(r % seq) * std::pow(10000.0, -2.0 * double(i) / double(dh));
            const double a = v[i], b = v[i + half];
            v[i] = a * std::cos(theta) - b * std::sin(theta);
            v[i + half] = b * std::cos(theta) + a * std::sin(theta);
          }
        }
    }
    std::vector<double> y(n * d), scores(seq);
    const std::size_t ld = d + 2 * kvw;
    for (std::size_t b = 0; b < batch; ++b)
      for (std::size_t h = 0; h < s.heads; ++h) {
        const std::size_t g = h / (s.heads / s.kv_heads);
        for (std::size_t i = 0; i < seq; ++i) {
          double* att = scores.data();  // att[0…i]
          double mx = -INFINITY, z = 0;
          for (std::size_t j = 0; j <= i; ++j) {  // causal: key j ≤ query i
            double dot = 0;
            for (std::size_t c = 0; c < dh; ++c)
              dot += qkv[(b * seq + i) * ld + h * dh + c] * qkv[(b * seq + j) * ld + d + g * dh + c];
            att[j] = dot / std::sqrt(double(dh));
            mx = std::fmax(mx, att[j]);
          }
          for (std::size_t j = 0; j <= i; ++j) z += (att[j] = std::exp(att[j] - mx));
          for (std::size_t c = 0; c < dh; ++c) {
            double o = 0;
            for (std::size_t j = 0; j <= i; ++j) o += att[j] / z * qkv[(b * seq + j) * ld + d + kvw + g * dh + c];
            y[(b * seq + i) * d + h * dh + c] = o;
          }
        }
      }
    const auto proj = linear(y, d, p + "attn.c_proj", d);
    for (std::size_t i = 0; i < n * d; ++i) x[i] += proj[i];
    if (s.mlp) {
      auto hidden = linear(layernorm(x, p + "ln_2"), d, p + "mlp.c_fc", 4 * d);
      for (double& v : hidden) v = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));  // nn.GELU()
      const auto out = linear(hidden, 4 * d, p + "mlp.c_proj", d);
      for (std::size_t i = 0; i < n * d; ++i) x[i] += out[i];
    }
  }
  const auto h = layernorm(x, "transformer.ln_f");
  const auto& head = s.tied ? W("transformer.wte.weight") : W("lm_head.weight");
  std::vector<double> logits(n * s.vocab);
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t v = 0; v < s.vocab; ++v) {
      double acc = 0;
      for (std::size_t i = 0; i < d; ++i) acc += h[r * d + i] * head[v * d + i];
      logits[r * s.vocab + v] = acc;
    }
  return logits;
}

// Mean cross-entropy over targets ≥ 0.
inline double gpt_loss(const std::vector<double>& logits, const std::vector<std::int32_t>& targets, std::size_t vocab) {
  double total = 0;
  std::size_t count = 0;
  for (std::size_t r = 0; r < targets.size(); ++r) {
    if (targets[r] < 0) continue;
    double mx = -INFINITY, z = 0;
    for (std::size_t v = 0; v < vocab; ++v) mx = std::fmax(mx, logits[r * vocab + v]);
    for (std::size_t v = 0; v < vocab; ++v) z += std::exp(logits[r * vocab + v] - mx);
    total += mx + std::log(z) - logits[r * vocab + std::size_t(targets[r])];
    ++count;
  }
  return total / double(count);
}

}  // namespace ref
