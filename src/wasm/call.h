// How every engine call crosses the boundary: one descriptor in wasm memory, its address passed to one entry point
// (attnlab_call(call number, address)), the error kind returned (0 = ok; the message in lastStatus()). What every
// binding shares is here; each op's binding (one file per op) declares its descriptor's fields and the function
// that reads it, and registers the two under the call's JS name.
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
// text "check,name,name?,name:f32:in,…" that the JS side reads from the module (callFields(name)), so the two sides
// cannot disagree. ATTNLAB_BIND_CALL registers the call under its JS name; JS calls it through one export,
// attnlab_call(callIndex(name), address).
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
// The kept strings have their room from the module's start (status_bindings.cpp touches them there) and are copied
// into it: a failed call then leaves no allocation of its own behind. (A message moved in would stay wherever the
// call's work had left a hole — in the middle of the heap a refused model load had just freed — and the next load's
// larger blocks would no longer fit there: wasm memory grew on the second of two identical refused loads.)
inline constexpr std::size_t kStatusRoom = 1024;
inline JsStatus& last_status() {
  static JsStatus s = [] {
    JsStatus r;
    r.arg.reserve(kStatusRoom / 4), r.message.reserve(kStatusRoom);
    return r;
  }();
  return s;
}
inline int keep(Status s) {
  const int kind = static_cast<int>(s.kind);
  if (kind) {
    JsStatus& k = last_status();
    k.kind = kind, k.arg.assign(s.arg), k.message.assign(s.message);
  }
  return kind;
}

// ---- descriptor fields ----

struct Option {
  double value, given;
  std::optional<double> get() const { return given != 0 ? std::optional<double>(value) : std::nullopt; }
  void set(double v) { value = v, given = 1; }
};

struct Tensor {
  double at, len;  // byte address (0 = none, or: not in memory yet), length in elements
  std::size_t size() const { return static_cast<std::size_t>(len); }
};

namespace element {  // bytes of each tensor type
inline constexpr std::size_t f32 = 4, i32 = 4, u8 = 1, f64 = 8;
}

// What the entry point knows of a call's tensors: their names (for a message), where they lie in the descriptor
// and the bytes of one element.
struct TensorField {
  const char* name;
  std::size_t offset, bytes;
};

#define ATTNLAB_N_MEMBER(name) double name;
#define ATTNLAB_O_MEMBER(name) ::attnlab::wasm::Option name;
#define ATTNLAB_T_MEMBER(name, type, dir) ::attnlab::wasm::Tensor name;
#define ATTNLAB_N_TEXT(name) #name ","
#define ATTNLAB_O_TEXT(name) #name "?,"
#define ATTNLAB_T_TEXT(name, type, dir) #name ":" #type ":" #dir ","
#define ATTNLAB_NO_FIELD(name)
#define ATTNLAB_T_ENTRY(name, type, dir) {#name, offsetof(Self, name), ::attnlab::wasm::element::type},

// The descriptor struct of a field list LIST(N, O, T): `check` first, then the fields in order; fields() is their
// text for the JS side, tensors() their table (a last entry with a null name ends it).
#define ATTNLAB_CALL_STRUCT(Name, LIST)                                                                      struct Name {                                                                                                using Self = Name;                                                                                         double check; /* 1: validate and resolve without the tensors, compute nothing */                           LIST(ATTNLAB_N_MEMBER, ATTNLAB_O_MEMBER, ATTNLAB_T_MEMBER)                                                 static const char* fields() { return "check," LIST(ATTNLAB_N_TEXT, ATTNLAB_O_TEXT, ATTNLAB_T_TEXT); }     static const ::attnlab::wasm::TensorField* tensors() {                                                       static const ::attnlab::wasm::TensorField table[] = {                                                          LIST(ATTNLAB_NO_FIELD, ATTNLAB_NO_FIELD, ATTNLAB_T_ENTRY){nullptr, 0, 0}};                             return table;                                                                                            }                                                                                                        }

// ---- reading fields ----

// A tensor as a span. In a check the tensors are not in memory yet (address 0): the span then carries the length
// alone, for the core's check functions, which read lengths and never data.
template <class T>
inline std::span<const T> in(const Tensor& t) {
  return {reinterpret_cast<const T*>(static_cast<std::uintptr_t>(t.at)), t.size()};
}
template <class T>
inline std::span<T> out(const Tensor& t) {
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
inline bool size_of(double value, std::size_t& out) {
  if (!detail::is_count(value)) return false;
  out = static_cast<std::size_t>(value);
  return true;
}
// An optional size: as given, or `fallback` when it was left out.
inline bool size_of(const Option& o, std::size_t fallback, std::size_t& out) {
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
inline Status length_is(const char* name, std::size_t got, std::size_t want, const char* shape) {
  return got == want ? Status::success() : detail::check_length(name, got, want, shape);
}

// An output's length: as the caller gave it, or `want` when it asked the engine (length 0) in a check.
inline void resolve(Tensor& t, std::size_t want) {
  if (t.len == 0) t.len = static_cast<double>(want);
}

// ---- the entry point ----

// A call's end: a checked call whose tensors (each 16-byte aligned, as the wrapper places them) would need more than
// wasm memory's 2 GiB is refused here, before the wrapper allocates anything, naming the largest; then the status
// is kept and its kind returned. `call` is the descriptor of a check (null after a run).
[[gnu::noinline]] inline int finish(Status s, const void* call, const TensorField* tensors) {
  if (s.ok() && call) {
    constexpr std::uint64_t limit = std::uint64_t(1) << 31;
    std::uint64_t total = 0, largest = 0;
    const TensorField* big = nullptr;
    for (const TensorField* t = tensors; t->name; ++t) {
      // (lengths the engine resolved: below 2^32)
      const double len = reinterpret_cast<const Tensor*>(static_cast<const char*>(call) + t->offset)->len;
      const std::uint64_t b = (std::uint64_t(len) * t->bytes + 15) / 16 * 16;
      total += b;
      if (b > largest) largest = b, big = t;
    }
    if (total > limit)
      s = detail::range_errorf(big->name, "%s would have %llu elements: the call needs %llu bytes of wasm memory in all, past "
                               "its 2 GiB", big->name, static_cast<unsigned long long>(largest / big->bytes),
                               static_cast<unsigned long long>(total));
  }
  return keep(std::move(s));
}

template <class Call, Status (*Run)(Call&)>
int enter(std::uintptr_t at) {
  Call& c = *reinterpret_cast<Call*>(at);
  return finish(Run(c), c.check != 0 ? &c : nullptr, Call::tensors());
}

// The registered calls, numbered in registration order: their JS names and field texts (callIndex(name) and
// callFields(name), once per call and module) and their entry points, which JS reaches through one plain wasm
// export, attnlab_call(index, address) (status_bindings.cpp): no Embind conversion on a call's path.
struct CallEntry {
  const char* name;
  const char* fields;
  int (*enter)(std::uintptr_t);
};
inline constexpr int kMaxCalls = 128;
struct CallTable {
  CallEntry entries[kMaxCalls];
  int count = 0;
};
inline CallTable& calls() {
  static CallTable table;
  return table;
}
// (a table full: the call is not registered, and callIndex names it as missing)
inline void register_call(const char* name, const char* fields, int (*enter)(std::uintptr_t)) {
  CallTable& t = calls();
  if (t.count < kMaxCalls) t.entries[t.count++] = {name, fields, enter};
}

// Registers a call under its JS name. Used inside an EMSCRIPTEN_BINDINGS block (which runs when the module starts).
#define ATTNLAB_BIND_CALL(js_name, Call, run) \
  ::attnlab::wasm::register_call(js_name, Call::fields(), &::attnlab::wasm::enter<Call, run>)

}  // namespace attnlab::wasm
