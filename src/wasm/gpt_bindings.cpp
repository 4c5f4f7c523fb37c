// lab.createGPT / lab.loadGPT's binding: a model is the engine's GPT, owned by wasm memory; JS holds its address as
// a handle (the `model` field of each call) and frees it with gptFree. Every call crosses as a descriptor (call.h).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include "call.h"
#include "format.h"
#include "model/gpt.h"
#include "model/safetensors.h"

namespace {

using namespace attnlab;
using namespace attnlab::wasm;
namespace m = attnlab::model;

m::GPT& model_of(double h) { return *handle<m::GPT>(h); }

// An integer from 0 to 2^31 − 1 (a count that may be 0), named as the JS API names it.
Status count_of(const char* name, double value, std::size_t& out) {
  if (value == 0) return out = 0, Status::success();
  if (auto s = detail::check_count(name, value, out); !s.ok())
    return detail::range_errorf(name, "%s must be an integer >= 0, got %s", name, detail::fmt(value).c_str());
  return Status::success();
}

// The configuration (nanoGPT's): position 0 learned, 1 rope. Defaults: kvHeads heads, mlp, tied and bias true,
// position learned, seed 0.
#define ATTNLAB_GPT_CONFIG(N, O, T) \
  N(vocab_size) N(context) N(d_model) N(heads) O(kv_heads) N(layers) O(mlp) O(position) O(tied) O(bias) O(seed)

// ---- gptCreate: a new model with seeded initial weights → model ----
#define ATTNLAB_GPT_CREATE_CALL(N, O, T) ATTNLAB_GPT_CONFIG(N, O, T) N(model)
ATTNLAB_CALL_STRUCT(CreateCall, ATTNLAB_GPT_CREATE_CALL);

Status create_call(CreateCall& c) {
  m::GPTConfig g;
  for (auto [name, value, field] : {std::tuple{"vocabSize", c.vocab_size, &g.vocab_size}, {"context", c.context, &g.context},
                                    {"dModel", c.d_model, &g.d_model}, {"heads", c.heads, &g.heads}, {"layers", c.layers, &g.layers}})
    if (!size_of(value, *field)) return size_error(name, value);
  if (!size_of(c.kv_heads, 0, g.kv_heads)) return size_error("kvHeads", c.kv_heads);
  g.mlp = !c.mlp.given || c.mlp.value != 0, g.tied = !c.tied.given || c.tied.value != 0, g.bias = !c.bias.given || c.bias.value != 0;
  g.position = c.position.given && c.position.value == 1 ? m::Position::rope : m::Position::learned;
  if (c.seed.given) {
    const double seed = c.seed.value;
    if (!(seed >= 0 && seed <= 4294967295.0 && seed == std::floor(seed)))
      return detail::range_errorf("seed", "seed must be an integer in 0…4294967295, got %s", detail::fmt(seed).c_str());
    g.seed = static_cast<std::uint32_t>(seed);
  }
  std::unique_ptr<m::GPT> model;
  if (auto s = m::GPT::create(g, model); !s.ok()) return s;
  c.model = handle_of(model.release());
  return Status::success();
}

// ---- gptLoad: a model from a safetensors file → model ----
#define ATTNLAB_GPT_LOAD_CALL(N, O, T) N(model) T(bytes, u8, in)
ATTNLAB_CALL_STRUCT(LoadCall, ATTNLAB_GPT_LOAD_CALL);

Status load_call(LoadCall& c) {
  if (c.check) return Status::success();  // (a file is validated by parsing it)
  std::unique_ptr<m::GPT> model;
  if (auto s = m::load_safetensors(in<std::uint8_t>(c.bytes), model); !s.ok()) return s;
  c.model = handle_of(model.release());
  return Status::success();
}

// ---- gptFree ----
#define ATTNLAB_GPT_HANDLE_CALL(N, O, T) N(model)
ATTNLAB_CALL_STRUCT(HandleCall, ATTNLAB_GPT_HANDLE_CALL);

Status free_call(HandleCall& c) {
  delete handle<m::GPT>(c.model);
  return Status::success();
}

// ---- gptInfo: the configuration (defaults filled in) and the model's counts, written back ----
#define ATTNLAB_GPT_INFO_CALL(N, O, T) \
  N(model) ATTNLAB_GPT_CONFIG(N, O, T) N(parameter_count) N(steps) N(memory_bytes) N(tensor_count)
ATTNLAB_CALL_STRUCT(InfoCall, ATTNLAB_GPT_INFO_CALL);

Status info_call(InfoCall& c) {
  const m::GPT& g = model_of(c.model);
  const m::GPTConfig& k = g.config();
  c.vocab_size = double(k.vocab_size), c.context = double(k.context), c.d_model = double(k.d_model), c.heads = double(k.heads);
  c.kv_heads.set(double(k.kv())), c.layers = double(k.layers);
  c.mlp.set(k.mlp), c.position.set(k.position == m::Position::rope ? 1 : 0), c.tied.set(k.tied), c.bias.set(k.bias);
  c.seed.set(double(k.seed));
  c.parameter_count = double(g.parameter_count()), c.steps = double(g.steps()), c.memory_bytes = double(g.memory_bytes());
  c.tensor_count = double(g.layout().tensors.size());
  return Status::success();
}

// ---- gptTensor: state-dict entry `index`: its shape (cols 0: one-dimensional), its name (UTF-8) and, with
// want_data, its values in PyTorch's layout ----
#define ATTNLAB_GPT_TENSOR_CALL(N, O, T) N(model) N(index) N(want_data) N(rows) N(cols) T(name, u8, out) T(data, f32, out)
ATTNLAB_CALL_STRUCT(TensorCall, ATTNLAB_GPT_TENSOR_CALL);

Status tensor_call(TensorCall& c) {
  const m::GPT& g = model_of(c.model);
  const auto& tensors = g.layout().tensors;
  const std::size_t i = whole(c.index);
  if (i >= tensors.size()) return detail::range_errorf("index", "index must be below the %zu tensors, got %zu", tensors.size(), i);
  const m::TensorInfo& t = tensors[i];
  c.rows = double(t.rows), c.cols = double(t.cols);
  if (c.check) {
    resolve(c.name, t.name.size());
    if (c.want_data) resolve(c.data, t.size());
  }
  if (auto s = length_is("name", c.name.size(), t.name.size(), "the name's bytes"); !s.ok()) return s;
  if (c.data.len != 0)
    if (auto s = length_is("data", c.data.size(), t.size(), "rows·cols"); !s.ok()) return s;
  if (c.check) return Status::success();
  std::memcpy(out<std::uint8_t>(c.name).data(), t.name.data(), t.name.size());
  if (c.data.len != 0) g.read_tensor(t, out<float>(c.data).data());
  return Status::success();
}

// AdamW's options (torch.optim.AdamW's, with its defaults when left out), as the engine's float32.
#define ATTNLAB_GPT_TRAIN_OPTIONS(N, O, T) O(lr) O(weight_decay) O(beta1) O(beta2) O(eps) O(grad_clip)

template <class Call>
m::TrainOptions train_options(const Call& c) {
  m::TrainOptions o;
  for (auto [field, option] : {std::pair{&c.lr, &o.lr}, {&c.weight_decay, &o.weight_decay}, {&c.beta1, &o.beta1},
                               {&c.beta2, &o.beta2}, {&c.eps, &o.eps}, {&c.grad_clip, &o.grad_clip}})
    if (field->given) *option = static_cast<float>(field->value);
  return o;
}

// ---- gptTrainStep: one AdamW step on [batch, context] tokens → loss (the mean cross-entropy before the update).
// dry_run: every check of the step, token values included, and nothing computed (the async step's, on the
// calling thread, before the workers get the batch) ----
#define ATTNLAB_GPT_TRAIN_CALL(N, O, T) \
  N(model) N(dry_run) ATTNLAB_GPT_TRAIN_OPTIONS(N, O, T) N(loss) T(tokens, i32, in) T(targets, i32, in)
ATTNLAB_CALL_STRUCT(TrainCall, ATTNLAB_GPT_TRAIN_CALL);

Status train_call(TrainCall& c) {
  m::GPT& g = model_of(c.model);
  const m::TrainOptions o = train_options(c);
  const std::size_t seq = g.config().context;
  if (c.check) {
    if (auto s = m::GPT::check_options(o); !s.ok()) return s;
    return g.check_sizes(c.tokens.size(), c.targets.size(), seq);
  }
  if (c.dry_run) return g.check_step(in<std::int32_t>(c.tokens), in<std::int32_t>(c.targets), seq, o);
  float loss = 0.0f;
  if (auto s = g.train_step(in<std::int32_t>(c.tokens), in<std::int32_t>(c.targets), seq, o, loss); !s.ok()) return s;
  c.loss = loss;
  return Status::success();
}

// ---- gptParameters: every parameter, in the parameter layout (a replica's weights for a worker) ----
#define ATTNLAB_GPT_PARAMETERS_CALL(N, O, T) N(model) T(parameters, f32, out)
ATTNLAB_CALL_STRUCT(ParametersCall, ATTNLAB_GPT_PARAMETERS_CALL);

Status parameters_call(ParametersCall& c) {
  const m::GPT& g = model_of(c.model);
  if (c.check) resolve(c.parameters, g.parameter_count());
  if (auto s = length_is("parameters", c.parameters.size(), g.parameter_count(), "parameterCount"); !s.ok()) return s;
  if (!c.check) std::memcpy(out<float>(c.parameters).data(), g.parameters().data(), g.parameter_count() * sizeof(float));
  return Status::success();
}

// ---- gptPartialGradients (a worker's part of the async step): `parameters` written over the model's (none: the
// model's own, a replica kept up to date by the caller), then the gradient of (this part's summed losses) / normalizer → gradients, and the summed losses → loss_sum (not finite:
// gradients are not computed, and left as they are) ----
#define ATTNLAB_GPT_PARTIAL_CALL(N, O, T)                                                                 \
  N(model) N(normalizer) N(loss_sum) T(parameters, f32, in) T(tokens, i32, in) T(targets, i32, in)       \
  T(gradients, f32, out)
ATTNLAB_CALL_STRUCT(PartialCall, ATTNLAB_GPT_PARTIAL_CALL);

Status partial_call(PartialCall& c) {
  m::GPT& g = model_of(c.model);
  const std::size_t count = g.parameter_count();
  if (c.check) resolve(c.gradients, count);
  if (c.parameters.len != 0)
    if (auto s = length_is("parameters", c.parameters.size(), count, "parameterCount"); !s.ok()) return s;
  if (auto s = length_is("gradients", c.gradients.size(), count, "parameterCount"); !s.ok()) return s;
  std::size_t normalizer;
  if (!size_of(c.normalizer, normalizer)) return size_error("normalizer", c.normalizer);
  if (auto s = g.check_sizes(c.tokens.size(), c.targets.size(), g.config().context); !s.ok()) return s;
  if (c.check) return Status::success();
  if (c.parameters.len != 0) std::memcpy(g.parameters().data(), in<float>(c.parameters).data(), count * sizeof(float));
  double loss_sum = 0.0;
  if (auto s = g.partial_gradients(in<std::int32_t>(c.tokens), in<std::int32_t>(c.targets), g.config().context, normalizer,
                                   loss_sum);
      !s.ok())
    return s;
  c.loss_sum = loss_sum;
  if (std::isfinite(loss_sum)) std::memcpy(out<float>(c.gradients).data(), g.gradients().data(), count * sizeof(float));
  return Status::success();
}

// ---- gptApplyGradients: the parts' gradients summed, their loss sums added (loss_sum, over `count` counted
// targets), applied by one AdamW update → loss (loss_sum / count) ----
#define ATTNLAB_GPT_APPLY_CALL(N, O, T) \
  N(model) N(loss_sum) N(count) ATTNLAB_GPT_TRAIN_OPTIONS(N, O, T) N(loss) T(gradients, f32, in)
ATTNLAB_CALL_STRUCT(ApplyCall, ATTNLAB_GPT_APPLY_CALL);

Status apply_call(ApplyCall& c) {
  m::GPT& g = model_of(c.model);
  const m::TrainOptions o = train_options(c);
  if (c.check) {
    if (auto s = m::GPT::check_options(o); !s.ok()) return s;
    return length_is("gradients", c.gradients.size(), g.parameter_count(), "parameterCount");
  }
  const double mean = c.count > 0 ? c.loss_sum / c.count : NAN;
  if (auto s = m::GPT::check_loss(mean); !s.ok()) return s;
  if (auto s = g.apply_gradients(in<float>(c.gradients), o); !s.ok()) return s;
  c.loss = static_cast<float>(mean);
  return Status::success();
}

// The async step by slices: each worker's replica owns the parameters [offset, offset + length) (GPT::reduce_slice).
// A slice's bounds, checked against the model's parameter count.
Status slice_of(const m::GPT& g, double offset, double length, std::size_t& from, std::size_t& count) {
  if (!(offset >= 0 && offset == std::floor(offset) && offset <= double(g.parameter_count())))
    return detail::range_errorf("offset", "offset must be an integer in 0…%zu, got %s", g.parameter_count(), detail::fmt(offset).c_str());
  from = std::size_t(offset);
  if (!(length >= 0 && length == std::floor(length) && length <= double(g.parameter_count() - from)))
    return detail::range_errorf("length", "length must be an integer in 0…%zu (parameterCount − offset), got %s",
                                g.parameter_count() - from, detail::fmt(length).c_str());
  count = std::size_t(length);
  return Status::success();
}

// ---- gptReduceSlice: the parts' gradients of one slice (each `length` floats, laid end to end) summed in order into
// the model's gradient buffer there → sum_squares (for the global norm) ----
#define ATTNLAB_GPT_REDUCE_SLICE_CALL(N, O, T) N(model) N(offset) N(length) N(sum_squares) T(gradients, f32, in)
ATTNLAB_CALL_STRUCT(ReduceSliceCall, ATTNLAB_GPT_REDUCE_SLICE_CALL);

Status reduce_slice_call(ReduceSliceCall& c) {
  m::GPT& g = model_of(c.model);
  std::size_t offset, length;
  if (auto s = slice_of(g, c.offset, c.length, offset, length); !s.ok()) return s;
  const std::size_t n = c.gradients.size();
  if (length == 0 ? n != 0 : n == 0 || n % length != 0)
    return detail::range_errorf("gradients", "gradients must be whole slices of length %zu, got %zu floats", length, n);
  if (c.check) return Status::success();
  double sq = 0.0;
  if (auto s = g.reduce_slice(offset, length, in<float>(c.gradients), sq); !s.ok()) return s;
  c.sum_squares = sq;
  return Status::success();
}

// ---- gptUpdateSlice: AdamW step `step` on the slice's reduced gradient with the global `norm` → the slice's
// parameters and moments after it (each output optional). dry_run: the checks every slice's update makes (the
// options, the mean loss loss_sum / count, the norm) and nothing changed → loss ----
#define ATTNLAB_GPT_UPDATE_SLICE_CALL(N, O, T)                                                                     \
  N(model) N(dry_run) N(offset) N(length) N(step) N(norm) N(loss_sum) N(count) ATTNLAB_GPT_TRAIN_OPTIONS(N, O, T) \
  N(loss) T(parameters, f32, out) T(moment1, f32, out) T(moment2, f32, out)
ATTNLAB_CALL_STRUCT(UpdateSliceCall, ATTNLAB_GPT_UPDATE_SLICE_CALL);

Status update_slice_call(UpdateSliceCall& c) {
  m::GPT& g = model_of(c.model);
  const m::TrainOptions o = train_options(c);
  if (auto s = m::GPT::check_options(o); !s.ok()) return s;
  if (c.dry_run) {
    if (c.check) return Status::success();
    const double mean = c.count > 0 ? c.loss_sum / c.count : NAN;
    if (auto s = m::GPT::check_loss(mean); !s.ok()) return s;
    if (auto s = m::GPT::check_norm(c.norm); !s.ok()) return s;
    c.loss = static_cast<float>(mean);
    return Status::success();
  }
  std::size_t offset, length;
  if (auto s = slice_of(g, c.offset, c.length, offset, length); !s.ok()) return s;
  if (!(c.step >= 1 && c.step == std::floor(c.step) && c.step <= 9007199254740991.0))
    return detail::range_errorf("step", "step must be an integer >= 1, got %s", detail::fmt(c.step).c_str());
  for (auto [name, t] : {std::pair{"parameters", &c.parameters}, {"moment1", &c.moment1}, {"moment2", &c.moment2}})
    if (t->len != 0)
      if (auto s = length_is(name, t->size(), length, "length"); !s.ok()) return s;
  if (c.check) return Status::success();
  if (auto s = g.update_slice(offset, length, o, std::uint64_t(c.step), c.norm); !s.ok()) return s;
  for (auto [t, from] : {std::pair{&c.parameters, g.parameters().data()}, {&c.moment1, g.moments(1).data()}, {&c.moment2, g.moments(2).data()}})
    if (t->len != 0) std::memcpy(out<float>(*t).data(), from + offset, length * sizeof(float));
  return Status::success();
}

// ---- gptWriteState / gptReadState: floats [offset, offset + data.length) of the parameters (part 0) or an AdamW
// moment (1, 2), written or read (a replica's state, or the model's own after its replicas trained it); steps: the
// count of updates, set when given / read back ----
#define ATTNLAB_GPT_WRITE_STATE_CALL(N, O, T) N(model) N(part) N(offset) O(steps) T(data, f32, in)
ATTNLAB_CALL_STRUCT(WriteStateCall, ATTNLAB_GPT_WRITE_STATE_CALL);
#define ATTNLAB_GPT_READ_STATE_CALL(N, O, T) N(model) N(part) N(offset) N(steps) T(data, f32, out)
ATTNLAB_CALL_STRUCT(ReadStateCall, ATTNLAB_GPT_READ_STATE_CALL);

template <class Call>
Status state_of(m::GPT& g, const Call& c, std::span<float>& whole_part, std::size_t& offset) {
  if (!(c.part == 0 || c.part == 1 || c.part == 2)) return detail::range_errorf("part", "part must be 0, 1 or 2, got %s", detail::fmt(c.part).c_str());
  std::size_t length;
  if (auto s = slice_of(g, c.offset, double(c.data.size()), offset, length); !s.ok())
    return s.arg == "length" ? detail::range_errorf("data", "data must fit in parameterCount − offset = %zu floats, got %zu",
                                                    g.parameter_count() - offset, c.data.size())
                             : s;
  whole_part = c.part == 0 ? g.parameters() : g.moments(int(c.part));
  return Status::success();
}

Status write_state_call(WriteStateCall& c) {
  m::GPT& g = model_of(c.model);
  std::span<float> part;
  std::size_t offset;
  if (auto s = state_of(g, c, part, offset); !s.ok()) return s;
  if (c.steps.given && !(c.steps.value >= 0 && c.steps.value == std::floor(c.steps.value) && c.steps.value <= 9007199254740991.0))
    return detail::range_errorf("steps", "steps must be an integer >= 0, got %s", detail::fmt(c.steps.value).c_str());
  if (c.check) return Status::success();
  if (c.data.size()) std::memcpy(part.data() + offset, in<float>(c.data).data(), c.data.size() * sizeof(float));
  if (c.steps.given) g.set_steps(std::uint64_t(c.steps.value));
  return Status::success();
}

Status read_state_call(ReadStateCall& c) {
  m::GPT& g = model_of(c.model);
  std::span<float> part;
  std::size_t offset;
  if (auto s = state_of(g, c, part, offset); !s.ok()) return s;
  c.steps = double(g.steps());
  if (c.check) return Status::success();
  if (c.data.size()) std::memcpy(out<float>(c.data).data(), part.data() + offset, c.data.size() * sizeof(float));
  return Status::success();
}

// ---- gptForward: logits [batch, t, vocab] of [batch, t] tokens (batch default 1) and, with return_attention,
// every layer's attention weights [layers, batch, heads, t, t] ----
#define ATTNLAB_GPT_FORWARD_CALL(N, O, T) \
  N(model) O(batch) N(return_attention) T(tokens, i32, in) T(logits, f32, out) T(attention, f32, out)
ATTNLAB_CALL_STRUCT(ForwardCall, ATTNLAB_GPT_FORWARD_CALL);

Status forward_call(ForwardCall& c) {
  m::GPT& g = model_of(c.model);
  std::size_t batch;
  if (!size_of(c.batch, 1, batch)) return size_error("batch", c.batch);
  const std::size_t tokens = c.tokens.size();
  if (tokens == 0 || tokens % batch != 0)
    return detail::range_errorf("tokens", "tokens.length must be a positive multiple of batch = %zu, got %zu", batch, tokens);
  const std::size_t seq = tokens / batch;
  std::size_t logits, attention;
  if (auto s = g.forward_sizes(tokens, seq, c.return_attention != 0, logits, attention); !s.ok()) return s;
  if (c.check) {
    resolve(c.logits, logits);
    if (c.return_attention) resolve(c.attention, attention);
    if (auto s = length_is("logits", c.logits.size(), logits, "batch·seq·vocabSize"); !s.ok()) return s;
    return length_is("attention", c.attention.size(), attention, "layers·batch·heads·seq·seq");
  }
  return g.forward(in<std::int32_t>(c.tokens), seq, out<float>(c.logits), out<float>(c.attention));
}

// ---- gptGenerate: max_tokens new tokens after `prompt` → tokens. temperature default 1 (0: greedy), top_k
// default 0 (all), seed an integer below 2^53 ----
#define ATTNLAB_GPT_GENERATE_CALL(N, O, T) \
  N(model) N(max_tokens) O(temperature) O(top_k) N(seed) T(prompt, i32, in) T(tokens, i32, out)
ATTNLAB_CALL_STRUCT(GenerateCall, ATTNLAB_GPT_GENERATE_CALL);

Status generate_call(GenerateCall& c) {
  m::GPT& g = model_of(c.model);
  m::GenerateOptions o;
  if (auto s = count_of("maxTokens", c.max_tokens, o.max_tokens); !s.ok()) return s;
  if (c.temperature.given) o.temperature = static_cast<float>(c.temperature.value);
  if (c.top_k.given)
    if (auto s = count_of("topK", c.top_k.value, o.top_k); !s.ok()) return s;
  if (!(c.seed >= 0 && c.seed <= 9007199254740991.0 && c.seed == std::floor(c.seed)))
    return detail::range_errorf("seed", "seed must be an integer in 0…2⁵³ − 1, got %s", detail::fmt(c.seed).c_str());
  o.seed = static_cast<std::uint64_t>(c.seed);
  if (c.check) resolve(c.tokens, o.max_tokens);
  if (auto s = g.check_generate(c.prompt.size(), o, c.tokens.size()); !s.ok()) return s;
  if (c.check) return Status::success();
  return g.generate(in<std::int32_t>(c.prompt), o, out<std::int32_t>(c.tokens));
}

// ---- gptSetWeights: named tensors (names: their UTF-8 bytes end to end, nameLengths bytes each; data: their
// values end to end, dataLengths each); the engine checks every name, length and value first ----
#define ATTNLAB_GPT_SET_WEIGHTS_CALL(N, O, T) \
  N(model) T(names, u8, in) T(nameLengths, i32, in) T(data, f32, in) T(dataLengths, i32, in)
ATTNLAB_CALL_STRUCT(SetWeightsCall, ATTNLAB_GPT_SET_WEIGHTS_CALL);

Status set_weights_call(SetWeightsCall& c) {
  if (c.check) return Status::success();  // (the names are read to check anything)
  const auto names = in<std::uint8_t>(c.names);
  const auto data = in<float>(c.data);
  const auto name_lengths = in<std::int32_t>(c.nameLengths), data_lengths = in<std::int32_t>(c.dataLengths);
  std::vector<m::NamedTensor> given(name_lengths.size());
  std::size_t at_name = 0, at_data = 0;  // the wrapper wrote the lengths of what it laid out
  for (std::size_t i = 0; i < given.size(); ++i) {
    const std::size_t nl = std::size_t(name_lengths[i]), dl = std::size_t(data_lengths[i]);
    given[i] = {std::string_view(reinterpret_cast<const char*>(names.data()) + at_name, nl), data.subspan(at_data, dl)};
    at_name += nl, at_data += dl;
  }
  return model_of(c.model).set_weights(given);
}

// ---- gptSafetensors: the model as a safetensors file ----
#define ATTNLAB_GPT_SAFETENSORS_CALL(N, O, T) N(model) T(file, u8, out)
ATTNLAB_CALL_STRUCT(SafetensorsCall, ATTNLAB_GPT_SAFETENSORS_CALL);

Status safetensors_call(SafetensorsCall& c) {
  const m::GPT& g = model_of(c.model);
  const std::size_t size = m::safetensors_size(g);
  if (c.check) resolve(c.file, size);
  if (auto s = length_is("file", c.file.size(), size, "the file's bytes"); !s.ok()) return s;
  if (!c.check) m::write_safetensors(g, out<std::uint8_t>(c.file));
  return Status::success();
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab_gpt) {
  ATTNLAB_BIND_CALL("gptCreate", CreateCall, create_call);
  ATTNLAB_BIND_CALL("gptLoad", LoadCall, load_call);
  ATTNLAB_BIND_CALL("gptFree", HandleCall, free_call);
  ATTNLAB_BIND_CALL("gptInfo", InfoCall, info_call);
  ATTNLAB_BIND_CALL("gptTensor", TensorCall, tensor_call);
  ATTNLAB_BIND_CALL("gptTrainStep", TrainCall, train_call);
  ATTNLAB_BIND_CALL("gptParameters", ParametersCall, parameters_call);
  ATTNLAB_BIND_CALL("gptPartialGradients", PartialCall, partial_call);
  ATTNLAB_BIND_CALL("gptApplyGradients", ApplyCall, apply_call);
  ATTNLAB_BIND_CALL("gptReduceSlice", ReduceSliceCall, reduce_slice_call);
  ATTNLAB_BIND_CALL("gptUpdateSlice", UpdateSliceCall, update_slice_call);
  ATTNLAB_BIND_CALL("gptWriteState", WriteStateCall, write_state_call);
  ATTNLAB_BIND_CALL("gptReadState", ReadStateCall, read_state_call);
  ATTNLAB_BIND_CALL("gptForward", ForwardCall, forward_call);
  ATTNLAB_BIND_CALL("gptGenerate", GenerateCall, generate_call);
  ATTNLAB_BIND_CALL("gptSetWeights", SetWeightsCall, set_weights_call);
  ATTNLAB_BIND_CALL("gptSafetensors", SafetensorsCall, safetensors_call);
}
