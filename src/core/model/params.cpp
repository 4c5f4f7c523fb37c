#include "params.h"

#include "../size_math.h"

namespace attnlab::model {

namespace {
std::size_t sat_add(std::size_t a, std::size_t b) noexcept { return a > SIZE_MAX - b ? SIZE_MAX : a + b; }
}  // namespace

std::size_t parameter_count(const GPTConfig& c) noexcept {
  const std::size_t d = c.d_model, q = c.qkv_width(), bias = c.bias ? 1 : 0;
  std::size_t per_layer = sat_add(sat_mul(d, 1 + bias), sat_mul(q, sat_add(d, bias)));  // ln_1, c_attn
  per_layer = sat_add(per_layer, sat_mul(d, sat_add(d, bias)));                          // attn.c_proj
  if (c.mlp) {
    per_layer = sat_add(per_layer, sat_mul(d, 1 + bias));                                // ln_2
    per_layer = sat_add(per_layer, sat_mul(sat_mul(4, d), sat_add(d, bias)));            // mlp.c_fc
    per_layer = sat_add(per_layer, sat_mul(d, sat_add(sat_mul(4, d), bias)));            // mlp.c_proj
  }
  std::size_t total = sat_mul(c.vocab_size, d);                                          // wte
  if (c.position == Position::learned) total = sat_add(total, sat_mul(c.context, d));    // wpe
  total = sat_add(total, sat_mul(per_layer, c.layers));
  total = sat_add(total, sat_mul(d, 1 + bias));                                          // ln_f
  if (!c.tied) total = sat_add(total, sat_mul(c.vocab_size, d));                         // lm_head
  return total;
}

ParamLayout make_layout(const GPTConfig& c) {
  ParamLayout l{};
  std::size_t at = 0;
  auto add = [&](std::string name, std::size_t rows, std::size_t cols, bool transposed, bool decay) {
    l.tensors.push_back({std::move(name), rows, cols, at, transposed, decay, false});
    const std::size_t offset = at;
    at += cols ? rows * cols : rows;
    return offset;
  };
  const std::size_t d = c.d_model, q = c.qkv_width();
  l.wte = add("transformer.wte.weight", c.vocab_size, d, false, true);
  l.wpe = c.position == Position::learned ? add("transformer.wpe.weight", c.context, d, false, true) : kAbsent;
  for (std::size_t i = 0; i < c.layers; ++i) {
    const std::string p = "transformer.h." + std::to_string(i) + ".";
    LayerParams lp{kAbsent, kAbsent, kAbsent, kAbsent, kAbsent, kAbsent, kAbsent, kAbsent, kAbsent, kAbsent, kAbsent, kAbsent};
    lp.ln1_w = add(p + "ln_1.weight", d, 0, false, false);
    if (c.bias) lp.ln1_b = add(p + "ln_1.bias", d, 0, false, false);
    lp.qkv_w = add(p + "attn.c_attn.weight", q, d, true, true);
    if (c.bias) lp.qkv_b = add(p + "attn.c_attn.bias", q, 0, false, false);
    lp.proj_w = add(p + "attn.c_proj.weight", d, d, true, true);
    if (c.bias) lp.proj_b = add(p + "attn.c_proj.bias", d, 0, false, false);
    if (c.mlp) {
      lp.ln2_w = add(p + "ln_2.weight", d, 0, false, false);
      if (c.bias) lp.ln2_b = add(p + "ln_2.bias", d, 0, false, false);
      lp.fc_w = add(p + "mlp.c_fc.weight", 4 * d, d, true, true);
      if (c.bias) lp.fc_b = add(p + "mlp.c_fc.bias", 4 * d, 0, false, false);
      lp.fc_proj_w = add(p + "mlp.c_proj.weight", d, 4 * d, true, true);
      if (c.bias) lp.fc_proj_b = add(p + "mlp.c_proj.bias", d, 0, false, false);
    }
    l.layers.push_back(lp);
  }
  l.lnf_w = add("transformer.ln_f.weight", d, 0, false, false);
  l.lnf_b = c.bias ? add("transformer.ln_f.bias", d, 0, false, false) : kAbsent;
  if (c.tied) {
    l.lm_head = l.wte;
    l.tensors.push_back({"lm_head.weight", c.vocab_size, d, l.wte, false, true, true});
  } else {
    l.lm_head = add("lm_head.weight", c.vocab_size, d, false, true);
  }
  l.total = at;
  return l;
}

}  // namespace attnlab::model
