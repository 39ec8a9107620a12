#pragma once
//! \file
//! The swizzled shared-memory layout of a tile of 1-, 2- or 4-byte elements.
//!
//! A `Rows x Cols` tile (columns contiguous) is cut into 16-byte chunks (8 elements of 16 bits). In
//! row-major order chunk `(row, chunk)` would sit at `L = row * kChunksPerRow + chunk`. We
//! store it at `L ^ ((L >> kShift) & 7)`: the low three bits of the chunk index (which 16-byte
//! bank group of a 128-byte line it lands in) are XORed with three higher bits.
//! - kShift = log2(kChunksPerRow) when a row spans at least one 128-byte line, so the bank
//!   group is XORed with `row % 8`;
//! - kShift = 3 when a row is shorter than a line, so the bank group is XORed with the index
//!   of the 128-byte line.
//! Either way (tested on the host):
//! - eight consecutive chunks starting at a multiple of 8 (one 8-thread phase of the loader's
//!   16-byte writes) land in eight different bank groups;
//! - the same chunk column of eight consecutive rows starting at a multiple of 8 (one 8x8
//!   matrix of an ldmatrix) lands in eight different bank groups;
//! so both the async writes and the ldmatrix reads are free of bank conflicts, provided the
//! tile starts at a 128-byte boundary. The XOR only permutes chunks inside a group of 8 lines,
//! so the map is a bijection on the tile.

#include "../detail/macros.cuh"
#include "math.cuh"

namespace tilepipe {

//! Swizzled layout of a `Rows x Cols` tile of `ElementBytes`-byte elements, columns contiguous.
//! (Plain index math: the element type itself is the collectives' business, see ElementTraits.)
template <int Rows, int Cols, int ElementBytes = 2>
struct SwizzledTileLayout {
  static_assert(ElementBytes == 1 || ElementBytes == 2 || ElementBytes == 4,
                "SwizzledTileLayout: elements must be 1, 2 or 4 bytes wide");
  //! Elements in one 16-byte chunk.
  static constexpr int kElementsPerChunk = 16 / ElementBytes;
  static_assert(Cols % kElementsPerChunk == 0 && is_power_of_two(Cols / kElementsPerChunk),
                "SwizzledTileLayout: the contiguous extent (Cols) must be a power of two of "
                "16-byte chunks (8, 16, 32, 64, ... 16-bit elements)");
  static_assert(Rows > 0 && (Rows * (Cols / kElementsPerChunk)) % 8 == 0,
                "SwizzledTileLayout: the tile must hold a whole number of 128-byte lines "
                "(Rows * Cols * ElementBytes must be a multiple of 128)");

  static constexpr int kRows = Rows;
  static constexpr int kCols = Cols;
  static constexpr int kElements = Rows * Cols;
  static constexpr int kChunksPerRow = Cols / kElementsPerChunk;
  static constexpr int kChunks = Rows * kChunksPerRow;
  static constexpr int kShift = log2_floor(kChunksPerRow) > 3 ? log2_floor(kChunksPerRow) : 3;

  //! Physical chunk index of the row-major chunk index `linear_chunk`.
  TILEPIPE_HOST_DEVICE static constexpr int chunk_offset(int linear_chunk) {
    return linear_chunk ^ ((linear_chunk >> kShift) & 7);
  }

  //! Physical chunk index of chunk `chunk` (in units of 16 bytes) of row `row`.
  TILEPIPE_HOST_DEVICE static constexpr int chunk_offset(int row, int chunk) {
    return chunk_offset(row * kChunksPerRow + chunk);
  }

  //! Element offset of element `(row, col)` from the tile's start.
  TILEPIPE_HOST_DEVICE static constexpr int offset(int row, int col) {
    return chunk_offset(row, col / kElementsPerChunk) * kElementsPerChunk + col % kElementsPerChunk;
  }

  //! Whether moving by `delta` row-major chunks moves every chunk by exactly `delta` physical
  //! chunks (`chunk_offset(L + delta) == chunk_offset(L) + delta` for every L). True for whole
  //! multiples of the swizzle's period, `8 << kShift` chunks: such a move leaves the low
  //! `kShift + 3` bits of L, and with them the XOR, unchanged.
  TILEPIPE_HOST_DEVICE static constexpr bool is_translation(int delta) {
    return delta % (8 << kShift) == 0;
  }
};

}  // namespace tilepipe
