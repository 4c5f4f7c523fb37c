#include "weights.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "../format.h"
#include "../kernels/half.h"
#include "../kernels/lm_kernels.h"

namespace attnlab::lm {

namespace {

using Kind = Slot::Kind;

// What a shard keeps: ranges of rows (laid end to end) and columns.
Selection rows(Span a, Span b = {}, Span c = {}) {
  Selection s;
  s.rows[0] = a, s.rows[1] = b, s.rows[2] = c;
  s.ranges = c.size() || b.size() ? (c.size() ? 3 : 2) : 1;
  return s;
}
Span all(std::size_t n) { return {0, n}; }

struct Planner {
  std::vector<Slot>& slots;
  // W [rows × cols] of which the shard keeps `take`'s rows and the columns `cols_kept` (default: all).
  void matrix(std::string name, Kind kind, std::uint64_t rows, std::uint64_t cols, Matrix* m, Selection take,
              Span cols_kept = {0, SIZE_MAX}) {
    Slot s;
    s.name = std::move(name), s.kind = kind, s.matrix = m;
    s.shape = kind == Kind::conv1d ? std::vector<std::uint64_t>{cols, rows} : std::vector<std::uint64_t>{rows, cols};
    take.cols = cols_kept.end == SIZE_MAX ? all(std::size_t(cols)) : cols_kept;
    m->rows = take.row_count(), m->cols = take.cols.size();
    s.take = take;
    slots.push_back(std::move(s));
  }
  void vector(std::string name, std::uint64_t n, const float** p, Selection take) {
    Slot s;
    s.name = std::move(name), s.kind = Kind::vector, s.shape = {n}, s.floats = p, s.take = take;
    slots.push_back(std::move(s));
  }
  void vector(std::string name, std::uint64_t n, const float** p) { vector(std::move(name), n, p, rows(all(std::size_t(n)))); }
  void table(std::string name, std::uint64_t rows_, std::uint64_t cols, const float** p, Span take) {
    Slot s;
    s.name = std::move(name), s.kind = Kind::table, s.shape = {rows_, cols}, s.floats = p, s.take = rows(take);
    slots.push_back(std::move(s));
  }
  void ignored(std::string name) {
    Slot s;
    s.name = std::move(name), s.kind = Kind::ignored;
    slots.push_back(std::move(s));
  }
};

Span times(Span s, std::size_t k, std::size_t offset = 0) { return {offset + s.begin * k, offset + s.end * k}; }

void plan_gpt2(const LmConfig& c, const ShardPlan& sp, ModelWeights& w, Planner& p) {
  const std::size_t d = c.d_model, f = c.ffn, dh = c.head_dim;
  const Span q = times(sp.heads, dh);  // this shard's heads' rows of q (and of k and v, d and 2d further)
  p.matrix("wte.weight", Kind::linear, c.vocab, d, &w.embed, rows(sp.vocab));
  p.table("wpe.weight", c.context, d, &w.positions, sp.positions);
  for (std::size_t l = 0; l < c.layers; ++l) {
    LayerWeights& L = w.layers[l];
    const std::string h = detail::format("h.%zu.", l);
    const Selection qkv = rows(q, times(sp.heads, dh, d), times(sp.heads, dh, 2 * d));
    p.vector(h + "ln_1.weight", d, &L.norm1_w);
    p.vector(h + "ln_1.bias", d, &L.norm1_b);
    p.matrix(h + "attn.c_attn.weight", Kind::conv1d, 3 * d, d, &L.qkv, qkv);
    p.vector(h + "attn.c_attn.bias", 3 * d, &L.qkv_b, qkv);
    p.matrix(h + "attn.c_proj.weight", Kind::conv1d, d, d, &L.o, rows(all(d)), q);
    p.vector(h + "attn.c_proj.bias", d, &L.o_b);
    p.vector(h + "ln_2.weight", d, &L.norm2_w);
    p.vector(h + "ln_2.bias", d, &L.norm2_b);
    p.matrix(h + "mlp.c_fc.weight", Kind::conv1d, f, d, &L.fc, rows(sp.ffn));
    p.vector(h + "mlp.c_fc.bias", f, &L.fc_b, rows(sp.ffn));
    p.matrix(h + "mlp.c_proj.weight", Kind::conv1d, d, f, &L.proj, rows(all(d)), sp.ffn);
    p.vector(h + "mlp.c_proj.bias", d, &L.proj_b);
    p.ignored(h + "attn.bias");         // the causal mask buffer of older exports
    p.ignored(h + "attn.masked_bias");
  }
  p.vector("ln_f.weight", d, &w.norm_w);
  p.vector("ln_f.bias", d, &w.norm_b);
}

void plan_llama(const LmConfig& c, const ShardPlan& sp, ModelWeights& w, Planner& p) {
  const std::size_t d = c.d_model, f = c.ffn, qw = c.q_width(), kw = c.kv_width(), dh = c.head_dim;
  const Span q = times(sp.heads, dh), kv = times(sp.kv_heads, dh);
  p.matrix("model.embed_tokens.weight", Kind::linear, c.vocab, d, &w.embed, rows(sp.vocab));
  for (std::size_t l = 0; l < c.layers; ++l) {
    LayerWeights& L = w.layers[l];
    const std::string h = detail::format("model.layers.%zu.", l);
    p.vector(h + "input_layernorm.weight", d, &L.norm1_w);
    p.matrix(h + "self_attn.q_proj.weight", Kind::linear, qw, d, &L.q, rows(q));
    p.matrix(h + "self_attn.k_proj.weight", Kind::linear, kw, d, &L.k, rows(kv));
    p.matrix(h + "self_attn.v_proj.weight", Kind::linear, kw, d, &L.v, rows(kv));
    if (c.qkv_bias) {
      p.vector(h + "self_attn.q_proj.bias", qw, &L.q_b, rows(q));
      p.vector(h + "self_attn.k_proj.bias", kw, &L.k_b, rows(kv));
      p.vector(h + "self_attn.v_proj.bias", kw, &L.v_b, rows(kv));
    }
    p.matrix(h + "self_attn.o_proj.weight", Kind::linear, d, qw, &L.o, rows(all(d)), q);
    if (c.o_bias) p.vector(h + "self_attn.o_proj.bias", d, &L.o_b);
    p.vector(h + "post_attention_layernorm.weight", d, &L.norm2_w);
    p.matrix(h + "mlp.gate_proj.weight", Kind::linear, f, d, &L.gate, rows(sp.ffn));
    p.matrix(h + "mlp.up_proj.weight", Kind::linear, f, d, &L.up, rows(sp.ffn));
    p.matrix(h + "mlp.down_proj.weight", Kind::linear, d, f, &L.down, rows(all(d)), sp.ffn);
    if (c.mlp_bias) {
      p.vector(h + "mlp.gate_proj.bias", f, &L.gate_b, rows(sp.ffn));
      p.vector(h + "mlp.up_proj.bias", f, &L.up_b, rows(sp.ffn));
      p.vector(h + "mlp.down_proj.bias", d, &L.down_b);
    }
    p.ignored(h + "self_attn.rotary_emb.inv_freq");  // a buffer older exports saved
  }
  p.vector("model.norm.weight", d, &w.norm_w);
}

}  // namespace

OutlierList& OutlierList::operator=(OutlierList&& o) noexcept {
  if (this != &o) std::free(data_), data_ = o.data_, size_ = o.size_, cap_ = o.cap_, o.data_ = nullptr, o.size_ = o.cap_ = 0;
  return *this;
}
OutlierList::~OutlierList() { std::free(data_); }

bool OutlierList::push(Outlier s) noexcept {
  if (size_ == cap_) {
    const std::size_t cap = cap_ ? 2 * cap_ : 64;
    auto* grown = static_cast<Outlier*>(std::realloc(data_, cap * sizeof(Outlier)));
    if (!grown) return false;
    data_ = grown, cap_ = cap;
  }
  data_[size_++] = s;
  return true;
}

Outlier* OutlierList::release() noexcept {
  std::sort(data_, data_ + size_, [](const Outlier& a, const Outlier& b) { return a.row < b.row || (a.row == b.row && a.col < b.col); });
  auto* exact = static_cast<Outlier*>(std::realloc(data_, size_ * sizeof(Outlier)));
  Outlier* r = exact ? exact : data_;
  data_ = nullptr, size_ = cap_ = 0;
  return r;
}

void Matrix::read_row(std::size_t r, float* out) const noexcept {
  const std::size_t base = (r / 8) * cols * 8, lane = r % 8;
  if (dtype == DType::f32) {
    const float* p = static_cast<const float*>(data) + base + lane;
    for (std::size_t c = 0; c < cols; ++c) out[c] = p[c * 8];
    return;
  }
  const std::uint16_t* p = static_cast<const std::uint16_t*>(data) + base + kernels::half_lane(lane);
  if (dtype == DType::bf16)
    for (std::size_t c = 0; c < cols; ++c) out[c] = kernels::bf16_to_float(p[c * 8]);
  else
    for (std::size_t c = 0; c < cols; ++c) out[c] = kernels::f16_panel_to_float(p[c * 8]);
  const Outlier* s = std::lower_bound(outliers, outliers + outlier_count, r,
                                      [](const Outlier& a, std::size_t row) { return a.row < row; });
  for (; s != outliers + outlier_count && s->row == r; ++s) out[s->col] = s->value;
}

void WeightSet::Free::operator()(void* p) const noexcept { std::free(p); }

Status WeightSet::plan(const LmConfig& c, const ShardPlan& shard, std::unique_ptr<WeightSet>& out) {
  std::unique_ptr<WeightSet> w(new (std::nothrow) WeightSet());
  if (!w) return Status::no_memory("the model's weight table");
  w->config_ = c;
  w->shard_ = shard;
  w->weights_.layers.resize(c.layers);
  w->weights_.tied = c.tied;
  Planner p{w->slots_};
  if (c.family == Family::gpt2) plan_gpt2(c, shard, w->weights_, p);
  else plan_llama(c, shard, w->weights_, p);
  if (!c.tied) p.matrix("lm_head.weight", Kind::linear, c.vocab, c.d_model, &w->weights_.head, rows(shard.vocab));
  else p.ignored("lm_head.weight");  // tied: the head is the embedding (as transformers' tie_weights makes it)
  std::sort(w->slots_.begin(), w->slots_.end(), [](const Slot& a, const Slot& b) { return a.name < b.name; });
  out = std::move(w);
  return Status::success();
}

Slot* WeightSet::find(const std::string& name) noexcept {
  const std::string_view prefix = "transformer.";
  std::string_view key = name;
  if (config_.family == Family::gpt2 && key.substr(0, prefix.size()) == prefix) key.remove_prefix(prefix.size());
  const auto it = std::lower_bound(slots_.begin(), slots_.end(), key, [](const Slot& s, std::string_view k) { return s.name < k; });
  return it != slots_.end() && it->name == key ? &*it : nullptr;
}

Status WeightSet::allocate(Slot& s, DType dtype, const std::string& file) {
  std::size_t bytes = 0;
  if (s.matrix) {
    s.matrix->dtype = dtype;
    bytes = s.matrix->bytes();
  } else {  // a vector's elements kept, or a table's rows kept × its columns
    bytes = 4 * s.take.row_count() * (s.kind == Kind::table ? std::size_t(s.shape[1]) : 1);
  }
  // 64-byte aligned (a cache line); the padding rows of a last panel are zeros.
  const std::size_t rounded = (bytes + 63) / 64 * 64;
  void* p = rounded ? std::aligned_alloc(64, rounded) : nullptr;
  if (!p && rounded)
    return {ErrorKind::out_of_memory, file,
            detail::format("%s: out of memory for %s (%.1f MiB) after %.1f MiB of weights: the model does not fit in memory",
                           file.c_str(), s.name.c_str(), double(bytes) / 1048576.0, double(bytes_) / 1048576.0)};
  if (s.matrix && p) std::memset(p, 0, rounded);
  storage_.emplace_back(p);
  buffers_.emplace_back(p, rounded);
  bytes_ += rounded;
  if (s.matrix) s.matrix->data = p;
  else *s.floats = static_cast<const float*>(p);
  return Status::success();
}

Status WeightSet::seal(Slot& s, const std::string& file) {
  if (!s.matrix || s.outliers.size() == 0) return Status::success();
  const std::size_t n = s.outliers.size();
  Outlier* list = s.outliers.release();
  if (!list) return {ErrorKind::out_of_memory, file, detail::format("%s: out of memory for %s's weights of magnitude 64 or more", file.c_str(), s.name.c_str())};
  storage_.emplace_back(list);
  buffers_.emplace_back(list, n * sizeof(Outlier));
  bytes_ += n * sizeof(Outlier);
  s.matrix->outliers = list, s.matrix->outlier_count = n;
  return Status::success();
}

double WeightSet::planned_bytes(double b) const noexcept {
  double total = 0;
  for (const Slot& s : slots_) {
    if (s.kind == Kind::ignored) continue;
    if (s.matrix) total += double((s.matrix->rows + 7) / 8 * 8) * double(s.matrix->cols) * b;
    else total += 4.0 * double(s.take.row_count()) * (s.kind == Kind::table ? double(s.shape[1]) : 1.0);
  }
  return total;
}

namespace {
// A model's weights: the matrices' count and the vectors' (norms, biases, GPT-2's positions), which stay float32.
struct WeightCounts {
  double matrices, vectors;
};
WeightCounts weight_counts(const LmConfig& c) noexcept {
  const double d = double(c.d_model), f = double(c.ffn), L = double(c.layers), V = double(c.vocab);
  double matrices = V * d * (c.tied ? 1 : 2), vectors = d;
  if (c.family == Family::gpt2) {
    matrices += L * (3 * d * d + d * d + 2 * d * f);
    vectors += d + double(c.context) * d + L * (4 * d + 3 * d + d + f + d);
  } else {
    const double q = double(c.q_width()), kv = double(c.kv_width());
    matrices += L * (d * q + 2 * d * kv + q * d + 3 * d * f);
    vectors += L * 2 * d + (c.qkv_bias ? L * (q + 2 * kv) : 0) + (c.o_bias ? L * d : 0) + (c.mlp_bias ? L * (2 * f + d) : 0);
  }
  return {matrices, vectors};
}
}  // namespace

double WeightSet::weight_bytes(const LmConfig& c, double b) noexcept {
  const WeightCounts n = weight_counts(c);
  return n.matrices * b + n.vectors * 4;
}

double WeightSet::weight_count(const LmConfig& c) noexcept {
  const WeightCounts n = weight_counts(c);
  return n.matrices + n.vectors;
}

}  // namespace attnlab::lm
