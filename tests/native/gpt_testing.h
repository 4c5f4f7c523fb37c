// What the native GPT tests share: a model made from a config that must be valid (the test stops with the
// engine's message if it is not).
#pragma once
#include <memory>

#include "model/gpt.h"
#include "testing.h"

namespace gpt_testing {

inline std::unique_ptr<attnlab::model::GPT> make_gpt(const attnlab::model::GPTConfig& c) {
  std::unique_ptr<attnlab::model::GPT> g;
  const auto st = attnlab::model::GPT::create(c, g);
  INFO(st.message);
  REQUIRE(st.ok());
  return g;
}

}  // namespace gpt_testing
