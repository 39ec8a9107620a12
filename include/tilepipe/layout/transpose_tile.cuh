#pragma once
//! \file
//! TransposeTile: the shared-memory layout of one 32 x 32 float tile on its way from an M- or
//! N-major operand to a K-major copy (gemm/k_major_transpose.cuh). Threads write it one column
//! of the copy at a time (4 scalars from one 16-byte load of the source) and read it one
//! 16-byte chunk of a row of the copy at a time. Rows of 32 floats are 128 bytes, so without a
//! swizzle the column writes of a warp would all fall in the same few banks; XOR-ing the chunk
//! index with the row's group of four spreads them over all 32.

#include "../detail/macros.cuh"

namespace tilepipe {

struct TransposeTile {
  //! Rows (along M or N, the copy's rows) and columns (along K) of the tile.
  static constexpr int kExtent = 32;
  //! Floats in one 16-byte chunk: the unit of every global load and store.
  static constexpr int kChunk = 4;
  static constexpr int kChunksPerRow = kExtent / kChunk;
  static constexpr int kElements = kExtent * kExtent;

  //! Offset in floats of element (`row`, `k`) of the copy: row-major rows of 32, each row's
  //! 16-byte chunks permuted by `chunk ^ (row / 4 % 8)`. A chunk stays whole and 16-byte
  //! aligned, so a row's chunk is read with one 16-byte load.
  TILEPIPE_HOST_DEVICE static constexpr int offset(int row, int k) {
    return row * kExtent + ((k / kChunk) ^ (row / kChunk % kChunksPerRow)) * kChunk + k % kChunk;
  }
};

}  // namespace tilepipe
