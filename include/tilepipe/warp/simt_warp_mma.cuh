#pragma once
//! \file
//! SimtWarpMma: a warp multiplies its SIMT A fragment by its B fragment on the CUDA cores, one
//! `fma.rn.f32` per product, into the same `WarpM x WarpN` accumulators mma.sync fills
//! (MathSimtF32); for an M-contiguous A, in rows of its own until `finish` puts them back.

#include <type_traits>

#include "../detail/macros.cuh"
#include "../layout/simt_fragment_map.cuh"
#include "../numeric/math.cuh"
#include "fragments.cuh"

namespace tilepipe {

//! f32 accumulators of a warp tile in the rows of `SimtFragmentMap<Operand::kA, 2>`: the
//! registers of `Accumulators<WarpM, WarpN>`, register `j` of tile `(mi, ni)` being the lane's row
//! `16 mi + SimtFragmentMap<Operand::kA, 2>::mn_of(lane, j / 2)` and column
//! `8 ni + 2 (lane % 4) + j % 2`. A type of its own, with no `for_each` or `row_of` and no
//! epilogue that takes it: only `SimtWarpMma::finish` turns it into accumulators.
template <int WarpM, int WarpN>
struct SimtPairedRowAccumulators {
  static constexpr int kTilesM = WarpM / 16;
  static constexpr int kTilesN = WarpN / 8;
  float x[kTilesM][kTilesN][4];  // (WarpM / 16, WarpN / 8, 4)
};

//! Warp-scope f32 product of one 4-deep k-block on the CUDA cores (MathSimtF32).
//!
//! \tparam WarpM        warp tile rows, a multiple of 16
//! \tparam WarpN        warp tile columns, a multiple of 16
//! \tparam RowsPerLane  rows of A a lane holds adjacent in the fragments it multiplies: 1, the
//!                      rows g and g + 8 of mma.sync's layout (A K-contiguous), or 2 (A
//!                      M-contiguous, whose fragments then load as 8-byte vectors): see
//!                      `simt_rows_per_lane` and layout/simt_fragment_map.cuh
//!
//! Each lane updates the accumulators of its rows of A (SimtFragmentLoader's fragment, whose type
//! names its rows) and its columns of B (2t, 2t + 1 of each n8 tile):
//! `(WarpM / 16) x (WarpN / 8) x 4` accumulators, each one FFMA per k. Each accumulator adds its
//! products in k order, one rounding per product (fused).
//!
//! operator() updates `WorkingAccumulators`: with 1 row per lane, `Accumulators<WarpM, WarpN>`
//! themselves; with 2, `SimtPairedRowAccumulators`, the same registers holding other rows. `start`
//! takes accumulators in mma.sync's layout into them, before the first k-block; `finish` puts them
//! back, after the last (SimtRowExchange: per pair of registers one `shfl.sync.bfly` and three
//! selects, `(WarpM / 16) x (WarpN / 8) x 2` shuffles, 32 for a 64 x 32 warp tile; nothing with 1
//! row per lane). MultistageMainloop calls both itself, so the epilogue, split-K's slices and
//! stream-K's partials only ever see mma.sync's layout; a mainloop of one's own must call them
//! too, and cannot hand `WorkingAccumulators` of other rows to anything that expects accumulators.
//!
//! \code
//! tilepipe::SimtWarpMma<64, 32> mma;  // A K-contiguous: mma.sync's rows throughout
//! tilepipe::Accumulators<64, 32> acc;
//! acc.clear();
//! mma(acc, a_frag, b_frag);  // 4 x 64 FFMA per lane
//!
//! using MmaMN = tilepipe::SimtWarpMma<64, 32, 2>;  // A M-contiguous
//! MmaMN::WorkingAccumulators work = MmaMN::start(acc, lane);
//! MmaMN{}(work, a_mn_frag, b_frag);  // every k-block
//! acc = MmaMN::finish(work, lane);   // mma.sync's layout again
//! \endcode
template <int WarpM, int WarpN, int RowsPerLane = 1>
struct SimtWarpMma {
  static_assert(WarpM % 16 == 0, "SimtWarpMma: WarpM must be a multiple of 16");
  static_assert(WarpN % 16 == 0, "SimtWarpMma: WarpN must be a multiple of 16");

  using FragmentA = SimtFragment<WarpM / 16, RowsPerLane>;
  using FragmentB = SimtFragment<WarpN / 8>;
  //! The accumulators in mma.sync's layout: what `start` takes and `finish` gives.
  using Accumulators = tilepipe::Accumulators<WarpM, WarpN, float>;
  //! The accumulators operator() updates (see above).
  using WorkingAccumulators =
      std::conditional_t<RowsPerLane == 1, Accumulators, SimtPairedRowAccumulators<WarpM, WarpN>>;
  static constexpr int kK = MathSimtF32::kKBlock;  //!< k depth of one call

  //! acc += a * b (one k-block).
  TILEPIPE_DEVICE void operator()(WorkingAccumulators& acc, const FragmentA& a,
                                  const FragmentB& b) const {
    // k outermost: the FFMAs of one k are independent, and their order steers only ptxas's
    // register allocation, hence how many FFMAs read two operands from one register bank (a
    // dispatch stall). Two rows per lane take the order that gave the fewest; one row, the first.
    TILEPIPE_UNROLL
    for (int kk = 0; kk < kK; ++kk) {
      TILEPIPE_UNROLL
      for (int mi = 0; mi < kTilesM; ++mi) {
        if constexpr (RowsPerLane == 1) {  // per m16 tile: n8 tile, then its 4 accumulators
          TILEPIPE_UNROLL
          for (int ni = 0; ni < kTilesN; ++ni) {
            TILEPIPE_UNROLL
            for (int j = 0; j < 4; ++j)  // the lane's row h = j / 2, column 2t + j % 2
              acc.x[mi][ni][j] =
                  __fmaf_rn(a.x[mi][j / 2][kk], b.x[ni][j % 2][kk], acc.x[mi][ni][j]);
          }
        } else {  // per m16 tile: row h, then every n8 tile's columns of it
          TILEPIPE_UNROLL
          for (int h = 0; h < 2; ++h) {
            TILEPIPE_UNROLL
            for (int ni = 0; ni < kTilesN; ++ni) {
              TILEPIPE_UNROLL
              for (int c = 0; c < 2; ++c)
                acc.x[mi][ni][2 * h + c] =
                    __fmaf_rn(a.x[mi][h][kk], b.x[ni][c][kk], acc.x[mi][ni][2 * h + c]);
            }
          }
        }
      }
    }
  }

  //! `acc` (mma.sync's layout) in the rows this MMA works on; `lane` is the lane index. The whole
  //! warp calls it (it shuffles), once before the first k-block.
  TILEPIPE_DEVICE static WorkingAccumulators start(const Accumulators& acc, int lane) {
    return exchanged<WorkingAccumulators>(acc, lane);
  }
  //! `acc` back in mma.sync's layout; the whole warp calls it, once after the last k-block.
  TILEPIPE_DEVICE static Accumulators finish(const WorkingAccumulators& acc, int lane) {
    return exchanged<Accumulators>(acc, lane);
  }

 private:
  static constexpr int kTilesM = WarpM / 16;
  static constexpr int kTilesN = WarpN / 8;
  using Exchange = SimtRowExchange<RowsPerLane>;

  // `from`'s registers as `To`, rows exchanged between this MMA's and mma.sync's (SimtRowExchange,
  // its own inverse): registers j and j + 2 of each tile are the lane's elements h = 0 and 1.
  template <class To, class From>
  TILEPIPE_DEVICE static To exchanged(const From& from, int lane) {
    To to;
    const bool upper = Exchange::upper(lane);
    TILEPIPE_UNROLL
    for (int mi = 0; mi < kTilesM; ++mi) {
      TILEPIPE_UNROLL
      for (int ni = 0; ni < kTilesN; ++ni) {
        TILEPIPE_UNROLL
        for (int col = 0; col < 2; ++col) {
          float lo = from.x[mi][ni][col], hi = from.x[mi][ni][2 + col];
          if constexpr (Exchange::kExchanges) {
            const float received =
                __shfl_xor_sync(0xFFFFFFFFu, Exchange::send(upper, lo, hi), Exchange::kLaneMask);
            Exchange::receive(upper, lo, hi, received);
          }
          to.x[mi][ni][col] = lo;
          to.x[mi][ni][2 + col] = hi;
        }
      }
    }
    return to;
  }
};

}  // namespace tilepipe
