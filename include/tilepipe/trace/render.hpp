#pragma once
//! \file
//! Turns a pipeline trace (record.hpp, written on the GPU by trace.cuh) into things a person can
//! read: Chrome trace-event JSON (open it in https://ui.perfetto.dev or chrome://tracing), a PNG
//! timeline, and a few lines saying how much of each warp role's time went to waiting.
//!
//! Host-only C++17 on purpose: the records are copied back and drawn by a test or a benchmark,
//! so this header builds with a plain host compiler and needs neither CUDA nor zlib.
//!
//! Each warp's records become three kinds of marks (K lives in ring stage K % stages):
//!   - mma span:   kWaitDone(K) .. the next kMmaDone(K)     the warp computing on k-tile K
//!   - stall span: the previous kMmaDone (or the warp's first record) .. kWaitDone(K), if > 0
//!   - load tick:  kLoadIssued(K)                            the copies of k-tile K issued
//! Records whose `event` is not an Event are dropped before anything else (also from the time
//! range). `stages` < 1 is read as 1.

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "png.hpp"
#include "record.hpp"

namespace tilepipe::trace {

static_assert(sizeof(Record) == 24,
              "Record must stay 24 bytes: the device writer and this reader share it");

//! An 8-bit RGB colour.
struct Rgb {
  std::uint8_t r, g, b;
};

//! mma span colours, indexed by stage % 8: eight hues that stay apart from the stall grey, the
//! black ticks and the white background (Tableau 10 without its grey and olive).
inline constexpr std::array<Rgb, 8> kStagePalette = {{{31, 119, 180},
                                                      {255, 127, 14},
                                                      {44, 160, 44},
                                                      {214, 39, 40},
                                                      {148, 103, 189},
                                                      {140, 86, 75},
                                                      {227, 119, 194},
                                                      {23, 190, 207}}};
inline constexpr Rgb kBackground{255, 255, 255};
inline constexpr Rgb kStallGrey{200, 200, 200};
inline constexpr Rgb kLoadTick{0, 0, 0};
inline constexpr Rgb kBlockSeparator{64, 64, 64};
inline constexpr int kSeparatorRows = 2;  //!< pixel rows of the line between two blocks

namespace detail {

enum class Mark { kStall, kMma, kLoad };

//! One mark on a warp's timeline; a load tick has begin_ns == end_ns.
struct Span {
  std::uint64_t begin_ns, end_ns;
  std::uint32_t k_tile;
  Mark mark;
};

//! One warp's marks, in order of start time, and which roles it played.
struct WarpTrack {
  std::uint32_t block, warp;
  bool loads = false;     // recorded kLoadIssued: producer work
  bool computes = false;  // recorded kWaitDone or kMmaDone: consumer work
  std::vector<Span> spans;
};

//! A trace split into warps in (block, warp) order, with its time range.
struct Timeline {
  std::vector<WarpTrack> warps;
  std::uint64_t first_ns = 0, last_ns = 0;
};

inline std::uint32_t stage_of(std::uint32_t k_tile, int stages) {
  return stages > 1 ? k_tile % stages : 0;
}

inline Timeline build_timeline(const std::vector<Record>& records) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<Record>>
      by_warp;  // ordered by (block, warp)
  Timeline tl;
  for (const Record& r : records) {
    if (r.event > static_cast<std::uint32_t>(Event::kMmaDone)) continue;
    tl.first_ns = by_warp.empty() ? r.time_ns : std::min(tl.first_ns, r.time_ns);
    tl.last_ns = by_warp.empty() ? r.time_ns : std::max(tl.last_ns, r.time_ns);
    by_warp[{r.block, r.warp}].push_back(r);
  }
  for (auto& [key, recs] : by_warp) {
    // Equal times: the lower k-tile first, then wait before mma. So kMmaDone(K-1) and kWaitDone(K)
    // in the same nanosecond mean "no stall", and a zero-length mma opens before it closes. The
    // full key also makes the result independent of the order the GPU's atomics wrote in.
    std::sort(recs.begin(), recs.end(), [](const Record& a, const Record& b) {
      return std::tie(a.time_ns, a.k_tile, a.event) < std::tie(b.time_ns, b.k_tile, b.event);
    });
    WarpTrack w{key.first, key.second, false, false, {}};
    std::uint64_t busy_until = recs.front().time_ns;  // the end of the warp's last MMAs
    std::map<std::uint32_t, std::uint64_t> waited;    // k-tile -> its kWaitDone, until its kMmaDone
    for (const Record& r : recs) {
      const std::uint64_t t = r.time_ns;
      const auto e = static_cast<Event>(r.event);
      w.loads = w.loads || e == Event::kLoadIssued;
      w.computes = w.computes || e != Event::kLoadIssued;
      if (e == Event::kLoadIssued) {
        w.spans.push_back({t, t, r.k_tile, Mark::kLoad});
      } else if (e == Event::kWaitDone) {
        if (t > busy_until) w.spans.push_back({busy_until, t, r.k_tile, Mark::kStall});
        waited[r.k_tile] = t;
      } else {  // kMmaDone: closes the k-tile's mma span, if its wait was recorded
        if (auto it = waited.find(r.k_tile); it != waited.end()) {
          w.spans.push_back({it->second, t, r.k_tile, Mark::kMma});
          waited.erase(it);
        }
        busy_until = t;
      }
    }
    // Spans were closed in order of their end; a reader of the JSON expects start order.
    std::stable_sort(w.spans.begin(), w.spans.end(),
                     [](const Span& a, const Span& b) { return a.begin_ns < b.begin_ns; });
    tl.warps.push_back(std::move(w));
  }
  return tl;
}

//! Nanoseconds as microseconds with exactly 3 decimals, in integers so that no value rounds.
inline std::string microseconds(std::uint64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%llu.%03llu", static_cast<unsigned long long>(ns / 1000),
                static_cast<unsigned long long>(ns % 1000));
  return buf;
}

inline std::string mark_name(const Span& s, int stages) {
  const std::string k = std::to_string(s.k_tile);
  const std::string stage = " (stage " + std::to_string(stage_of(s.k_tile, stages)) + ")";
  switch (s.mark) {
    case Mark::kMma: return "k-tile " + k + stage;
    case Mark::kStall: return "wait for k-tile " + k;
    default: return "load k-tile " + k + stage;
  }
}

}  // namespace detail

//! Chrome trace-event JSON: one process per block (pid = block), one thread per warp (tid = warp),
//! named "block B" / "warp W"; per warp its mma spans (cat "mma"), stall spans (cat "stall") and
//! load instants (cat "load"), in (block, warp, start time) order. "ts"/"dur" are microseconds
//! from the earliest record of the trace, with 3 decimals (the nanoseconds, exactly).
inline std::string to_chrome_json(const std::vector<Record>& records, int stages) {
  const detail::Timeline tl = detail::build_timeline(records);
  std::string out = "{\"traceEvents\":[";
  const char* separator = "\n";
  auto event = [&](const std::string& body) {
    out += separator;
    out += "{" + body + "}";
    separator = ",\n";
  };
  for (std::size_t i = 0; i < tl.warps.size(); ++i) {
    const detail::WarpTrack& w = tl.warps[i];
    const std::string pid = "\"pid\":" + std::to_string(w.block);
    const std::string ids = pid + ",\"tid\":" + std::to_string(w.warp);
    if (i == 0 || tl.warps[i - 1].block != w.block)
      event("\"name\":\"process_name\",\"ph\":\"M\"," + pid + ",\"args\":{\"name\":\"block " +
            std::to_string(w.block) + "\"}");
    event("\"name\":\"thread_name\",\"ph\":\"M\"," + ids + ",\"args\":{\"name\":\"warp " +
          std::to_string(w.warp) + "\"}");
    for (const detail::Span& s : w.spans) {
      const std::string head = "\"name\":\"" + detail::mark_name(s, stages) + "\",";
      const std::string ts = ",\"ts\":" + detail::microseconds(s.begin_ns - tl.first_ns);
      if (s.mark == detail::Mark::kLoad) {
        event(head + "\"cat\":\"load\",\"ph\":\"i\",\"s\":\"t\"" + ts + "," + ids);
      } else {
        const char* cat = s.mark == detail::Mark::kMma ? "\"cat\":\"mma\"" : "\"cat\":\"stall\"";
        event(head + cat + ",\"ph\":\"X\"" + ts +
              ",\"dur\":" + detail::microseconds(s.end_ns - s.begin_ns) + "," + ids);
      }
    }
  }
  return out + "\n],\"displayTimeUnit\":\"ns\"}\n";
}

//! An RGB PNG timeline: one `row_height`-pixel row per warp with records, ordered by (block,
//! warp), with a kSeparatorRows dark line between blocks; time runs linearly from the earliest
//! record (x = 0) to the latest (the right edge) over `width` pixels. White background, mma spans
//! in kStagePalette[stage % 8], stalls kStallGrey, each load a 1-pixel black tick over the middle
//! third of its row. A span covers at least one pixel so that short ones stay visible. An empty
//! trace gives a blank `width` x `row_height` picture. width < 1 is read as 1, row_height < 3 as 3.
inline std::vector<std::uint8_t> render_png(const std::vector<Record>& records, int stages,
                                            int width = 1600, int row_height = 12) {
  width = std::max(width, 1);
  row_height = std::max(row_height, 3);  // a middle third needs three rows
  const detail::Timeline tl = detail::build_timeline(records);
  std::vector<int> row_top;
  int height = 0;
  for (std::size_t i = 0; i < tl.warps.size(); ++i) {
    if (i > 0 && tl.warps[i].block != tl.warps[i - 1].block) height += kSeparatorRows;
    row_top.push_back(height);
    height += row_height;
  }
  if (tl.warps.empty()) height = row_height;

  std::vector<std::uint8_t> rgb(3 * static_cast<std::size_t>(width) * height);
  auto fill = [&](int x0, int x1, int y0, int y1, Rgb c) {  // the rectangle [x0, x1) x [y0, y1)
    for (int y = y0; y < y1; ++y)
      for (int x = x0; x < x1; ++x) {
        std::uint8_t* p = &rgb[3 * (static_cast<std::size_t>(y) * width + x)];
        p[0] = c.r, p[1] = c.g, p[2] = c.b;
      }
  };
  fill(0, width, 0, height, kBackground);
  // [first, last] maps onto [0, width]: a span's end is exclusive, so the last instant may map to
  // `width`. (The product overflows only past 2^64 / width ns, months of trace.)
  const std::uint64_t range = tl.last_ns - tl.first_ns;
  auto column = [&](std::uint64_t t) {
    return range == 0
               ? 0
               : static_cast<int>((t - tl.first_ns) * static_cast<std::uint64_t>(width) / range);
  };
  for (std::size_t i = 0; i < tl.warps.size(); ++i) {
    if (i > 0 && tl.warps[i].block != tl.warps[i - 1].block)
      fill(0, width, row_top[i] - kSeparatorRows, row_top[i], kBlockSeparator);
    // Spans first, ticks second, so a load issued during an MMA stays visible on top of it.
    for (const bool ticks : {false, true})
      for (const detail::Span& s : tl.warps[i].spans) {
        if ((s.mark == detail::Mark::kLoad) != ticks) continue;
        const int x0 = std::min(column(s.begin_ns), width - 1);
        if (ticks) {
          fill(x0, x0 + 1, row_top[i] + row_height / 3, row_top[i] + row_height - row_height / 3,
               kLoadTick);
        } else {
          const Rgb c =
              s.mark == detail::Mark::kMma
                  ? kStagePalette[detail::stage_of(s.k_tile, stages) % kStagePalette.size()]
                  : kStallGrey;
          fill(x0, std::max(column(s.end_ns), x0 + 1), row_top[i], row_top[i] + row_height, c);
        }
      }
  }
  return detail::encode_png(rgb, width, height);
}

//! Writes `bytes` to `path` (binary); false if the file could not be written.
inline bool write_file(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(f);
}

//! A few lines for a log: per warp role (producer: loads only; consumer: waits and MMAs only;
//! producer+consumer: both, as in the Ampere kernel) and overall, the warps' summed mma and
//! stall time and the stall fraction stall / (stall + mma).
inline std::string summary(const std::vector<Record>& records, int stages) {
  const detail::Timeline tl = detail::build_timeline(records);
  const char* names[] = {"producer", "consumer", "producer+consumer", "overall"};
  int warps[4] = {}, blocks = 0;
  std::uint64_t mma_ns[4] = {}, stall_ns[4] = {};
  for (std::size_t i = 0; i < tl.warps.size(); ++i) {
    const detail::WarpTrack& w = tl.warps[i];
    blocks += i == 0 || tl.warps[i - 1].block != w.block;
    const int role = w.computes ? (w.loads ? 2 : 1) : 0;
    ++warps[role], ++warps[3];
    for (const detail::Span& s : w.spans) {
      std::uint64_t* sums = s.mark == detail::Mark::kMma     ? mma_ns
                            : s.mark == detail::Mark::kStall ? stall_ns
                                                             : nullptr;
      if (sums) sums[role] += s.end_ns - s.begin_ns, sums[3] += s.end_ns - s.begin_ns;
    }
  }
  std::string out = "trace: " + std::to_string(blocks) + " blocks, " + std::to_string(warps[3]) +
                    " warps, " + std::to_string(std::max(stages, 1)) + " stages, " +
                    detail::microseconds(tl.last_ns - tl.first_ns) + " us\n";
  for (int r = 0; r < 4; ++r) {
    if (warps[r] == 0 && r != 3) continue;  // roles nobody played are left out
    char fraction[16] = "n/a";
    if (mma_ns[r] + stall_ns[r] > 0)
      std::snprintf(
          fraction, sizeof fraction, "%.1f%%",
          100.0 * static_cast<double>(stall_ns[r]) / static_cast<double>(mma_ns[r] + stall_ns[r]));
    out += std::string(names[r]) + " (" + std::to_string(warps[r]) +
           (warps[r] == 1 ? " warp" : " warps") + "): mma " + detail::microseconds(mma_ns[r]) +
           " us, stall " + detail::microseconds(stall_ns[r]) + " us, stall fraction " + fraction +
           "\n";
  }
  return out;
}

}  // namespace tilepipe::trace
