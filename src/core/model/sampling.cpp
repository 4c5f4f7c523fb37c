#include "sampling.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "../kernels/kernels.h"
#include "../rows.h"

namespace attnlab::model {

std::size_t first_max(const float* x, std::size_t n) noexcept {
  // The vector max, then the first entry equal to it: two streaming passes, where std::max_element takes a compare
  // and a select per entry in one chain.
  const float m = kernels::active::row_max(x, n);
  std::size_t i = 0;
  while (i + 1 < n && x[i] != m) ++i;  // bounded, should a NaN (which the callers refuse first) make m unequal to all
  return i;
}

float kth_largest(const float* x, std::size_t n, std::size_t k, float* heap) noexcept {
  // A min-heap of the k largest so far: past the first k, an entry goes in only when it beats the heap's least, and
  // of a vocabulary's logits few do, where selecting over a copy (nth_element) moves every one.
  const auto above = [](float a, float b) { return a > b; };
  std::copy(x, x + k, heap);
  std::make_heap(heap, heap + k, above);
  for (std::size_t i = k; i < n; ++i)
    if (x[i] > heap[0]) {
      std::pop_heap(heap, heap + k, above);
      heap[k - 1] = x[i];
      std::push_heap(heap, heap + k, above);
    }
  return heap[0];
}

float nucleus_floor(const float* p, std::size_t vocab, float top_p, std::uint32_t* order, float* heap) noexcept {
  const auto first = [p](std::uint32_t a, std::uint32_t b) { return p[a] > p[b]; };
  // A nucleus is usually a few hundred tokens of a vocabulary of tens of thousands. So only the entries at or above
  // the k-th largest are gathered and sorted (a full sort's first k values, ties with the k-th along), k growing
  // until the nucleus ends inside. Sorted by value, that prefix holds a full sort's values in its order (equal
  // values may swap, which changes no sum), so every sum over it is the full sort's; each round re-sorts what it
  // gathered and goes on summing where the last round stopped.
  double before = 0.0;
  float last = 0.0f;
  for (std::size_t k = 256, summed = 0;; k = k < vocab / 16 ? k * 16 : vocab) {  // the last round takes every entry
    const float floor = k < vocab ? kth_largest(p, vocab, k, heap) : 0.0f;
    std::size_t n = 0;
    for (std::size_t i = 0; i < vocab; ++i)
      if (p[i] > 0.0f && p[i] >= floor) order[n++] = std::uint32_t(i);
    std::sort(order, order + n, first);
    for (; summed < n && before < double(top_p); ++summed) last = p[order[summed]], before += p[order[summed]];
    if (before >= double(top_p) || floor <= 0.0f) return last;  // ended inside, or every positive entry is in
  }
}

std::int32_t sample_token(const float* logits, std::size_t vocab, float temperature, std::size_t top_k, Rng& rng,
                          float* scratch, float top_p) noexcept {
  if (temperature == 0.0f) return static_cast<std::int32_t>(first_max(logits, vocab));
  float* p = scratch;
  std::memcpy(p, logits, vocab * sizeof(float));
  if (top_k > 0 && top_k < vocab) {  // the k-th largest logit, then everything below it masked
    const float kth = kth_largest(logits, vocab, top_k, scratch + vocab);
    for (std::size_t i = 0; i < vocab; ++i)
      if (p[i] < kth) p[i] = -INFINITY;
  }
  detail::softmax_row(p, vocab, 1.0f / temperature, false, p);
  if (top_p < 1.0f) {
    const float last = nucleus_floor(p, vocab, top_p, reinterpret_cast<std::uint32_t*>(scratch + 2 * vocab), scratch + vocab);
    for (std::size_t i = 0; i < vocab; ++i)
      if (p[i] < last) p[i] = 0.0f;
  }
  double total = 0.0;
  for (std::size_t i = 0; i < vocab; ++i) total += p[i];
  const double target = rng.uniform() * total;
  double acc = 0.0;
  std::size_t last = 0;
  for (std::size_t i = 0; i < vocab; ++i) {
    if (p[i] <= 0.0f) continue;
    acc += p[i];
    last = i;
    if (acc > target) return static_cast<std::int32_t>(i);
  }
  return static_cast<std::int32_t>(last);  // rounding left target at the very top: the last possible token
}

}  // namespace attnlab::model
