// The whole attention operator's test cases, shared by the forward (attention_full_test.cpp) and the backward
// (attention_backward_full_test.cpp): one random draw of every option, seeded inputs and masks, the engine's
// arguments for a case, and a one-line description for failure messages.
#pragma once
#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "attention.h"
#include "attention_reference.h"
#include "testing.h"

namespace attncase {

// A case's tensors: q, k, v and its mask (additive or boolean), with maskShape as given (may have fewer than 4 dims).
struct Inputs {
  std::vector<float> q, k, v, mask;
  std::vector<std::uint8_t> keep;
  std::vector<std::int64_t> shape;
};

enum MaskKind { no_mask = 0, additive = 1, boolean = 2 };

// q, k, v from seeds seed, seed + 1, seed + 2.
inline void fill_qkv(const ref::FullCase& c, Inputs& in, unsigned seed) {
  in.q = testing::normal(c.batch * c.heads * c.nq * c.dk, seed);
  in.k = testing::normal(c.batch * c.kv_heads * c.nk * c.dk, seed + 1);
  in.v = testing::normal(c.batch * c.kv_heads * c.nk * c.dv, seed + 2);
}

// A mask of c.mask_shape (its given dims are the trailing `dims`): a quarter of it masked (−inf or false), the rest
// additive values in [−2, 2) or true. Points c.mask / c.keep at it; no_mask clears both.
inline void fill_mask(ref::FullCase& c, Inputs& in, MaskKind kind, std::size_t dims, unsigned seed) {
  c.mask = nullptr, c.keep = nullptr;
  if (kind == no_mask) return;
  std::size_t count = 1;
  for (auto m : c.mask_shape) count *= m;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> val(-2.0f, 2.0f);
  if (kind == boolean) {
    in.keep.resize(count);
    for (auto& x : in.keep) x = rng() % 4 != 0;
    c.keep = &in.keep;
  } else {
    in.mask.resize(count);
    for (auto& x : in.mask) x = rng() % 4 == 0 ? -INFINITY : val(rng);
    c.mask = &in.mask;
  }
  in.shape.assign(c.mask_shape.end() - long(dims), c.mask_shape.end());
}

// The options of a random case, drawn independently; the mask's kind and given dims come with it (fill_mask makes it).
struct Draw {
  ref::FullCase c;
  MaskKind mask = no_mask;
  std::size_t mask_dims = 4;
};

// batch 1…3, kvHeads {1, 2, 3} × groups {1, 2, 4} (batch·heads ≤ 12), nq 1…max_nq, nk 1…max_nk, dk and dv 1…20,
// either layout, each causal alignment, a window a third of the time (−1 = unlimited), the default or another scale,
// softcap, keyLengths and ALiBi a third of the time each, and a mask two thirds of the time: 1…4 dims right-aligned
// to [batch, heads, nq, nk], each full or broadcast, the key dim sometimes shorter than nk.
inline Draw random_draw(std::mt19937& rng, std::size_t max_nq, std::size_t max_nk) {
  auto pick = [&](std::size_t lo, std::size_t hi) { return lo + rng() % (hi - lo + 1); };
  Draw d;
  ref::FullCase& c = d.c;
  c.batch = pick(1, 3);
  const std::size_t kv_choices[] = {1, 1, 2, 3}, group_choices[] = {1, 1, 2, 4};
  c.kv_heads = kv_choices[rng() % 4];
  c.heads = c.kv_heads * group_choices[rng() % 4];
  if (c.batch * c.heads > 12) c.batch = 1;
  c.nq = pick(1, max_nq), c.nk = pick(1, max_nk), c.dk = pick(1, 20), c.dv = pick(1, 20);
  c.bshd = rng() % 2;
  c.causal = int(rng() % 3);
  if (rng() % 3 == 0) c.window_left = std::int64_t(rng() % 12) - 1, c.window_right = std::int64_t(rng() % 12) - 1;
  c.scale = rng() % 2 ? double(1.0f / std::sqrt(float(c.dk))) : double(0.3f + float(rng() % 100) / 50.0f);
  if (rng() % 3 == 0) c.softcap = double(float(0.5 + (rng() % 300) / 10.0));
  if (rng() % 3 == 0) {
    c.key_lengths.resize(c.batch);
    for (auto& l : c.key_lengths) l = std::int32_t(rng() % (c.nk + 1));
  }
  if (rng() % 3 == 0) {
    c.alibi.resize(c.heads);
    for (auto& s : c.alibi) s = float(rng() % 100) / 128.0f;
  }
  d.mask = MaskKind(rng() % 3);
  if (d.mask != no_mask) {
    const std::size_t target[4] = {c.batch, c.heads, c.nq, c.nk};
    d.mask_dims = pick(1, 4);
    for (std::size_t k = 0; k < 4; ++k) c.mask_shape[k] = k < 4 - d.mask_dims ? 1 : (rng() % 2 ? target[k] : 1);
    if (rng() % 4 == 0 && c.nk > 2) c.mask_shape[3] = pick(2, c.nk - 1);  // shorter than nk: the rest masked
  }
  return d;
}

// The engine's arguments for case c on `in` (the scale given explicitly; the path left to the caller).
inline attnlab::AttentionArgs args_of(const ref::FullCase& c, const Inputs& in) {
  using attnlab::Causal;
  attnlab::AttentionArgs a{in.q, in.k, in.v, c.nq, c.nk, c.dk, c.dv};
  a.scale = c.scale;
  a.causal = c.causal == 0 ? Causal() : c.causal == 1 ? Causal(Causal::bottom_right) : Causal(Causal::top_left);
  a.batch = c.batch, a.heads = c.heads, a.kv_heads = c.kv_heads;
  a.layout = c.bshd ? attnlab::Layout::bshd : attnlab::Layout::bhsd;
  a.window = {c.window_left, c.window_right};
  if (c.softcap > 0) a.softcap = c.softcap;
  if (c.mask) a.mask = in.mask;
  if (c.keep) a.bool_mask = in.keep;
  a.mask_shape = in.shape;
  a.key_lengths = c.key_lengths;
  a.alibi_slopes = c.alibi;
  return a;
}

inline std::string describe(const ref::FullCase& c) {
  std::ostringstream s;
  s << "batch=" << c.batch << " heads=" << c.heads << " kvHeads=" << c.kv_heads << " nq=" << c.nq << " nk=" << c.nk
    << " dk=" << c.dk << " dv=" << c.dv << " layout=" << (c.bshd ? "bshd" : "bhsd") << " causal=" << c.causal
    << " window=[" << c.window_left << "," << c.window_right << "] softcap=" << c.softcap << " scale=" << c.scale
    << " mask=" << (c.mask ? "additive" : c.keep ? "boolean" : "none") << " shape=[" << c.mask_shape[0] << ","
    << c.mask_shape[1] << "," << c.mask_shape[2] << "," << c.mask_shape[3] << "] keyLengths=" << c.key_lengths.size()
    << " alibi=" << c.alibi.size();
  return s.str();
}

}  // namespace attncase
