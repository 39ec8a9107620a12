#pragma once
//! \file
//! FragmentLoader: a warp loads its A or B fragments of one k-block from a swizzled shared-memory
//! tile with `ldmatrix`, in the register layout `mma.sync.m16n8k16` expects.

#include <cstdint>
#include <type_traits>

#include "../arch/ldmatrix.cuh"
#include "../block/smem_tile.cuh"
#include "../layout/ldmatrix_map.cuh"
#include "../layout/tile_shape.cuh"
#include "../numeric/element_traits.cuh"
#include "fragments.cuh"

namespace tilepipe {

//! Warp-scope loader of one operand's fragments.
//!
//! \tparam Element  16-bit input type (`__half`, `__nv_bfloat16`)
//! \tparam Op       `Operand::kA` (M x K) or `Operand::kB` (K x N)
//! \tparam Order    how the block tile is stored in shared memory (see `smem_order_of`)
//! \tparam TileMN   block tile extent along M (for A) or N (for B)
//! \tparam TileK    block tile extent along K, a multiple of 16
//! \tparam WarpMN   this warp's extent along M or N, a multiple of 16 that divides TileMN
//!
//! One `load` issues `WarpMN / 16` `ldmatrix.x4` (`.trans` for MN-contiguous tiles) and fills a
//! `FragmentA<WarpMN>` or `FragmentB<WarpMN>` for k-block `k_block` (k in
//! `[16 k_block, 16 k_block + 16)` of the tile).
//!
//! \code
//! using LoadA = tilepipe::FragmentLoader<__half, tilepipe::Operand::kA,
//!                                        tilepipe::SmemOrder::kKContiguous, 128, 32, 64>;
//! LoadA load_a(lane, warp_m * 64);
//! LoadA::Fragment a;
//! load_a.load(a, ring.read_stage().a, /*k_block=*/0);
//! \endcode
template <class Element, Operand Op, SmemOrder Order, int TileMN, int TileK, int WarpMN>
class FragmentLoader {
  static_assert(is_mma_m16n8k16_input_v<Element>,
                "FragmentLoader: ldmatrix feeds mma.sync m16n8k16, whose inputs are __half or "
                "__nv_bfloat16 (see ElementTraits::kMmaAtom)");
  static_assert(TileK % MmaShape::kK == 0,
                "FragmentLoader: TileK must be a multiple of 16 for mma.sync m16n8k16");
  static_assert(WarpMN % 16 == 0,
                "FragmentLoader: the warp tile's M (or N) extent must be a multiple of 16, the "
                "width of one ldmatrix.x4");
  static_assert(TileMN % WarpMN == 0,
                "FragmentLoader: the warp tile must divide the block tile along M (or N)");

  using Map = LdmatrixMap<Op, Order>;
  using Extent = OperandTileExtent<Order, TileMN, TileK>;

 public:
  using Tile = SmemTile<Element, Extent::kRows, Extent::kCols>;
  using Fragment = std::conditional_t<Op == Operand::kA, FragmentA<WarpMN>, FragmentB<WarpMN>>;
  static constexpr int kKBlocks = TileK / MmaShape::kK;
  static constexpr int kLoads = WarpMN / 16;  //!< ldmatrix.x4 per k-block

 private:
  using Addressing = LdmatrixAddressing<Op, Order, typename Tile::Layout, TileMN, TileK, WarpMN>;
  static constexpr int kChunkBytes = 16;

 public:
  //! `lane` is the lane index (0..31); `warp_mn0` the warp tile's first row of A (or column of
  //! B) within the block tile.
  TILEPIPE_DEVICE FragmentLoader(int lane, int warp_mn0)
      : lane_(lane), warp_mn0_(warp_mn0),
        lane_bytes_(Addressing::chunk(lane, warp_mn0, 0, 0) * kChunkBytes) {}

  //! Loads k-block `k_block` of `tile` into `frag`. With `k_block` a compile-time constant (an
  //! unrolled loop), each ldmatrix's address is the tile's address plus this lane's offset,
  //! XORed and offset by constants (see `LdmatrixAddressing`).
  TILEPIPE_DEVICE void load(Fragment& frag, const Tile& tile, int k_block) const {
    const std::uint32_t tile_address = arch::smem_address(tile.data);
    TILEPIPE_UNROLL
    for (int i = 0; i < kLoads; ++i) {
      std::uint32_t offset;
      if constexpr (Addressing::kSplits) {
        const int d = Addressing::displacement(i, k_block);
        offset = (lane_bytes_ ^ static_cast<std::uint32_t>((d & 7) * kChunkBytes)) +
                 static_cast<std::uint32_t>((d & ~7) * kChunkBytes);
      } else {
        offset = Addressing::chunk(lane_, warp_mn0_, i, k_block) * kChunkBytes;
      }
      std::uint32_t r[4];
      arch::ldmatrix_x4<Map::kTrans>(r, tile_address + offset);
      if constexpr (Op == Operand::kA) {
        // Matrix q is register q of the m16 tile: (m 0-7, k 0-7), (m 8-15, k 0-7), (m 0-7, k 8-15),
        // ...
        TILEPIPE_UNROLL
        for (int q = 0; q < 4; ++q) frag.x[i][q] = r[q];
      } else {
        // Matrices 0,1 are b[0], b[1] of n8 tile 2i; matrices 2,3 those of n8 tile 2i + 1.
        frag.x[2 * i][0] = r[0];
        frag.x[2 * i][1] = r[1];
        frag.x[2 * i + 1][0] = r[2];
        frag.x[2 * i + 1][1] = r[3];
      }
    }
  }

 private:
  int lane_;
  int warp_mn0_;
  std::uint32_t lane_bytes_;  // this lane's chunk of load (0, 0), in bytes from the tile's start
};

}  // namespace tilepipe
