#pragma once
//! \file
//! Shared-memory storage of one tile in the swizzled layout.

#include "../layout/swizzled_tile.cuh"
#include "../numeric/element_traits.cuh"

namespace tilepipe {

//! A `Rows x Cols` tile (columns contiguous) of `Element`s, swizzled by `SwizzledTileLayout`. It is
//! aligned to 128 bytes, which the swizzle's bank-conflict guarantees assume. Use it as a member of
//! a stage struct in shared memory.
template <class Element, int Rows, int Cols>
struct SmemTile {
  static_assert(is_supported_element_v<Element>,
                "SmemTile: the element type has no ElementTraits specialization "
                "(numeric/element_traits.cuh)");
  using Layout = SwizzledTileLayout<Rows, Cols, ElementTraits<Element>::kBytes>;
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
