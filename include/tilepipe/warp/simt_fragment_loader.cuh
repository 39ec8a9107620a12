#pragma once
//! \file
//! SimtFragmentLoader: a warp loads its A or B fragments of one 4-deep k-block from a swizzled
//! shared-memory tile of f32 for the SIMT product (MathSimtF32), in 16-byte shared loads where
//! the tile is K-contiguous and 8-byte ones where it is MN-contiguous.

#include <type_traits>

#include "../block/smem_tile.cuh"
#include "../layout/simt_fragment_map.cuh"
#include "../layout/tile_shape.cuh"
#include "fragments.cuh"

namespace tilepipe {

//! Warp-scope loader of one f32 operand's SIMT fragments (MathSimtF32).
//!
//! \tparam Op      `Operand::kA` (M x K) or `Operand::kB` (K x N)
//! \tparam Order   how the block tile is stored in shared memory (see `smem_order_of`)
//! \tparam TileMN  block tile extent along M (for A) or N (for B)
//! \tparam TileK   block tile extent along K, a multiple of 4
//! \tparam WarpMN  this warp's extent along M or N, a multiple of 16 that divides TileMN
//!
//! Each lane loads the rows of A (columns of B) of its accumulators (warp/fragments.cuh), 4 k at a
//! time: one 16-byte load per row where the tile is K-contiguous; where it is MN-contiguous,
//! 8-byte loads of two adjacent columns of B (2t, 2t + 1) or rows of A. A lane's rows of an
//! M-contiguous A are not mma.sync's but `kRowsPerLane` = 2 adjacent ones
//! (layout/simt_fragment_map.cuh; all loads free of bank conflicts): its fragment, whose type says
//! so, feeds only the SimtWarpMma of those rows, which restores mma.sync's layout in `finish`. The
//! fragment is `SimtFragment<WarpMN / 16, kRowsPerLane>` for A, `SimtFragment<WarpMN / 8>` for B.
//! One `load` fills it for k-block `k_block` (k in `[4 k_block, 4 k_block + 4)`).
//!
//! \code
//! using LoadA = tilepipe::SimtFragmentLoader<tilepipe::Operand::kA,
//!                                            tilepipe::SmemOrder::kKContiguous, 128, 32, 64>;
//! LoadA load_a(lane, warp_m * 64);
//! LoadA::Fragment a;
//! load_a.load(a, ring.read_stage().a, /*k_block=*/0);
//! \endcode
template <Operand Op, SmemOrder Order, int TileMN, int TileK, int WarpMN>
class SimtFragmentLoader {
  static_assert(TileK % 4 == 0,
                "SimtFragmentLoader: TileK must be a multiple of the 4-deep k-block");
  static_assert(WarpMN % 16 == 0,
                "SimtFragmentLoader: the warp tile's M (or N) extent must be a multiple of 16");
  static_assert(TileMN % WarpMN == 0,
                "SimtFragmentLoader: the warp tile must divide the block tile along M (or N)");

  using Extent = OperandTileExtent<Order, TileMN, TileK>;

 public:
  using Tile = SmemTile<float, Extent::kRows, Extent::kCols>;

 private:
  using Addressing =
      SimtFragmentAddressing<Op, Order, typename Tile::Layout, TileMN, TileK, WarpMN>;
  static_assert(Addressing::kSplits,
                "SimtFragmentLoader: this tile's loads are not a per-lane offset plus constants "
                "(SimtFragmentAddressing::kSplits); every tile tested on the host is, so please "
                "report the tile");
  static constexpr int kLoads = Addressing::kLoads;
  static constexpr int kBases = Addressing::kBases;
  static constexpr int kVector = Addressing::kVector;

 public:
  //! Rows of A a lane holds adjacent per block (`simt_rows_per_lane`; 1 for B).
  static constexpr int kRowsPerLane = Addressing::kRowsPerLane;
  using Fragment = SimtFragment<Addressing::kFragments, kRowsPerLane>;
  static constexpr int kKBlocks = Addressing::kKBlocks;

  //! `lane` is the lane index (0..31); `warp_mn0` the warp tile's first row of A (or column of
  //! B) within the block tile.
  TILEPIPE_DEVICE SimtFragmentLoader(int lane, int warp_mn0) {
    TILEPIPE_UNROLL
    for (int h = 0; h < kBases; ++h)
      lane_elements_[h] = Addressing::element(lane, warp_mn0, 0, 0, h);
  }

  //! Loads k-block `k_block` of `tile` into `frag`. With `k_block` a compile-time constant (an
  //! unrolled loop), each load's address is one of this lane's `kBases` offsets, XORed and offset
  //! by constants (see `SimtFragmentAddressing`).
  TILEPIPE_DEVICE void load(Fragment& frag, const Tile& tile, int k_block) const {
    TILEPIPE_UNROLL
    for (int i = 0; i < Fragment::kTiles; ++i) {
      TILEPIPE_UNROLL
      for (int v = 0; v < kLoads; ++v) {
        const int h = Addressing::h_of(v), kk = Addressing::kk_of(v);
        const int e = Addressing::split_element(lane_elements_[h], i, k_block, v);
        if constexpr (kVector == 4) {  // 4 k of one row
          const float4 q = *reinterpret_cast<const float4*>(tile.data + e);
          frag.x[i][h][0] = q.x;
          frag.x[i][h][1] = q.y;
          frag.x[i][h][2] = q.z;
          frag.x[i][h][3] = q.w;
        } else {  // both MN positions (columns of B, rows of A) of one k
          const float2 q = *reinterpret_cast<const float2*>(tile.data + e);
          frag.x[i][0][kk] = q.x;
          frag.x[i][1][kk] = q.y;
        }
      }
    }
  }

 private:
  int lane_elements_[kBases];  // (bases): this lane's element of load (0, 0, h) per h
};

}  // namespace tilepipe
