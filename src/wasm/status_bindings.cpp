// What every engine call shares at the boundary (call.h): the one entry point, each call's number and field text,
// the status of the last failed call; and the build information.
#include <emscripten/bind.h>
#include <emscripten/emscripten.h>

#include <cstdint>

#include "build_info.h"
#include "call.h"

// Every engine call's entry point (call.h): a plain export, called from JS with the call's number and its
// descriptor's address. A number no call has is refused (kind 1, lastStatus says so).
extern "C" EMSCRIPTEN_KEEPALIVE int attnlab_call(int index, std::uintptr_t at) {
  const attnlab::wasm::CallTable& t = attnlab::wasm::calls();
  if (index < 0 || index >= t.count)
    return attnlab::wasm::keep(attnlab::Status::range_error("call", "no engine call has that number"));
  return t.entries[index].enter(at);
}

namespace {

struct JsBuildInfo {
  std::string version;
  bool simd;
  std::string kernels;
};

JsBuildInfo build_info_js() {
  const attnlab::BuildInfo b = attnlab::build_info();
  return {b.version, b.simd, b.kernels};
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab_status) {
  using namespace emscripten;
  using attnlab::wasm::JsStatus;
  value_object<JsStatus>("Status")
      .field("kind", &JsStatus::kind)
      .field("arg", &JsStatus::arg)
      .field("message", &JsStatus::message);
  value_object<JsBuildInfo>("BuildInfo")
      .field("version", &JsBuildInfo::version)
      .field("simd", &JsBuildInfo::simd)
      .field("kernels", &JsBuildInfo::kernels);
  function("buildInfo", &build_info_js);
  function("lastStatus", +[]() { return attnlab::wasm::last_status(); });
  attnlab::wasm::last_status();  // its strings' room, taken now (call.h: keep)
  // A call's number and field text (call.h), read once per call and module by the JS side.
  function("callIndex", +[](const std::string& name) {
    const attnlab::wasm::CallTable& t = attnlab::wasm::calls();
    for (int i = 0; i < t.count; ++i)
      if (name == t.entries[i].name) return i;
    return -1;
  });
  function("callFields", +[](int index) {
    const attnlab::wasm::CallTable& t = attnlab::wasm::calls();
    return std::string(index >= 0 && index < t.count ? t.entries[index].fields : "");
  });
}
