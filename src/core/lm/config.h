// A decoder-only checkpoint's configuration, read from a Hugging Face model folder's config.json (and
// generation_config.json when there is one) and validated in this one place: every error names the file and the
// field, with the value found and what was expected.
//
// Two families of forward:
//   gpt2:  GPT2LMHeadModel — learned positions, LayerNorm with bias, Conv1D projections, GELU (tanh form or exact), tied head;
//   llama: LlamaForCausalLM, Qwen2ForCausalLM, MistralForCausalLM — RMSNorm, RoPE (half-split), SwiGLU, GQA,
//          optional q/k/v(/o) biases (Qwen2, Llama's attention_bias), an optional sliding window (Mistral, Qwen2).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "../status.h"

namespace attnlab::lm {

enum class Family : std::uint8_t { gpt2, llama };
// gelu_erf: the exact GELU x·Φ(x); gelu_tanh: its tanh form (GPT-2's gelu_new); silu: SwiGLU's gate.
enum class Activation : std::uint8_t { gelu_tanh, gelu_erf, silu };

struct LmConfig {
  std::string architecture;  // "GPT2LMHeadModel", "LlamaForCausalLM", "Qwen2ForCausalLM", "MistralForCausalLM"
  std::string model_type;    // "gpt2", "llama", "qwen2", "mistral"
  Family family = Family::gpt2;
  std::size_t vocab = 0;     // rows of the token embedding (and of the head)
  std::size_t context = 0;   // positions: n_positions / max_position_embeddings
  std::size_t d_model = 0;   // n_embd / hidden_size
  std::size_t layers = 0;
  std::size_t heads = 0, kv_heads = 0, head_dim = 0;
  std::size_t ffn = 0;       // the MLP's hidden width: n_inner (4·n_embd) / intermediate_size
  double norm_eps = 1e-5;    // layer_norm_epsilon / rms_norm_eps
  Activation activation = Activation::gelu_tanh;
  bool tied = true;          // lm_head shares the token embedding
  // Biases of the llama family's projections (GPT-2 has all of them).
  bool qkv_bias = false, o_bias = false, mlp_bias = false;
  double rope_theta = 10000.0;
  // Keys a query sees: j > i − sliding_window (0: all), in layers ≥ window_from (Qwen2's max_window_layers).
  std::size_t sliding_window = 0, window_from = 0;
  // GPT-2's score scale: 1/√head_dim when scale_attn_weights, times 1/(layer + 1) when by_inverse_layer_idx.
  bool scale_attn_weights = true, scale_by_inverse_layer = false;

  // Generation defaults (generation_config.json, else config.json's ids): sampling as Hugging Face's generate.
  std::vector<std::int32_t> eos;  // stop ids
  std::int32_t bos = -1;          // -1: none
  bool do_sample = false;
  double temperature = 1.0, top_p = 1.0;
  std::size_t top_k = 50;
  bool has_generation_config = false;

  std::size_t q_width() const noexcept { return heads * head_dim; }
  std::size_t kv_width() const noexcept { return kv_heads * head_dim; }
  // Attention scale of a layer.
  float attention_scale(std::size_t layer) const noexcept;
  // The window's left extent for a layer as the attention operator takes it (keys i − left … i), or −1.
  std::int64_t window_left(std::size_t layer) const noexcept;
};

// config.json's text into `out`. Errors are range errors whose arg is "config.json".
Status parse_config(std::string_view text, LmConfig& out);
// generation_config.json's text into an already parsed config (arg "generation_config.json").
Status parse_generation_config(std::string_view text, LmConfig& c);
// The config as JSON, in the package's words (camelCase), for the JS side.
std::string config_json(const LmConfig& c);

}  // namespace attnlab::lm
