// What every binding shares: the status object returned to JS, and (address, length) pairs read as spans.
// Each op's bindings live in their own file (softmax.cpp, attention.cpp, …), each with its own
// EMSCRIPTEN_BINDINGS block; this header holds no math.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "status.h"

namespace attnlab::wasm {

// What every call returns: kind 0 = ok, 1 = range, 2 = out of memory (attnlab::ErrorKind values).
struct JsStatus {
  int kind = 0;
  std::string arg;
  std::string message;
};

inline JsStatus to_js(Status s) { return {static_cast<int>(s.kind), std::move(s.arg), std::move(s.message)}; }

// Calls that return only the error kind (0 = ok) keep the full status here for lastStatus(): a successful call
// then converts no strings at all, and the wrapper asks for the message only when there is one.
inline JsStatus& last_status() {
  static JsStatus s;
  return s;
}
inline int keep(Status s) {
  const int kind = static_cast<int>(s.kind);
  if (kind) last_status() = to_js(std::move(s));
  return kind;
}

// Address 0 (or length 0) means "no tensor": an empty span, which the core reads as "not given / not wanted".
inline std::span<const float> in(std::uintptr_t ptr, std::size_t len) {
  return ptr ? std::span<const float>(reinterpret_cast<const float*>(ptr), len) : std::span<const float>();
}
inline std::span<float> out(std::uintptr_t ptr, std::size_t len) {
  return ptr ? std::span<float>(reinterpret_cast<float*>(ptr), len) : std::span<float>();
}

}  // namespace attnlab::wasm
