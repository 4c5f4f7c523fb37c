#include "safetensors.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "../format.h"
#include "../kernels/half.h"
#include "../validate.h"
#include "json.h"
#include "safetensors_header.h"

namespace attnlab::model {

namespace {

constexpr std::uint64_t kMaxHeader = kMaxSafetensorsHeader;

std::string shape_json(const TensorInfo& t) {
  return t.cols ? detail::format("[%zu,%zu]", t.rows, t.cols) : detail::format("[%zu]", t.rows);
}

// The header, unpadded.
std::string header(const GPT& g) {
  const GPTConfig& c = g.config();
  auto flag = [](bool b) { return b ? "true" : "false"; };
  std::string h = detail::format(
      "{\"__metadata__\":{\"format\":\"pt\",\"generator\":\"attnlab %s\",\"vocab_size\":\"%zu\",\"block_size\":\"%zu\","
      "\"n_layer\":\"%zu\",\"n_head\":\"%zu\",\"n_kv_head\":\"%zu\",\"n_embd\":\"%zu\",\"bias\":\"%s\",\"mlp\":\"%s\","
      "\"position\":\"%s\",\"tied\":\"%s\",\"seed\":\"%u\"}",
      ATTNLAB_VERSION, c.vocab_size, c.context, c.layers, c.heads, c.kv(), c.d_model, flag(c.bias), flag(c.mlp),
      position_name(c.position), flag(c.tied), unsigned(c.seed));
  std::size_t at = 0;
  for (const TensorInfo& t : g.layout().tensors) {
    if (t.alias) continue;
    const std::size_t bytes = t.size() * 4;
    h += detail::format(",%s:{\"dtype\":\"F32\",\"shape\":%s,\"data_offsets\":[%zu,%zu]}", json::quote(t.name).c_str(),
                        shape_json(t).c_str(), at, at + bytes);
    at += bytes;
  }
  return h + "}";
}

std::size_t padded(std::size_t n) { return (n + 7) / 8 * 8; }

// A refusal: "not a usable safetensors file: " and a printf-formatted reason (one call per message keeps wasm small).
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
Status bad(const char* fmt, ...) {
  char reason[512];
  std::va_list args;
  va_start(args, fmt);
  std::vsnprintf(reason, sizeof reason, fmt, args);
  va_end(args);
  return detail::range_errorf("bytes", "not a usable safetensors file: %s", reason);
}
std::string q(const std::string& key) { return quoted_key(key); }

struct Entry {
  std::string dtype;
  std::vector<std::uint64_t> shape;
  std::uint64_t begin, end;
};

bool parse_bool(const std::string& s, bool& out) {
  if (s == "true" || s == "True" || s == "1") return out = true, true;
  if (s == "false" || s == "False" || s == "0") return out = false, true;
  return false;
}

}  // namespace

std::size_t safetensors_size(const GPT& g) {
  std::size_t data = 0;
  for (const TensorInfo& t : g.layout().tensors)
    if (!t.alias) data += t.size() * 4;
  return 8 + padded(header(g).size()) + data;
}

void write_safetensors(const GPT& g, std::span<std::uint8_t> out) {
  std::string h = header(g);
  h.resize(padded(h.size()), ' ');
  const std::uint64_t n = h.size();
  for (int i = 0; i < 8; ++i) out[std::size_t(i)] = std::uint8_t(n >> (8 * i));
  std::memcpy(out.data() + 8, h.data(), h.size());
  std::uint8_t* at = out.data() + 8 + h.size();
  for (const TensorInfo& t : g.layout().tensors) {
    if (t.alias) continue;
    g.read_tensor(t, reinterpret_cast<float*>(at));  // wasm and the native targets are little-endian
    at += t.size() * 4;
  }
}

Status load_safetensors(std::span<const std::uint8_t> bytes, std::unique_ptr<GPT>& out) {
  static_assert(sizeof(float) == 4);
  if (bytes.size() < 8) return bad("it has %zu bytes, fewer than the 8 of the header length", bytes.size());
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | bytes[std::size_t(i)];
  if (n > kMaxHeader || n > bytes.size() - 8)
    return n > kMaxHeader ? bad("the header length %llu exceeds 16 MiB", (unsigned long long)n)
                          : bad("the header length %llu exceeds the %zu bytes that follow it", (unsigned long long)n, bytes.size() - 8);
  const std::string_view text(reinterpret_cast<const char*>(bytes.data() + 8), std::size_t(n));
  Header header;
  std::string reason;
  if (!parse_header(text, header, reason)) return bad("%s", reason.c_str());
  const std::uint64_t data_size = bytes.size() - 8 - n;
  const std::uint8_t* data = bytes.data() + 8 + n;
  // Offsets: inside the data, each entry exactly its dtype × shape bytes, no overlaps and no holes (the format's rules).
  auto width = [](const std::string& dtype) -> std::size_t {
    return dtype == "F32" ? 4 : dtype == "F64" ? 8 : (dtype == "F16" || dtype == "BF16") ? 2 : 0;
  };
  if (!check_offsets(header, data_size, width, "F32, F16, BF16 and F64 are", reason)) return bad("%s", reason.c_str());

  // (name, value) lists searched linearly: a header has a few dozen entries per layer, and std::map's code would
  // cost the wasm module more than the search costs a load.
  const auto& meta = header.meta;
  std::vector<std::pair<std::string, Entry>> entries;
  for (HeaderEntry& e : header.entries) entries.emplace_back(e.name, Entry{e.dtype, e.shape, e.begin, e.end});
  auto meta_find = [&](const char* key) {
    return std::find_if(meta.begin(), meta.end(), [&](const auto& kv) { return kv.first == key; });
  };
  auto entry_find = [&](const std::string& key) {
    return std::find_if(entries.begin(), entries.end(), [&](const auto& kv) { return kv.first == key; });
  };

  // The config: metadata first, the shapes for what it leaves out.
  const auto wte = entry_find("transformer.wte.weight");
  if (wte == entries.end() || wte->second.shape.size() != 2) return bad("it holds no 2-D transformer.wte.weight");
  GPTConfig c;
  c.vocab_size = std::size_t(wte->second.shape[0]);
  c.d_model = std::size_t(wte->second.shape[1]);
  const auto wpe = entry_find("transformer.wpe.weight");
  c.position = wpe == entries.end() ? Position::rope : Position::learned;
  if (wpe != entries.end() && wpe->second.shape.size() == 2) c.context = std::size_t(wpe->second.shape[0]);
  std::size_t layers = 0;
  while (entry_find(detail::format("transformer.h.%zu.ln_1.weight", layers)) != entries.end()) ++layers;
  c.layers = layers;
  c.bias = entry_find("transformer.ln_f.bias") != entries.end();
  c.mlp = entry_find("transformer.h.0.mlp.c_fc.weight") != entries.end();
  c.tied = entry_find("lm_head.weight") == entries.end();
  auto number = [&](const char* key, std::size_t& field, bool required) -> Status {
    const auto it = meta_find(key);
    if (it == meta.end()) {
      if (required) return bad("its __metadata__ must give %s (the weights cannot tell it)", key);
      return Status::success();
    }
    const std::string& s = it->second;
    if (s.empty() || s.size() > 9 || !std::all_of(s.begin(), s.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
      return bad("__metadata__.%s = %s is not a size", key, q(s).c_str());
    field = std::size_t(std::stoul(s));
    return Status::success();
  };
  if (auto s = number("n_head", c.heads, true); !s.ok()) return s;
  if (auto s = number("block_size", c.context, c.position == Position::rope); !s.ok()) return s;
  if (auto s = number("vocab_size", c.vocab_size, false); !s.ok()) return s;
  if (auto s = number("n_embd", c.d_model, false); !s.ok()) return s;
  if (auto s = number("n_layer", c.layers, false); !s.ok()) return s;
  c.kv_heads = 0;
  if (auto s = number("n_kv_head", c.kv_heads, false); !s.ok()) return s;
  if (!c.kv_heads && c.heads && c.d_model % c.heads == 0) {  // from c_attn's rows: (heads + 2·kvHeads)·headDim
    const auto qkv = entry_find("transformer.h.0.attn.c_attn.weight");
    const std::size_t dh = c.d_model / c.heads;
    if (qkv != entries.end() && !qkv->second.shape.empty() && dh && qkv->second.shape[0] % dh == 0 &&
        qkv->second.shape[0] / dh > c.heads)
      c.kv_heads = std::size_t(qkv->second.shape[0] / dh - c.heads) / 2;
  }
  for (auto [key, field] : {std::pair{"bias", &c.bias}, {"mlp", &c.mlp}, {"tied", &c.tied}}) {
    const auto it = meta_find(key);
    if (it != meta.end() && !parse_bool(it->second, *field))
      return bad("__metadata__.%s = %s is not true or false", key, q(it->second).c_str());
  }
  if (const auto it = meta_find("position"); it != meta.end()) {
    if (it->second == "learned") c.position = Position::learned;
    else if (it->second == "rope") c.position = Position::rope;
    else return bad("__metadata__.position = %s is not 'learned' or 'rope'", q(it->second).c_str());
  }
  if (const auto it = meta_find("seed"); it != meta.end()) {
    std::size_t seed = 0;
    if (auto s = number("seed", seed, false); !s.ok()) return s;
    c.seed = std::uint32_t(seed);
  }

  std::unique_ptr<GPT> g;
  if (auto s = GPT::create(c, g); !s.ok())
    return detail::range_errorf("bytes", "the file's config is not a valid model: %s", s.message.c_str());

  // Every tensor the model has must be there with its shape; buffers nanoGPT registers are skipped.
  std::vector<std::vector<float>> storage;
  std::vector<NamedTensor> given;
  storage.reserve(entries.size());
  for (const TensorInfo& t : g->layout().tensors) {
    const auto it = entry_find(t.name);
    if (it == entries.end()) {
      if (t.alias) continue;  // tied: lm_head.weight is transformer.wte.weight
      return bad("it lacks %s, which a model of its config has", t.name.c_str());
    }
    const Entry& e = it->second;
    const std::vector<std::uint64_t> want = t.cols ? std::vector<std::uint64_t>{t.rows, t.cols} : std::vector<std::uint64_t>{t.rows};
    if (e.shape != want) {
      std::string got = "[";
      for (std::size_t i = 0; i < e.shape.size(); ++i) got += detail::format(i ? ",%llu" : "%llu", (unsigned long long)e.shape[i]);
      return bad("%s has shape %s], the config needs %s", t.name.c_str(), got.c_str(), shape_json(t).c_str());
    }
    std::vector<float> v(t.size());
    const std::uint8_t* src = data + e.begin;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (e.dtype == "F32") {
        std::memcpy(&v[i], src + 4 * i, 4);
      } else if (e.dtype == "F64") {
        double x;
        std::memcpy(&x, src + 8 * i, 8);
        v[i] = static_cast<float>(x);
      } else {
        std::uint16_t h;
        std::memcpy(&h, src + 2 * i, 2);
        if (e.dtype == "BF16") {
          const std::uint32_t bits = std::uint32_t(h) << 16;
          std::memcpy(&v[i], &bits, 4);
        } else {
          v[i] = kernels::f16_to_float(h);
        }
      }
    }
    storage.push_back(std::move(v));
    given.push_back({t.name, storage.back()});
  }
  for (const auto& entry : entries) {
    const std::string& key = entry.first;
    const bool known = std::any_of(g->layout().tensors.begin(), g->layout().tensors.end(), [&](const TensorInfo& t) { return t.name == key; });
    const bool buffer = key.size() > 10 && (key.ends_with(".attn.bias") || key.ends_with(".attn.masked_bias"));
    if (!known && !buffer) return bad("it holds a tensor this model does not have: %s", q(key).c_str());
  }
  if (auto s = g->set_weights(given); !s.ok())
    return detail::range_errorf("bytes", "the file's weights are not usable: %s", s.message.c_str());
  out = std::move(g);
  return Status::success();
}

}  // namespace attnlab::model
