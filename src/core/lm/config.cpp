#include "config.h"

#include <cmath>
#include <cstring>

#include "../format.h"
#include "../model/json.h"

namespace attnlab::lm {

namespace {

namespace json = model::json;

using json::Value;
using Type = Value::Type;

constexpr const char* kConfig = "config.json";
constexpr const char* kGeneration = "generation_config.json";
constexpr std::size_t kMaxSize = 0x7fffffff;

const char* type_name(Type t) {
  switch (t) {
    case Type::null: return "null";
    case Type::boolean: return "a boolean";
    case Type::number: return "a number";
    case Type::string: return "a string";
    case Type::array: return "an array";
    default: return "an object";
  }
}

// A value as the messages show it: numbers and strings as written, containers by their type.
std::string shown(const Value& v) {
  switch (v.type) {
    case Type::null: return "null";
    case Type::boolean: return v.boolean ? "true" : "false";
    case Type::number: return detail::format("%.17g", v.number);
    case Type::string: return json::quote(v.string.size() > 60 ? v.string.substr(0, 60) + "…" : v.string);
    default: return type_name(v.type);
  }
}

// One file's fields, each read with its rule; every message starts with the file's name.
class Fields {
 public:
  Fields(const Value& root, const char* file, const char* owner) : root_(root), file_(file), owner_(owner) {}

  const Value* get(const char* key) const {
    const Value* v = root_.find(key);
    return v && v->type != Type::null ? v : nullptr;
  }
  Status missing(const char* key) const {
    return detail::range_errorf(file_, "%s: %s is missing (a %s needs it)", file_, key, owner_);
  }
  Status wrong(const char* key, const Value& v, const char* want) const {
    return detail::range_errorf(file_, "%s: %s = %s must be %s", file_, key, shown(v).c_str(), want);
  }
  // An integer in [min, 2³¹ − 1]; `fallback` when absent or null (required: no fallback).
  Status size(const char* key, std::size_t& out, bool required, std::size_t fallback = 0, std::size_t min = 1) const {
    const Value* v = get(key);
    if (!v) {
      if (required) return missing(key);
      out = fallback;
      return Status::success();
    }
    if (v->type != Type::number || !v->is_index || v->index < min || v->index > kMaxSize)
      return wrong(key, *v, min ? "an integer from 1 to 2147483647" : "an integer from 0 to 2147483647");
    out = std::size_t(v->index);
    return Status::success();
  }
  Status positive(const char* key, double& out, double fallback, bool allow_zero = false) const {
    const Value* v = get(key);
    if (!v) return out = fallback, Status::success();
    if (v->type != Type::number || !std::isfinite(v->number) || v->number < 0 || (!allow_zero && v->number == 0))
      return wrong(key, *v, allow_zero ? "a finite number >= 0" : "a finite number > 0");
    out = v->number;
    return Status::success();
  }
  Status flag(const char* key, bool& out, bool fallback) const {
    const Value* v = get(key);
    if (!v) return out = fallback, Status::success();
    if (v->type != Type::boolean) return wrong(key, *v, "true or false");
    out = v->boolean;
    return Status::success();
  }
  Status string(const char* key, std::string& out, const char* fallback) const {
    const Value* v = get(key);
    if (!v) return out = fallback, Status::success();
    if (v->type != Type::string) return wrong(key, *v, "a string");
    out = v->string;
    return Status::success();
  }

 private:
  const Value& root_;
  const char* file_;
  const char* owner_;
};

struct Architecture {
  const char* name;
  const char* model_type;
  Family family;
};
constexpr Architecture kArchitectures[] = {
    {"GPT2LMHeadModel", "gpt2", Family::gpt2},
    {"LlamaForCausalLM", "llama", Family::llama},
    {"Qwen2ForCausalLM", "qwen2", Family::llama},
    {"MistralForCausalLM", "mistral", Family::llama},
};
constexpr const char* kSupported = "GPT2LMHeadModel, LlamaForCausalLM, Qwen2ForCausalLM or MistralForCausalLM";

Status parse_document(std::string_view text, const char* file, Value& root) {
  std::string error;
  if (!json::parse(text, root, error))
    return detail::range_errorf(file, "%s is not valid JSON (%s)", file, error.c_str());
  if (root.type != Type::object) return detail::range_errorf(file, "%s must hold a JSON object, got %s", file, type_name(root.type));
  return Status::success();
}

// Which architecture: architectures[0] and model_type, which must agree when both are there.
Status architecture(const Value& root, const Architecture*& out) {
  out = nullptr;
  const Value* list = root.find("architectures");
  const Value* type = root.find("model_type");
  if (list && list->type != Type::null) {
    if (list->type != Type::array || list->array.empty() || list->array[0].type != Type::string)
      return detail::range_errorf(kConfig, "config.json: architectures must be a list of class names such as [\"LlamaForCausalLM\"], got %s",
                                  list->type == Type::array ? "an empty list or one without a string first" : shown(*list).c_str());
    const std::string& name = list->array[0].string;
    for (const Architecture& a : kArchitectures)
      if (name == a.name) out = &a;
    if (!out)
      return detail::range_errorf(kConfig, "config.json: architectures[0] = %s is not supported; supported: %s",
                                  json::quote(name).c_str(), kSupported);
  }
  if (type && type->type != Type::null) {
    if (type->type != Type::string) return detail::range_errorf(kConfig, "config.json: model_type = %s must be a string", shown(*type).c_str());
    const Architecture* by_type = nullptr;
    for (const Architecture& a : kArchitectures)
      if (type->string == a.model_type) by_type = &a;
    if (!by_type)
      return detail::range_errorf(kConfig, "config.json: model_type = %s is not supported; supported: gpt2, llama, qwen2, mistral",
                                  json::quote(type->string).c_str());
    if (out && out != by_type)
      return detail::range_errorf(kConfig, "config.json: model_type = %s does not match architectures[0] = %s (expected model_type \"%s\")",
                                  json::quote(type->string).c_str(), json::quote(out->name).c_str(), out->model_type);
    out = by_type;
  }
  if (!out)
    return detail::range_errorf(kConfig, "config.json: architectures (or model_type) is missing: it must name one of %s", kSupported);
  return Status::success();
}

// A token id field: an integer, or a list of them (eos), each within the vocabulary. Absent or null: none.
Status token_ids(const Value& root, const char* file, const char* key, std::size_t vocab, bool list_allowed,
                 std::vector<std::int32_t>& out) {
  const Value* v = root.find(key);
  if (!v || v->type == Type::null) return Status::success();
  std::vector<const Value*> items;
  if (v->type == Type::array && list_allowed)
    for (const Value& x : v->array) items.push_back(&x);
  else
    items.push_back(v);
  out.clear();
  for (std::size_t i = 0; i < items.size(); ++i) {
    const Value& x = *items[i];
    if (x.type != Type::number || !x.is_index || x.index >= vocab) {
      const std::string at = v->type == Type::array ? detail::format("%s[%zu]", key, i) : std::string(key);
      return detail::range_errorf(file, "%s: %s = %s must be a token id from 0 to vocab_size - 1 = %zu%s", file, at.c_str(),
                                  shown(x).c_str(), vocab - 1, list_allowed ? " (or a list of them)" : "");
    }
    out.push_back(std::int32_t(x.index));
  }
  return Status::success();
}

Status parse_gpt2(const Fields& f, const Value& root, LmConfig& c) {
  if (auto s = f.size("vocab_size", c.vocab, true); !s.ok()) return s;
  // n_positions, or n_ctx in the oldest configs.
  const char* positions = !f.get("n_positions") && f.get("n_ctx") ? "n_ctx" : "n_positions";
  if (auto s = f.size(positions, c.context, true); !s.ok()) return s;
  if (auto s = f.size("n_embd", c.d_model, true); !s.ok()) return s;
  if (auto s = f.size("n_layer", c.layers, true); !s.ok()) return s;
  if (auto s = f.size("n_head", c.heads, true); !s.ok()) return s;
  if (c.d_model % c.heads)
    return detail::range_errorf(kConfig, "config.json: n_embd = %zu must be a multiple of n_head = %zu", c.d_model, c.heads);
  c.kv_heads = c.heads, c.head_dim = c.d_model / c.heads;
  if (auto s = f.size("n_inner", c.ffn, false, 4 * c.d_model); !s.ok()) return s;
  if (auto s = f.positive("layer_norm_epsilon", c.norm_eps, 1e-5, true); !s.ok()) return s;
  std::string act;
  if (auto s = f.string("activation_function", act, "gelu_new"); !s.ok()) return s;
  // transformers' ACT2FN names of the two GELUs: the exact one, x·Φ(x) (GELUActivation, with or without its Python
  // form), and the tanh form under every name that computes that same formula. Not quick_gelu (x·σ(1.702x)) nor
  // gelu_10 (clipped): other functions.
  if (act == "gelu" || act == "gelu_python") {
    c.activation = Activation::gelu_erf;
  } else if (act == "gelu_new" || act == "gelu_pytorch_tanh" || act == "gelu_fast" || act == "gelu_python_tanh" ||
             act == "gelu_accurate") {
    c.activation = Activation::gelu_tanh;
  } else {
    return detail::range_errorf(kConfig,
                                "config.json: activation_function = %s is not supported (gelu or gelu_python: the exact GELU; "
                                "gelu_new, gelu_pytorch_tanh, gelu_fast, gelu_python_tanh or gelu_accurate: its tanh form)",
                                json::quote(act).c_str());
  }
  if (auto s = f.flag("scale_attn_weights", c.scale_attn_weights, true); !s.ok()) return s;
  if (auto s = f.flag("scale_attn_by_inverse_layer_idx", c.scale_by_inverse_layer, false); !s.ok()) return s;
  bool cross = false;
  if (auto s = f.flag("add_cross_attention", cross, false); !s.ok()) return s;
  if (cross) return detail::range_errorf(kConfig, "config.json: add_cross_attention = true is not supported (a decoder-only model has no encoder to attend to)");
  if (auto s = f.flag("tie_word_embeddings", c.tied, true); !s.ok()) return s;
  static_cast<void>(root);
  return Status::success();
}

Status parse_llama(const Fields& f, const Value& root, LmConfig& c) {
  if (auto s = f.size("vocab_size", c.vocab, true); !s.ok()) return s;
  if (auto s = f.size("hidden_size", c.d_model, true); !s.ok()) return s;
  if (auto s = f.size("intermediate_size", c.ffn, true); !s.ok()) return s;
  if (auto s = f.size("num_hidden_layers", c.layers, true); !s.ok()) return s;
  if (auto s = f.size("num_attention_heads", c.heads, true); !s.ok()) return s;
  if (auto s = f.size("num_key_value_heads", c.kv_heads, false, c.heads); !s.ok()) return s;
  if (c.heads % c.kv_heads)
    return detail::range_errorf(kConfig, "config.json: num_key_value_heads = %zu must divide num_attention_heads = %zu", c.kv_heads, c.heads);
  if (!f.get("head_dim") && c.d_model % c.heads)
    return detail::range_errorf(kConfig, "config.json: hidden_size = %zu must be a multiple of num_attention_heads = %zu (or head_dim given)",
                                c.d_model, c.heads);
  if (auto s = f.size("head_dim", c.head_dim, false, c.d_model / c.heads); !s.ok()) return s;
  if (c.head_dim % 2)
    return detail::range_errorf(kConfig, "config.json: head_dim = %zu must be even (rotary embeddings rotate pairs)", c.head_dim);
  if (auto s = f.size("max_position_embeddings", c.context, true); !s.ok()) return s;
  if (auto s = f.positive("rms_norm_eps", c.norm_eps, 1e-6, true); !s.ok()) return s;
  std::string act;
  if (auto s = f.string("hidden_act", act, "silu"); !s.ok()) return s;
  // "swish" is transformers' other name for SiLU.
  if (act != "silu" && act != "swish")
    return detail::range_errorf(kConfig, "config.json: hidden_act = %s is not supported (the MLP is SwiGLU: \"silu\" or \"swish\")",
                                json::quote(act).c_str());
  c.activation = Activation::silu;
  if (auto s = f.flag("tie_word_embeddings", c.tied, false); !s.ok()) return s;

  // Rotary embeddings: rope_theta, or transformers' newer rope_parameters {rope_type, rope_theta}; no scaling.
  if (auto s = f.positive("rope_theta", c.rope_theta, 10000.0); !s.ok()) return s;
  if (const Value* scaling = f.get("rope_scaling")) {
    const char* key = "rope_type";  // (transformers' name; older configs say "type")
    const Value* kind = scaling->type == Type::object ? scaling->find(key) : nullptr;
    if (!kind && scaling->type == Type::object) kind = scaling->find(key = "type");
    if (!(kind && kind->type == Type::string && kind->string == "default"))
      return detail::range_errorf(kConfig, "config.json: rope_scaling = %s is not supported (rotary embeddings without scaling only: null)",
                                  kind ? detail::format("{ %s: %s, … }", key, shown(*kind).c_str()).c_str() : shown(*scaling).c_str());
  }
  if (const Value* params = f.get("rope_parameters")) {
    const Value* kind = params->type == Type::object ? params->find("rope_type") : nullptr;
    if (!kind || kind->type != Type::string || kind->string != "default")
      return detail::range_errorf(kConfig, "config.json: rope_parameters.rope_type = %s is not supported (\"default\" only: no scaling)",
                                  kind ? shown(*kind).c_str() : "missing");
    Fields p(*params, kConfig, "rope_parameters");
    if (const Value* theta = params->find("rope_theta"); theta && theta->type != Type::null)
      if (auto s = p.positive("rope_theta", c.rope_theta, c.rope_theta); !s.ok()) return s;
  }

  // Biases and the sliding window, by architecture.
  if (c.model_type == "llama") {
    bool attention_bias = false;
    if (auto s = f.flag("attention_bias", attention_bias, false); !s.ok()) return s;
    c.qkv_bias = c.o_bias = attention_bias;
    if (auto s = f.flag("mlp_bias", c.mlp_bias, false); !s.ok()) return s;
  } else if (c.model_type == "qwen2") {
    c.qkv_bias = true;  // Qwen2's q/k/v projections always have biases, its o_proj none
    bool use = false;
    if (auto s = f.flag("use_sliding_window", use, false); !s.ok()) return s;
    if (use) {
      if (auto s = f.size("sliding_window", c.sliding_window, true); !s.ok()) return s;
      if (auto s = f.size("max_window_layers", c.window_from, false, 28, 0); !s.ok()) return s;
    }
  } else {  // mistral
    if (auto s = f.size("sliding_window", c.sliding_window, false, 0); !s.ok()) return s;
  }
  // transformers' newer configs list each layer's kind; it must agree with the rule above.
  if (const Value* kinds = f.get("layer_types")) {
    if (kinds->type != Type::array || kinds->array.size() != c.layers)
      return detail::range_errorf(kConfig, "config.json: layer_types must list num_hidden_layers = %zu layer kinds", c.layers);
    for (std::size_t l = 0; l < c.layers; ++l) {
      const Value& k = kinds->array[l];
      const bool windowed = c.sliding_window && l >= c.window_from;
      const char* want = windowed ? "sliding_attention" : "full_attention";
      if (k.type != Type::string || k.string != want)
        return detail::range_errorf(kConfig, "config.json: layer_types[%zu] = %s disagrees with the sliding window settings (expected \"%s\")",
                                    l, shown(k).c_str(), want);
    }
  }
  static_cast<void>(root);
  return Status::success();
}

}  // namespace

float LmConfig::attention_scale(std::size_t layer) const noexcept {
  double s = family == Family::llama || scale_attn_weights ? 1.0 / std::sqrt(double(head_dim)) : 1.0;
  if (family == Family::gpt2 && scale_by_inverse_layer) s /= double(layer + 1);
  return float(s);
}

std::int64_t LmConfig::window_left(std::size_t layer) const noexcept {
  return sliding_window && layer >= window_from ? std::int64_t(sliding_window) - 1 : -1;
}

Status parse_config(std::string_view text, LmConfig& out) {
  Value root;
  if (auto s = parse_document(text, kConfig, root); !s.ok()) return s;
  const Architecture* a = nullptr;
  if (auto s = architecture(root, a); !s.ok()) return s;
  LmConfig c;
  c.architecture = a->name, c.model_type = a->model_type, c.family = a->family;
  const Fields f(root, kConfig, a->name);
  if (auto s = a->family == Family::gpt2 ? parse_gpt2(f, root, c) : parse_llama(f, root, c); !s.ok()) return s;
  // config.json's own token ids (GPT-2 keeps them there); generation_config.json, when given, replaces them.
  if (auto s = token_ids(root, kConfig, "eos_token_id", c.vocab, true, c.eos); !s.ok()) return s;
  std::vector<std::int32_t> bos;
  if (auto s = token_ids(root, kConfig, "bos_token_id", c.vocab, false, bos); !s.ok()) return s;
  c.bos = bos.empty() ? -1 : bos[0];
  out = std::move(c);
  return Status::success();
}

Status parse_generation_config(std::string_view text, LmConfig& c) {
  Value root;
  if (auto s = parse_document(text, kGeneration, root); !s.ok()) return s;
  const Fields f(root, kGeneration, "generation config");
  LmConfig n = c;
  if (root.find("eos_token_id")) {
    n.eos.clear();
    if (auto s = token_ids(root, kGeneration, "eos_token_id", c.vocab, true, n.eos); !s.ok()) return s;
  }
  if (root.find("bos_token_id")) {
    std::vector<std::int32_t> bos;
    if (auto s = token_ids(root, kGeneration, "bos_token_id", c.vocab, false, bos); !s.ok()) return s;
    n.bos = bos.empty() ? -1 : bos[0];
  }
  if (auto s = f.flag("do_sample", n.do_sample, false); !s.ok()) return s;
  if (auto s = f.positive("temperature", n.temperature, 1.0, true); !s.ok()) return s;
  if (auto s = f.size("top_k", n.top_k, false, 50, 0); !s.ok()) return s;
  if (auto s = f.positive("top_p", n.top_p, 1.0); !s.ok()) return s;
  if (n.top_p > 1) return f.wrong("top_p", *f.get("top_p"), "a number in (0, 1]");
  n.has_generation_config = true;
  c = std::move(n);
  return Status::success();
}

std::string config_json(const LmConfig& c) {
  std::string eos = "[";
  for (std::size_t i = 0; i < c.eos.size(); ++i) eos += detail::format(i ? ",%d" : "%d", int(c.eos[i]));
  eos += "]";
  const char* act = c.activation == Activation::gelu_tanh ? "gelu_tanh" : c.activation == Activation::gelu_erf ? "gelu" : "silu";
  // Sampling defaults as generate() applies them: greedy unless the generation config asks for sampling.
  const bool sample = c.do_sample && c.temperature > 0;
  // Each layer's score scale as the attention uses it: the float32 widened to a double, whose 17 significant digits
  // read back as that same double (JS gets the float32's exact value).
  std::string scales = "[";
  for (std::size_t l = 0; l < c.layers; ++l) scales += detail::format(l ? ",%.17g" : "%.17g", double(c.attention_scale(l)));
  scales += "]";
  return detail::format(
      "{\"architecture\":\"%s\",\"modelType\":\"%s\",\"vocabSize\":%zu,\"context\":%zu,\"dModel\":%zu,\"layers\":%zu,"
      "\"heads\":%zu,\"kvHeads\":%zu,\"headDim\":%zu,\"ffnDim\":%zu,\"normEps\":%.17g,\"activation\":\"%s\",\"tied\":%s,"
      "\"ropeTheta\":%s,\"slidingWindow\":%zu,\"attentionScales\":%s,\"eos\":%s,\"bos\":%s,"
      "\"defaults\":{\"temperature\":%.17g,\"topK\":%zu,\"topP\":%.17g}}",
      c.architecture.c_str(), c.model_type.c_str(), c.vocab, c.context, c.d_model, c.layers, c.heads, c.kv_heads, c.head_dim,
      c.ffn, c.norm_eps, act, c.tied ? "true" : "false",
      c.family == Family::llama ? detail::format("%.17g", c.rope_theta).c_str() : "null", c.sliding_window, scales.c_str(), eos.c_str(),
      c.bos < 0 ? "null" : detail::format("%d", int(c.bos)).c_str(), sample ? c.temperature : 0.0, sample ? c.top_k : 0,
      sample ? c.top_p : 1.0);
}

}  // namespace attnlab::lm
