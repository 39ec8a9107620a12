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
  TILEPIPE_HOST_DEVICE static constexpr int mn_block(int q) { return Op == Operand::kA ? q % 2 : q / 2; }
  TILEPIPE_HOST_DEVICE static constexpr int k_block(int q) { return Op == Operand::kA ? q / 2 : q % 2; }

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

}  // namespace tilepipe
