#pragma once
//! \file
//! How the threads of a block share the 16-byte chunks of a tile.
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

}  // namespace tilepipe
