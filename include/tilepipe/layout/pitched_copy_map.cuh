#pragma once
//! \file
//! The index math of the pitched copy (gemm/pitched_copy.cuh), which copies a matrix of 16-bit
//! elements whose lines start anywhere into lines 16 bytes apart, 16 bytes per thread and step:
//! - PitchedCopyMap: which 16-byte chunk of which line each thread of a block copies, so that
//!   a warp's chunks are consecutive along a line (coalesced) and short lines waste few threads;
//! - `shift_chunk`: the 16 bytes that start `offset` bytes into 32 bytes read as two aligned
//!   16-byte loads, which is how a chunk of a line that starts off 16 bytes is read whole.

#include <cstdint>

#include "../detail/macros.cuh"

namespace tilepipe {

//! The threads of one block of the pitched copy over a tile of `lines_per_tile()` lines by
//! `cols()` chunks: thread `t` copies chunk `t % cols()` of the tile's lines `t / cols() +
//! u * (kThreads / cols())` for u in `[0, kLinesPerThread)`. `cols()` is a power of two, a warp at
//! most: lines of 32 chunks or more give each warp 32 consecutive chunks of one line; shorter lines
//! give it several whole lines, with fewer than half of its threads idle.
struct PitchedCopyMap {
  static constexpr int kThreads = 256;
  //! Lines each thread copies a chunk of per tile: their loads are in flight together.
  static constexpr int kLinesPerThread = 4;
  int log2_cols = 0;

  //! The map for lines of `chunks` 16-byte chunks: the fewest columns that hold a line, at most
  //! 32.
  TILEPIPE_HOST_DEVICE static constexpr PitchedCopyMap for_line_chunks(std::int64_t chunks) {
    int log2 = 0;
    while (log2 < 5 && (std::int64_t(1) << log2) < chunks) ++log2;
    return PitchedCopyMap{log2};
  }

  TILEPIPE_HOST_DEVICE constexpr int cols() const { return 1 << log2_cols; }
  TILEPIPE_HOST_DEVICE constexpr int lines_per_tile() const {
    return (kThreads >> log2_cols) * kLinesPerThread;
  }
  //! Tiles along a line of `chunks` chunks, and across `lines` lines.
  TILEPIPE_HOST_DEVICE constexpr std::int64_t tiles_x(std::int64_t chunks) const {
    return (chunks + cols() - 1) / cols();
  }
  TILEPIPE_HOST_DEVICE constexpr std::int64_t tiles_y(std::int64_t lines) const {
    return (lines + lines_per_tile() - 1) / lines_per_tile();
  }
  //! The chunk thread `t` copies in the tiles of column `tx`.
  TILEPIPE_HOST_DEVICE constexpr std::int64_t chunk(int t, std::int64_t tx) const {
    return tx * cols() + (t & (cols() - 1));
  }
  //! The line of thread `t`'s `u`-th chunk in the tiles of row `ty`.
  TILEPIPE_HOST_DEVICE constexpr std::int64_t line(int t, int u, std::int64_t ty) const {
    return ty * lines_per_tile() + (t >> log2_cols) + u * (kThreads >> log2_cols);
  }
};

//! Bytes `offset .. offset + 15` (`offset` in [0, 16)) of the 32 bytes in `w` (eight little-endian
//! words: two aligned 16-byte loads), as four words in `out`. The words are picked by two selects
//! each rather than by indexing `w` with `offset / 4`: a run-time index would put `w` in local
//! memory. Then each pair of words is funnel-shifted by the bytes left over.
TILEPIPE_HOST_DEVICE constexpr void shift_chunk(const std::uint32_t (&w)[8], int offset,
                                                std::uint32_t (&out)[4]) {
  std::uint32_t by8[6] = {}, by4[5] = {};
  TILEPIPE_UNROLL
  for (int i = 0; i < 6; ++i) by8[i] = (offset & 8) != 0 ? w[i + 2] : w[i];
  TILEPIPE_UNROLL
  for (int i = 0; i < 5; ++i) by4[i] = (offset & 4) != 0 ? by8[i + 1] : by8[i];
  const int bits = 8 * (offset & 3);
  TILEPIPE_UNROLL
  for (int j = 0; j < 4; ++j)
    out[j] = static_cast<std::uint32_t>(((static_cast<std::uint64_t>(by4[j + 1]) << 32) | by4[j]) >>
                                        bits);
}

}  // namespace tilepipe
