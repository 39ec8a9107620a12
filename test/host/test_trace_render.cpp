// Host tests of trace/render.hpp on a hand-made trace whose spans, stalls and pixels were worked
// out on paper (below). The JSON is read back by a small JSON parser and the PNG by a small PNG
// reader, both written here independently of the renderer: a bitwise CRC-32 instead of a table,
// Adler-32 summed in 64 bits, stored deflate blocks walked byte by byte.

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <tilepipe/trace/render.hpp>

using tilepipe::trace::Event;
using tilepipe::trace::Record;

namespace {

// ---------------------------------------------------------------------------------------------
// The synthetic trace (3 stages). Times are ns after kBase, a %globaltimer-sized offset that
// the outputs must subtract.
//
// block 0, warp 0  producer: kLoadIssued(k) at 100k                      -> 6 load ticks
// block 0, warp 1  consumer: wait(k) 50+250k, mma(k) 300+250k            -> 6 mma, no stall
// block 0, warp 2  consumer: as warp 1 for k < 3; wait(3) at 1800 after mma(2) at 800 (a 1000 ns
//                  stall), then each wait at the previous mma again; mma(5) at 2550 ends the
//                  trace. Plus an unknown event (7) at -5000, which must not move the time origin
// block 1, warp w  Ampere-style, all shifted by 5w: load(0), load(1) at 0, wait(k) 300+200k,
//                  load(k+2) at wait(k)+10, mma(k) 500+200k       -> 6 mma, 6 loads, 1 stall
//                  (0..300: the prologue)
// block 7, warp 0  only an unknown event (3) at 100000: no process, no row, no time range
//
// Totals: 30 mma spans, 4 stalls, 24 load instants, 2 processes, 6 threads.
// Summary: consumer mma 3000 stall 1000 (25.0%); producer+consumer mma 3600 stall 900 (20.0%);
// overall mma 6600 stall 1900 (22.4%).
// ---------------------------------------------------------------------------------------------
constexpr std::uint64_t kBase = 5'000'000'000ull;
constexpr int kStages = 3;

Record rec(std::uint64_t t, std::uint32_t block, std::uint32_t warp, std::uint32_t k,
           std::uint32_t event) {
  return Record{kBase + t, block, warp, k, event};
}
Record rec(std::uint64_t t, std::uint32_t block, std::uint32_t warp, std::uint32_t k, Event e) {
  return rec(t, block, warp, k, static_cast<std::uint32_t>(e));
}

std::vector<Record> synthetic_trace() {
  std::vector<Record> r;
  for (std::uint32_t k = 0; k < 6; ++k) r.push_back(rec(100 * k, 0, 0, k, Event::kLoadIssued));
  for (std::uint32_t k = 0; k < 6; ++k) {
    r.push_back(rec(50 + 250 * k, 0, 1, k, Event::kWaitDone));
    r.push_back(rec(300 + 250 * k, 0, 1, k, Event::kMmaDone));
  }
  const std::uint64_t wait2[6] = {50, 300, 550, 1800, 2050, 2300};
  for (std::uint32_t k = 0; k < 6; ++k) {
    r.push_back(rec(wait2[k], 0, 2, k, Event::kWaitDone));
    r.push_back(rec(wait2[k] + 250, 0, 2, k, Event::kMmaDone));
  }
  r.push_back(Record{kBase - 5000, 0, 2, 0, 7});
  for (std::uint32_t w = 0; w < 3; ++w) {
    const std::uint64_t s = 5 * w;
    r.push_back(rec(s, 1, w, 0, Event::kLoadIssued));
    r.push_back(rec(s, 1, w, 1, Event::kLoadIssued));
    for (std::uint32_t k = 0; k < 6; ++k) {
      r.push_back(rec(s + 300 + 200 * k, 1, w, k, Event::kWaitDone));
      if (k + 2 < 6) r.push_back(rec(s + 310 + 200 * k, 1, w, k + 2, Event::kLoadIssued));
      r.push_back(rec(s + 500 + 200 * k, 1, w, k, Event::kMmaDone));
    }
  }
  r.push_back(rec(100000, 7, 0, 0, 3u));
  return r;
}

// ---------------------------------------------------------------------------------------------
// A minimal JSON parser (RFC 8259 syntax; numbers are kept as their text so that "0.800" can be
// compared exactly). parse() is false on any syntax error or trailing input.
// ---------------------------------------------------------------------------------------------
struct Json {
  enum Type { kNull, kBool, kNumber, kString, kArray, kObject } type = kNull;
  std::string text;         // a string's value, a number's or literal's text
  std::vector<Json> items;  // array elements
  std::vector<std::pair<std::string, Json>> members;  // object members, in order

  const Json* get(const std::string& key) const {
    for (const auto& [k, v] : members)
      if (k == key) return &v;
    return nullptr;
  }
  std::string str(const std::string& key) const {  // "" when absent
    const Json* v = get(key);
    return v ? v->text : "";
  }
};

class JsonParser {
 public:
  static bool parse(const std::string& s, Json& out) {
    JsonParser p(s);
    return p.value(out, 0) && (p.ws(), p.pos_ == s.size());
  }

 private:
  explicit JsonParser(const std::string& s) : s_(s) {}
  void ws() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\r' || s_[pos_] == '\t'))
      ++pos_;
  }
  bool eat(char c) {
    ws();
    if (pos_ < s_.size() && s_[pos_] == c) return ++pos_, true;
    return false;
  }
  bool digits() {
    const std::size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
    return pos_ > start;
  }
  bool string(std::string& out) {
    if (!eat('"')) return false;
    for (; pos_ < s_.size(); ++pos_) {
      const char c = s_[pos_];
      if (c == '"') return ++pos_, true;
      if (static_cast<unsigned char>(c) < 0x20) return false;
      if (c == '\\') {
        if (++pos_ >= s_.size()) return false;
        const char e = s_[pos_];
        if (e == 'u') {
          if (pos_ + 4 >= s_.size()) return false;
          for (int i = 1; i <= 4; ++i)
            if (!std::isxdigit(static_cast<unsigned char>(s_[pos_ + i]))) return false;
          pos_ += 4;
          out += '?';
        } else if (std::string("\"\\/bfnrt").find(e) != std::string::npos) {
          out += e;
        } else {
          return false;
        }
      } else {
        out += c;
      }
    }
    return false;  // unterminated
  }
  bool value(Json& out, int depth) {
    ws();
    if (pos_ >= s_.size() || depth > 64) return false;
    const char c = s_[pos_];
    if (c == '{') {
      out.type = Json::kObject;
      ++pos_;
      if (eat('}')) return true;
      do {
        std::pair<std::string, Json> m;
        ws();
        if (!string(m.first) || !eat(':') || !value(m.second, depth + 1)) return false;
        out.members.push_back(std::move(m));
      } while (eat(','));
      return eat('}');
    }
    if (c == '[') {
      out.type = Json::kArray;
      ++pos_;
      if (eat(']')) return true;
      do {
        out.items.emplace_back();
        if (!value(out.items.back(), depth + 1)) return false;
      } while (eat(','));
      return eat(']');
    }
    if (c == '"') return out.type = Json::kString, string(out.text);
    for (const char* lit : {"true", "false", "null"}) {
      if (s_.compare(pos_, std::string(lit).size(), lit) == 0) {
        out.type = lit[0] == 'n' ? Json::kNull : Json::kBool;
        out.text = lit;
        pos_ += out.text.size();
        return true;
      }
    }
    // number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
    const std::size_t start = pos_;
    if (s_[pos_] == '-') ++pos_;
    if (pos_ < s_.size() && s_[pos_] == '0') {
      ++pos_;
    } else if (pos_ >= s_.size() || s_[pos_] < '1' || s_[pos_] > '9' || !digits()) {
      return false;
    }
    if (pos_ < s_.size() && s_[pos_] == '.' && (++pos_, !digits())) return false;
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (!digits()) return false;
    }
    out.type = Json::kNumber;
    out.text = s_.substr(start, pos_ - start);
    return true;
  }

  const std::string& s_;
  std::size_t pos_ = 0;
};

// The "traceEvents" array of a Chrome trace, after checking the top level.
std::vector<Json> trace_events(const std::string& json) {
  Json root;
  EXPECT_TRUE(JsonParser::parse(json, root)) << json;
  EXPECT_EQ(root.type, Json::kObject);
  EXPECT_EQ(root.str("displayTimeUnit"), "ns");
  const Json* events = root.get("traceEvents");
  EXPECT_TRUE(events && events->type == Json::kArray);
  return events ? events->items : std::vector<Json>{};
}

int count_if(const std::vector<Json>& events, const std::string& ph, const std::string& cat) {
  return static_cast<int>(std::count_if(events.begin(), events.end(), [&](const Json& e) {
    return e.str("ph") == ph && (cat.empty() || e.str("cat") == cat);
  }));
}

const Json* find(const std::vector<Json>& events, const std::string& name, const std::string& pid,
                 const std::string& tid) {
  for (const Json& e : events)
    if (e.str("name") == name && e.str("pid") == pid && e.str("tid") == tid) return &e;
  return nullptr;
}

// ---------------------------------------------------------------------------------------------
// A minimal PNG reader for what render_png writes: 8-bit RGB, stored deflate blocks only.
// ---------------------------------------------------------------------------------------------
std::uint32_t crc32_bitwise(const std::uint8_t* p, std::size_t n) {
  std::uint32_t c = 0xFFFFFFFFu;
  for (std::size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int bit = 0; bit < 8; ++bit) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

std::uint32_t adler32_wide(
    const std::vector<std::uint8_t>& data) {  // 64-bit sums, one modulo at the end
  std::uint64_t a = 1, b = 0;
  for (std::uint8_t x : data) a += x, b += a;
  return static_cast<std::uint32_t>((b % 65521) << 16 | (a % 65521));
}

std::uint32_t be32(const std::uint8_t* p) {
  return std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 | p[3];
}

struct Png {
  std::uint32_t width = 0, height = 0;
  int bit_depth = 0, colour_type = 0, compression = -1, filter = -1, interlace = -1;
  std::vector<std::string> chunks;  // chunk types in file order
  std::vector<std::uint8_t> rgb;    // width * height * 3, filter bytes removed
  std::uint32_t at(int x, int y) const {
    const std::uint8_t* p = &rgb[3 * (static_cast<std::size_t>(y) * width + x)];
    return std::uint32_t{p[0]} << 16 | std::uint32_t{p[1]} << 8 | p[2];
  }
};

::testing::AssertionResult read_png(const std::vector<std::uint8_t>& f, Png& png) {
  const std::uint8_t signature[8] = {0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A};
  if (f.size() < 8 || !std::equal(signature, signature + 8, f.begin()))
    return ::testing::AssertionFailure() << "bad signature";
  std::vector<std::uint8_t> idat;
  std::size_t pos = 8;
  while (pos < f.size()) {
    if (f.size() - pos < 12) return ::testing::AssertionFailure() << "truncated chunk at " << pos;
    const std::uint32_t len = be32(&f[pos]);
    if (f.size() - pos - 12 < len)
      return ::testing::AssertionFailure() << "chunk overruns the file";
    const std::string type(f.begin() + pos + 4, f.begin() + pos + 8);
    const std::uint8_t* data = &f[pos + 8];
    if (crc32_bitwise(&f[pos + 4], len + 4) != be32(data + len))
      return ::testing::AssertionFailure() << "CRC mismatch in " << type;
    png.chunks.push_back(type);
    if (type == "IHDR") {
      if (len != 13) return ::testing::AssertionFailure() << "IHDR length " << len;
      png.width = be32(data), png.height = be32(data + 4);
      png.bit_depth = data[8], png.colour_type = data[9];
      png.compression = data[10], png.filter = data[11], png.interlace = data[12];
    } else if (type == "IDAT") {
      idat.insert(idat.end(), data, data + len);
    }
    pos += 12 + len;
  }
  const std::vector<std::string> expected_chunks = {"IHDR", "IDAT", "IEND"};
  if (png.chunks != expected_chunks)
    return ::testing::AssertionFailure() << "unexpected chunk sequence";

  // zlib: CMF/FLG, then stored deflate blocks, then the Adler-32 of the raw bytes.
  if (idat.size() < 6 || idat[0] != 0x78 || idat[1] != 0x01 || (idat[0] * 256 + idat[1]) % 31 != 0)
    return ::testing::AssertionFailure() << "bad zlib header";
  std::vector<std::uint8_t> raw;
  std::size_t z = 2;
  for (bool final = false; !final;) {
    if (idat.size() - z < 5) return ::testing::AssertionFailure() << "truncated deflate block";
    final = idat[z] & 1;
    if ((idat[z] >> 1) != 0) return ::testing::AssertionFailure() << "not a stored block";
    const unsigned n = idat[z + 1] | idat[z + 2] << 8,
                   n_complement = idat[z + 3] | idat[z + 4] << 8;
    if ((n ^ 0xFFFFu) != n_complement) return ::testing::AssertionFailure() << "LEN/NLEN mismatch";
    z += 5;
    if (idat.size() - z < n) return ::testing::AssertionFailure() << "stored block overruns";
    raw.insert(raw.end(), idat.begin() + z, idat.begin() + z + n);
    z += n;
  }
  if (idat.size() - z != 4)
    return ::testing::AssertionFailure() << "no Adler-32 right after the last block";
  if (be32(&idat[z]) != adler32_wide(raw))
    return ::testing::AssertionFailure() << "Adler-32 mismatch";

  const std::size_t row = 1 + 3 * static_cast<std::size_t>(png.width);
  if (raw.size() != row * png.height)
    return ::testing::AssertionFailure()
           << "raw size " << raw.size() << ", expected " << row * png.height;
  for (std::uint32_t y = 0; y < png.height; ++y) {
    if (raw[y * row] != 0)
      return ::testing::AssertionFailure() << "filter byte of row " << y << " is not 0";
    png.rgb.insert(png.rgb.end(), raw.begin() + y * row + 1, raw.begin() + (y + 1) * row);
  }
  return ::testing::AssertionSuccess();
}

// The colours render.hpp documents, written out again so that a change to them is noticed.
constexpr std::uint32_t kWhite = 0xFFFFFF, kGrey = 0xC8C8C8, kBlack = 0x000000, kDark = 0x404040;
constexpr std::uint32_t kStage0 = 0x1F77B4, kStage1 = 0xFF7F0E, kStage2 = 0x2CA02C;

// ---------------------------------------------------------------------------------------------
// The checkers check themselves on known values first.
// ---------------------------------------------------------------------------------------------
TEST(TraceRender, CheckersAgreeWithKnownValues) {
  const std::string digits = "123456789";
  EXPECT_EQ(crc32_bitwise(reinterpret_cast<const std::uint8_t*>(digits.data()), digits.size()),
            0xCBF43926u);
  const std::string wiki = "Wikipedia";
  EXPECT_EQ(adler32_wide(std::vector<std::uint8_t>(wiki.begin(), wiki.end())), 0x11E60398u);
  Json j;
  EXPECT_TRUE(JsonParser::parse(R"({"a":[1,-2.5e3,"x\"y",true,null,{}],"b":{}})", j));
  for (const char* bad :
       {"{", "[1,]", "{\"a\" 1}", "[\"x]", "01", "{\"a\":1}}", "[1.]", "{'a':1}", ""})
    EXPECT_FALSE(JsonParser::parse(bad, j)) << bad;
}

// ---------------------------------------------------------------------------------------------
// JSON
// ---------------------------------------------------------------------------------------------
TEST(TraceRender, JsonCountsEventsOfEachKind) {
  const std::vector<Json> events =
      trace_events(tilepipe::trace::to_chrome_json(synthetic_trace(), kStages));
  EXPECT_EQ(count_if(events, "X", "mma"), 30);
  EXPECT_EQ(count_if(events, "X", "stall"), 4);
  EXPECT_EQ(count_if(events, "X", ""), 34);
  EXPECT_EQ(count_if(events, "i", "load"), 24);
  EXPECT_EQ(count_if(events, "M", ""), 8);
  EXPECT_EQ(events.size(), 30u + 4u + 24u + 8u);
  for (const Json& e : events) {
    if (e.str("ph") == "i") {
      EXPECT_EQ(e.str("s"), "t");
    }
  }
}

TEST(TraceRender, JsonTimesAreMicrosecondsFromTheFirstRecord) {
  const std::vector<Json> events =
      trace_events(tilepipe::trace::to_chrome_json(synthetic_trace(), kStages));
  struct Expected {
    const char *name, *pid, *tid, *cat, *ts, *dur;  // dur "" for an instant
  };
  const Expected expected[] = {
      {"wait for k-tile 3", "0", "2", "stall", "0.800", "1.000"},
      {"k-tile 3 (stage 0)", "0", "2", "mma", "1.800", "0.250"},
      {"k-tile 0 (stage 0)", "0", "1", "mma", "0.050", "0.250"},
      {"k-tile 5 (stage 2)", "0", "2", "mma", "2.300", "0.250"},
      {"k-tile 5 (stage 2)", "1", "2", "mma", "1.310", "0.200"},
      {"wait for k-tile 0", "1", "1", "stall", "0.005", "0.300"},
      {"load k-tile 4 (stage 1)", "0", "0", "load", "0.400", ""},
      {"load k-tile 2 (stage 2)", "1", "0", "load", "0.310", ""},
      {"load k-tile 0 (stage 0)", "1", "2", "load", "0.010", ""},
  };
  for (const Expected& x : expected) {
    const Json* e = find(events, x.name, x.pid, x.tid);
    ASSERT_NE(e, nullptr) << x.name << " pid " << x.pid << " tid " << x.tid;
    EXPECT_EQ(e->str("cat"), x.cat) << x.name;
    EXPECT_EQ(e->str("ts"), x.ts) << x.name;
    EXPECT_EQ(e->str("dur"), x.dur) << x.name;
    EXPECT_EQ(e->get("ts")->type, Json::kNumber);
  }
  // Block 0 warp 1 never waits longer than the previous MMA took: no stall at all.
  EXPECT_EQ(find(events, "wait for k-tile 0", "0", "1"), nullptr);
  EXPECT_EQ(find(events, "wait for k-tile 4", "0", "2"), nullptr);
}

TEST(TraceRender, JsonNamesProcessesAndThreads) {
  const std::vector<Json> events =
      trace_events(tilepipe::trace::to_chrome_json(synthetic_trace(), kStages));
  std::vector<std::pair<std::string, std::string>> processes, threads;
  for (const Json& e : events) {
    if (e.str("ph") != "M") continue;
    const Json* args = e.get("args");
    ASSERT_TRUE(args && args->type == Json::kObject);
    if (e.str("name") == "process_name") processes.push_back({e.str("pid"), args->str("name")});
    if (e.str("name") == "thread_name")
      threads.push_back({e.str("pid") + "/" + e.str("tid"), args->str("name")});
  }
  const decltype(processes) expected_processes = {{"0", "block 0"}, {"1", "block 1"}};
  const decltype(threads) expected_threads = {{"0/0", "warp 0"}, {"0/1", "warp 1"},
                                              {"0/2", "warp 2"}, {"1/0", "warp 0"},
                                              {"1/1", "warp 1"}, {"1/2", "warp 2"}};
  EXPECT_EQ(processes, expected_processes);  // no block 7: its only record has an unknown event
  EXPECT_EQ(threads, expected_threads);
}

TEST(TraceRender, JsonIsOrderedAndDeterministic) {
  std::vector<Record> records = synthetic_trace();
  const std::string json = tilepipe::trace::to_chrome_json(records, kStages);
  // Ordered by (block, warp, start time).
  std::tuple<long, long, double> last{-1, -1, -1.0};
  for (const Json& e : trace_events(json)) {
    if (e.str("ph") == "M") continue;
    const std::tuple<long, long, double> key{std::atol(e.str("pid").c_str()),
                                             std::atol(e.str("tid").c_str()),
                                             std::atof(e.str("ts").c_str())};
    EXPECT_LE(last, key) << e.str("name");
    last = key;
  }
  // The order in which the GPU's atomics happened to write the records does not matter.
  std::mt19937 rng(42);
  for (int i = 0; i < 5; ++i) {
    std::shuffle(records.begin(), records.end(), rng);
    EXPECT_EQ(tilepipe::trace::to_chrome_json(records, kStages), json);
  }
}

// ---------------------------------------------------------------------------------------------
// PNG. width 255 over 2550 ns: one column per 10 ns. Rows of 12: block 0 warps at y 0, 12, 24;
// the separator at y 36..37; block 1 warps at y 38, 50, 62; 74 rows in all.
// ---------------------------------------------------------------------------------------------
TEST(TraceRender, PngIsWellFormed) {
  Png png;
  ASSERT_TRUE(read_png(tilepipe::trace::render_png(synthetic_trace(), kStages, 255, 12), png));
  EXPECT_EQ(png.width, 255u);
  EXPECT_EQ(png.height, 6u * 12u + 2u);
  EXPECT_EQ(png.bit_depth, 8);
  EXPECT_EQ(png.colour_type, 2);
  EXPECT_EQ(png.compression, 0);
  EXPECT_EQ(png.filter, 0);
  EXPECT_EQ(png.interlace, 0);
}

TEST(TraceRender, PngLargeEnoughForSeveralStoredBlocks) {
  Png png;  // 1600 x 74 x 3 bytes: four 64 KiB stored blocks
  ASSERT_TRUE(read_png(tilepipe::trace::render_png(synthetic_trace(), kStages), png));
  EXPECT_EQ(png.width, 1600u);
  EXPECT_EQ(png.height, 74u);
}

TEST(TraceRender, PngPixelsShowSpansStallsTicksAndSeparators) {
  Png png;
  ASSERT_TRUE(read_png(tilepipe::trace::render_png(synthetic_trace(), kStages, 255, 12), png));
  struct Pixel {
    int x, y;
    std::uint32_t rgb;
    const char* what;
  };
  const Pixel expected[] = {
      {100, 2, kWhite, "producer row, above its ticks"},
      {20, 5, kBlack, "b0w0 load k-tile 2 at 200 ns"},
      {21, 5, kWhite, "a tick is one pixel wide"},
      {20, 3, kWhite, "a tick covers only the middle third (rows 4..7)"},
      {20, 8, kWhite, "a tick covers only the middle third (rows 4..7)"},
      {20, 4, kBlack, "first row of the middle third"},
      {20, 7, kBlack, "last row of the middle third"},
      {2, 13, kWhite, "b0w1 before its first wait"},
      {5, 13, kStage0, "b0w1 k-tile 0 starts at 50 ns"},
      {154, 13, kStage2, "b0w1 k-tile 5 ends at 1550 ns"},
      {155, 13, kWhite, "b0w1 after its last mma"},
      {60, 25, kStage2, "b0w2 k-tile 2"},
      {79, 25, kStage2, "b0w2 k-tile 2, last column"},
      {80, 25, kGrey, "b0w2 stall 800..1800 ns"},
      {179, 35, kGrey, "b0w2 stall, last column, last row of the row"},
      {180, 25, kStage0, "b0w2 k-tile 3"},
      {215, 25, kStage1, "b0w2 k-tile 4"},
      {254, 25, kStage2, "b0w2 k-tile 5 reaches the right edge"},
      {100, 36, kDark, "separator between blocks"},
      {0, 37, kDark, "separator between blocks"},
      {100, 35, kGrey, "b0w2, just above the separator"},
      {100, 38, kStage0, "b1w0 k-tile 3 (900..1100 ns), just below the separator"},
      {0, 39, kGrey, "b1w0 prologue stall"},
      {0, 43, kBlack, "b1w0 loads of k-tiles 0 and 1 at 0 ns, over the stall"},
      {31, 43, kBlack, "b1w0 load k-tile 2 at 310 ns, over an mma span"},
      {31, 39, kStage0, "b1w0 k-tile 0 under the tick"},
      {40, 39, kStage0, "b1w0 k-tile 0"},
      {60, 39, kStage1, "b1w0 k-tile 1"},
      {200, 40, kWhite, "block 1 has ended by 2000 ns"},
      {0, 51, kGrey, "b1w1 prologue stall from its first record at 5 ns"},
      {140, 73, kStage2, "b1w2 k-tile 5 (1310..1510 ns), last pixel row"},
      {151, 73, kWhite, "b1w2 after its last mma"},
      {140, 60, kStage2, "b1w1 k-tile 5 (1305..1505 ns)"},
  };
  for (const Pixel& p : expected)
    EXPECT_EQ(png.at(p.x, p.y), p.rgb)
        << "(" << p.x << ", " << p.y << "): " << p.what << ", got " << std::hex << png.at(p.x, p.y);
}

TEST(TraceRender, ShortSpanStaysVisibleAndUnmatchedMmaIsIgnored) {
  // 10 us over 100 columns: warp 1's 2 ns mma would round to no column at all; it gets one.
  // Warp 1's kMmaDone(7) has no kWaitDone(7): no span, and nothing else changes.
  const auto wait = static_cast<std::uint32_t>(Event::kWaitDone),
             mma = static_cast<std::uint32_t>(Event::kMmaDone);
  const std::vector<Record> records = {
      Record{kBase, 0, 0, 0, wait}, Record{kBase + 10000, 0, 0, 0, mma},
      Record{kBase + 5003, 0, 1, 1, wait}, Record{kBase + 5005, 0, 1, 1, mma},
      Record{kBase + 8000, 0, 1, 7, mma}};
  Png png;
  ASSERT_TRUE(read_png(tilepipe::trace::render_png(records, kStages, 100, 12), png));
  EXPECT_EQ(png.at(50, 12), kStage1);
  EXPECT_EQ(png.at(49, 12), kWhite);
  EXPECT_EQ(png.at(51, 12), kWhite);
  EXPECT_EQ(png.at(80, 12), kWhite);
  const std::vector<Json> events = trace_events(tilepipe::trace::to_chrome_json(records, kStages));
  EXPECT_EQ(count_if(events, "X", "mma"), 2);
  EXPECT_EQ(count_if(events, "X", "stall"), 0);
}

TEST(TraceRender, PaletteHasEightDistinctColoursApartFromTheOthers) {
  using namespace tilepipe::trace;
  auto pack = [](Rgb c) { return std::uint32_t{c.r} << 16 | std::uint32_t{c.g} << 8 | c.b; };
  std::vector<std::uint32_t> colours = {pack(kBackground), pack(kStallGrey), pack(kLoadTick),
                                        pack(kBlockSeparator)};
  EXPECT_EQ(colours, (std::vector<std::uint32_t>{kWhite, kGrey, kBlack, kDark}));
  ASSERT_GE(kStagePalette.size(), 8u);
  for (Rgb c : kStagePalette) colours.push_back(pack(c));
  std::sort(colours.begin(), colours.end());
  EXPECT_EQ(std::adjacent_find(colours.begin(), colours.end()), colours.end());
}

// ---------------------------------------------------------------------------------------------
// Summary
// ---------------------------------------------------------------------------------------------
TEST(TraceRender, SummaryGivesStallFractionPerRole) {
  const std::string s = tilepipe::trace::summary(synthetic_trace(), kStages);
  for (const char* line : {
           "trace: 2 blocks, 6 warps, 3 stages, 2.550 us\n",
           "producer (1 warp): mma 0.000 us, stall 0.000 us, stall fraction n/a\n",
           "consumer (2 warps): mma 3.000 us, stall 1.000 us, stall fraction 25.0%\n",
           "producer+consumer (3 warps): mma 3.600 us, stall 0.900 us, stall fraction 20.0%\n",
           "overall (6 warps): mma 6.600 us, stall 1.900 us, stall fraction 22.4%\n",
       })
    EXPECT_NE(s.find(line), std::string::npos) << "missing: " << line << "in:\n" << s;
}

// ---------------------------------------------------------------------------------------------
// Edge cases
// ---------------------------------------------------------------------------------------------
TEST(TraceRender, EmptyTrace) {
  const std::vector<Record> none;
  const std::vector<Record> only_unknown = {Record{123, 0, 0, 0, 9}};
  for (const auto& records : {none, only_unknown}) {
    EXPECT_TRUE(trace_events(tilepipe::trace::to_chrome_json(records, kStages)).empty());
    Png png;
    ASSERT_TRUE(read_png(tilepipe::trace::render_png(records, kStages, 40, 12), png));
    EXPECT_EQ(png.width, 40u);  // documented: a blank width x row_height picture
    EXPECT_EQ(png.height, 12u);
    EXPECT_TRUE(
        std::all_of(png.rgb.begin(), png.rgb.end(), [](std::uint8_t v) { return v == 255; }));
    EXPECT_NE(tilepipe::trace::summary(records, kStages)
                  .find("overall (0 warps): mma 0.000 us, stall 0.000 us, "
                        "stall fraction n/a"),
              std::string::npos);
  }
}

TEST(TraceRender, SingleLoad) {
  const std::vector<Record> one = {
      Record{kBase, 4, 9, 5, static_cast<std::uint32_t>(Event::kLoadIssued)}};
  const std::vector<Json> events = trace_events(tilepipe::trace::to_chrome_json(one, kStages));
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].str("name"), "process_name");
  EXPECT_EQ(events[1].str("name"), "thread_name");
  EXPECT_EQ(events[2].str("name"), "load k-tile 5 (stage 2)");
  EXPECT_EQ(events[2].str("ts"), "0.000");
  EXPECT_EQ(events[2].str("pid"), "4");
  EXPECT_EQ(events[2].str("tid"), "9");

  Png png;  // zero time range: everything at x = 0; a 6-row row has its middle third at rows 2..3
  ASSERT_TRUE(read_png(tilepipe::trace::render_png(one, kStages, 10, 6), png));
  EXPECT_EQ(png.width, 10u);
  EXPECT_EQ(png.height, 6u);
  EXPECT_EQ(png.at(0, 2), kBlack);
  EXPECT_EQ(png.at(0, 3), kBlack);
  EXPECT_EQ(png.at(0, 1), kWhite);
  EXPECT_EQ(png.at(0, 4), kWhite);
  EXPECT_EQ(png.at(1, 2), kWhite);
}

TEST(TraceRender, SingleWaitGivesNoSpan) {
  // Its own first record: no stall before it; no kMmaDone: no mma span.
  const std::vector<Record> one = {
      Record{kBase, 0, 0, 0, static_cast<std::uint32_t>(Event::kWaitDone)}};
  const std::vector<Json> events = trace_events(tilepipe::trace::to_chrome_json(one, kStages));
  EXPECT_EQ(events.size(), 2u);
  EXPECT_EQ(count_if(events, "M", ""), 2);
  EXPECT_NE(tilepipe::trace::summary(one, kStages)
                .find("consumer (1 warp): mma 0.000 us, stall 0.000 us"),
            std::string::npos);
}

TEST(TraceRender, DegenerateArgumentsDoNotCrash) {
  Png png;  // documented: width < 1 is read as 1, row_height < 3 as 3, stages < 1 as 1
  ASSERT_TRUE(read_png(tilepipe::trace::render_png(synthetic_trace(), 0, 0, 0), png));
  EXPECT_EQ(png.width, 1u);
  EXPECT_EQ(png.height, 6u * 3u + 2u);
  const std::vector<Json> events =
      trace_events(tilepipe::trace::to_chrome_json(synthetic_trace(), 0));
  EXPECT_NE(find(events, "k-tile 5 (stage 0)", "0", "1"), nullptr);
}

TEST(TraceRender, WriteFileRoundTrips) {
  const std::vector<std::uint8_t> bytes =
      tilepipe::trace::render_png(synthetic_trace(), kStages, 64, 8);
  const std::string path = ::testing::TempDir() + "tilepipe_trace_render_test.png";
  ASSERT_TRUE(tilepipe::trace::write_file(path, bytes));
  std::ifstream f(path, std::ios::binary);
  const std::vector<std::uint8_t> back((std::istreambuf_iterator<char>(f)),
                                       std::istreambuf_iterator<char>());
  EXPECT_EQ(back, bytes);
  std::remove(path.c_str());
  EXPECT_FALSE(tilepipe::trace::write_file("/nonexistent-dir/x/y.png", bytes));
}

}  // namespace
