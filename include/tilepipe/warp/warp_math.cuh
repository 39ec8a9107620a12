#pragma once
//! \file
//! WarpMath: the two warp-scope collectives a math (numeric/math.cuh) runs on, the fragment loader
//! (shared memory -> registers) and the warp MMA, so that a mainloop names them once for any math.
//! The MMA is named with the order A is stored in (`OrderA`), which only the SIMT product's
//! accumulator rows depend on (SimtWarpMma: M-contiguous A in rows of its own until `finish`).

#include "../layout/tile_shape.cuh"
#include "../numeric/math.cuh"
#include <type_traits>

#include "fragment_loader.cuh"
#include "simt_fragment_loader.cuh"
#include "simt_warp_mma.cuh"
#include "tf32_fragment_loader.cuh"
#include "warp_mma.cuh"

namespace tilepipe {

//! `stored_order` of a math whose fragment loaders read either order: the block tile of operand
//! `op`, for A and B in `order_a` and `order_b` in global memory, is kept in shared memory as it
//! is.
struct StoresGlobalOrder {
  TILEPIPE_HOST_DEVICE static constexpr SmemOrder stored_order(Operand op, SmemOrder order_a,
                                                               SmemOrder order_b) {
    return op == Operand::kA ? order_a : order_b;
  }
};

//! The warp collectives of `Math` for `Element` inputs. MathDefault and MathF16Accumulate:
//! ldmatrix (FragmentLoader) and mma.sync m16n8k16 (WarpMma).
template <class Element, class Math>
struct WarpMath : StoresGlobalOrder {
  static_assert(!std::is_same_v<Math, MathSimtF32>,
                "WarpMath: MathSimtF32 (f32 FMA on the CUDA cores) takes float A and B only; "
                "__half and __nv_bfloat16 inputs run on the tensor cores (MathDefault)");
  template <Operand Op, SmemOrder Order, int TileMN, int TileK, int WarpMN>
  using FragmentLoader = tilepipe::FragmentLoader<Element, Op, Order, TileMN, TileK, WarpMN>;
  template <int WarpM, int WarpN, SmemOrder OrderA>
  using Mma = WarpMma<Element, WarpM, WarpN, Math>;
};

//! MathTF32: 32-bit shared loads rounded to tf32 (Tf32FragmentLoader) and mma.sync m16n8k8.
template <>
struct WarpMath<float, MathTF32> : StoresGlobalOrder {
  template <Operand Op, SmemOrder Order, int TileMN, int TileK, int WarpMN>
  using FragmentLoader = Tf32FragmentLoader<Op, Order, TileMN, TileK, WarpMN>;
  template <int WarpM, int WarpN, SmemOrder OrderA>
  using Mma = WarpMma<float, WarpM, WarpN, MathTF32>;
};

//! MathSimtF32: f32 shared loads of 16 or 8 bytes (SimtFragmentLoader), and FFMA on the CUDA
//! cores into mma.sync's accumulator layout (SimtWarpMma; for an M-contiguous A, once `finish`
//! has run). Where A is M-contiguous, B is kept N-contiguous in shared memory whatever its layout
//! (a K-contiguous B is copied transposed, TransposingTileLoader): with both operands'
//! fragments 8-byte loads of adjacent rows and columns at one k, the FFMAs stall less than with
//! B's 4 k of one column. A K-contiguous A keeps both orders: transposing both of TN's operands
//! made ptxas spill, for little to gain.
template <>
struct WarpMath<float, MathSimtF32> {
  TILEPIPE_HOST_DEVICE static constexpr SmemOrder stored_order(Operand op, SmemOrder order_a,
                                                               SmemOrder order_b) {
    return op == Operand::kA                     ? order_a
           : order_a == SmemOrder::kMNContiguous ? SmemOrder::kMNContiguous
                                                 : order_b;
  }
  template <Operand Op, SmemOrder Order, int TileMN, int TileK, int WarpMN>
  using FragmentLoader = SimtFragmentLoader<Op, Order, TileMN, TileK, WarpMN>;
  template <int WarpM, int WarpN, SmemOrder OrderA>
  using Mma = SimtWarpMma<WarpM, WarpN, simt_rows_per_lane(Operand::kA, OrderA)>;
};

}  // namespace tilepipe
