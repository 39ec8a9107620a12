#pragma once
//! \file
//! Where each lane's tf32 fragment registers come from in a swizzled shared-memory tile of f32,
//! for `mma.sync.m16n8k8...tf32` (fragment layouts in arch/mma.cuh).
//!
//! ldmatrix cannot transpose 32-bit elements, so tf32 fragments are read with plain 32-bit shared
//! loads, one element per register, from tiles in either order. Which k of an 8-deep k-block a
//! lane's k slot holds is free, as long as A and B agree (the mma sums over the slots). The
//! choice below makes both orders free of bank conflicts in the swizzled layout
//! (layout/swizzled_tile.cuh, tested on the host):
//!
//!     slot  0  1  2  3 |  4  5  6  7        lane t (= lane % 4) holds slots t and t + 4,
//!     k     0  3  5  6 |  1  2  4  7        i.e. k = 2t and 2t + 1, in the order of t's parity
//!
//! One register of one load has 8 lanes g (= lane / 4) times the 4 k of a slot set.
//! - K-contiguous tile (rows MN, columns k): the 8 rows g sit in 8 different 16-byte bank groups
//!   (the swizzle), and the 4 k are 4 different words of a group (k mod 4 = 0, 3, 1, 2): 32 banks.
//! - MN-contiguous tile (rows k, columns MN; rows of at least 128 bytes): the 8 columns g are two
//!   16-byte chunks c, c + 1 of row k (c even), which the swizzle XORs with k mod 8; the four k
//!   differ in k / 2, so the chunks (c ^ h ^ k mod 8, h = 0, 1) are 8 different bank groups, and
//!   g mod 4 picks the word: 32 banks. (The natural order, slot t = k t, would put k = 0 and 1 in
//!   one set and conflict two ways.)

#include "../detail/macros.cuh"
#include "tile_shape.cuh"

namespace tilepipe {

//! The k (within an 8-deep k-block) that k slot `slot` (0..7) of `mma.m16n8k8` holds: slot t and
//! t + 4 (t < 4) hold 2t and 2t + 1, swapped where t has odd parity (t = 1, 2).
TILEPIPE_HOST_DEVICE constexpr int tf32_k_of_slot(int slot) {
  const int t = slot % 4;
  const int parity = (t ^ (t >> 1)) & 1;
  return 2 * t + (parity ^ (slot / 4));
}

//! The element that register `r` of a lane's tf32 fragment holds, relative to the fragment's
//! first (mn, k): an A fragment is 16 (M) x 8 (K), four registers; a B fragment 8 (K) x 8 (N), two.
template <Operand Op>
struct Tf32FragmentMap {
  static constexpr int kRegisters = Op == Operand::kA ? 4 : 2;
  static constexpr int kMN = Op == Operand::kA ? 16 : 8;  //!< MN extent of one fragment

  //! M (for A) or N (for B) of register `r` of `lane`.
  TILEPIPE_HOST_DEVICE static constexpr int mn_of(int lane, int r) {
    return lane / 4 + (Op == Operand::kA ? 8 * (r % 2) : 0);
  }
  //! k slot of register `r` of `lane` (A: a[0], a[1] slot t, a[2], a[3] slot t + 4; B: b[r] slot
  //! t + 4r).
  TILEPIPE_HOST_DEVICE static constexpr int slot_of(int lane, int r) {
    return lane % 4 + 4 * (Op == Operand::kA ? r / 2 : r);
  }
  //! k of register `r` of `lane`.
  TILEPIPE_HOST_DEVICE static constexpr int k_of(int lane, int r) {
    return tf32_k_of_slot(slot_of(lane, r));
  }
};

//! Element offsets of a warp's tf32 fragments in a swizzled `Layout` tile of f32
//! (SwizzledTileLayout with 4-byte elements), stored in `Order`. A warp's fragments of one k-block
//! are `kFragments = WarpMN / Map::kMN` fragments `i` along MN, each `Map::kRegisters` registers
//! `r`.
//!
//! Like LdmatrixAddressing, it splits an offset into a part that depends on the lane (one register
//! per `r`, computed once) and one that depends only on the load (`i`, `kb`: compile-time
//! constants in an unrolled loop): going from load (0, 0) to (i, kb) moves every lane's row-major
//! chunk index by the same `D = displacement(i, kb)`, and where `kSplits` holds (checked
//! exhaustively at compile time) the swizzle turns that into an XOR of `(D & 7)` chunks and an
//! offset of `(D & ~7)` chunks.
template <Operand Op, SmemOrder Order, class Layout, int TileMN, int TileK, int WarpMN>
struct Tf32FragmentAddressing {
  using Map = Tf32FragmentMap<Op>;
  static constexpr int kFragments = WarpMN / Map::kMN;
  static constexpr int kKBlocks = TileK / 8;
  static constexpr int kRegisters = Map::kRegisters;

  //! (row, column) of the stored tile of register `r` of fragment `i` at k-block `kb`.
  TILEPIPE_HOST_DEVICE static constexpr int row(int lane, int warp_mn0, int i, int kb, int r) {
    return Order == SmemOrder::kKContiguous ? mn(lane, warp_mn0, i, r) : k(lane, kb, r);
  }
  TILEPIPE_HOST_DEVICE static constexpr int col(int lane, int warp_mn0, int i, int kb, int r) {
    return Order == SmemOrder::kKContiguous ? k(lane, kb, r) : mn(lane, warp_mn0, i, r);
  }
  //! Element offset from the tile's start (the general formula).
  TILEPIPE_HOST_DEVICE static constexpr int element(int lane, int warp_mn0, int i, int kb, int r) {
    return Layout::offset(row(lane, warp_mn0, i, kb, r), col(lane, warp_mn0, i, kb, r));
  }
  //! Row-major (unswizzled) chunk index of that element.
  TILEPIPE_HOST_DEVICE static constexpr int linear_chunk(int lane, int warp_mn0, int i, int kb,
                                                         int r) {
    return row(lane, warp_mn0, i, kb, r) * Layout::kChunksPerRow +
           col(lane, warp_mn0, i, kb, r) / Layout::kElementsPerChunk;
  }
  //! The lane-independent move of the row-major chunk index from load (0, 0) to load (i, kb).
  TILEPIPE_HOST_DEVICE static constexpr int displacement(int i, int kb) {
    return linear_chunk(0, 0, i, kb, 0) - linear_chunk(0, 0, 0, 0, 0);
  }
  //! `element(lane, warp_mn0, i, kb, r)` from `lane_element = element(lane, warp_mn0, 0, 0, r)`;
  //! valid when `kSplits`.
  TILEPIPE_HOST_DEVICE static constexpr int split_element(int lane_element, int i, int kb) {
    const int d = displacement(i, kb);
    return (lane_element ^ ((d & 7) * Layout::kElementsPerChunk)) +
           (d & ~7) * Layout::kElementsPerChunk;
  }

  TILEPIPE_HOST_DEVICE static constexpr bool splits() {
    for (int w = 0; w + WarpMN <= TileMN; w += WarpMN)
      for (int lane = 0; lane < 32; ++lane)
        for (int i = 0; i < kFragments; ++i)
          for (int kb = 0; kb < kKBlocks; ++kb)
            for (int r = 0; r < kRegisters; ++r) {
              if (linear_chunk(lane, w, i, kb, r) - linear_chunk(lane, w, 0, 0, r) !=
                  displacement(i, kb))
                return false;
              if (element(lane, w, i, kb, r) != split_element(element(lane, w, 0, 0, r), i, kb))
                return false;
            }
    return true;
  }
  //! Whether `split_element` is exact for every lane, warp position and load of this tile.
  static constexpr bool kSplits = splits();

 private:
  TILEPIPE_HOST_DEVICE static constexpr int mn(int lane, int warp_mn0, int i, int r) {
    return warp_mn0 + Map::kMN * i + Map::mn_of(lane, r);
  }
  TILEPIPE_HOST_DEVICE static constexpr int k(int lane, int kb, int r) {
    return 8 * kb + Map::k_of(lane, r);
  }
};

}  // namespace tilepipe
