// printf-style messages for errors: one out-of-line call per message. std::string concatenation inlines a few
// hundred bytes of wasm per `+`; the model's and the backward passes' many messages cost tens of KB that way.
#pragma once
#include <string>

#include "status.h"

namespace attnlab::detail {

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
std::string format(const char* fmt, ...);

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
Status range_errorf(const char* arg, const char* fmt, ...);

}  // namespace attnlab::detail
