// A checkpoint's weights as the engine keeps them, and the plan that says which tensors a config needs.
//
// Every tensor is stored once, in its final place: matrices (a Linear's [out, in], GPT-2's Conv1D [in, out]
// transposed on the way in) in the panel layout of lm_kernels.h, keeping their file's dtype (F32, F16 or BF16);
// vectors (norms, biases) and GPT-2's position table as float32. The bytes of a safetensors file are placed as they
// stream in (placement.cpp): nothing holds a second copy of a tensor.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../status.h"
#include "config.h"
#include "shard.h"

namespace attnlab::lm {

enum class DType : std::uint8_t { f32, f16, bf16 };
inline std::size_t dtype_bytes(DType t) noexcept { return t == DType::f32 ? 4 : 2; }

// An F16 weight of magnitude 64 or more, which an F16 panel (w·2¹⁰: lm_kernels.h) cannot hold, kept beside its
// matrix: the panel holds a zero in its place, and linear() adds value·x[col] to row `row` after the dense product
// (the same sum in another order), read_row puts the value back. The random-weight checkpoints of the tests and the
// bench have none.
struct Outlier {
  std::uint32_t row, col;
  float value;
};

// A growable list that reports running out of memory instead of aborting (no exceptions in the wasm build).
class OutlierList {
 public:
  OutlierList() = default;
  OutlierList(OutlierList&& o) noexcept : data_(o.data_), size_(o.size_), cap_(o.cap_) { o.data_ = nullptr, o.size_ = o.cap_ = 0; }
  OutlierList& operator=(OutlierList&& o) noexcept;
  ~OutlierList();
  bool push(Outlier s) noexcept;
  std::size_t size() const noexcept { return size_; }
  // The entries sorted by row and column, in a buffer of exactly their size that the caller frees; the list empties.
  Outlier* release() noexcept;

 private:
  Outlier* data_ = nullptr;
  std::size_t size_ = 0, cap_ = 0;
};

// W [rows × cols] (y = W·x) in panels of 8 rows (lm_kernels.h).
struct Matrix {
  DType dtype = DType::f32;
  std::size_t rows = 0, cols = 0;
  void* data = nullptr;
  // F16 only: sorted by row and column (read_row's binary search relies on the order).
  const Outlier* outliers = nullptr;
  std::size_t outlier_count = 0;
  std::size_t panels() const noexcept { return (rows + 7) / 8; }
  std::size_t bytes() const noexcept { return panels() * 8 * cols * dtype_bytes(dtype); }
  // Row r as float32 into out[cols]: the token embedding's lookup.
  void read_row(std::size_t r, float* out) const noexcept;
};

struct LayerWeights {
  const float *norm1_w = nullptr, *norm1_b = nullptr, *norm2_w = nullptr, *norm2_b = nullptr;
  Matrix qkv;                // GPT-2's c_attn: the q, k and v rows stacked [3d × d]
  Matrix q, k, v;            // the llama family's projections
  Matrix o;                  // attention output: o_proj / attn.c_proj
  const float *qkv_b = nullptr, *q_b = nullptr, *k_b = nullptr, *v_b = nullptr, *o_b = nullptr;
  Matrix fc, proj;           // GPT-2's MLP: c_fc [ffn × d], c_proj [d × ffn]
  Matrix gate, up, down;     // SwiGLU: gate/up [ffn × d], down [d × ffn]
  const float *fc_b = nullptr, *proj_b = nullptr, *gate_b = nullptr, *up_b = nullptr, *down_b = nullptr;
};

struct ModelWeights {
  Matrix embed;              // token embedding [vocab × d] (wte / embed_tokens); the head too when tied
  Matrix head;               // lm_head [vocab × d] when not tied
  const float* positions = nullptr;  // GPT-2's wpe [context × d]
  const float *norm_w = nullptr, *norm_b = nullptr;  // ln_f / model.norm
  std::vector<LayerWeights> layers;
  bool tied = true;
  const Matrix& lm_head() const noexcept { return tied ? embed : head; }
};

// The part of a tensor a shard holds (shard.h), in the whole tensor's coordinates: `rows`, up to three ranges laid
// end to end in the shard's storage (a matrix's output rows, a vector's elements, a table's rows), and a matrix's
// input columns. A whole model's slots select everything.
struct Selection {
  Span rows[3];
  std::size_t ranges = 1;
  Span cols;
  std::size_t row_count() const noexcept {
    std::size_t n = 0;
    for (std::size_t i = 0; i < ranges; ++i) n += rows[i].size();
    return n;
  }
};

// One tensor a checkpoint must (or may) hold, as Hugging Face names it.
struct Slot {
  enum class Kind : std::uint8_t {
    linear,   // [out, in] → a Matrix
    conv1d,   // [in, out] → a Matrix of [out × in] (GPT-2's Conv1D)
    vector,   // [n] → float32
    table,    // [rows, cols] → float32 rows (GPT-2's wpe)
    ignored,  // buffers exporters leave in (GPT-2's attn.bias / attn.masked_bias, rotary_emb.inv_freq): skipped
  };
  std::string name;
  Kind kind = Kind::vector;
  std::vector<std::uint64_t> shape;  // as the file must give it (ignored slots: any)
  Matrix* matrix = nullptr;          // linear / conv1d
  const float** floats = nullptr;    // vector / table
  bool filled = false;
  std::string file;                  // where the index says it is (empty: anywhere)
  OutlierList outliers;              // an F16 matrix's weights of magnitude ≥ 64, while its file streams in
  Selection take;                    // what this model (or shard) keeps of it
};

// The weights of one model (or of one shard of it: shard.h) and the slots that fill them. Owns every byte.
class WeightSet {
 public:
  // The plan for a validated config (and one shard of it): every slot, unfilled. `weights.layers` sized.
  static Status plan(const LmConfig& c, const ShardPlan& shard, std::unique_ptr<WeightSet>& out);

  const LmConfig& config() const noexcept { return config_; }
  const ShardPlan& shard() const noexcept { return shard_; }
  ModelWeights& weights() noexcept { return weights_; }
  const ModelWeights& weights() const noexcept { return weights_; }
  std::vector<Slot>& slots() noexcept { return slots_; }
  // The slot of a tensor name (GPT-2's may carry the "transformer." prefix), or null.
  Slot* find(const std::string& name) noexcept;
  // Storage for a slot's tensor in the file's dtype; out of memory is an error naming the file and tensor.
  Status allocate(Slot& s, DType file_dtype, const std::string& file);
  std::size_t bytes() const noexcept { return bytes_; }  // everything allocated so far
  // Every buffer (address, bytes: multiples of 64), for reading them all as a decode step does.
  const std::vector<std::pair<const void*, std::size_t>>& buffers() const noexcept { return buffers_; }
  // A slot's F16 outliers, once its tensor is complete, sorted and handed to its matrix (out of memory is an error).
  Status seal(Slot& s, const std::string& file);
  // Parameters and bytes a config's tensors need at `bytes_per_weight` for matrices (float32 for vectors).
  static double weight_bytes(const LmConfig& c, double bytes_per_weight) noexcept;
  // How many weights that is (matrices and vectors).
  static double weight_count(const LmConfig& c) noexcept;
  // The same for this plan's slices (the whole model's for a whole plan), matrices in panels of 8 rows.
  double planned_bytes(double bytes_per_weight) const noexcept;

 private:
  struct Free {
    void operator()(void* p) const noexcept;
  };
  LmConfig config_;
  ShardPlan shard_;
  ModelWeights weights_;
  std::vector<Slot> slots_;            // sorted by name
  std::vector<std::unique_ptr<void, Free>> storage_;
  std::vector<std::pair<const void*, std::size_t>> buffers_;
  std::size_t bytes_ = 0;
};

// Streams one tensor's little-endian bytes, in file order, into its slot's storage: converted (vectors to
// float32), transposed (Conv1D) and interleaved into panels on the way, each value checked to be finite. A shard
// gets only the runs of bytes it keeps (Loader's routes): each run starts with seek(), which says where the run's
// first element is in the file and how the run's rows and columns move into the shard's storage.
class Placement {
 public:
  Placement(Slot& s, DType from, std::uint64_t count) noexcept;
  // The next n bytes of the tensor (any split). A value that is not finite is an error naming the tensor.
  Status put(const std::uint8_t* bytes, std::size_t n, const std::string& file);
  // The next bytes put are element `index` of the file's tensor onward, stored at row + row_shift and column +
  // col_shift (rows: a matrix's output rows, a vector's elements, a table's rows; columns: a matrix's input columns).
  void seek(std::uint64_t index, std::ptrdiff_t row_shift, std::ptrdiff_t col_shift) noexcept;
  bool done() const noexcept { return index_ == count_; }
  Slot& slot() const noexcept { return *slot_; }
  DType from() const noexcept { return from_; }

 private:
  template <class Convert>
  Status run(const std::uint8_t* bytes, std::size_t n, const std::string& file, Convert convert);
  Status not_finite(const std::string& file) const;
  Slot* slot_;
  DType from_;
  std::uint64_t count_, index_ = 0;
  // Where element index_ goes: its coordinates in the file's [outer, inner] shape.
  std::size_t outer_ = 0, inner_ = 0, inner_size_ = 1;
  std::ptrdiff_t row_shift_ = 0, col_shift_ = 0;
  std::uint8_t carry_[4] = {};  // a value split between two calls
  std::size_t carried_ = 0;
};

}  // namespace attnlab::lm
