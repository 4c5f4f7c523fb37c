// Placing a tensor's bytes as they stream in: the per-element loop of a load (hundreds of millions of values for
// a real checkpoint), so it is compiled -Os, where the rest of the loader is -Oz (src/core/CMakeLists.txt): small
// still, but with its loop unrolled once.
#include <cstring>

#include "../format.h"
#include "../kernels/half.h"
#include "../kernels/lm_kernels.h"
#include "weights.h"

namespace attnlab::lm {

namespace {

inline std::uint16_t u16(const std::uint8_t* p) noexcept { return std::uint16_t(p[0] | (p[1] << 8)); }
inline std::uint32_t u32(const std::uint8_t* p) noexcept {
  return std::uint32_t(p[0]) | (std::uint32_t(p[1]) << 8) | (std::uint32_t(p[2]) << 16) | (std::uint32_t(p[3]) << 24);
}
inline bool f32_finite(std::uint32_t bits) noexcept { return (bits & 0x7f800000u) != 0x7f800000u; }

}  // namespace

Placement::Placement(Slot& s, DType from, std::uint64_t count) noexcept : slot_(&s), from_(from), count_(count) {
  // The file's shape is [outer, inner]: a Linear's [out, in], a Conv1D's [in, out], a table's [rows, cols].
  if (s.kind != Slot::Kind::vector && s.shape.size() == 2) inner_size_ = std::size_t(s.shape[1]);
  else inner_size_ = count ? std::size_t(count) : 1;
}

void Placement::seek(std::uint64_t index, std::ptrdiff_t row_shift, std::ptrdiff_t col_shift) noexcept {
  index_ = index;
  outer_ = std::size_t(index / inner_size_), inner_ = std::size_t(index % inner_size_);
  row_shift_ = row_shift, col_shift_ = col_shift;
  carried_ = 0;  // a run holds whole values
}

Status Placement::not_finite(const std::string& file) const {
  std::string at;
  if (slot_->shape.size() == 2) at = detail::format("[%zu, %zu]", outer_, inner_);
  else at = detail::format("[%zu]", inner_);
  return detail::range_errorf(file.c_str(), "%s: %s%s is not finite (a weight must be a finite number)", file.c_str(),
                              slot_->name.c_str(), at.c_str());
}

// `convert(bytes, dst_index)` stores one value and returns whether it was finite; dst_index is the value's place
// in the slot's storage, in elements.
template <class Convert>
Status Placement::run(const std::uint8_t* bytes, std::size_t n, const std::string& file, Convert convert) {
  const std::size_t width = dtype_bytes(from_);
  const Slot& s = *slot_;
  const bool matrix = s.matrix != nullptr, conv = s.kind == Slot::Kind::conv1d, table = s.kind == Slot::Kind::table;
  const std::size_t cols = matrix ? s.matrix->cols : 0;
  const bool half_store = matrix && s.matrix->dtype != DType::f32;
  auto place = [&](const std::uint8_t* value) -> bool {
    std::size_t dst;
    if (matrix) {  // the row and column in this model's (or shard's) storage
      const std::size_t r = (conv ? inner_ : outer_) + row_shift_, c = (conv ? outer_ : inner_) + col_shift_;
      dst = (r / 8) * cols * 8 + c * 8 + (half_store ? kernels::half_lane(r % 8) : r % 8);
    } else if (table) {
      dst = (outer_ + row_shift_) * inner_size_ + inner_;
    } else {
      dst = inner_ + row_shift_;
    }
    if (!convert(value, dst)) return false;
    if (++inner_ == inner_size_) inner_ = 0, ++outer_;
    ++index_;
    return true;
  };
  // A value split across calls: complete it from the new bytes first.
  if (carried_) {
    const std::size_t take = width - carried_ < n ? width - carried_ : n;
    std::memcpy(carry_ + carried_, bytes, take);
    carried_ += take, bytes += take, n -= take;
    if (carried_ < width) return Status::success();
    carried_ = 0;
    if (!place(carry_)) return not_finite(file);
  }
  const std::size_t whole = n / width;
  for (std::size_t i = 0; i < whole; ++i, bytes += width)
    if (!place(bytes)) return not_finite(file);
  carried_ = n - whole * width;
  std::memcpy(carry_, bytes, carried_);
  return Status::success();
}

Status Placement::put(const std::uint8_t* bytes, std::size_t n, const std::string& file) {
  const Slot& s = *slot_;
  if (s.kind == Slot::Kind::ignored) {  // skipped, but counted
    index_ += (n + carried_) / dtype_bytes(from_);
    carried_ = (n + carried_) % dtype_bytes(from_);
    return Status::success();
  }
  if (s.matrix && s.matrix->dtype != DType::f32) {  // 16 bits kept as they are
    auto* dst = static_cast<std::uint16_t*>(s.matrix->data);
    if (from_ == DType::bf16)
      return run(bytes, n, file, [&](const std::uint8_t* v, std::size_t at) {
        const std::uint16_t h = u16(v);
        dst[at] = h;
        return kernels::bf16_finite(h);
      });
    bool room = true;
    const bool conv = s.kind == Slot::Kind::conv1d;
    Status st = run(bytes, n, file, [&](const std::uint8_t* v, std::size_t at) {
      const std::uint16_t h = u16(v);
      if (!kernels::f16_finite(h)) return false;
      if (kernels::f16_to_panel(h, dst[at])) return true;  // h·2¹⁰ (lm_kernels.h)
      // |h| ≥ 64: beside the panel, a zero in it (weights.h)
      const std::size_t r = (conv ? inner_ : outer_) + row_shift_, c = (conv ? outer_ : inner_) + col_shift_;
      room = room && slot_->outliers.push({std::uint32_t(r), std::uint32_t(c), kernels::f16_to_float(h)});
      dst[at] = 0;
      return true;
    });
    if (!room) return {ErrorKind::out_of_memory, file, detail::format("%s: out of memory for %s's weights of magnitude 64 or more", file.c_str(), s.name.c_str())};
    return st;
  }
  float* dst = s.matrix ? static_cast<float*>(s.matrix->data) : const_cast<float*>(*s.floats);
  switch (from_) {
    case DType::f32:
      return run(bytes, n, file, [&](const std::uint8_t* v, std::size_t at) {
        const std::uint32_t bits = u32(v);
        dst[at] = kernels::bits_to_float(bits);
        return f32_finite(bits);
      });
    case DType::bf16:
      return run(bytes, n, file, [&](const std::uint8_t* v, std::size_t at) {
        const std::uint16_t h = u16(v);
        dst[at] = kernels::bf16_to_float(h);
        return kernels::bf16_finite(h);
      });
    default:
      return run(bytes, n, file, [&](const std::uint8_t* v, std::size_t at) {
        const std::uint16_t h = u16(v);
        dst[at] = kernels::f16_to_float(h);
        return kernels::f16_finite(h);
      });
  }
}

}  // namespace attnlab::lm
