#pragma once
//! \file
//! Shared-memory storage of one tile of 16-bit elements in the swizzled layout.

#include "../layout/swizzled_tile.cuh"

namespace tilepipe {

//! A `Rows x Cols` tile (columns contiguous) of 16-bit `Element`s, swizzled by
//! `SwizzledTileLayout`. It is aligned to 128 bytes, which the swizzle's bank-conflict
//! guarantees assume. Use it as a member of a stage struct in shared memory.
template <class Element, int Rows, int Cols>
struct SmemTile {
  static_assert(sizeof(Element) == 2,
                "SmemTile: tilepipe's swizzled tiles hold 16-bit elements (half, bfloat16)");
  using Layout = SwizzledTileLayout<Rows, Cols>;
  static constexpr int kRows = Rows;
  static constexpr int kCols = Cols;

  alignas(128) Element data[Layout::kElements];  // (Rows, Cols) swizzled

  //! Reference to element `(row, col)` (slow path: for tests and epilogues, not mainloops).
  TILEPIPE_HOST_DEVICE Element& at(int row, int col) { return data[Layout::offset(row, col)]; }
  TILEPIPE_HOST_DEVICE const Element& at(int row, int col) const {
    return data[Layout::offset(row, col)];
  }
};

}  // namespace tilepipe
