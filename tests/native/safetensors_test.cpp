// The model in the safetensors format: round trip bit for bit, the header as the format specifies, the config from
// metadata or shapes, other dtypes, and hostile files (each a range error naming "bytes", never a crash).
// The JSON reader on its own too. (A file written by NumPy is checked against NumPy's logits in the JS suite.)
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "model/gpt.h"
#include "model/json.h"
#include "model/safetensors.h"
#include "model/safetensors_header.h"
#include "testing.h"

namespace m = attnlab::model;
using Bytes = std::vector<std::uint8_t>;

namespace {

std::unique_ptr<m::GPT> make(const m::GPTConfig& c) {
  std::unique_ptr<m::GPT> g;
  REQUIRE(m::GPT::create(c, g).ok());
  return g;
}

Bytes save(const m::GPT& g) {
  Bytes b(m::safetensors_size(g));
  m::write_safetensors(g, b);
  return b;
}

std::string header_of(const Bytes& b) {
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | b[std::size_t(i)];
  return std::string(b.begin() + 8, b.begin() + 8 + std::ptrdiff_t(n));
}

// A file from a header and raw data (header padded to 8).
Bytes file(std::string header, const Bytes& data) {
  header.resize((header.size() + 7) / 8 * 8, ' ');
  Bytes b(8 + header.size() + data.size());
  for (int i = 0; i < 8; ++i) b[std::size_t(i)] = std::uint8_t(std::uint64_t(header.size()) >> (8 * i));
  std::memcpy(b.data() + 8, header.data(), header.size());
  if (!data.empty()) std::memcpy(b.data() + 8 + header.size(), data.data(), data.size());
  return b;
}

m::GPTConfig small() {
  m::GPTConfig c;
  c.vocab_size = 7, c.context = 5, c.d_model = 4, c.heads = 2, c.kv_heads = 1, c.layers = 2, c.seed = 3;
  return c;
}

void expect_bad(const Bytes& b, const std::string& text) {
  std::unique_ptr<m::GPT> g;
  const auto st = m::load_safetensors(b, g);
  INFO(st.message);
  CHECK(st.kind == attnlab::ErrorKind::range);
  CHECK(st.arg == "bytes");
  CHECK(st.message.find(text) != std::string::npos);
  CHECK(!g);
}

}  // namespace

TEST_CASE("safetensors: write → load round-trips every weight bit for bit, and the config", "[safetensors]") {
  for (bool tied : {true, false})
    for (bool bias : {true, false})
      for (bool mlp : {true, false}) {
        m::GPTConfig c = small();
        c.tied = tied, c.bias = bias, c.mlp = mlp, c.seed = 11;
        if (!bias && mlp) c.position = m::Position::rope, c.d_model = 8;  // rotary: no wpe; the context from metadata
        auto g = make(c);
        std::vector<std::int32_t> tokens{1, 2, 3, 4, 5}, targets{2, 3, 4, 5, 6};
        float loss;
        REQUIRE(g->train_step(tokens, targets, 5, {}, loss).ok());  // weights that are not the seed's
        const Bytes b = save(*g);
        std::unique_ptr<m::GPT> h;
        const auto st = m::load_safetensors(b, h);
        INFO(st.message);
        REQUIRE(st.ok());
        const auto& hc = h->config();
        CHECK(hc.vocab_size == c.vocab_size);
        CHECK(hc.context == c.context);
        CHECK(hc.d_model == c.d_model);
        CHECK(hc.heads == c.heads);
        CHECK(hc.kv_heads == 1);
        CHECK(hc.layers == c.layers);
        CHECK(hc.tied == tied);
        CHECK(hc.bias == bias);
        CHECK(hc.mlp == mlp);
        CHECK(hc.seed == 11);
        CHECK(hc.position == c.position);
        CHECK(std::memcmp(h->parameters().data(), g->parameters().data(), g->parameters().size_bytes()) == 0);
        CHECK(save(*h) == b);
      }
}

TEST_CASE("safetensors: the header is the format's — length, padding, dtype, shapes, offsets, metadata", "[safetensors]") {
  auto g = make(small());
  const Bytes b = save(*g);
  const std::string h = header_of(b);
  CHECK(h.size() % 8 == 0);
  m::json::Value v;
  std::string err;
  REQUIRE(m::json::parse(h, v, err));
  const auto* meta = v.find("__metadata__");
  REQUIRE(meta);
  CHECK(meta->find("format")->string == "pt");
  CHECK(meta->find("n_head")->string == "2");
  CHECK(meta->find("n_kv_head")->string == "1");
  CHECK(meta->find("block_size")->string == "5");
  CHECK(meta->find("position")->string == "learned");
  const auto* attn = v.find("transformer.h.1.attn.c_attn.weight");
  REQUIRE(attn);
  CHECK(attn->find("dtype")->string == "F32");
  CHECK(attn->find("shape")->array.size() == 2);
  CHECK(attn->find("shape")->array[0].index == 8);  // (2 + 2·1)·2
  CHECK(attn->find("shape")->array[1].index == 4);
  CHECK(!v.find("lm_head.weight"));  // tied: written once
  // The first tensor's bytes are transformer.wte.weight, row-major [vocab, d].
  std::vector<float> wte(28);
  g->read_tensor(g->layout().tensors[0], wte.data());
  CHECK(std::memcmp(b.data() + 8 + h.size(), wte.data(), 28 * 4) == 0);
}

TEST_CASE("safetensors: config from shapes when the metadata has only n_head, and F16, BF16, F64 tensors", "[safetensors]") {
  auto g = make(small());
  const Bytes b = save(*g);
  m::json::Value v;
  std::string err;
  REQUIRE(m::json::parse(header_of(b), v, err));
  const std::size_t data_at = 8 + header_of(b).size();
  // Rebuild the file with another dtype per tensor and a minimal metadata block.
  for (const char* dtype : {"F32", "F16", "BF16", "F64"}) {
    std::string header = "{\"__metadata__\":{\"n_head\":\"2\"}";
    Bytes data;
    for (std::size_t r = 0; r < v.keys.size(); ++r) {
      const std::string& name = v.keys[r];
      const m::json::Value& e = v.members[r];
      if (name == "__metadata__") continue;
      const std::size_t begin = std::size_t(e.find("data_offsets")->array[0].index), count = std::size_t(e.find("data_offsets")->array[1].index - begin) / 4;
      const std::size_t at = data.size();
      for (std::size_t i = 0; i < count; ++i) {
        float f;
        std::memcpy(&f, b.data() + data_at + begin + 4 * i, 4);
        if (std::string(dtype) == "F32") {
          data.insert(data.end(), reinterpret_cast<std::uint8_t*>(&f), reinterpret_cast<std::uint8_t*>(&f) + 4);
        } else if (std::string(dtype) == "F64") {
          double x = f;
          data.insert(data.end(), reinterpret_cast<std::uint8_t*>(&x), reinterpret_cast<std::uint8_t*>(&x) + 8);
        } else {
          std::uint32_t bits;
          std::memcpy(&bits, &f, 4);
          std::uint16_t h16;
          if (std::string(dtype) == "BF16") {
            h16 = std::uint16_t(bits >> 16);  // truncation: exactly representable back
          } else {  // F16 of a value that is exact in half precision: scale the float so it is (|x| < 2, 10 bits)
            const float q = std::round(f * 1024.0f) / 1024.0f;
            std::uint32_t qb;
            std::memcpy(&qb, &q, 4);
            const int exp = int((qb >> 23) & 0xff) - 127;
            h16 = q == 0.0f ? std::uint16_t((qb >> 16) & 0x8000)
                  : exp < -14 ? std::uint16_t(((qb >> 16) & 0x8000) | std::uint32_t(std::lround(std::fabs(q) * 16777216.0f)))
                              : std::uint16_t(((qb >> 16) & 0x8000) | std::uint32_t((exp + 15) << 10) | ((qb >> 13) & 0x3ff));
          }
          data.insert(data.end(), reinterpret_cast<std::uint8_t*>(&h16), reinterpret_cast<std::uint8_t*>(&h16) + 2);
        }
      }
      std::string shape = "[";
      for (const auto& s : e.find("shape")->array) shape += (shape.size() > 1 ? "," : "") + std::to_string(s.index);
      header += ",\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape + "],\"data_offsets\":[" +
                std::to_string(at) + "," + std::to_string(data.size()) + "]}";
    }
    header += "}";
    std::unique_ptr<m::GPT> h;
    const auto st = m::load_safetensors(file(header, data), h);
    INFO(dtype << ": " << st.message);
    REQUIRE(st.ok());
    CHECK(h->config().kv_heads == 1);  // from c_attn's rows
    CHECK(h->config().context == 5);   // from wpe
    CHECK(h->config().layers == 2);
    const auto p = h->parameters(), q = g->parameters();
    std::size_t off = 0;
    for (std::size_t i = 0; i < p.size(); ++i) {
      const float want = q[i];
      const double tol = std::string(dtype) == "BF16" ? std::fabs(want) * 0x1p-7 : std::string(dtype) == "F16" ? 1.0 / 2048 : 0.0;
      off += std::fabs(p[i] - want) > tol;
    }
    CHECK(off == 0);
  }
}

TEST_CASE("safetensors: hostile and broken files are range errors naming bytes", "[safetensors]") {
  auto g = make(small());
  const Bytes good = save(*g);
  const std::string h = header_of(good);
  const Bytes data(good.begin() + 8 + std::ptrdiff_t(h.size()), good.end());
  expect_bad({}, "fewer than the 8");
  expect_bad(Bytes(good.begin(), good.begin() + 7), "fewer than the 8");
  Bytes huge = good;
  huge[5] = 1;  // header length 2⁴⁰
  expect_bad(huge, "exceeds");
  Bytes past = good;
  past[0] = std::uint8_t(past[0] + 1), past[1] = std::uint8_t(past[1] + 4);
  expect_bad(Bytes(past.begin(), past.begin() + 100), "exceeds");
  expect_bad(file("[1,2]", {}), "starting with '{'");
  expect_bad(file("{\"a\":", {}), "malformed");
  expect_bad(file("{\"a\":1,\"a\":2}", {}), "duplicate key");
  expect_bad(file(std::string(70, '[') , {}), "starting with '{'");
  expect_bad(file("{\"x\":" + std::string(70, '[') + std::string(70, ']') + "}", {}), "nesting deeper than 64");
  expect_bad(file("{\"a\":\"\\ud800\"}", {}), "lone high surrogate");
  expect_bad(file("{\"a\":\"\xff\"}", {}), "invalid UTF-8");
  auto swap = [&](const std::string& from, const std::string& to) {
    std::string x = h;
    const auto at = x.find(from);
    REQUIRE(at != std::string::npos);
    x.replace(at, from.size(), to);
    return x;
  };
  expect_bad(file(swap("\"dtype\":\"F32\"", "\"dtype\":\"I64\""), data), "F32, F16, BF16 and F64 are supported");
  expect_bad(file(swap("\"n_head\":\"2\"", "\"n_headz\":\"2\""), data), "must give n_head");
  expect_bad(file(swap("\"n_head\":\"2\"", "\"n_head\":\"two\""), data), "is not a size");
  expect_bad(file(swap("\"n_head\":\"2\"", "\"n_head\":\"3\""), data), "not a valid model");
  expect_bad(file(swap("\"n_head\":\"2\"", "\"n_head\":7"), data), "must be a string");
  expect_bad(file(swap("\"bias\":\"true\"", "\"bias\":\"maybe\""), data), "is not true or false");
  expect_bad(file(h, Bytes(data.begin(), data.end() - 4)), "end past the data");
  Bytes longer = data;
  longer.push_back(0), longer.push_back(0), longer.push_back(0), longer.push_back(0);
  expect_bad(file(h, longer), "the data's last 4 bytes, after ");
  // A tensor's bytes moved on by 4: the 4 before it are in none (its neighbours named), the 4 after in two.
  expect_bad(file(swap("\"data_offsets\":[0,112]", "\"data_offsets\":[4,116]"), data), "the data's bytes 0 to 4, before ");
  {
    m::Header two;
    two.entries = {{"a", "F32", {2}, 0, 8}, {"b", "F32", {2}, 4, 12}, {"c", "F32", {1}, 16, 20}};
    std::string reason;
    const auto width = [](const std::string&) -> std::size_t { return 4; };
    CHECK_FALSE(m::check_offsets(two, 20, width, "F32", reason));
    CHECK(reason == "\"a\" (bytes 0 to 8) and \"b\" (bytes 4 to 12) overlap in the data");
    two.entries[1] = {"b", "F32", {2}, 8, 16}, two.entries[2] = {"c", "F32", {1}, 20, 24};
    CHECK_FALSE(m::check_offsets(two, 24, width, "F32", reason));
    CHECK(reason == "the data's bytes 16 to 20, between \"b\" and \"c\", are in no tensor (is one missing from the header?)");
    two.entries.pop_back();
    CHECK_FALSE(m::check_offsets(two, 24, width, "F32", reason));
    CHECK(reason == "the data's last 8 bytes, after \"b\", are in no tensor (is one missing from the header?)");
  }
  expect_bad(file(swap("\"shape\":[7,4]", "\"shape\":[7,5]"), data), "bytes but its dtype and shape need");
  expect_bad(file(swap("\"shape\":[5,4]", "\"shape\":[4,5]"), data), "has shape [4,5], the config needs [5,4]");
  expect_bad(file(swap("\"data_offsets\":[0,112]", "\"data_offsets\":[112,0]"), data), "begin <= end");
  expect_bad(file(swap("\"data_offsets\":[0,112]", "\"data_offsets\":[0,112.0]"), data), "data_offsets");
  expect_bad(file(swap("transformer.h.1.ln_2.bias", "transformer.h.1.ln_3.bias"), data), "lacks transformer.h.1.ln_2.bias");
  Bytes nan = data;
  const float bad_value = NAN;
  std::memcpy(nan.data() + 8, &bad_value, 4);
  expect_bad(file(h, nan), "transformer.wte.weight[2] is NaN");
  // Overlap: two tensors claiming the same bytes (and so a hole elsewhere).
  const std::string overlap = swap("\"data_offsets\":[112,192]", "\"data_offsets\":[108,188]");
  expect_bad(file(overlap, data), "overlap");
}

TEST_CASE("json: the reader accepts RFC 8259 and nothing else", "[safetensors]") {
  auto ok = [](const std::string& text) {
    m::json::Value v;
    std::string err;
    const bool r = m::json::parse(text, v, err);
    INFO(text << " → " << err);
    CHECK(r);
    return v;
  };
  auto no = [](const std::string& text) {
    m::json::Value v;
    std::string err;
    INFO(text);
    CHECK_FALSE(m::json::parse(text, v, err));
    CHECK(err.find("at byte") == 0);
  };
  const auto v = ok(" {\"a\" : [1, -2.5e3, true, false, null, \"x\\u00e9\\ud83d\\ude00\\n\"], \"b\": {}} ");
  CHECK(v.find("a")->array[0].is_index);
  CHECK(v.find("a")->array[1].number == -2500.0);
  CHECK(!v.find("a")->array[1].is_index);
  CHECK(v.find("a")->array[5].string == "x\xc3\xa9\xf0\x9f\x98\x80\n");
  CHECK(ok("9007199254740991").is_index);       // 2⁵³ − 1
  CHECK(!ok("9007199254740992").is_index);      // 2⁵³: no longer exact in a double
  CHECK(!ok("12345678901234567890").is_index);
  CHECK(m::json::quote("a\"b\\c\x01") == "\"a\\\"b\\\\c\\u0001\"");
  for (const char* bad : {"", "{", "[1,]", "{\"a\":1,}", "01", "1.", ".5", "-", "1e", "+1", "tru", "nul", "\"abc", "\"\\x\"",
                          "\"\\u12\"", "\"\\udc00\"", "\"\\ud800\\u0041\"", "\"a\x01\"", "\"\xc0\xaf\"", "\"\xed\xa0\x80\"",
                          "\"\xf4\x90\x80\x80\"", "[1] 2", "{\"a\" 1}", "{1:2}", "NaN", "Infinity"})
    no(bad);
}
