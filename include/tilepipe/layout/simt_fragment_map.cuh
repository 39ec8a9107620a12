#pragma once
//! \file
//! Where each lane's SIMT f32 fragments (MathSimtF32) come from in a swizzled shared-memory tile
//! of f32.
//!
//! The SIMT product keeps mma.sync's accumulator layout (warp/fragments.cuh): in each m16n8 tile,
//! lane l (g = l / 4, t = l % 4) owns rows g and g + 8 and columns 2t and 2t + 1. For one k it
//! therefore needs A at those two rows of every m16 tile and B at those two columns of every n8
//! tile; a k-block is 4 k deep. Per fragment tile `i` (an m16 tile of A, an n8 tile of B) and
//! k-block, a lane's shared loads are:
//!
//!     order          operand   one load                               loads   width
//!     K-contiguous   A or B    row (mn), 4 consecutive k               2      16 bytes (LDS.128)
//!     MN-contiguous  B         row (k), columns 2t, 2t + 1             4      8 bytes  (LDS.64)
//!     MN-contiguous  A         row (k), column g or g + 8              8      4 bytes
//!
//! (A's rows g and g + 8 are 8 apart, so MN-contiguous A has no vector to load.) Lanes that need
//! the same element read the same address, a broadcast, so a load touches only 8 (A) or 4 (B)
//! different vectors. In the swizzled layout (layout/swizzled_tile.cuh) those are free of bank
//! conflicts: K-contiguous, the rows g (or 2t + h) are 8 (4) rows in one group of 8, whose chunks
//! of one k-block the swizzle puts in different 16-byte bank groups; MN-contiguous, the 8 (4)
//! elements are consecutive in one row, two 16-byte chunks that stay apart under the swizzle.
//! Tested on the host for every tile the library uses.

#include "../detail/macros.cuh"
#include "tile_shape.cuh"

namespace tilepipe {

//! The MN positions of a lane's SIMT fragment, relative to the fragment tile's first row of A
//! (an m16 tile) or column of B (an n8 tile).
template <Operand Op>
struct SimtFragmentMap {
  static constexpr int kMN = Op == Operand::kA ? 16 : 8;  //!< MN extent of one fragment tile
  static constexpr int kK = 4;                            //!< k depth of one k-block

  //! M (for A) or N (for B) of the lane's element `h` (0, 1): A rows g and g + 8, B columns 2t
  //! and 2t + 1, the rows and columns of its accumulators.
  TILEPIPE_HOST_DEVICE static constexpr int mn_of(int lane, int h) {
    return Op == Operand::kA ? lane / 4 + 8 * h : 2 * (lane % 4) + h;
  }
};

//! Element offsets of a warp's SIMT fragment loads in a swizzled `Layout` tile of f32
//! (SwizzledTileLayout with 4-byte elements), stored in `Order`. A warp's fragments of one
//! k-block are `kFragments = WarpMN / Map::kMN` tiles `i`, each `kLoads` shared loads `v` of
//! `kVector` consecutive elements; load `v` fills the fragment's element `(h_of(v), kk_of(v))`
//! and, along its vector, the next `kVector - 1` in k (K-contiguous) or in `h` (MN-contiguous B).
//!
//! As for the tf32 and ldmatrix loaders, an offset splits into a per-lane part (`kBases`
//! registers, computed once: the offset of load `h_of(v)` of tile 0, k-block 0) and a part that
//! depends only on the load (`i`, `kb`, `v`: compile-time constants in an unrolled loop):
//! `split_element` XORs the lane's offset with `xor_chunks(i, kb, v)` 16-byte chunks (within a
//! group of 8, where the swizzle acts) and adds `add_chunks(i, kb, v)`, both read off lane 0 of
//! the first warp. Where `kSplits` holds (checked exhaustively at compile time, required by
//! SimtFragmentLoader, true for every tile tested) that is exact for every lane and warp. The
//! swizzle's XOR of a row's chunks by the row (mod 8) is then one more constant XOR, so an
//! MN-contiguous A needs 2 registers for its 8 loads, not 8.
template <Operand Op, SmemOrder Order, class Layout, int TileMN, int TileK, int WarpMN>
struct SimtFragmentAddressing {
  using Map = SimtFragmentMap<Op>;
  static constexpr bool kKContiguous = Order == SmemOrder::kKContiguous;
  static constexpr int kFragments = WarpMN / Map::kMN;
  static constexpr int kKBlocks = TileK / Map::kK;
  //! Elements of one shared load: 4 along k, or 2 along N (MN-contiguous B), or 1.
  static constexpr int kVector = kKContiguous ? 4 : Op == Operand::kB ? 2 : 1;
  //! Shared loads per fragment tile and k-block (8 elements: 2 MN positions x 4 k).
  static constexpr int kLoads = 8 / kVector;
  //! Per-lane offsets the loads are addressed from: one per MN position `h` that a load starts
  //! at (MN-contiguous B loads both at once), each the offset of load `v = h` (its `kk` is 0).
  static constexpr int kBases = kKContiguous || Op == Operand::kA ? 2 : 1;

  //! The fragment element (`h`: which of the lane's two MN positions; `kk`: which k of the
  //! k-block) of load `v`'s first element.
  TILEPIPE_HOST_DEVICE static constexpr int h_of(int v) {
    return kKContiguous ? v : Op == Operand::kB ? 0 : v % 2;
  }
  TILEPIPE_HOST_DEVICE static constexpr int kk_of(int v) {
    return kKContiguous ? 0 : Op == Operand::kB ? v : v / 2;
  }

  //! MN and k (within the block tile) of load `v`'s first element, for fragment tile `i` of
  //! k-block `kb` of the warp tile at `warp_mn0`.
  TILEPIPE_HOST_DEVICE static constexpr int mn(int lane, int warp_mn0, int i, int v) {
    return warp_mn0 + Map::kMN * i + Map::mn_of(lane, h_of(v));
  }
  TILEPIPE_HOST_DEVICE static constexpr int k(int kb, int v) { return Map::kK * kb + kk_of(v); }

  //! (row, column) of the stored tile of that element.
  TILEPIPE_HOST_DEVICE static constexpr int row(int lane, int warp_mn0, int i, int kb, int v) {
    return kKContiguous ? mn(lane, warp_mn0, i, v) : k(kb, v);
  }
  TILEPIPE_HOST_DEVICE static constexpr int col(int lane, int warp_mn0, int i, int kb, int v) {
    return kKContiguous ? k(kb, v) : mn(lane, warp_mn0, i, v);
  }
  //! Element offset from the tile's start (the general formula).
  TILEPIPE_HOST_DEVICE static constexpr int element(int lane, int warp_mn0, int i, int kb, int v) {
    return Layout::offset(row(lane, warp_mn0, i, kb, v), col(lane, warp_mn0, i, kb, v));
  }

  //! 16-byte chunk of that element, from the tile's start.
  TILEPIPE_HOST_DEVICE static constexpr int chunk(int lane, int warp_mn0, int i, int kb, int v) {
    return element(lane, warp_mn0, i, kb, v) / Layout::kElementsPerChunk;
  }

  //! The XOR (in chunks, below 8) and the addition (in chunks, a multiple of 8) that take lane 0's
  //! offset of load `h_of(v)` of (0, 0) to that of load `v` of (i, kb).
  TILEPIPE_HOST_DEVICE static constexpr int xor_chunks(int i, int kb, int v) {
    return (chunk(0, 0, i, kb, v) ^ chunk(0, 0, 0, 0, h_of(v))) & 7;
  }
  TILEPIPE_HOST_DEVICE static constexpr int add_chunks(int i, int kb, int v) {
    return (chunk(0, 0, i, kb, v) & ~7) - (chunk(0, 0, 0, 0, h_of(v)) & ~7);
  }
  //! `element(lane, warp_mn0, i, kb, v)` from the lane's base
  //! `lane_element = element(lane, warp_mn0, 0, 0, h_of(v))`; valid when `kSplits`.
  TILEPIPE_HOST_DEVICE static constexpr int split_element(int lane_element, int i, int kb, int v) {
    return (lane_element ^ (xor_chunks(i, kb, v) * Layout::kElementsPerChunk)) +
           add_chunks(i, kb, v) * Layout::kElementsPerChunk;
  }

  TILEPIPE_HOST_DEVICE static constexpr bool splits() {
    for (int v = 0; v < kLoads; ++v)
      for (int i = 0; i < kFragments; ++i)
        for (int kb = 0; kb < kKBlocks; ++kb) {
          const int x = xor_chunks(i, kb, v) * Layout::kElementsPerChunk;
          const int y = add_chunks(i, kb, v) * Layout::kElementsPerChunk;
          for (int w = 0; w + WarpMN <= TileMN; w += WarpMN)
            for (int lane = 0; lane < 32; ++lane)
              if (element(lane, w, i, kb, v) != ((element(lane, w, 0, 0, h_of(v)) ^ x) + y)) return false;
        }
    return true;
  }
  //! Whether `split_element` is exact for every lane, warp position and load of this tile.
  static constexpr bool kSplits = splits();
};

}  // namespace tilepipe
