#pragma once
//! \file
//! Register fragments of a warp tile for `mma.sync.m16n8k16` (two 16-bit elements per register)
//! and `mma.sync.m16n8k8` on tf32 (one element per register, half the k depth): both shapes take
//! the same number of registers per fragment, so they share these types. The SIMT product
//! (MathSimtF32) has fragments of its own, and all three share the accumulators.
//!
//! The element layout inside each register is the PTX ISA's (see arch/mma.cuh). Arrays are
//! indexed only with compile-time constants (fully unrolled loops), so they stay in registers.

#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "../detail/macros.cuh"
#include "../layout/tile_shape.cuh"
#include "../numeric/math.cuh"

namespace tilepipe {

//! A operand of a `WarpM x 16` k-block (`WarpM x 8` for tf32): one fragment (4 registers) per m16
//! tile.
template <int WarpM>
struct FragmentA {
  static_assert(WarpM % MmaShape::kM == 0, "FragmentA: WarpM must be a multiple of 16");
  static constexpr int kTiles = WarpM / MmaShape::kM;
  std::uint32_t x[kTiles][4];  // (WarpM / 16, 4 registers of two 16-bit elements or one tf32)
};

//! B operand of a `16 x WarpN` k-block (`8 x WarpN` for tf32): one fragment (2 registers) per n8
//! tile.
template <int WarpN>
struct FragmentB {
  static_assert(WarpN % 16 == 0,
                "FragmentB: WarpN must be a multiple of 16 (one ldmatrix.x4 feeds two n8 tiles)");
  static constexpr int kTiles = WarpN / MmaShape::kN;
  std::uint32_t x[kTiles][2];  // (WarpN / 8, 2 registers of two 16-bit elements or one tf32)
};

//! One operand of a SIMT k-block (MathSimtF32, 4 deep): for each of the warp's `Tiles` fragment
//! tiles (m16 tiles of A, n8 tiles of B), the lane's two rows of A or columns of B (2t, 2t + 1)
//! at the k-block's 4 k, in f32. A's rows are those of `SimtFragmentMap<Operand::kA,
//! RowsPerLane>` (layout/simt_fragment_map.cuh): g and g + 8 with 1 row per lane, mma.sync's; a
//! fragment of other rows feeds only the SimtWarpMma that puts its accumulators back.
template <int Tiles, int RowsPerLane = 1>
struct SimtFragment {
  static constexpr int kTiles = Tiles;
  static constexpr int kRowsPerLane = RowsPerLane;
  float x[Tiles][2][4];  // (fragment tiles, 2 rows or columns, 4 k)
};

//! Accumulators of a `WarpM x WarpN` warp tile, `Element` (`float` or `__half`) each: 4 per lane
//! per m16n8 tile. Accumulator `j` of tile `(mi, ni)` of lane `l` is element
//! `(16 * mi + l / 4 + 8 * (j / 2), 8 * ni + 2 * (l % 4) + j % 2)` of the warp tile. Both kinds
//! offer the same interface (`get`, `set`, `for_each`, `row_of`, `col_of`), in f32.
template <int WarpM, int WarpN, class Element = float>
struct Accumulators;

//! f32 accumulators: one register each.
template <int WarpM, int WarpN>
struct Accumulators<WarpM, WarpN, float> {
  static_assert(WarpM % MmaShape::kM == 0 && WarpN % MmaShape::kN == 0,
                "Accumulators: the warp tile must be a multiple of 16 x 8");
  static constexpr int kTilesM = WarpM / MmaShape::kM;
  static constexpr int kTilesN = WarpN / MmaShape::kN;
  float x[kTilesM][kTilesN][4];  // (WarpM / 16, WarpN / 8, 4)

  TILEPIPE_HOST_DEVICE void clear() {
    TILEPIPE_UNROLL
    for (int mi = 0; mi < kTilesM; ++mi) {
      TILEPIPE_UNROLL
      for (int ni = 0; ni < kTilesN; ++ni) {
        TILEPIPE_UNROLL
        for (int j = 0; j < 4; ++j) x[mi][ni][j] = 0.0f;
      }
    }
  }

  //! Accumulator `j` of m16n8 tile `(mi, ni)`.
  TILEPIPE_HOST_DEVICE float get(int mi, int ni, int j) const { return x[mi][ni][j]; }
  //! Sets accumulator `j` of m16n8 tile `(mi, ni)`.
  TILEPIPE_HOST_DEVICE void set(int mi, int ni, int j, float v) { x[mi][ni][j] = v; }

  //! Calls `fn(row, col, value)` for every accumulator this lane holds, with `row` and `col` its
  //! position in the warp tile and `value` a reference to the register (fully unrolled).
  //! \code
  //! acc.for_each(lane, [&](int r, int c, float& v) { v = fmaxf(v + bias[n0 + c], 0.0f); });
  //! \endcode
  template <class Fn>
  TILEPIPE_HOST_DEVICE void for_each(int lane, Fn&& fn) {
    visit(*this, lane, fn);
  }
  template <class Fn>
  TILEPIPE_HOST_DEVICE void for_each(int lane, Fn&& fn) const {
    visit(*this, lane, fn);
  }

  //! Row within the warp tile of register `j` of m16 tile `mi` for `lane`.
  TILEPIPE_HOST_DEVICE static constexpr int row_of(int lane, int mi, int j) {
    return MmaShape::kM * mi + lane / 4 + 8 * (j / 2);
  }
  //! Column within the warp tile of register `j` of n8 tile `ni` for `lane`.
  TILEPIPE_HOST_DEVICE static constexpr int col_of(int lane, int ni, int j) {
    return MmaShape::kN * ni + 2 * (lane % 4) + j % 2;
  }

 private:
  // The loop of both for_each overloads (Self is Accumulators or const Accumulators).
  template <class Self, class Fn>
  TILEPIPE_HOST_DEVICE static void visit(Self& self, int lane, Fn& fn) {
    TILEPIPE_UNROLL
    for (int mi = 0; mi < kTilesM; ++mi) {
      TILEPIPE_UNROLL
      for (int ni = 0; ni < kTilesN; ++ni) {
        TILEPIPE_UNROLL
        for (int j = 0; j < 4; ++j) fn(row_of(lane, mi, j), col_of(lane, ni, j), self.x[mi][ni][j]);
      }
    }
  }
};

//! f16 accumulators (MathF16Accumulate): two per 32-bit register, the lower column in the low
//! half, as `mma.sync...f16.f16.f16.f16` keeps them; half the registers of f32 accumulators.
template <int WarpM, int WarpN>
struct Accumulators<WarpM, WarpN, __half> {
  using F32 = Accumulators<WarpM, WarpN, float>;  // the same tile's index math
  static constexpr int kTilesM = F32::kTilesM;
  static constexpr int kTilesN = F32::kTilesN;
  std::uint32_t x[kTilesM][kTilesN][2];  // (WarpM / 16, WarpN / 8, 2 registers of two f16)

  TILEPIPE_HOST_DEVICE void clear() {
    TILEPIPE_UNROLL
    for (int mi = 0; mi < kTilesM; ++mi) {
      TILEPIPE_UNROLL
      for (int ni = 0; ni < kTilesN; ++ni) x[mi][ni][0] = x[mi][ni][1] = 0u;  // +0.0 twice
    }
  }

  //! Accumulator `j` of m16n8 tile `(mi, ni)`, in f32 (exactly: every f16 is an f32).
  TILEPIPE_HOST_DEVICE float get(int mi, int ni, int j) const {
    const std::uint32_t r = x[mi][ni][j / 2];
    return __half2float(
        __ushort_as_half(static_cast<unsigned short>(j % 2 ? r >> 16 : r & 0xFFFFu)));
  }
  //! Sets accumulator `j` of tile `(mi, ni)` to `v` rounded to f16 (to nearest even).
  TILEPIPE_HOST_DEVICE void set(int mi, int ni, int j, float v) {
    const std::uint32_t h = __half_as_ushort(__float2half_rn(v));
    std::uint32_t& r = x[mi][ni][j / 2];
    r = j % 2 ? (r & 0xFFFFu) | (h << 16) : (r & 0xFFFF0000u) | h;
  }

  //! Calls `fn(row, col, value)` for every accumulator this lane holds, as for f32 accumulators;
  //! `value` is the accumulator in f32, and what `fn` leaves in it is stored back, rounded to f16.
  template <class Fn>
  TILEPIPE_HOST_DEVICE void for_each(int lane, Fn&& fn) {
    TILEPIPE_UNROLL
    for (int mi = 0; mi < kTilesM; ++mi) {
      TILEPIPE_UNROLL
      for (int ni = 0; ni < kTilesN; ++ni) {
        TILEPIPE_UNROLL
        for (int j = 0; j < 4; ++j) {
          float v = get(mi, ni, j);
          fn(row_of(lane, mi, j), col_of(lane, ni, j), v);
          set(mi, ni, j, v);
        }
      }
    }
  }
  template <class Fn>
  TILEPIPE_HOST_DEVICE void for_each(int lane, Fn&& fn) const {
    TILEPIPE_UNROLL
    for (int mi = 0; mi < kTilesM; ++mi) {
      TILEPIPE_UNROLL
      for (int ni = 0; ni < kTilesN; ++ni) {
        TILEPIPE_UNROLL
        for (int j = 0; j < 4; ++j) fn(row_of(lane, mi, j), col_of(lane, ni, j), get(mi, ni, j));
      }
    }
  }

  TILEPIPE_HOST_DEVICE static constexpr int row_of(int lane, int mi, int j) {
    return F32::row_of(lane, mi, j);
  }
  TILEPIPE_HOST_DEVICE static constexpr int col_of(int lane, int ni, int j) {
    return F32::col_of(lane, ni, j);
  }
};

//! The accumulators of a warp tile under `Math` (numeric/math.cuh): f16 with MathF16Accumulate,
//! f32 otherwise. The mainloop and the epilogue both name them through this alias.
template <int WarpM, int WarpN, class Math>
using AccumulatorsFor =
    Accumulators<WarpM, WarpN,
                 std::conditional_t<std::is_same_v<Math, MathF16Accumulate>, __half, float>>;

}  // namespace tilepipe
