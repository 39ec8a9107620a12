#pragma once
//! \file
//! WarpMma: a warp multiplies its `WarpM x 16` A fragment by its `16 x WarpN` B fragment and
//! accumulates into a `WarpM x WarpN` tile of f32 registers with `mma.sync.m16n8k16`.

#include <type_traits>

#include "../arch/mma.cuh"
#include "../numeric/element_traits.cuh"
#include "fragments.cuh"

namespace tilepipe {

//! Warp-scope tensor-core product of one k-block.
//!
//! \tparam Element  `__half` or `__nv_bfloat16`
//! \tparam WarpM    warp tile rows, a multiple of 16
//! \tparam WarpN    warp tile columns, a multiple of 16
//!
//! \code
//! tilepipe::WarpMma<__half, 64, 64> mma;
//! tilepipe::Accumulators<64, 64> acc;
//! acc.clear();
//! mma(acc, a_frag, b_frag);  // (WarpM/16) x (WarpN/8) mma.sync
//! \endcode
template <class Element, int WarpM, int WarpN>
struct WarpMma {
  static_assert(is_mma_m16n8k16_input_v<Element>,
                "WarpMma: mma.sync m16n8k16 takes __half or __nv_bfloat16 inputs (see "
                "ElementTraits::kMmaAtom)");
  static_assert(WarpM % MmaShape::kM == 0, "WarpMma: WarpM must be a multiple of 16");
  static_assert(WarpN % 16 == 0, "WarpMma: WarpN must be a multiple of 16");

  using FragmentA = tilepipe::FragmentA<WarpM>;
  using FragmentB = tilepipe::FragmentB<WarpN>;
  using Accumulators = tilepipe::Accumulators<WarpM, WarpN>;
  static constexpr int kMmas = Accumulators::kTilesM * Accumulators::kTilesN;

  //! acc += a * b.
  TILEPIPE_DEVICE void operator()(Accumulators& acc, const FragmentA& a, const FragmentB& b) const {
    TILEPIPE_UNROLL
    for (int mi = 0; mi < Accumulators::kTilesM; ++mi) {
      TILEPIPE_UNROLL
      for (int nj = 0; nj < Accumulators::kTilesN; ++nj) {
        // Serpentine over n: consecutive mma share an A or a B operand.
        const int ni = (mi % 2 == 0) ? nj : Accumulators::kTilesN - 1 - nj;
        arch::mma_m16n8k16<Element>(acc.x[mi][ni], a.x[mi], b.x[ni], acc.x[mi][ni]);
      }
    }
  }
};

}  // namespace tilepipe
