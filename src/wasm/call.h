// How every engine call crosses the boundary: one descriptor in wasm memory, one address passed, the error kind
// returned (0 = ok; the message in lastStatus()). What every binding shares is here; each op's binding (one file
// per op) declares its descriptor's fields and the function that reads it.
//
// A descriptor is an array of float64, one slot per field, holding the JS values exactly as given, so the engine
// sees every value before any conversion could change it (1e-50 is not 0, 2.5 is not 2). Its fields are declared
// once, by an X-macro of three kinds of field (tensors are named as the JS API names them: messages name them):
//   N(name)             a number: a size, a flag, an enum code, a handle; or a result the engine writes back
//   O(name)             an optional number: two slots, its value and whether it was given (1) or not (0)
//   T(name, type, dir)  a tensor: two slots, its byte address in wasm memory (0 = none) and its length in elements;
//                       type f32, i32, u8 or f64; dir `in` (copied in by the caller), `out` (read back), or
//                       `over_NAME`: an output the engine may write over input NAME (the caller places both in one
//                       buffer, so the call holds one copy)
// ATTNLAB_CALL_STRUCT turns the list into the struct (an implicit first field, `check`, comes first) and into the
// text "check,name,name?,name:f32:in,…" that the JS side reads from the module (<call>Fields()), so the two sides
// cannot disagree.
//
// Every call with tensors runs twice (src/js/call.js). First with check = 1 and no tensor in memory: addresses 0,
// lengths as the caller has them, an output's length 0 meaning "tell me". The binding validates every size and
// option that needs no tensor's values, resolves what was left out (sizes inferred from lengths, broadcast
// shapes, the lengths of the outputs wanted) and writes it back into the descriptor, computing nothing; a call
// whose tensors would not fit in wasm memory is refused here, naming the tensor. Only then does the caller
// allocate and copy the tensors in, and the call runs with check = 0: validated again, values too, and computed.
// Scalar results (a loss, a handle) come back in N fields. Handles (a KV cache, a model) are N fields holding the
// object's address.
#pragma once
#include <emscripten/bind.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "format.h"
#include "status.h"
#include "validate.h"

namespace attnlab::wasm {

// ---- errors: the kind returned, the message kept for lastStatus() ----

// What lastStatus() returns: kind 0 = ok, 1 = range, 2 = out of memory, 3 = numerical (attnlab::ErrorKind).
struct JsStatus {
  int kind = 0;
  std::string arg;
  std::string message;
};

// A successful call converts no strings: the status is kept only on failure, and the wrapper asks for it then.
inline JsStatus& last_status() {
  static JsStatus s;
  return s;
}
inline int keep(Status s) {
  const int kind = static_cast<int>(s.kind);
  if (kind) last_status() = {kind, std::move(s.arg), std::move(s.message)};
  return kind;
}

// ---- descriptor fields ----

struct Option {
  double value, given;
  [[gnu::always_inline]] std::optional<double> get() const { return given != 0 ? std::optional<double>(value) : std::nullopt; }
  void set(double v) { value = v, given = 1; }
};

struct Tensor {
  double at, len;  // byte address (0 = none, or: not in memory yet), length in elements
  std::size_t size() const { return static_cast<std::size_t>(len); }
};

namespace element {  // bytes of each tensor type
inline constexpr std::size_t f32 = 4, i32 = 4, u8 = 1, f64 = 8;
}

#define ATTNLAB_N_MEMBER(name) double name;
#define ATTNLAB_O_MEMBER(name) ::attnlab::wasm::Option name;
#define ATTNLAB_T_MEMBER(name, type, dir) ::attnlab::wasm::Tensor name;
#define ATTNLAB_N_TEXT(name) #name ","
#define ATTNLAB_O_TEXT(name) #name "?,"
#define ATTNLAB_T_TEXT(name, type, dir) #name ":" #type ":" #dir ","
#define ATTNLAB_NO_FIELD(name)
#define ATTNLAB_T_VISIT(name, type, dir) f(#name, name, ::attnlab::wasm::element::type);

// The descriptor struct of a field list LIST(N, O, T): `check` first, then the fields in order; fields() is their
// text for the JS side, each_tensor(f) calls f(name, tensor, element bytes) for every tensor.
#define ATTNLAB_CALL_STRUCT(Name, LIST)                                                                    \
  struct Name {                                                                                            \
    double check; /* 1: validate and resolve without the tensors, compute nothing */                       \
    LIST(ATTNLAB_N_MEMBER, ATTNLAB_O_MEMBER, ATTNLAB_T_MEMBER)                                             \
    static const char* fields() { return "check," LIST(ATTNLAB_N_TEXT, ATTNLAB_O_TEXT, ATTNLAB_T_TEXT); } \
    template <class F>                                                                                     \
    void each_tensor(F&& f) {                                                                              \
      LIST(ATTNLAB_NO_FIELD, ATTNLAB_NO_FIELD, ATTNLAB_T_VISIT)                                            \
    }                                                                                                      \
  }

// ---- reading fields ----

// The helpers below run on every call, twice (check and run), in bindings compiled for size (-Oz), which would
// not inline them: they are forced inline.
#define ATTNLAB_HOT [[gnu::always_inline]] inline

// A tensor as a span. In a check the tensors are not in memory yet (address 0): the span then carries the length
// alone, for the core's check functions, which read lengths and never data.
template <class T>
ATTNLAB_HOT std::span<const T> in(const Tensor& t) {
  return {reinterpret_cast<const T*>(static_cast<std::uintptr_t>(t.at)), t.size()};
}
template <class T>
ATTNLAB_HOT std::span<T> out(const Tensor& t) {
  return {reinterpret_cast<T*>(static_cast<std::uintptr_t>(t.at)), t.size()};
}

// A handle field: the address of an object the engine owns (0 when the caller has none).
template <class T>
T* handle(double h) {
  return reinterpret_cast<T*>(static_cast<std::uintptr_t>(h));
}
template <class T>
double handle_of(T* p) {
  return static_cast<double>(reinterpret_cast<std::uintptr_t>(p));
}

// A size field (a JS number): an integer from 1 to 2^31 − 1 into `out`. False when it is not one: the binding then
// returns size_error(name, value), which names it (a Status is built only for an error: calls are checked twice).
ATTNLAB_HOT bool size_of(double value, std::size_t& out) {
  if (!detail::is_count(value)) return false;
  out = static_cast<std::size_t>(value);
  return true;
}
// An optional size: as given, or `fallback` when it was left out.
ATTNLAB_HOT bool size_of(const Option& o, std::size_t fallback, std::size_t& out) {
  if (!o.given) return out = fallback, true;
  return size_of(o.value, out);
}
inline Status size_error(const char* name, double value) {
  std::size_t unused;
  return detail::check_count(name, value, unused);
}
inline Status size_error(const char* name, const Option& o) { return size_error(name, o.value); }

// A field the wrapper computed (an offset, an index it took from the engine): a whole number ≥ 0.
inline std::size_t whole(double x) { return x > 0 ? static_cast<std::size_t>(x) : 0; }

// A length that must be `want` (its message, naming `shape`, is built only when it is not).
ATTNLAB_HOT Status length_is(const char* name, std::size_t got, std::size_t want, const char* shape) {
  return got == want ? Status::success() : detail::check_length(name, got, want, shape);
}

// An output's length: as the caller gave it, or `want` when it asked the engine (length 0) in a check.
ATTNLAB_HOT void resolve(Tensor& t, std::size_t want) {
  if (t.len == 0) t.len = static_cast<double>(want);
}

// ---- the entry point ----

// Wasm memory holds at most 2 GiB: a call whose tensors (each 16-byte aligned, as the wrapper places them) need
// more is refused before the wrapper allocates anything, naming the largest.
template <class Call>
Status fits_memory(Call& c) {
  constexpr std::uint64_t limit = std::uint64_t(1) << 31;
  std::uint64_t total = 0, largest = 0;
  const char* name = nullptr;
  double largest_len = 0;
  c.each_tensor([&](const char* n, Tensor& t, std::size_t bytes) {  // (lengths the engine resolved: < 2^32)
    const std::uint64_t b = (std::uint64_t(t.len) * bytes + 15) / 16 * 16;
    total += b;
    if (b > largest) largest = b, largest_len = t.len, name = n;
  });
  if (total <= limit) return Status::success();
  return detail::range_errorf(name, "%s would have %.0f elements: the call needs %llu bytes of wasm memory in all, past its "
                              "2 GiB", name, largest_len, static_cast<unsigned long long>(total));
}

template <class Call, Status (*Run)(Call&)>
int enter(std::uintptr_t at) {
  Call& c = *reinterpret_cast<Call*>(at);
  Status s = Run(c);
  if (s.ok() && c.check != 0) s = fits_memory(c);
  return keep(std::move(s));
}

// Registers a call under its JS name: `name(address) → error kind` and `nameFields() → the field text`.
// Used inside an EMSCRIPTEN_BINDINGS block; `js_name` must be a string literal.
#define ATTNLAB_BIND_CALL(js_name, Call, run)                                       \
  do {                                                                              \
    ::emscripten::function(js_name, &::attnlab::wasm::enter<Call, run>);            \
    ::emscripten::function(js_name "Fields", +[] { return std::string(Call::fields()); }); \
  } while (0)

}  // namespace attnlab::wasm
