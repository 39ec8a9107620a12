#pragma once
//! \file
//! Where each lane's SIMT f32 fragments (MathSimtF32) come from in a swizzled shared-memory tile
//! of f32, and how a warp's accumulators go back to mma.sync's layout after a mainloop that kept
//! other rows of A.
//!
//! The SIMT product hands on its accumulators in mma.sync's layout (warp/fragments.cuh): in each
//! m16n8 tile, lane l (g = l / 4, t = l % 4) owns rows g and g + 8 and columns 2t and 2t + 1. For
//! one k a lane needs A at its rows of every m16 tile and B at its columns of every n8 tile; a
//! k-block is 4 k deep. Columns 2t and 2t + 1 are adjacent, and so are 4 consecutive k, but rows
//! g and g + 8 are 8 apart: an M-contiguous A has no vector to load there. So while the k-blocks
//! run, a lane holds `R` = `kRowsPerLane` adjacent rows of A in each block of 8R rows: R = 1 is
//! mma.sync's layout (K-contiguous A); R = 2 (M-contiguous A), rows
//!
//!     8 (g % 2) + 2 (g / 2) + h,  h = 0, 1      (g = 0..7: rows 0,1  8,9  2,3  10,11  4,5 ...)
//!
//! of each m16 tile, its element h; and the accumulators go back to rows g and g + 8 once the
//! k-blocks are done (SimtRowExchange, called by SimtWarpMma::finish). Per fragment tile (an m16
//! tile of A, an n8 tile of B) and k-block, a lane's shared loads are:
//!
//!    order          operand  one load                                    loads  width
//!    K-contiguous   A or B   row (mn), 4 consecutive k                   2      16 bytes (LDS.128)
//!    MN-contiguous  B        row (k), columns 2t, 2t + 1                 4      8 bytes  (LDS.64)
//!    MN-contiguous  A        row (k), rows 8 (g % 2) + 2 (g / 2) + 0, 1  4      8 bytes  (LDS.64)
//!
//! Lanes that need the same element read the same address, a broadcast, so a load touches only
//! 8 (A) or 4 (B) different vectors. In the swizzled layout (layout/swizzled_tile.cuh) those are
//! free of bank conflicts: K-contiguous, the rows g (or 2t + h) are 8 (4) rows in one group of 8,
//! whose chunks of one k-block the swizzle puts in different 16-byte bank groups; MN-contiguous,
//! the 8 (4) vectors are consecutive in one row, 64 (32) bytes of whole 16-byte chunks that stay
//! apart under the swizzle. Tested on the host for every tile the library uses.
//!
//! Why 2 rows per lane and not 4 (one 16-byte load per k, as many loads as a K-contiguous A):
//! with 4, ptxas spills accumulators of the f32 default tile at 255 registers; with 2 it does not.
//! R = 2's restore costs 32 SHFL and 96 selects per warp tile, R = 4's would cost twice that.

#include "../detail/macros.cuh"
#include "tile_shape.cuh"

namespace tilepipe {

//! Rows of A a lane holds adjacent while the SIMT k-blocks run (`R` above): 2 for an
//! M-contiguous A (8-byte loads of two rows), 1 otherwise (mma.sync's rows; B keeps mma.sync's
//! columns in both orders).
TILEPIPE_HOST_DEVICE constexpr int simt_rows_per_lane(Operand op, SmemOrder order) {
  return op == Operand::kA && order == SmemOrder::kMNContiguous ? 2 : 1;
}

//! The MN positions of a lane's SIMT fragment, relative to the fragment tile's first row of A
//! (an m16 tile) or column of B (an n8 tile); A's rows as `RowsPerLane` (1 or 2) says above.
template <Operand Op, int RowsPerLane = 1>
struct SimtFragmentMap {
  static_assert(RowsPerLane == 1 || RowsPerLane == 2,
                "SimtFragmentMap: a lane holds 1 (mma.sync's) or 2 adjacent rows of A per block");
  static_assert(Op == Operand::kA || RowsPerLane == 1,
                "SimtFragmentMap: only A's rows are rearranged; B keeps mma.sync's columns");
  static constexpr int kMN = Op == Operand::kA ? 16 : 8;  //!< MN extent of one fragment tile
  static constexpr int kK = 4;                            //!< k depth of one k-block
  static constexpr int kRowsPerLane = RowsPerLane;

  //! M (for A) or N (for B) of the lane's element `h` (0, 1): A rows g and g + 8 (R = 1) or
  //! 8 (g % 2) + 2 (g / 2) + h (R = 2); B columns 2t and 2t + 1, the columns of its accumulators.
  TILEPIPE_HOST_DEVICE static constexpr int mn_of(int lane, int h) {
    const int g = lane / 4;
    if (Op == Operand::kB) return 2 * (lane % 4) + h;
    return RowsPerLane == 1 ? g + 8 * h : 8 * (g % 2) + 2 * (g / 2) + h;
  }
};

//! The exchange between lanes that takes a warp's SIMT accumulators from the rows of
//! `SimtFragmentMap<Operand::kA, 2>` to mma.sync's, and back: it is its own inverse (nothing to
//! do for 1 row per lane).
//!
//! Lane g's element h of an m16 tile is row r = 8 (g % 2) + 2 (g / 2) + h, which mma.sync's
//! layout gives to lane `r % 8 = 2 (g / 2) + h`, element `r / 8 = g % 2`: the exchange swaps bit 0
//! of g with h. Lanes l and `l ^ kLaneMask` (g even and odd) trade, for every m16 tile, n8 tile
//! and column, the element each must give up: the lower lane (g even) keeps its h = 0 and receives
//! the upper lane's h = 0 as its h = 1; the upper lane keeps its h = 1 and receives the lower
//! lane's h = 1 as its h = 0. Per pair of registers one SHFL and three selects (what to send,
//! where to put what arrives), nothing indexed at run time.
template <int RowsPerLane>
struct SimtRowExchange {
  static_assert(RowsPerLane == 1 || RowsPerLane == 2,
                "SimtRowExchange: a lane holds 1 (mma.sync's) or 2 adjacent rows of A per block");
  static constexpr bool kExchanges = RowsPerLane == 2;  //!< whether there is anything to do
  static constexpr int kLaneMask = 4;                   //!< lanes whose g differs in bit 0

  //! Whether `lane` is the upper lane of its pair (g odd).
  TILEPIPE_HOST_DEVICE static constexpr bool upper(int lane) { return (lane / 4) % 2 == 1; }
  //! What a lane sends of a pair of its registers (`lo`: element h = 0, `hi`: h = 1).
  TILEPIPE_HOST_DEVICE static constexpr float send(bool is_upper, float lo, float hi) {
    return is_upper ? lo : hi;
  }
  //! The pair once `received` (the partner's `send`) has arrived.
  TILEPIPE_HOST_DEVICE static constexpr void receive(bool is_upper, float& lo, float& hi,
                                                     float received) {
    lo = is_upper ? received : lo;
    hi = is_upper ? hi : received;
  }
};

//! Element offsets of a warp's SIMT fragment loads in a swizzled `Layout` tile of f32
//! (SwizzledTileLayout with 4-byte elements), stored in `Order`. A warp's fragments of one
//! k-block are `kFragments = WarpMN / Map::kMN` tiles `i`, each `kLoads` shared loads `v` of
//! `kVector` consecutive elements; load `v` fills the fragment's element `(h_of(v), kk_of(v))`
//! and, along its vector, the next `kVector - 1` in k (K-contiguous) or in `h` (MN-contiguous).
//!
//! As for the tf32 and ldmatrix loaders, an offset splits into a per-lane part (`kBases`
//! registers, computed once: the offset of load `h_of(v)` of tile 0, k-block 0) and a part that
//! depends only on the load (`i`, `kb`, `v`: compile-time constants in an unrolled loop):
//! `split_element` XORs the lane's offset with `xor_chunks(i, kb, v)` 16-byte chunks (within a
//! group of 8, where the swizzle acts) and adds `add_chunks(i, kb, v)`, both read off lane 0 of
//! the first warp. Where `kSplits` holds (checked exhaustively at compile time, required by
//! SimtFragmentLoader, true for every tile tested) that is exact for every lane and warp. The
//! swizzle's XOR of a row's chunks by the row (mod 8) is then one more constant XOR, so an
//! MN-contiguous operand needs 1 register for all its loads.
template <Operand Op, SmemOrder Order, class Layout, int TileMN, int TileK, int WarpMN>
struct SimtFragmentAddressing {
  static constexpr bool kKContiguous = Order == SmemOrder::kKContiguous;
  static constexpr int kRowsPerLane = simt_rows_per_lane(Op, Order);
  using Map = SimtFragmentMap<Op, kRowsPerLane>;
  static constexpr int kFragments = WarpMN / Map::kMN;
  static constexpr int kKBlocks = TileK / Map::kK;
  //! Elements of one shared load: 4 along k, or (MN-contiguous) the lane's 2 adjacent MN positions.
  static constexpr int kVector = kKContiguous ? 4 : 2;
  //! Shared loads per fragment tile and k-block (8 elements: 2 MN positions x 4 k).
  static constexpr int kLoads = 8 / kVector;
  //! Per-lane offsets the loads are addressed from: one per MN position `h` that a load starts
  //! at (MN-contiguous loads both at once), each the offset of load `v = h` (its `kk` is 0).
  static constexpr int kBases = kKContiguous ? 2 : 1;

  //! The fragment element (`h`: which of the lane's two MN positions; `kk`: which k of the
  //! k-block) of load `v`'s first element.
  TILEPIPE_HOST_DEVICE static constexpr int h_of(int v) { return kKContiguous ? v : 0; }
  TILEPIPE_HOST_DEVICE static constexpr int kk_of(int v) { return kKContiguous ? 0 : v; }

  //! MN and k (within the block tile) of load `v`'s first element, for fragment tile `i` of
  //! k-block `kb` of the warp tile at `warp_mn0`.
  TILEPIPE_HOST_DEVICE static constexpr int mn(int lane, int warp_mn0, int i, int v) {
    return warp_mn0 + Map::kMN * i + Map::mn_of(lane, h_of(v));
  }
  TILEPIPE_HOST_DEVICE static constexpr int k(int kb, int v) { return Map::kK * kb + kk_of(v); }

  //! (row, column) of the stored tile of that element.
  TILEPIPE_HOST_DEVICE static constexpr int row(int lane, int warp_mn0, int i, int kb, int v) {
    return kKContiguous ? mn(lane, warp_mn0, i, v) : k(kb, v);
  }
  TILEPIPE_HOST_DEVICE static constexpr int col(int lane, int warp_mn0, int i, int kb, int v) {
    return kKContiguous ? k(kb, v) : mn(lane, warp_mn0, i, v);
  }
  //! Element offset from the tile's start (the general formula).
  TILEPIPE_HOST_DEVICE static constexpr int element(int lane, int warp_mn0, int i, int kb, int v) {
    return Layout::offset(row(lane, warp_mn0, i, kb, v), col(lane, warp_mn0, i, kb, v));
  }

  //! 16-byte chunk of that element, from the tile's start.
  TILEPIPE_HOST_DEVICE static constexpr int chunk(int lane, int warp_mn0, int i, int kb, int v) {
    return element(lane, warp_mn0, i, kb, v) / Layout::kElementsPerChunk;
  }

  //! The XOR (in chunks, below 8) and the addition (in chunks, a multiple of 8) that take lane 0's
  //! offset of load `h_of(v)` of (0, 0) to that of load `v` of (i, kb).
  TILEPIPE_HOST_DEVICE static constexpr int xor_chunks(int i, int kb, int v) {
    return (chunk(0, 0, i, kb, v) ^ chunk(0, 0, 0, 0, h_of(v))) & 7;
  }
  TILEPIPE_HOST_DEVICE static constexpr int add_chunks(int i, int kb, int v) {
    return (chunk(0, 0, i, kb, v) & ~7) - (chunk(0, 0, 0, 0, h_of(v)) & ~7);
  }
  //! `element(lane, warp_mn0, i, kb, v)` from the lane's base
  //! `lane_element = element(lane, warp_mn0, 0, 0, h_of(v))`; valid when `kSplits`.
  TILEPIPE_HOST_DEVICE static constexpr int split_element(int lane_element, int i, int kb, int v) {
    return (lane_element ^ (xor_chunks(i, kb, v) * Layout::kElementsPerChunk)) +
           add_chunks(i, kb, v) * Layout::kElementsPerChunk;
  }

  TILEPIPE_HOST_DEVICE static constexpr bool splits() {
    for (int v = 0; v < kLoads; ++v)
      for (int i = 0; i < kFragments; ++i)
        for (int kb = 0; kb < kKBlocks; ++kb) {
          const int x = xor_chunks(i, kb, v) * Layout::kElementsPerChunk;
          const int y = add_chunks(i, kb, v) * Layout::kElementsPerChunk;
          for (int w = 0; w + WarpMN <= TileMN; w += WarpMN)
            for (int lane = 0; lane < 32; ++lane)
              if (element(lane, w, i, kb, v) != ((element(lane, w, 0, 0, h_of(v)) ^ x) + y))
                return false;
        }
    return true;
  }
  //! Whether `split_element` is exact for every lane, warp position and load of this tile.
  static constexpr bool kSplits = splits();
};

}  // namespace tilepipe
