#include "format.h"

#include <cstdarg>
#include <cstdio>

namespace attnlab::detail {

namespace {
std::string vformat(const char* fmt, std::va_list args) {
  std::va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  std::string s(n > 0 ? std::size_t(n) : 0, '\0');
  if (n > 0) std::vsnprintf(s.data(), s.size() + 1, fmt, args);
  return s;
}
}  // namespace

std::string format(const char* fmt, ...) {
  std::va_list args;
  va_start(args, fmt);
  std::string s = vformat(fmt, args);
  va_end(args);
  return s;
}

Status range_errorf(const char* arg, const char* fmt, ...) {
  std::va_list args;
  va_start(args, fmt);
  std::string s = vformat(fmt, args);
  va_end(args);
  return Status::range_error(arg, std::move(s));
}

}  // namespace attnlab::detail
