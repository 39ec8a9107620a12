#pragma once
//! \file
//! The multistage mainloop's copy policies: how an operand's k-tile goes from global memory into
//! a stage of the ring, by what the operands' alignment allows. MultistageMainloop takes one from
//! its `AnyAlignment` argument (`TileCopyOf`) and calls it once per operand and k-tile.
//!
//! - `VectorTileCopy`: A, B and their leading dimensions 16-byte aligned. The prologue's k-tiles
//!   (the first one partial in K) are checked chunk by chunk; every later k-tile is whole in K,
//!   so a block inside the matrix copies it unpredicated (`kInterior`) and an edge block masks it
//!   with masks computed once per block tile (`edge_mask`).
//! - `NarrowTileCopy`: operands aligned only to their element; each operand's copy width (16, 8,
//!   4 or 2 bytes) is a run-time argument, and every k-tile is checked chunk by chunk.

#include <cassert>
#include <cstdint>
#include <type_traits>

#include "../layout/tile_shape.cuh"

namespace tilepipe {

namespace detail {
//! (row, col) in the loader's storage view of an operand's tile at (mn0, k0), for an operand kept
//! in `Order` in global memory (rows strided, columns contiguous).
template <SmemOrder Order>
TILEPIPE_HOST_DEVICE constexpr int tile_row(int mn0, int k0) {
  return Order == SmemOrder::kKContiguous ? mn0 : k0;
}
template <SmemOrder Order>
TILEPIPE_HOST_DEVICE constexpr int tile_col(int mn0, int k0) {
  return Order == SmemOrder::kKContiguous ? k0 : mn0;
}

//! Debug builds: the operands' addresses and leading dimensions must allow copies of their width
//! (a misaligned one would fault, or read the wrong bytes, in cp.async).
template <class ElementA, class ElementB>
TILEPIPE_DEVICE void check_copy_alignment(const ElementA* a, std::int64_t lda, int copy_bytes_a,
                                          const ElementB* b, std::int64_t ldb, int copy_bytes_b) {
#if !defined(NDEBUG)
  assert(reinterpret_cast<std::uintptr_t>(a) % copy_bytes_a == 0 &&
         "A must be aligned to its copy width");
  assert(reinterpret_cast<std::uintptr_t>(b) % copy_bytes_b == 0 &&
         "B must be aligned to its copy width");
  assert(lda * std::int64_t(sizeof(ElementA)) % copy_bytes_a == 0 &&
         "lda must be a multiple of A's copy width");
  assert(ldb * std::int64_t(sizeof(ElementB)) % copy_bytes_b == 0 &&
         "ldb must be a multiple of B's copy width");
#else
  (void)a, (void)lda, (void)copy_bytes_a, (void)b, (void)ldb, (void)copy_bytes_b;
#endif
}
}  // namespace detail

//! 16-byte copies of 16-byte aligned operands, with an interior and an edge path for whole k-tiles.
struct VectorTileCopy {
  //! Whether a block inside the matrix has a path of its own (unpredicated copies).
  static constexpr bool kInteriorPath = true;
  //! The copy width an operand's copies take: always 16 bytes.
  TILEPIPE_HOST_DEVICE static constexpr int copy_bytes(int) { return 16; }

  //! All of the k-tile at (mn0, k0), each chunk checked against the matrix (edges zero-filled).
  template <SmemOrder Order, class Loader, class Tile, class Pipeline>
  TILEPIPE_DEVICE static void tile(const Loader& load, Tile& dst, int mn0, int k0, Pipeline& pipe,
                                   int /*copy_bytes*/) {
    load.load(dst, detail::tile_row<Order>(mn0, k0), detail::tile_col<Order>(mn0, k0), pipe);
  }

  //! Which of this thread's chunks of every whole k-tile of the block tile from `mn0` lie inside
  //! the matrix: along M (N) only, since whole k-tiles lie inside in K.
  template <SmemOrder Order, class Loader>
  TILEPIPE_DEVICE static typename Loader::EdgeMask edge_mask(const Loader& load, int mn0) {
    return Order == SmemOrder::kKContiguous ? load.mask_rows(mn0) : load.mask_cols(mn0);
  }

  //! Share `share` of `shares` of the whole k-tile at (mn0, k0): unpredicated in an interior
  //! block (`kInterior`), else masked with `mask`.
  template <bool kInterior, SmemOrder Order, class Loader, class Tile, class Pipeline>
  TILEPIPE_DEVICE static void share(const Loader& load, Tile& dst, int mn0, int k0,
                                    const typename Loader::EdgeMask& mask, Pipeline& pipe,
                                    int share, int shares, int /*copy_bytes*/) {
    const int row = detail::tile_row<Order>(mn0, k0), col = detail::tile_col<Order>(mn0, k0);
    if constexpr (kInterior) {
      (void)mask;
      load.load_interior(dst, row, col, pipe, share, shares);
    } else {
      load.load_masked(dst, row, col, mask, pipe, share, shares);
    }
  }
};

//! Copies of a run-time width (`copy_bytes`: 16, 8, 4 or 2) of operands aligned to their element.
struct NarrowTileCopy {
  static constexpr bool kInteriorPath = false;
  TILEPIPE_HOST_DEVICE static constexpr int copy_bytes(int bytes) { return bytes; }

  template <SmemOrder Order, class Loader, class Tile, class Pipeline>
  TILEPIPE_DEVICE static void tile(const Loader& load, Tile& dst, int mn0, int k0, Pipeline& pipe,
                                   int copy_bytes) {
    load.load_narrow(dst, detail::tile_row<Order>(mn0, k0), detail::tile_col<Order>(mn0, k0), pipe,
                     copy_bytes);
  }

  //! No masks: every copy is checked.
  template <SmemOrder Order, class Loader>
  TILEPIPE_DEVICE static typename Loader::EdgeMask edge_mask(const Loader&, int) {
    return {};
  }

  //! All of the k-tile at the first share (each chunk checked), nothing at the others.
  template <bool kInterior, SmemOrder Order, class Loader, class Tile, class Pipeline>
  TILEPIPE_DEVICE static void share(const Loader& load, Tile& dst, int mn0, int k0,
                                    const typename Loader::EdgeMask&, Pipeline& pipe, int share,
                                    int /*shares*/, int copy_bytes) {
    if (share == 0) tile<Order>(load, dst, mn0, k0, pipe, copy_bytes);
  }
};

//! The copy policy of a mainloop's `AnyAlignment` argument.
template <bool AnyAlignment>
using TileCopyOf = std::conditional_t<AnyAlignment, NarrowTileCopy, VectorTileCopy>;

}  // namespace tilepipe
