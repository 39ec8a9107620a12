#pragma once
//! \file
//! WarpMma: a warp multiplies its `WarpM x kK` A fragment by its `kK x WarpN` B fragment and
//! accumulates into a `WarpM x WarpN` tile of registers with `mma.sync`: m16n8k16 with f32
//! accumulators (MathDefault), or f16 ones for f16 inputs (MathF16Accumulate); m16n8k8 on tf32
//! with f32 accumulators for f32 inputs (MathTF32).

#include <type_traits>

#include "../arch/mma.cuh"
#include "../numeric/element_traits.cuh"
#include "../numeric/math.cuh"
#include "fragments.cuh"

namespace tilepipe {

//! Warp-scope tensor-core product of one k-block (`kK` = `Math::kKBlock` deep).
//!
//! \tparam Element  `__half` or `__nv_bfloat16`; `float` under MathTF32
//! \tparam WarpM    warp tile rows, a multiple of 16
//! \tparam WarpN    warp tile columns, a multiple of 16
//! \tparam Math     `MathDefault` (f32 accumulators), `MathF16Accumulate` (f16 accumulators,
//!                  `__half` inputs only; `Accumulators` is then `tilepipe::Accumulators<WarpM,
//!                  WarpN, __half>`) or `MathTF32` (`float` inputs, whose fragments hold tf32:
//!                  see Tf32FragmentLoader; f32 accumulators)
//!
//! \code
//! tilepipe::WarpMma<__half, 64, 64> mma;
//! tilepipe::Accumulators<64, 64> acc;
//! acc.clear();
//! mma(acc, a_frag, b_frag);  // (WarpM/16) x (WarpN/8) mma.sync
//! \endcode
template <class Element, int WarpM, int WarpN, class Math = MathDefault>
struct WarpMma {
  static constexpr bool kTf32 = std::is_same_v<Math, MathTF32>;
  static_assert(std::is_same_v<Math, MathDefault> || std::is_same_v<Math, MathF16Accumulate> ||
                    kTf32,
                "WarpMma: the math must be MathDefault, MathF16Accumulate or MathTF32");
  static_assert(
      kTf32 || is_mma_m16n8k16_input_v<Element>,
      "WarpMma: mma.sync m16n8k16 takes __half or __nv_bfloat16 inputs (see "
      "ElementTraits::kMmaAtom); float inputs take MathTF32 (or MathSimtF32, which runs on "
      "SimtWarpMma)");
  static_assert(!kTf32 || std::is_same_v<Element, float>,
                "WarpMma: MathTF32 (mma.sync m16n8k8 on tf32) takes float inputs");
  static_assert(!std::is_same_v<Math, MathF16Accumulate> || std::is_same_v<Element, __half>,
                "WarpMma: f16 accumulation (MathF16Accumulate) needs __half inputs; there is no "
                "mma.sync that accumulates bf16 products in 16 bits, so use MathDefault for bf16");
  static_assert(WarpM % MmaShape::kM == 0, "WarpMma: WarpM must be a multiple of 16");
  static_assert(WarpN % 16 == 0, "WarpMma: WarpN must be a multiple of 16");

  using FragmentA = tilepipe::FragmentA<WarpM>;
  using FragmentB = tilepipe::FragmentB<WarpN>;
  using Accumulators = AccumulatorsFor<WarpM, WarpN, Math>;  // f32, or f16 with MathF16Accumulate
  static constexpr int kMmas = Accumulators::kTilesM * Accumulators::kTilesN;
  static constexpr int kK = Math::kKBlock;  //!< k depth of one call
  //! The accumulators operator() updates, from `start` (before the first k-block, from
  //! `Accumulators`) to `finish` (after the last, back to `Accumulators`): here mma.sync's own, and
  //! both do nothing. Every warp MMA has the three, so that a mainloop calls them for every math;
  //! one whose working layout differs (a layout the epilogue must not see) makes it a type of its
  //! own.
  using WorkingAccumulators = Accumulators;
  TILEPIPE_DEVICE static Accumulators start(const Accumulators& acc, int /*lane*/) { return acc; }
  TILEPIPE_DEVICE static Accumulators finish(const Accumulators& acc, int /*lane*/) { return acc; }

  //! acc += a * b (one k-block).
  TILEPIPE_DEVICE void operator()(Accumulators& acc, const FragmentA& a, const FragmentB& b) const {
    TILEPIPE_UNROLL
    for (int mi = 0; mi < Accumulators::kTilesM; ++mi) {
      TILEPIPE_UNROLL
      for (int nj = 0; nj < Accumulators::kTilesN; ++nj) {
        // Serpentine over n: consecutive mma share an A or a B operand.
        const int ni = (mi % 2 == 0) ? nj : Accumulators::kTilesN - 1 - nj;
        if constexpr (std::is_same_v<Math, MathF16Accumulate>)
          arch::mma_m16n8k16_f16_accumulate(acc.x[mi][ni], a.x[mi], b.x[ni], acc.x[mi][ni]);
        else if constexpr (kTf32)
          arch::mma_m16n8k8_tf32(acc.x[mi][ni], a.x[mi], b.x[ni], acc.x[mi][ni]);
        else arch::mma_m16n8k16<Element>(acc.x[mi][ni], a.x[mi], b.x[ni], acc.x[mi][ni]);
      }
    }
  }
};

}  // namespace tilepipe
