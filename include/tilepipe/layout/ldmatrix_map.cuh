#pragma once
//! \file
//! Which shared-memory row each lane hands to `ldmatrix.x4` so that the four 8x8 matrices land
//! in exactly the registers `mma.sync.m16n8k16` expects.
//!
//! Lane `i` gives the address of row `i % 8` of matrix `q = i / 8`. The four matrices of one
//! x4 load cover a 16 (MN) x 16 (K) slice of the operand. Below, "row" and "chunk" are in the
//! stored tile (rows strided, 8-element chunks contiguous); `.trans` is needed exactly when the
//! tile is MN-contiguous, because the mma fragments pair up consecutive k in one register.
//!
//! | operand, order  | matrix q covers (mn, k)              | register q holds              |
//! | A, K-contig     | mn 8*(q%2).., k 8*(q/2)..            | a[q]                          |
//! | A, MN-contig    | mn 8*(q%2).., k 8*(q/2).. (.trans)   | a[q]                          |
//! | B, K-contig     | n 8*(q/2).., k 8*(q%2)..             | b[q%2] of n8 tile q/2         |
//! | B, MN-contig    | n 8*(q/2).., k 8*(q%2).. (.trans)    | b[q%2] of n8 tile q/2         |

#include "../detail/macros.cuh"
#include "tile_shape.cuh"

namespace tilepipe {

//! Row and chunk (in the stored tile) that `lane` addresses for an x4 ldmatrix of the 16x16
//! slice whose first MN index is `mn0` (a multiple of 16) and first K index is `k0` (a
//! multiple of 16).
struct LdmatrixRow {
  int row;    //!< row of the stored tile
  int chunk;  //!< 8-element chunk within that row
};

template <Operand Op, SmemOrder Order>
struct LdmatrixMap {
  //! `.trans` turns the 8x8 matrices so that each register holds two consecutive k.
  static constexpr bool kTrans = Order == SmemOrder::kMNContiguous;

  //! Offsets (in 8-element units) of matrix `q` within the 16x16 slice, along MN and along K.
  TILEPIPE_HOST_DEVICE static constexpr int mn_block(int q) {
    return Op == Operand::kA ? q % 2 : q / 2;
  }
  TILEPIPE_HOST_DEVICE static constexpr int k_block(int q) {
    return Op == Operand::kA ? q / 2 : q % 2;
  }

  TILEPIPE_HOST_DEVICE static constexpr LdmatrixRow row_of(int lane, int mn0, int k0) {
    const int q = lane / 8;
    const int r = lane % 8;
    const int mn = mn0 + 8 * mn_block(q);
    const int k = k0 + 8 * k_block(q);
    if (Order == SmemOrder::kKContiguous) {
      return LdmatrixRow{mn + r, k / 8};  // rows are MN, chunks run along K
    } else {
      return LdmatrixRow{k + r, mn / 8};  // rows are K, chunks run along MN
    }
  }
};

//! Where a warp's ldmatrix.x4 loads land in a swizzled `Layout` tile, split into a part that
//! depends on the lane (computed once per thread) and a part that depends only on the load
//! (`i`-th x4 load of k-block `kb`, known at compile time in an unrolled loop).
//!
//! Load `(i, kb)` of a lane reads the physical chunk `chunk(lane, warp_mn0, i, kb)`. Going from
//! load `(0, 0)` to `(i, kb)` moves the lane's row-major chunk index by `D = displacement(i, kb)`,
//! the same for every lane. When `kSplits` holds, the swizzle turns that move into
//! `(lane_chunk ^ (D & 7)) + (D & ~7)`: an XOR with a constant in the bank-group bits and an
//! immediate offset, so the loop needs one register per operand instead of one per load.
//! `kSplits` is checked exhaustively at compile time over every lane, warp position and load;
//! where it fails, callers fall back to `chunk()`.
template <Operand Op, SmemOrder Order, class Layout, int TileMN, int TileK, int WarpMN>
struct LdmatrixAddressing {
  using Map = LdmatrixMap<Op, Order>;
  static constexpr int kLoads = WarpMN / 16;   //!< x4 loads per k-block
  static constexpr int kKBlocks = TileK / 16;  //!< k-blocks per tile

  //! Row-major chunk index of the row `lane` addresses for load `(i, kb)`.
  TILEPIPE_HOST_DEVICE static constexpr int linear_chunk(int lane, int warp_mn0, int i, int kb) {
    const LdmatrixRow at = Map::row_of(lane, warp_mn0 + 16 * i, 16 * kb);
    return at.row * Layout::kChunksPerRow + at.chunk;
  }
  //! Physical chunk that `lane` addresses for load `(i, kb)` (the general formula).
  TILEPIPE_HOST_DEVICE static constexpr int chunk(int lane, int warp_mn0, int i, int kb) {
    return Layout::chunk_offset(linear_chunk(lane, warp_mn0, i, kb));
  }
  //! The lane-independent move of the row-major chunk index from load (0, 0) to load (i, kb).
  TILEPIPE_HOST_DEVICE static constexpr int displacement(int i, int kb) {
    return linear_chunk(0, 0, i, kb) - linear_chunk(0, 0, 0, 0);
  }
  //! `chunk(lane, warp_mn0, i, kb)` from `lane_chunk = chunk(lane, warp_mn0, 0, 0)`; valid when
  //! `kSplits`.
  TILEPIPE_HOST_DEVICE static constexpr int split_chunk(int lane_chunk, int i, int kb) {
    const int d = displacement(i, kb);
    return (lane_chunk ^ (d & 7)) + (d & ~7);
  }

  TILEPIPE_HOST_DEVICE static constexpr bool splits() {
    for (int w = 0; w + WarpMN <= TileMN; w += WarpMN)
      for (int lane = 0; lane < 32; ++lane)
        for (int i = 0; i < kLoads; ++i)
          for (int kb = 0; kb < kKBlocks; ++kb) {
            if (linear_chunk(lane, w, i, kb) - linear_chunk(lane, w, 0, 0) != displacement(i, kb))
              return false;
            if (chunk(lane, w, i, kb) != split_chunk(chunk(lane, w, 0, 0), i, kb)) return false;
          }
    return true;
  }
  //! Whether `split_chunk` is exact for every lane, warp position and load of this tile.
  static constexpr bool kSplits = splits();
};

}  // namespace tilepipe
