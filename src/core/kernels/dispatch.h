// Which kernel set the ops call. Every kernel header declares its functions twice, in scalar:: and simd::
// (one declaration macro expanded in each), then names them once:
//
//   ATTNLAB_KERNEL_DISPATCH(active, gemm, row_max, …)
//
// which makes `active::gemm(…)` call the set this build runs:
//   - wasm builds: simd:: (an alias, chosen at compile time: no dispatch in the shipped module);
//   - ATTNLAB_FORCE_SCALAR builds (the scalar wasm module): scalar:: (an alias; simd:: is not compiled);
//   - native builds: both sets are compiled and one process runs one of them — SIMD unless ATTNLAB_KERNELS=scalar
//     is in the environment (read at the first kernel call), or use_kernel_set() picked one before it (the native
//     tests' --kernels). One binary thus tests both sets, and a native benchmark or fuzzer runs either.
// A native call is a relaxed load, a predictable branch and a direct call to the chosen function, with the
// function's own signature (arguments convert as they would in a direct call).
#pragma once

#if !defined(ATTNLAB_FORCE_SCALAR) && !defined(__EMSCRIPTEN__)
#define ATTNLAB_KERNEL_SETS_BOTH 1
#include <atomic>
#endif

namespace attnlab::kernels {

enum class KernelSet : signed char { scalar = 0, simd = 1 };

#if ATTNLAB_KERNEL_SETS_BOTH
namespace detail {
// -1 until the first kernel call reads ATTNLAB_KERNELS (constant-initialized: no static-initialization order).
inline std::atomic<signed char> kernel_set{-1};
KernelSet read_kernel_set() noexcept;  // dispatch.cpp: the environment's choice; aborts on a value it does not know
}  // namespace detail

inline KernelSet kernel_set() noexcept {
  const signed char s = detail::kernel_set.load(std::memory_order_relaxed);
  return s >= 0 ? KernelSet(s) : detail::read_kernel_set();
}
// Picks the set for the rest of the process, before its first kernel call (a panel packed by one set is read by
// the same set). False when this build does not hold that set.
inline bool use_kernel_set(KernelSet s) noexcept {
  detail::kernel_set.store(static_cast<signed char>(s), std::memory_order_relaxed);
  return true;
}
#else
inline constexpr KernelSet kernel_set() noexcept {
#ifdef ATTNLAB_FORCE_SCALAR
  return KernelSet::scalar;
#else
  return KernelSet::simd;
#endif
}
inline constexpr bool use_kernel_set(KernelSet s) noexcept { return s == kernel_set(); }
#endif

#if ATTNLAB_KERNEL_SETS_BOTH
// A kernel of the set chosen at run time, callable as the function itself and convertible to a pointer to it.
template <auto Scalar, auto Simd>
struct Dispatch;
template <class R, class... A, bool NoExcept, R (*Scalar)(A...) noexcept(NoExcept), R (*Simd)(A...) noexcept(NoExcept)>
struct Dispatch<Scalar, Simd> {
  static R call(A... a) noexcept(NoExcept) { return kernel_set() == KernelSet::simd ? Simd(a...) : Scalar(a...); }
  R operator()(A... a) const noexcept(NoExcept) { return call(a...); }
  using Pointer = R (*)(A...) noexcept(NoExcept);
  constexpr operator Pointer() const noexcept { return &call; }
};
#endif

}  // namespace attnlab::kernels

// ATTNLAB_KERNEL_DISPATCH(ns, names…): inside namespace attnlab::kernels, after the scalar:: and simd:: declarations.
#if ATTNLAB_KERNEL_SETS_BOTH
#define ATTNLAB_KERNEL_DISPATCH(ns, ...) \
  namespace ns {                         \
  ATTNLAB_KERNEL_FOR_EACH(ATTNLAB_KERNEL_DISPATCH_ONE, __VA_ARGS__)  \
  }
#define ATTNLAB_KERNEL_DISPATCH_ONE(f) inline constexpr ::attnlab::kernels::Dispatch<&scalar::f, &simd::f> f{};
#elif defined(ATTNLAB_FORCE_SCALAR)
#define ATTNLAB_KERNEL_DISPATCH(ns, ...) namespace ns = scalar;
#else
#define ATTNLAB_KERNEL_DISPATCH(ns, ...) namespace ns = simd;
#endif

// ATTNLAB_KERNEL_FOR_EACH(m, a, b, …) → m(a) m(b) …: C++20 __VA_OPT__ recursion, one name per rescan, and
// ATTNLAB_KERNEL_EXPAND rescans 4⁴ = 256 times (far more names than a kernel header holds).
#define ATTNLAB_KERNEL_PARENS ()
#define ATTNLAB_KERNEL_EXPAND(...) ATTNLAB_KERNEL_EXPAND4(ATTNLAB_KERNEL_EXPAND4(ATTNLAB_KERNEL_EXPAND4(ATTNLAB_KERNEL_EXPAND4(__VA_ARGS__))))
#define ATTNLAB_KERNEL_EXPAND4(...) ATTNLAB_KERNEL_EXPAND3(ATTNLAB_KERNEL_EXPAND3(ATTNLAB_KERNEL_EXPAND3(ATTNLAB_KERNEL_EXPAND3(__VA_ARGS__))))
#define ATTNLAB_KERNEL_EXPAND3(...) ATTNLAB_KERNEL_EXPAND2(ATTNLAB_KERNEL_EXPAND2(ATTNLAB_KERNEL_EXPAND2(ATTNLAB_KERNEL_EXPAND2(__VA_ARGS__))))
#define ATTNLAB_KERNEL_EXPAND2(...) ATTNLAB_KERNEL_EXPAND1(ATTNLAB_KERNEL_EXPAND1(ATTNLAB_KERNEL_EXPAND1(ATTNLAB_KERNEL_EXPAND1(__VA_ARGS__))))
#define ATTNLAB_KERNEL_EXPAND1(...) __VA_ARGS__
#define ATTNLAB_KERNEL_FOR_EACH(m, ...) __VA_OPT__(ATTNLAB_KERNEL_EXPAND(ATTNLAB_KERNEL_FOR_EACH_STEP(m, __VA_ARGS__)))
#define ATTNLAB_KERNEL_FOR_EACH_STEP(m, a, ...) m(a) __VA_OPT__(ATTNLAB_KERNEL_FOR_EACH_AGAIN ATTNLAB_KERNEL_PARENS(m, __VA_ARGS__))
#define ATTNLAB_KERNEL_FOR_EACH_AGAIN() ATTNLAB_KERNEL_FOR_EACH_STEP
