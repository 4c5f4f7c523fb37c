// Where each parameter lives in the model's one contiguous float buffer, under nanoGPT's state_dict() names.
// Gradients and the two Adam moments are buffers of the same layout.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "config.h"

namespace attnlab::model {

inline constexpr std::size_t kAbsent = static_cast<std::size_t>(-1);

struct TensorInfo {
  std::string name;         // nanoGPT's state_dict() key
  std::size_t rows, cols;   // its shape there: [rows, cols], or [rows] when cols == 0
  std::size_t offset;       // first float in the parameter buffer
  bool transposed;          // stored as [cols, rows]: nn.Linear weights, kept [in, out] so that y = x·W
  bool decay;               // AdamW's weight decay applies (matrices and embeddings, as nanoGPT; not biases or norms)
  bool alias;               // another name for a tensor listed before it (lm_head.weight when tied): not stored twice
  std::size_t size() const noexcept { return cols ? rows * cols : rows; }
};

struct LayerParams {  // offsets of one block's tensors; kAbsent when the config has none
  std::size_t ln1_w, ln1_b, qkv_w, qkv_b, proj_w, proj_b, ln2_w, ln2_b, fc_w, fc_b, fc_proj_w, fc_proj_b;
};

struct ParamLayout {
  std::vector<TensorInfo> tensors;  // in nanoGPT's state_dict() order
  std::vector<LayerParams> layers;
  std::size_t wte, wpe, lnf_w, lnf_b, lm_head;  // lm_head == wte when tied
  std::size_t total;                            // floats
};

// Number of floats in the parameter buffer; saturates at SIZE_MAX (config validation uses it on any input).
std::size_t parameter_count(const GPTConfig& c) noexcept;
// The layout of a validated config.
ParamLayout make_layout(const GPTConfig& c);

}  // namespace attnlab::model
