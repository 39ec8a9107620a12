#pragma once
//! \file
//! How the threads of a block share the 16-byte chunks of a tile (TileThreadMap), and the
//! 4-byte elements of a tile they copy transposed (TransposeThreadMap).
//!
//! Chunks are dealt out in row-major order: in iteration `it`, thread `t` takes linear chunk
//! `t + it * Threads`. Consecutive threads therefore read consecutive 16-byte pieces of a
//! global row (coalesced), and each group of eight consecutive threads writes one whole
//! 128-byte line of the swizzled tile (no bank conflicts).

#include "../detail/macros.cuh"
#include "math.cuh"

namespace tilepipe {

//! Thread map of a `Rows x Cols` tile of `ElementBytes`-byte elements (columns contiguous) over
//! `Threads`.
template <int Rows, int Cols, int Threads, int ElementBytes = 2>
struct TileThreadMap {
  static_assert(Threads > 0 && Threads % 32 == 0,
                "TileThreadMap: Threads must be a positive multiple of the warp size (32)");
  static_assert(ElementBytes == 1 || ElementBytes == 2 || ElementBytes == 4,
                "TileThreadMap: elements must be 1, 2 or 4 bytes wide");
  //! Elements in one 16-byte chunk.
  static constexpr int kElementsPerChunk = 16 / ElementBytes;
  static_assert(Cols % kElementsPerChunk == 0,
                "TileThreadMap: the contiguous extent (Cols) must be a whole number of 16-byte "
                "chunks (a multiple of 8 16-bit elements)");

  static constexpr int kChunksPerRow = Cols / kElementsPerChunk;
  static constexpr int kChunks = Rows * kChunksPerRow;
  //! Chunks each thread copies (the last iteration is partial when Threads does not divide).
  static constexpr int kIterations = ceil_div(kChunks, Threads);
  //! True when every thread has a chunk in every iteration (no predicate needed).
  static constexpr bool kEvenlyDivided = kChunks % Threads == 0;

  //! Linear (row-major) chunk index that thread `thread` copies in iteration `it`.
  TILEPIPE_HOST_DEVICE static constexpr int linear_chunk(int thread, int it) {
    return thread + it * Threads;
  }
  //! Whether thread `thread` has a chunk in iteration `it`.
  TILEPIPE_HOST_DEVICE static constexpr bool valid(int thread, int it) {
    return kEvenlyDivided || linear_chunk(thread, it) < kChunks;
  }
  //! Tile row of that chunk.
  TILEPIPE_HOST_DEVICE static constexpr int row(int thread, int it) {
    return linear_chunk(thread, it) / kChunksPerRow;
  }
  //! First column (element index) of that chunk.
  TILEPIPE_HOST_DEVICE static constexpr int col(int thread, int it) {
    return linear_chunk(thread, it) % kChunksPerRow * kElementsPerChunk;
  }

  //! True when every iteration moves a thread by the same whole number of rows, in the same
  //! column: then a thread's chunk of iteration `it` is its chunk of iteration 0 plus
  //! `it * kRowsPerIteration` rows, and a loader can keep one source pointer per thread.
  static constexpr bool kRowStrided = kEvenlyDivided && Threads % kChunksPerRow == 0;
  //! Rows between a thread's consecutive chunks (meaningful when `kRowStrided`).
  static constexpr int kRowsPerIteration = Threads / kChunksPerRow;
};

//! Where each thread's 4-byte copies of a `Rows x Cols` source tile (rows strided, columns
//! contiguous in global memory) come from and go to, for `Threads` threads. Copy `it` of a warp
//! covers 4 rows and 8 columns (32 contiguous bytes of each row: whole sectors): lane l takes
//! row `l / 8`, column `l % 8` of that block; the warps of a block stack their blocks along the
//! rows into a band of `4 x warps` rows; copies go across the tile's columns first, then band by
//! band. In the transposed shared tile (`Cols x Rows`, swizzled) a warp's 32 copies are 8 rows
//! of it (8 consecutive columns of the source) and one 16-byte chunk of each, which the swizzle
//! puts in 8 different 16-byte bank groups: no bank conflicts (tested on the host).
template <int Rows, int Cols, int Threads>
struct TransposeThreadMap {
  static_assert(Threads > 0 && Threads % 32 == 0,
                "TransposeThreadMap: Threads must be a positive multiple of the warp size (32)");
  static constexpr int kWarps = Threads / 32;
  static constexpr int kBandRows = 4 * kWarps;  //!< source rows one copy of every warp covers
  static_assert(Rows % kBandRows == 0,
                "TransposeThreadMap: the tile's rows (its M or N extent) must be a multiple of 4 "
                "rows per warp of the block");
  static_assert(Cols % 8 == 0,
                "TransposeThreadMap: the tile's columns (its K extent) must be a multiple of 8");
  static constexpr int kColumnBlocks = Cols / 8;
  static constexpr int kBands = Rows / kBandRows;
  //! 4-byte copies per thread per tile.
  static constexpr int kIterations = kBands * kColumnBlocks;

  //! Band and column block of copy `it`.
  TILEPIPE_HOST_DEVICE static constexpr int band(int it) { return it / kColumnBlocks; }
  TILEPIPE_HOST_DEVICE static constexpr int column_block(int it) { return it % kColumnBlocks; }
  //! Source row and column of thread `thread`'s copy `it`.
  TILEPIPE_HOST_DEVICE static constexpr int row(int thread, int it) {
    return band(it) * kBandRows + 4 * (thread / 32) + thread % 32 / 8;
  }
  TILEPIPE_HOST_DEVICE static constexpr int col(int thread, int it) {
    return column_block(it) * 8 + thread % 8;
  }
};

}  // namespace tilepipe
