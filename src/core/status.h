// Errors are values in the core: every entry point returns a Status. The JS boundary turns a
// non-ok Status into a RangeError (or an Error for out_of_memory and numerical) with the same message.
#pragma once
#include <string>
#include <utility>

namespace attnlab {

enum class ErrorKind : unsigned char {
  none = 0,
  range = 1,          // a size, length or value outside what the operation accepts
  out_of_memory = 2,  // scratch space could not be allocated; nothing was written
  numerical = 3,      // a computation went non-finite (a training loss of NaN); nothing was changed
};

struct Status {
  ErrorKind kind = ErrorKind::none;
  std::string arg;      // the argument at fault, as the JS API names it ("q", "nq", "temperature"…)
  std::string message;  // a full sentence naming the argument, with expected vs actual

  [[nodiscard]] bool ok() const noexcept { return kind == ErrorKind::none; }

  static Status success() { return {}; }
  static Status range_error(std::string arg, std::string message) {
    return {ErrorKind::range, std::move(arg), std::move(message)};
  }
  static Status numerical_error(std::string arg, std::string message) {
    return {ErrorKind::numerical, std::move(arg), std::move(message)};
  }
  static Status no_memory(std::string what) {
    return {ErrorKind::out_of_memory, what, "out of memory allocating scratch for " + what};
  }
};

}  // namespace attnlab
