// lab.createGPT / lab.loadGPT's binding: the model as an Embind class holding the engine's GPT. Marshalling only:
// tensors arrive as (address, length) in wasm memory, results go to buffers the wrapper allocated.
#include <emscripten/bind.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "marshal.h"
#include "model/gpt.h"
#include "model/safetensors.h"

namespace {

using namespace attnlab;
using namespace attnlab::wasm;
namespace m = attnlab::model;

std::span<const std::int32_t> ints(std::uintptr_t p, std::size_t n) {
  return p ? std::span<const std::int32_t>(reinterpret_cast<const std::int32_t*>(p), n) : std::span<const std::int32_t>();
}

struct JsConfig {
  std::size_t vocabSize, context, dModel, heads, kvHeads, layers;
  bool mlp;
  std::string position;
  bool tied, bias;
  std::uint32_t seed;
};

class GptModel {
 public:
  JsStatus create(std::size_t vocab, std::size_t context, std::size_t d_model, std::size_t heads, std::size_t kv_heads,
                  std::size_t layers, bool mlp, bool rope, bool tied, bool bias, std::uint32_t seed) {
    m::GPTConfig c;
    c.vocab_size = vocab, c.context = context, c.d_model = d_model, c.heads = heads, c.kv_heads = kv_heads, c.layers = layers;
    c.mlp = mlp, c.position = rope ? m::Position::rope : m::Position::learned, c.tied = tied, c.bias = bias, c.seed = seed;
    return to_js(m::GPT::create(c, g_));
  }
  JsStatus load(std::uintptr_t bytes, std::size_t len) {
    return to_js(m::load_safetensors({reinterpret_cast<const std::uint8_t*>(bytes), len}, g_));
  }

  JsConfig config() const {
    const m::GPTConfig& c = g_->config();
    return {c.vocab_size, c.context, c.d_model, c.heads, c.kv(), c.layers, c.mlp, m::position_name(c.position), c.tied,
            c.bias, c.seed};
  }
  std::size_t parameterCount() const { return g_->parameter_count(); }
  double steps() const { return double(g_->steps()); }
  std::size_t memoryBytes() const { return g_->memory_bytes(); }
  std::size_t workspaceBytes(std::size_t tokens) const { return g_->workspace_bytes(tokens); }

  JsStatus trainStep(std::uintptr_t tokens, std::uintptr_t targets, std::size_t len, std::size_t seq, float lr, float wd,
                     float beta1, float beta2, float eps, float clip) {
    m::TrainOptions o{lr, wd, beta1, beta2, eps, clip};
    return to_js(g_->train_step(ints(tokens, len), ints(targets, len), seq, o, loss_));
  }
  float lastLoss() const { return loss_; }

  // trainStepAsync (gpt-async.js): the checks on this thread, each part's gradient in a worker's replica, the
  // summed gradient applied here.
  JsStatus checkStep(std::uintptr_t tokens, std::uintptr_t targets, std::size_t len, std::size_t seq, float lr, float wd,
                     float beta1, float beta2, float eps, float clip) const {
    return to_js(g_->check_step(ints(tokens, len), ints(targets, len), seq, {lr, wd, beta1, beta2, eps, clip}));
  }
  JsStatus partialGradients(std::uintptr_t tokens, std::uintptr_t targets, std::size_t len, std::size_t seq,
                            std::size_t normalizer) {
    return to_js(g_->partial_gradients(ints(tokens, len), ints(targets, len), seq, normalizer, loss_sum_));
  }
  double lossSum() const { return loss_sum_; }
  // The parts' loss sums added (lossSum, over `count` counted targets) and their gradients summed (grads).
  JsStatus applyGradients(std::uintptr_t grads, std::size_t len, double loss_sum, std::size_t count, float lr, float wd,
                          float beta1, float beta2, float eps, float clip) {
    const double mean = count ? loss_sum / double(count) : NAN;
    if (auto s = m::GPT::check_loss(mean); !s.ok()) return to_js(s);
    if (auto s = g_->apply_gradients(in(grads, len), {lr, wd, beta1, beta2, eps, clip}); !s.ok()) return to_js(s);
    loss_ = static_cast<float>(mean);
    return to_js(Status::success());
  }
  // The parameter and gradient buffers (parameter layout, parameterCount floats each): a replica's weights are
  // written and its gradient read there directly.
  std::uintptr_t parametersAddress() { return reinterpret_cast<std::uintptr_t>(g_->parameters().data()); }
  std::uintptr_t gradientsAddress() { return reinterpret_cast<std::uintptr_t>(g_->gradients().data()); }

  JsStatus forward(std::uintptr_t tokens, std::size_t len, std::size_t seq, std::uintptr_t logits, std::size_t logits_len,
                   std::uintptr_t attention, std::size_t attention_len) {
    return to_js(g_->forward(ints(tokens, len), seq, out(logits, logits_len), out(attention, attention_len)));
  }

  // seed arrives as a double holding an integer below 2⁵³.
  JsStatus generate(std::uintptr_t prompt, std::size_t len, std::size_t max_tokens, float temperature, std::size_t top_k,
                    double seed, std::uintptr_t result) {
    m::GenerateOptions o{max_tokens, temperature, top_k, static_cast<std::uint64_t>(seed)};
    return to_js(g_->generate(ints(prompt, len), o,
                              {reinterpret_cast<std::int32_t*>(result), result ? max_tokens : std::size_t{0}}));
  }

  std::size_t tensorCount() const { return g_->layout().tensors.size(); }
  std::string tensorName(std::size_t i) const { return g_->layout().tensors.at(i).name; }
  std::size_t tensorRows(std::size_t i) const { return g_->layout().tensors.at(i).rows; }
  std::size_t tensorCols(std::size_t i) const { return g_->layout().tensors.at(i).cols; }  // 0: one-dimensional
  void readTensor(std::size_t i, std::uintptr_t dst) const {
    g_->read_tensor(g_->layout().tensors.at(i), reinterpret_cast<float*>(dst));
  }
  // table: `count` rows of (name address, name bytes, data address, data length) as uint32.
  JsStatus setWeights(std::uintptr_t table, std::size_t count) {
    const auto* t = reinterpret_cast<const std::uint32_t*>(table);
    std::vector<m::NamedTensor> given(count);
    for (std::size_t i = 0; i < count; ++i)
      given[i] = {std::string_view(reinterpret_cast<const char*>(std::uintptr_t(t[4 * i])), t[4 * i + 1]),
                  in(t[4 * i + 2], t[4 * i + 3])};
    return to_js(g_->set_weights(given));
  }

  std::size_t safetensorsSize() const { return m::safetensors_size(*g_); }
  void writeSafetensors(std::uintptr_t dst, std::size_t len) const {
    m::write_safetensors(*g_, {reinterpret_cast<std::uint8_t*>(dst), len});
  }

 private:
  std::unique_ptr<m::GPT> g_;
  float loss_ = 0.0f;
  double loss_sum_ = 0.0;
};

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab_gpt) {
  using namespace emscripten;
  value_object<JsConfig>("GPTConfig")
      .field("vocabSize", &JsConfig::vocabSize)
      .field("context", &JsConfig::context)
      .field("dModel", &JsConfig::dModel)
      .field("heads", &JsConfig::heads)
      .field("kvHeads", &JsConfig::kvHeads)
      .field("layers", &JsConfig::layers)
      .field("mlp", &JsConfig::mlp)
      .field("position", &JsConfig::position)
      .field("tied", &JsConfig::tied)
      .field("bias", &JsConfig::bias)
      .field("seed", &JsConfig::seed);
  class_<GptModel>("GPTModel")
      .constructor<>()
      .function("create", &GptModel::create)
      .function("load", &GptModel::load)
      .function("config", &GptModel::config)
      .function("parameterCount", &GptModel::parameterCount)
      .function("steps", &GptModel::steps)
      .function("memoryBytes", &GptModel::memoryBytes)
      .function("workspaceBytes", &GptModel::workspaceBytes)
      .function("trainStep", &GptModel::trainStep)
      .function("lastLoss", &GptModel::lastLoss)
      .function("checkStep", &GptModel::checkStep)
      .function("partialGradients", &GptModel::partialGradients)
      .function("lossSum", &GptModel::lossSum)
      .function("applyGradients", &GptModel::applyGradients)
      .function("parametersAddress", &GptModel::parametersAddress)
      .function("gradientsAddress", &GptModel::gradientsAddress)
      .function("forward", &GptModel::forward)
      .function("generate", &GptModel::generate)
      .function("tensorCount", &GptModel::tensorCount)
      .function("tensorName", &GptModel::tensorName)
      .function("tensorRows", &GptModel::tensorRows)
      .function("tensorCols", &GptModel::tensorCols)
      .function("readTensor", &GptModel::readTensor)
      .function("setWeights", &GptModel::setWeights)
      .function("safetensorsSize", &GptModel::safetensorsSize)
      .function("writeSafetensors", &GptModel::writeSafetensors);
}
