// The safetensors header (huggingface/safetensors): the JSON after the 8-byte length, read and checked once for
// every reader of the format — the small GPT's file (safetensors.cpp) and a checkpoint streamed in (lm/loader.cpp).
// Functions return false with a reason (a sentence without the file's name) that the caller wraps.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attnlab::model {

// A header is limited to 16 MiB (a model's is a few KiB to a few hundred).
inline constexpr std::uint64_t kMaxSafetensorsHeader = std::uint64_t{16} << 20;

struct HeaderEntry {
  std::string name, dtype;
  std::vector<std::uint64_t> shape;
  std::uint64_t begin = 0, end = 0;  // data_offsets, relative to the data after the header
};

struct Header {
  std::vector<std::pair<std::string, std::string>> meta;  // __metadata__, strings only
  std::vector<HeaderEntry> entries;                       // in document order
};

// The header's JSON text: an object of entries {dtype, shape (≤ 8 sizes), data_offsets [begin ≤ end]} and an
// optional __metadata__ of strings.
bool parse_header(std::string_view text, Header& out, std::string& reason);

// Elements of an entry's shape (saturating at 2⁴¹ for absurd shapes, so that a product never wraps).
std::uint64_t element_count(const HeaderEntry& e) noexcept;

// The format's rules on offsets, for data of data_size bytes: every entry inside it, spanning exactly
// element_count × width(dtype) bytes (width 0: an unsupported dtype, refused with `supported` in the reason), and
// the entries tiling [0, data_size) with no overlap and no hole.
bool check_offsets(const Header& h, std::uint64_t data_size, std::size_t (*width)(const std::string& dtype),
                   const char* supported, std::string& reason);

// The data size a header implies (its largest end offset).
std::uint64_t data_size(const Header& h) noexcept;

// A JSON key as messages show it: quoted, escaped, at most 100 characters.
std::string quoted_key(const std::string& key);

}  // namespace attnlab::model
