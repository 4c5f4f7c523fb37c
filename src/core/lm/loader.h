// Loading a Hugging Face model folder into the engine, byte stream by byte stream, with every check in one place:
//   create(config.json, generation_config.json)  the config, validated; the plan of tensors it needs
//   set_index(model.safetensors.index.json)      a sharded checkpoint: which file holds which tensor
//   begin_file(name) feed(bytes)… end_file()     each safetensors file, in chunks of any size: its header is checked
//                                                against the plan (names, shapes, dtypes, shards) before any data,
//                                                then every tensor's bytes go straight to their final place
//   finish()                                     every tensor arrived: the model
// Errors name the file and the field or tensor. After an error the loader refuses everything but destruction,
// which frees what it allocated: nothing half-loaded stays.
//
// A shard's loader (rank of ranks > 1, shard.h) keeps only its slices, and is sent only their bytes: every file's
// first 8 + header-length bytes as they are, then — once the header is read — the routes() of the file in order,
// laid end to end (whoever reads the file cuts them out); end_file(total) then says how long the file was.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "../model/safetensors_header.h"
#include "../status.h"
#include "model.h"
#include "weights.h"

namespace attnlab::lm {

// What the package's wasm memory can hold (wasm32 with the module's 2 GiB maximum).
inline constexpr std::size_t kDefaultMemoryLimit = std::size_t{1} << 31;

class Loader {
 public:
  // generation may be empty (no generation_config.json). memory_limit: the most the weights may take.
  static Status create(std::string_view config, std::string_view generation, std::unique_ptr<Loader>& out,
                       std::size_t memory_limit = kDefaultMemoryLimit, std::size_t rank = 0, std::size_t ranks = 1);
  // create()'s checks of rank and ranks (they read no file).
  static Status check_ranks(std::size_t rank, std::size_t ranks);

  const LmConfig& config() const noexcept { return weights_->config(); }
  Status set_index(std::string_view text);
  // The safetensors files to send: model.safetensors, or the index's shards (sorted by name).
  const std::vector<std::string>& files() const noexcept { return files_; }
  Status begin_file(std::string_view name);
  Status feed(const std::uint8_t* data, std::size_t n);
  // A shard's: `total`, the bytes of the whole file (a whole model's loader counts them itself).
  Status end_file(std::uint64_t total = 0);
  // A shard's, once the file's header is in: the byte ranges of the file it keeps, [begin, end) pairs of offsets
  // from the file's start, in order; empty before the header (and for a whole model).
  const std::vector<std::uint64_t>& routes() const noexcept { return route_list_; }
  bool header_done() const noexcept { return stage_ == Stage::data; }
  // The length of the file being received as its header describes it (once the header is read).
  std::uint64_t described_size() const noexcept { return 8 + header_len_ + data_size_; }
  Status finish(std::unique_ptr<LmModel>& out);
  std::size_t bytes() const noexcept { return weights_ ? weights_->bytes() : 0; }

 private:
  Loader() = default;
  Status fail(Status s);
  Status on_header();
  Status on_data(const std::uint8_t* data, std::size_t n);
  Status on_routed(const std::uint8_t* data, std::size_t n);
  void plan_routes();
  bool routed() const noexcept { return weights_ && weights_->shard().ranks > 1; }

  std::unique_ptr<WeightSet> weights_;
  std::size_t limit_ = kDefaultMemoryLimit;
  bool indexed_ = false;
  std::vector<std::string> files_;
  std::vector<bool> received_;
  Status failed_;  // the first error; every later call returns it

  // The file being streamed.
  enum class Stage : std::uint8_t { none, length, header, data } stage_ = Stage::none;
  std::string file_;
  std::uint64_t header_len_ = 0, data_size_ = 0, offset_ = 0;  // offset_: bytes of data placed so far
  std::uint8_t length_[8] = {};
  std::size_t length_got_ = 0;
  std::string header_;
  struct Part {
    std::uint64_t begin, end;
    Placement place;
  };
  std::vector<Part> parts_;  // this file's tensors by offset
  std::size_t part_ = 0;
  // A shard's runs of this file: bytes [begin, end) of the file are elements index… of part `part`, stored shifted.
  struct Route {
    std::uint64_t begin, end, index;
    std::size_t part;
    std::ptrdiff_t row_shift, col_shift;
  };
  std::vector<Route> routes_;
  std::vector<std::uint64_t> route_list_;
  std::size_t route_ = 0;
  std::uint64_t route_at_ = 0;  // bytes of routes_[route_] placed
};

}  // namespace attnlab::lm
