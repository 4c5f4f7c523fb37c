#include "loader.h"

#include <algorithm>
#include <cmath>
#include <new>

#include "../format.h"
#include "../model/json.h"
#include "shard.h"

namespace attnlab::lm {

namespace {

namespace json = model::json;

constexpr const char* kIndex = "model.safetensors.index.json";
constexpr const char* kSingle = "model.safetensors";

// Bytes per element of every dtype safetensors defines: buffers the loader skips may have any of them.
std::size_t any_width(const std::string& t) {
  if (t == "F32" || t == "I32" || t == "U32") return 4;
  if (t == "F16" || t == "BF16" || t == "I16" || t == "U16") return 2;
  if (t == "F64" || t == "I64" || t == "U64") return 8;
  if (t == "BOOL" || t == "U8" || t == "I8" || t == "F8_E4M3" || t == "F8_E5M2") return 1;
  return 0;
}

bool weight_dtype(const std::string& t, DType& out) {
  if (t == "F32") return out = DType::f32, true;
  if (t == "F16") return out = DType::f16, true;
  if (t == "BF16") return out = DType::bf16, true;
  return false;
}

std::string shape_text(const std::vector<std::uint64_t>& s) {
  std::string r = "[";
  for (std::size_t i = 0; i < s.size(); ++i) r += detail::format(i ? ", %llu" : "%llu", (unsigned long long)s[i]);
  return r + "]";
}

// A shard's file name: a plain name ending in .safetensors (no path: a URL loader fetches it beside the index).
bool plain_name(const std::string& s) {
  if (s.size() < 13 || s.size() > 200 || s.compare(s.size() - 12, 12, ".safetensors") != 0 || s[0] == '.') return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
  });
}

double mib(double bytes) { return bytes / 1048576.0; }  // printed with %.4g

}  // namespace

Status Loader::check_ranks(std::size_t rank, std::size_t ranks) {
  if (ranks < 1 || ranks > kMaxRanks)
    return detail::range_errorf("ranks", "a model is cut into 1 to %zu shards, got %zu", kMaxRanks, ranks);
  if (rank >= ranks) return detail::range_errorf("rank", "rank must be below ranks = %zu, got %zu", ranks, rank);
  return Status::success();
}

Status Loader::create(std::string_view config, std::string_view generation, std::unique_ptr<Loader>& out,
                      std::size_t memory_limit, std::size_t rank, std::size_t ranks) {
  out.reset();
  if (auto s = check_ranks(rank, ranks); !s.ok()) return s;
  LmConfig c;
  if (auto s = parse_config(config, c); !s.ok()) return s;
  if (!generation.empty())
    if (auto s = parse_generation_config(generation, c); !s.ok()) return s;
  // Even at 16 bits per weight the model must fit; the exact check comes with each file's dtypes.
  const double least = WeightSet::weight_bytes(c, 2.0);
  if (ranks == 1 && least > double(memory_limit))
    return detail::range_errorf("config.json", "config.json: this %s needs at least %.4g MiB for its weights (%.0f million of them, "
                                "the matrices at 16 bits), more than the %.4g MiB of memory the engine can use", c.architecture.c_str(),
                                mib(least), WeightSet::weight_count(c) / 1e6, mib(double(memory_limit)));
  std::unique_ptr<Loader> l(new (std::nothrow) Loader());
  if (!l) return Status::no_memory("the loader");
  if (auto s = WeightSet::plan(c, plan_shard(c, rank, ranks), l->weights_); !s.ok()) return s;
  // A shard: its own slices must fit (each worker has its own memory).
  if (const double share = l->weights_->planned_bytes(2.0); ranks > 1 && share > double(memory_limit))
    return detail::range_errorf("config.json", "config.json: one worker's share of this %s (1 of %zu) needs at least %.4g MiB for its "
                                "weights (at 16 bits), more than the %.4g MiB of memory the engine can use", c.architecture.c_str(),
                                ranks, mib(share), mib(double(memory_limit)));
  l->limit_ = memory_limit;
  l->files_ = {kSingle};
  l->received_ = {false};
  out = std::move(l);
  return Status::success();
}

Status Loader::fail(Status s) {
  failed_ = s;
  weights_.reset();  // nothing half-loaded stays
  parts_.clear();
  header_.clear();
  header_.shrink_to_fit();
  return s;
}

Status Loader::set_index(std::string_view text) {
  using Type = json::Value::Type;
  if (!failed_.ok()) return failed_;
  if (stage_ != Stage::none || std::any_of(received_.begin(), received_.end(), [](bool b) { return b; }))
    return fail(detail::range_errorf(kIndex, "%s must come before any safetensors file", kIndex));
  json::Value root;
  std::string error;
  if (!json::parse(text, root, error)) return fail(detail::range_errorf(kIndex, "%s is not valid JSON (%s)", kIndex, error.c_str()));
  const json::Value* map = root.type == Type::object ? root.find("weight_map") : nullptr;
  if (!map || map->type != Type::object)
    return fail(detail::range_errorf(kIndex, "%s: weight_map must be an object of tensor name → file name", kIndex));
  if (const json::Value* meta = root.find("metadata"); meta && meta->type == Type::object)
    if (const json::Value* total = meta->find("total_size"); total && total->type == Type::number && total->number > double(limit_))
      return fail(detail::range_errorf(kIndex, "%s: metadata.total_size = %.0f bytes is more than the %.4g MiB of memory the engine can use",
                                       kIndex, total->number, mib(double(limit_))));
  std::vector<std::string> files;
  for (std::size_t i = 0; i < map->keys.size(); ++i) {
    const std::string& name = map->keys[i];
    const json::Value& f = map->members[i];
    if (f.type != Type::string || !plain_name(f.string))
      return fail(detail::range_errorf(kIndex, "%s: weight_map[%s] must be a file name ending in .safetensors (no path), got %s",
                                       kIndex, model::quoted_key(name).c_str(),
                                       f.type == Type::string ? model::quoted_key(f.string).c_str() : "something else"));
    Slot* s = weights_->find(name);
    if (!s)
      return fail(detail::range_errorf(kIndex, "%s: weight_map lists %s, which a %s (config.json) does not have", kIndex,
                                       model::quoted_key(name).c_str(), config().architecture.c_str()));
    s->file = f.string;
    if (std::find(files.begin(), files.end(), f.string) == files.end()) files.push_back(f.string);
  }
  for (const Slot& s : weights_->slots())
    if (s.kind != Slot::Kind::ignored && s.file.empty())
      return fail(detail::range_errorf(kIndex, "%s: weight_map lacks %s, which a %s with this config.json has", kIndex,
                                       s.name.c_str(), config().architecture.c_str()));
  std::sort(files.begin(), files.end());
  files_ = std::move(files);
  received_.assign(files_.size(), false);
  indexed_ = true;
  return Status::success();
}

Status Loader::begin_file(std::string_view name) {
  if (!failed_.ok()) return failed_;
  const std::string n(name);
  if (stage_ != Stage::none)
    return fail(detail::range_errorf(n.c_str(), "%s: %s is still being received; end it first", n.c_str(), file_.c_str()));
  const auto it = std::find(files_.begin(), files_.end(), n);
  if (it == files_.end())
    return fail(detail::range_errorf(n.c_str(), "%s is not one of the checkpoint's files (%s%s)", n.c_str(), files_[0].c_str(),
                                     files_.size() > 1 ? detail::format(" … %s, from the index", files_.back().c_str()).c_str() : ""));
  if (received_[std::size_t(it - files_.begin())])
    return fail(detail::range_errorf(n.c_str(), "%s was already received", n.c_str()));
  file_ = n;
  stage_ = Stage::length;
  length_got_ = 0, header_len_ = 0, data_size_ = 0, offset_ = 0, part_ = 0;
  header_.clear();
  parts_.clear();
  return Status::success();
}

Status Loader::feed(const std::uint8_t* data, std::size_t n) {
  if (!failed_.ok()) return failed_;
  if (stage_ == Stage::none) return fail(Status::range_error("bytes", "no file is being received: begin one first"));
  while (n > 0) {
    if (stage_ == Stage::length) {
      const std::size_t take = std::min(n, std::size_t(8) - length_got_);
      std::copy(data, data + take, length_ + length_got_);
      length_got_ += take, data += take, n -= take;
      if (length_got_ < 8) return Status::success();
      for (int i = 7; i >= 0; --i) header_len_ = (header_len_ << 8) | length_[i];
      if (header_len_ > model::kMaxSafetensorsHeader)
        return fail(detail::range_errorf(file_.c_str(), "%s: not a usable safetensors file: the header length %llu exceeds 16 MiB",
                                         file_.c_str(), (unsigned long long)header_len_));
      stage_ = Stage::header;
      header_.reserve(std::size_t(header_len_));
      if (header_len_ == 0)  // an empty header is complete (and refused) with its length
        if (auto s = on_header(); !s.ok()) return fail(std::move(s));
    } else if (stage_ == Stage::header) {
      const std::size_t take = std::size_t(std::min<std::uint64_t>(n, header_len_ - header_.size()));
      header_.append(reinterpret_cast<const char*>(data), take);
      data += take, n -= take;
      if (header_.size() < header_len_) return Status::success();
      if (auto s = on_header(); !s.ok()) return fail(std::move(s));
    } else {
      return routed() ? on_routed(data, n) : on_data(data, n);
    }
  }
  return Status::success();
}

Status Loader::on_header() {
  const char* f = file_.c_str();
  model::Header h;
  std::string reason;
  if (!model::parse_header(header_, h, reason))
    return detail::range_errorf(f, "%s: not a usable safetensors file: %s", f, reason.c_str());
  header_.clear();
  header_.shrink_to_fit();
  data_size_ = model::data_size(h);
  for (const model::HeaderEntry& e : h.entries)  // the dtype of a weight is named before any offset arithmetic
    if (DType t; !weight_dtype(e.dtype, t) && !(weights_->find(e.name) && weights_->find(e.name)->kind == Slot::Kind::ignored))
      return detail::range_errorf(f, "%s: %s has dtype %s; F32, F16 and BF16 weights are supported (not quantized or 8-bit ones)",
                                  f, model::quoted_key(e.name).c_str(), model::quoted_key(e.dtype).c_str());
  if (!model::check_offsets(h, data_size_, any_width, "the safetensors dtypes are", reason))
    return detail::range_errorf(f, "%s: not a usable safetensors file: %s", f, reason.c_str());

  // Every tensor against the plan before anything is allocated.
  std::vector<Slot*> slots(h.entries.size());
  double need = 0;
  for (std::size_t i = 0; i < h.entries.size(); ++i) {
    const model::HeaderEntry& e = h.entries[i];
    Slot* s = weights_->find(e.name);
    if (!s)
      return detail::range_errorf(f, "%s: %s is not a tensor of a %s (config.json); is this the right checkpoint?", f,
                                  model::quoted_key(e.name).c_str(), config().architecture.c_str());
    slots[i] = s;
    if (s->kind == Slot::Kind::ignored) continue;
    if (indexed_ && s->file != file_)
      return detail::range_errorf(f, "%s holds %s, which %s assigns to %s", f, s->name.c_str(), kIndex, s->file.c_str());
    if (s->filled || std::find(slots.begin(), slots.begin() + std::ptrdiff_t(i), s) != slots.begin() + std::ptrdiff_t(i))
      return detail::range_errorf(f, "%s: %s is given twice", f, s->name.c_str());
    if (e.shape != s->shape)
      return detail::range_errorf(f, "%s: %s has shape %s, but config.json's sizes need %s", f, s->name.c_str(),
                                  shape_text(e.shape).c_str(), shape_text(s->shape).c_str());
    DType t = DType::f32;
    weight_dtype(e.dtype, t);
    need += s->matrix ? double(((s->matrix->rows + 7) / 8) * 8 * s->matrix->cols * dtype_bytes(t))
                      : 4.0 * double(s->take.row_count()) * double(s->kind == Slot::Kind::table ? s->shape[1] : 1);
  }
  if (double(weights_->bytes()) + need > double(limit_))
    return detail::range_errorf(f, "%s: the weights need %.4g MiB in memory with this file's, more than the %.4g MiB the engine can use",
                                f, mib(double(weights_->bytes()) + need), mib(double(limit_)));
  parts_.reserve(h.entries.size());
  for (std::size_t i = 0; i < h.entries.size(); ++i) {
    const model::HeaderEntry& e = h.entries[i];
    Slot& s = *slots[i];
    DType t = DType::f32;
    if (s.kind != Slot::Kind::ignored) {
      weight_dtype(e.dtype, t);
      if (auto st = weights_->allocate(s, t, file_); !st.ok()) return st;
      s.filled = true;
    } else {
      t = any_width(e.dtype) == 4 ? DType::f32 : DType::f16;  // skipped: only the width counts
    }
    const std::uint64_t count = any_width(e.dtype) ? (e.end - e.begin) / dtype_bytes(t) : 0;
    if (e.end > e.begin) parts_.push_back({e.begin, e.end, Placement(s, t, count)});
  }
  std::sort(parts_.begin(), parts_.end(), [](const Part& a, const Part& b) { return a.begin < b.begin; });
  if (routed()) plan_routes();
  stage_ = Stage::data;
  return Status::success();
}

void Loader::plan_routes() {
  routes_.clear(), route_list_.clear();
  route_ = 0, route_at_ = 0;
  const std::uint64_t base = 8 + header_len_;
  for (std::size_t i = 0; i < parts_.size(); ++i) {
    const Slot& s = parts_[i].place.slot();
    if (s.kind == Slot::Kind::ignored) continue;
    const std::uint64_t w = dtype_bytes(parts_[i].place.from());
    const std::uint64_t at = base + parts_[i].begin;
    // Elements [first, first + count) of the file's tensor, stored shifted: a run, merged with the one before
    // when it continues it.
    auto run = [&](std::uint64_t first, std::uint64_t count, std::ptrdiff_t row_shift, std::ptrdiff_t col_shift) {
      if (!count) return;
      const std::uint64_t b = at + first * w, e = b + count * w;
      if (!routes_.empty()) {
        Route& last = routes_.back();
        if (last.part == i && last.end == b && last.row_shift == row_shift && last.col_shift == col_shift) {
          last.end = e;
          return;
        }
      }
      routes_.push_back({b, e, first, i, row_shift, col_shift});
    };
    const Selection& t = s.take;
    std::size_t kept = 0;  // rows of the earlier ranges: where this range starts in the shard's storage
    for (std::size_t k = 0; k < t.ranges; kept += t.rows[k].size(), ++k) {
      const Span r = t.rows[k];
      const std::ptrdiff_t rs = std::ptrdiff_t(kept) - std::ptrdiff_t(r.begin);
      if (s.kind == Slot::Kind::vector) {
        run(r.begin, r.size(), rs, 0);
      } else if (s.kind == Slot::Kind::table) {
        const std::uint64_t cols = s.shape[1];
        run(r.begin * cols, r.size() * cols, rs, 0);
      } else if (s.kind == Slot::Kind::linear) {  // file [rows, cols]: row by row, the kept columns
        const std::uint64_t cols = s.shape[1];
        const std::ptrdiff_t cs = -std::ptrdiff_t(t.cols.begin);
        for (std::size_t row = r.begin; row < r.end; ++row) run(row * cols + t.cols.begin, t.cols.size(), rs, cs);
      }
    }
    if (s.kind == Slot::Kind::conv1d) {  // file [cols, rows] (in, out): for each kept column, the kept rows
      const std::uint64_t rows = s.shape[1];
      const std::ptrdiff_t cs = -std::ptrdiff_t(t.cols.begin);
      for (std::size_t col = t.cols.begin; col < t.cols.end; ++col) {
        std::size_t before = 0;
        for (std::size_t k = 0; k < t.ranges; before += t.rows[k].size(), ++k)
          run(col * rows + t.rows[k].begin, t.rows[k].size(), std::ptrdiff_t(before) - std::ptrdiff_t(t.rows[k].begin), cs);
      }
    }
  }
  route_list_.reserve(2 * routes_.size());
  for (const Route& r : routes_) route_list_.push_back(r.begin), route_list_.push_back(r.end);
}

Status Loader::on_routed(const std::uint8_t* data, std::size_t n) {
  while (n > 0) {
    if (route_ == routes_.size())
      return fail(detail::range_errorf("bytes", "%s: this shard was sent more bytes than its routes of the file hold", file_.c_str()));
    const Route& r = routes_[route_];
    Placement& place = parts_[r.part].place;
    if (route_at_ == 0) place.seek(r.index, r.row_shift, r.col_shift);
    const std::size_t take = std::size_t(std::min<std::uint64_t>(n, r.end - r.begin - route_at_));
    if (auto s = place.put(data, take, file_); !s.ok()) return fail(std::move(s));
    route_at_ += take, data += take, n -= take;
    if (route_at_ == r.end - r.begin) ++route_, route_at_ = 0;
  }
  return Status::success();
}

Status Loader::on_data(const std::uint8_t* data, std::size_t n) {
  while (n > 0) {
    if (offset_ >= data_size_)
      return fail(detail::range_errorf(file_.c_str(), "%s is longer than its header describes (%llu bytes of data after the header)",
                                       file_.c_str(), (unsigned long long)data_size_));
    Part& p = parts_[part_];
    const std::size_t take = std::size_t(std::min<std::uint64_t>(n, p.end - offset_));
    if (auto s = p.place.put(data, take, file_); !s.ok()) return fail(std::move(s));
    offset_ += take, data += take, n -= take;
    if (offset_ == p.end) ++part_;
  }
  return Status::success();
}

Status Loader::end_file(std::uint64_t total) {
  if (!failed_.ok()) return failed_;
  const char* f = file_.c_str();
  if (stage_ == Stage::none) return fail(Status::range_error("bytes", "no file is being received"));
  // A shard was sent its routes alone: the file's length says whether it was whole.
  const std::uint64_t placed = routed() ? (total >= 8 + header_len_ ? total - 8 - header_len_ : 0) : offset_;
  if (routed() && stage_ == Stage::data && placed > data_size_)
    return fail(detail::range_errorf(f, "%s is longer than its header describes (%llu bytes of data after the header)", f,
                                     (unsigned long long)data_size_));
  if (stage_ != Stage::data || placed < data_size_) {
    const std::uint64_t got = stage_ == Stage::length ? length_got_
                              : stage_ == Stage::header ? 8 + header_.size()
                                                        : 8 + header_len_ + placed;
    return fail(detail::range_errorf(f, "%s is truncated: it ended after %llu bytes%s", f, (unsigned long long)got,
                                     stage_ == Stage::data ? detail::format(", its header describes %llu", (unsigned long long)(8 + header_len_ + data_size_)).c_str()
                                     : stage_ == Stage::header ? " inside its header" : " (a safetensors file starts with 8 bytes of header length)"));
  }
  if (routed() && route_ != routes_.size())
    return fail(detail::range_errorf("bytes", "%s: this shard was sent %s of its routes of the file", f, route_ ? "only some" : "none"));
  for (Part& p : parts_)
    if (auto s = weights_->seal(p.place.slot(), file_); !s.ok()) return fail(std::move(s));
  received_[std::size_t(std::find(files_.begin(), files_.end(), file_) - files_.begin())] = true;
  stage_ = Stage::none;
  parts_.clear();
  routes_.clear(), routes_.shrink_to_fit();
  route_list_.clear(), route_list_.shrink_to_fit();
  return Status::success();
}

Status Loader::finish(std::unique_ptr<LmModel>& out) {
  if (!failed_.ok()) return failed_;
  if (stage_ != Stage::none) return fail(detail::range_errorf(file_.c_str(), "%s was not ended", file_.c_str()));
  for (std::size_t i = 0; i < files_.size(); ++i)
    if (!received_[i]) return fail(detail::range_errorf(files_[i].c_str(), "%s was not received", files_[i].c_str()));
  for (const Slot& s : weights_->slots())
    if (s.kind != Slot::Kind::ignored && !s.filled) {
      const std::string& where = s.file.empty() ? files_[0] : s.file;
      return fail(detail::range_errorf(where.c_str(), "%s lacks %s, which a %s with this config.json has", where.c_str(),
                                       s.name.c_str(), config().architecture.c_str()));
    }
  if (auto s = LmModel::create(std::move(weights_), out); !s.ok()) return fail(std::move(s));
  failed_ = Status::range_error("loader", "this loader already finished: its model was handed over");
  return Status::success();
}

}  // namespace attnlab::lm
