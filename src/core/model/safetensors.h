// The small GPT in the safetensors format (huggingface/safetensors): 8 bytes of little-endian header length N,
// N bytes of JSON header {"__metadata__": {…}, name: {"dtype", "shape", "data_offsets": [begin, end]}, …} padded
// with spaces to a multiple of 8, then the tensors' bytes, little-endian, back to back.
// Names and shapes are nanoGPT's state_dict() (params.h); the config travels in __metadata__ under nanoGPT's
// GPTConfig names (vocab_size, block_size, n_layer, n_head, n_embd, bias) plus n_kv_head, mlp, position, tied.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "../status.h"
#include "gpt.h"

namespace attnlab::model {

// Bytes of g's file: float32 tensors; a tied lm_head is written once, as transformer.wte.weight (as
// safetensors' save_model does: a file holds no shared tensors).
std::size_t safetensors_size(const GPT& g);
// Writes the file into out (safetensors_size(g) bytes).
void write_safetensors(const GPT& g, std::span<std::uint8_t> out);

// A model from a file: F32, F16, BF16 or F64 tensors (converted to float32). The config comes from __metadata__;
// what is missing there is read from the shapes, except n_head, which the weights cannot tell. A file written by
// PyTorch (torch.save → safetensors) needs its n_head in the metadata. Buffers nanoGPT registers (*.attn.bias)
// are skipped; any other unknown tensor, a missing one, a wrong shape, or a malformed file is a range error
// naming "bytes".
Status load_safetensors(std::span<const std::uint8_t> bytes, std::unique_ptr<GPT>& out);

}  // namespace attnlab::model
