// The small GPT's configuration: nanoGPT's architecture, sized by these fields.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "../status.h"

namespace attnlab::model {

enum class Position : unsigned char { learned, rope };

struct GPTConfig {
  std::size_t vocab_size = 0;  // token ids 0 … vocab_size − 1
  std::size_t context = 0;     // the longest sequence (nanoGPT's block_size)
  std::size_t d_model = 0;     // residual width (n_embd)
  std::size_t heads = 0;       // query heads; d_model % heads == 0, head width d_model / heads
  std::size_t kv_heads = 0;    // key/value heads (0 → heads); heads % kv_heads == 0 (grouped-query attention)
  std::size_t layers = 0;      // transformer blocks
  bool mlp = true;             // false: attention-only blocks (no ln_2 / MLP)
  Position position = Position::learned;  // learned position embeddings (wpe) or rotary (no wpe)
  bool tied = true;            // lm_head shares the token embedding (nanoGPT's weight tying)
  bool bias = true;            // biases in every Linear and LayerNorm (nanoGPT's bias=True)
  std::uint32_t seed = 0;      // initial weights: N(0, 0.02), residual projections N(0, 0.02/√(2·layers))

  std::size_t head_dim() const noexcept { return d_model / heads; }
  std::size_t kv() const noexcept { return kv_heads ? kv_heads : heads; }
  std::size_t qkv_width() const noexcept { return (heads + 2 * kv()) * head_dim(); }  // c_attn's outputs
};

const char* position_name(Position p) noexcept;

// Sizes ≥ 1, d_model % heads, heads % kv_heads, an even head width for rope, and a model (parameters,
// gradients, Adam moments, and one full-context sequence's activations) that fits in 32-bit memory.
// The message names the argument in the JS API's words (vocabSize, dModel…).
Status validate_config(const GPTConfig& c);

}  // namespace attnlab::model
