#pragma once
//! \file
//! SimtWarpMma: a warp multiplies its SIMT A fragment by its B fragment on the CUDA cores, one
//! `fma.rn.f32` per product, into the same `WarpM x WarpN` accumulators mma.sync fills
//! (MathSimtF32).

#include "../detail/macros.cuh"
#include "../numeric/math.cuh"
#include "fragments.cuh"

namespace tilepipe {

//! Warp-scope f32 product of one 4-deep k-block on the CUDA cores (MathSimtF32).
//!
//! \tparam WarpM  warp tile rows, a multiple of 16
//! \tparam WarpN  warp tile columns, a multiple of 16
//!
//! Every lane updates exactly the accumulators mma.sync would give it (`Accumulators<WarpM,
//! WarpN>`: rows g, g + 8 of each m16 tile, columns 2t, 2t + 1 of each n8 tile), from the
//! fragments of SimtFragmentLoader: `(WarpM / 16) x (WarpN / 8) x 4` accumulators, each one
//! FFMA per k. Each accumulator adds its products in k order, one rounding per product (fused).
//!
//! \code
//! tilepipe::SimtWarpMma<64, 32> mma;
//! tilepipe::Accumulators<64, 32> acc;
//! acc.clear();
//! mma(acc, a_frag, b_frag);  // 4 x 64 FFMA per lane
//! \endcode
template <int WarpM, int WarpN>
struct SimtWarpMma {
  static_assert(WarpM % 16 == 0, "SimtWarpMma: WarpM must be a multiple of 16");
  static_assert(WarpN % 16 == 0, "SimtWarpMma: WarpN must be a multiple of 16");

  using FragmentA = SimtFragment<WarpM / 16>;
  using FragmentB = SimtFragment<WarpN / 8>;
  using Accumulators = tilepipe::Accumulators<WarpM, WarpN, float>;
  static constexpr int kK = MathSimtF32::kKBlock;  //!< k depth of one call
  //! The accumulators operator() updates: mma.sync's layout. `start` and `finish` do nothing, as
  //! WarpMma's (the mainloop calls them for every math).
  using WorkingAccumulators = Accumulators;
  TILEPIPE_DEVICE static Accumulators start(const Accumulators& acc, int /*lane*/) { return acc; }
  TILEPIPE_DEVICE static Accumulators finish(const Accumulators& acc, int /*lane*/) { return acc; }

  //! acc += a * b (one k-block).
  TILEPIPE_DEVICE void operator()(Accumulators& acc, const FragmentA& a, const FragmentB& b) const {
    // k outermost: the (WarpM / 16) x (WarpN / 8) x 4 FFMAs of one k are independent.
    TILEPIPE_UNROLL
    for (int kk = 0; kk < kK; ++kk) {
      TILEPIPE_UNROLL
      for (int mi = 0; mi < Accumulators::kTilesM; ++mi) {
        TILEPIPE_UNROLL
        for (int ni = 0; ni < Accumulators::kTilesN; ++ni) {
          TILEPIPE_UNROLL
          for (int j = 0; j < 4; ++j)  // row g + 8 (j / 2), column 2t + j % 2
            acc.x[mi][ni][j] = __fmaf_rn(a.x[mi][j / 2][kk], b.x[ni][j % 2][kk], acc.x[mi][ni][j]);
        }
      }
    }
  }
};

}  // namespace tilepipe
