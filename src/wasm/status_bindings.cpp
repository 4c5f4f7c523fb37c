// What every call shares on the JS side of the boundary: the status of the last failed call (call.h), and the
// build information.
#include <emscripten/bind.h>

#include "build_info.h"
#include "call.h"

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
}
