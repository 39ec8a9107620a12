#pragma once
//! \file
//! Tf32FragmentLoader: a warp loads its A or B fragments of one 8-deep k-block from a swizzled
//! shared-memory tile of f32 with 32-bit loads, rounding each element to tf32, in the register
//! layout `mma.sync.m16n8k8...tf32` expects.

#include <cstdint>
#include <type_traits>

#include "../arch/cvt.cuh"
#include "../block/smem_tile.cuh"
#include "../layout/tf32_fragment_map.cuh"
#include "../layout/tile_shape.cuh"
#include "fragments.cuh"

namespace tilepipe {

//! Warp-scope loader of one f32 operand's tf32 fragments (MathTF32).
//!
//! \tparam Op      `Operand::kA` (M x K) or `Operand::kB` (K x N)
//! \tparam Order   how the block tile is stored in shared memory (see `smem_order_of`)
//! \tparam TileMN  block tile extent along M (for A) or N (for B)
//! \tparam TileK   block tile extent along K, a multiple of 8
//! \tparam WarpMN  this warp's extent along M or N, a multiple of 16 that divides TileMN
//!
//! ldmatrix has no transposing form for 32-bit elements, so every register is one 32-bit shared
//! load then one `cvt.rna.tf32.f32`, in either storage order. Each lane's k slots hold a
//! permutation of the k-block (layout/tf32_fragment_map.cuh) that both operands share and that
//! keeps every load free of bank conflicts. The fragments are `FragmentA<WarpMN>` /
//! `FragmentB<WarpMN>`, one tf32 per register. One `load` fills them for k-block `k_block` (k in
//! `[8 k_block, 8 k_block + 8)`).
//!
//! \code
//! using LoadA = tilepipe::Tf32FragmentLoader<tilepipe::Operand::kA,
//!                                            tilepipe::SmemOrder::kKContiguous, 128, 32, 64>;
//! LoadA load_a(lane, warp_m * 64);
//! LoadA::Fragment a;
//! load_a.load(a, ring.read_stage().a, /*k_block=*/0);
//! \endcode
template <Operand Op, SmemOrder Order, int TileMN, int TileK, int WarpMN>
class Tf32FragmentLoader {
  static_assert(TileK % 8 == 0,
                "Tf32FragmentLoader: TileK must be a multiple of 8 for mma.sync m16n8k8");
  static_assert(WarpMN % 16 == 0,
                "Tf32FragmentLoader: the warp tile's M (or N) extent must be a multiple of 16");
  static_assert(TileMN % WarpMN == 0,
                "Tf32FragmentLoader: the warp tile must divide the block tile along M (or N)");

  using Extent = OperandTileExtent<Order, TileMN, TileK>;

 public:
  using Tile = SmemTile<float, Extent::kRows, Extent::kCols>;
  using Fragment = std::conditional_t<Op == Operand::kA, FragmentA<WarpMN>, FragmentB<WarpMN>>;
  static constexpr int kKBlocks = TileK / 8;

 private:
  using Addressing =
      Tf32FragmentAddressing<Op, Order, typename Tile::Layout, TileMN, TileK, WarpMN>;
  static constexpr int kRegisters = Addressing::kRegisters;

 public:
  //! `lane` is the lane index (0..31); `warp_mn0` the warp tile's first row of A (or column of
  //! B) within the block tile.
  TILEPIPE_DEVICE Tf32FragmentLoader(int lane, int warp_mn0) : lane_(lane), warp_mn0_(warp_mn0) {
    TILEPIPE_UNROLL
    for (int r = 0; r < kRegisters; ++r)
      lane_elements_[r] = Addressing::element(lane, warp_mn0, 0, 0, r);
  }

  //! Loads k-block `k_block` of `tile` into `frag`. With `k_block` a compile-time constant (an
  //! unrolled loop), each load's address is this lane's offset for its register, XORed and
  //! offset by constants (see `Tf32FragmentAddressing`).
  TILEPIPE_DEVICE void load(Fragment& frag, const Tile& tile, int k_block) const {
    TILEPIPE_UNROLL
    for (int i = 0; i < Addressing::kFragments; ++i) {
      TILEPIPE_UNROLL
      for (int r = 0; r < kRegisters; ++r) {
        const int e = Addressing::kSplits ? Addressing::split_element(lane_elements_[r], i, k_block)
                                          : Addressing::element(lane_, warp_mn0_, i, k_block, r);
        frag.x[i][r] = arch::to_tf32(tile.data[e]);
      }
    }
  }

 private:
  int lane_;
  int warp_mn0_;
  int lane_elements_[kRegisters];  // (registers): this lane's element of load (0, 0) per register
};

}  // namespace tilepipe
