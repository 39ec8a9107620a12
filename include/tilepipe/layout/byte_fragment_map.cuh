#pragma once
//! \file
//! ByteFragmentMap: where a warp's `mma.sync.m16n8k16` B fragments lie in a K-contiguous shared
//! tile of 1-byte elements (an int8 B operand, converted to f16 / bf16 after the load).
//!
//! The B fragment of lane `l` (g = l / 4, t = l % 4) of one n8 tile holds, in register j (0, 1),
//! the elements `k = 2t + 8j` and `k + 1` of column `g` of the k16 block (arch/mma.cuh). Stored
//! as bytes, the two elements of a register are two adjacent bytes, and the k16 block of a column
//! is exactly one 16-byte chunk of the tile: so each register is one 16-bit shared load at byte
//! `2t + 8j` of chunk (column, k-block). `ldmatrix` does not help here: it hands lane `l` the
//! 32-bit word t of a 16-byte row, i.e. k `4t .. 4t + 3`, which is not the pairing of the mma
//! (k `2t, 2t + 1` and `2t + 8, 2t + 9`); matching it would need A's k order permuted alike,
//! which A's own ldmatrix cannot give.
//!
//! Bank conflicts: the eight columns of an n8 tile are eight consecutive rows of the tile, whose
//! chunk of one k-block the swizzle places in eight different 16-byte bank groups
//! (SwizzledTileLayout); the four lanes of a column read within the first 12 bytes of it, so a
//! 16-bit load of the warp touches 16 distinct words in 16 distinct banks (tested on the host).

#include "../detail/macros.cuh"
#include "swizzled_tile.cuh"

namespace tilepipe {

//! Fragment coordinates and shared-memory offsets of a warp's int8 B fragments.
//!
//! \tparam TileN   block tile extent along N (rows of the stored tile)
//! \tparam TileK   block tile extent along K (bytes of a stored row), a multiple of 16
//! \tparam WarpN   the warp tile's extent along N, a multiple of 16 that divides TileN
template <int TileN, int TileK, int WarpN>
struct ByteFragmentMap {
  static_assert(TileK % 16 == 0, "ByteFragmentMap: TileK must be a multiple of 16 for mma.sync m16n8k16");
  static_assert(WarpN % 16 == 0 && TileN % WarpN == 0,
                "ByteFragmentMap: the warp tile's N extent must be a multiple of 16 that divides TileN");
  using Layout = SwizzledTileLayout<TileN, TileK, 1>;
  static constexpr int kTiles = WarpN / 8;  //!< n8 tiles of the warp
  static constexpr int kKBlocks = TileK / 16;

  //! First k (within the k16 block) of register `j` of lane `lane`; the register holds k and k + 1.
  TILEPIPE_HOST_DEVICE static constexpr int k_of(int lane, int j) { return 2 * (lane % 4) + 8 * j; }
  //! Column (within the warp tile) of lane `lane`'s fragment of n8 tile `ni`.
  TILEPIPE_HOST_DEVICE static constexpr int n_of(int lane, int ni) { return 8 * ni + lane / 4; }

  //! Byte offset in the tile of register `j` of n8 tile `ni`, k-block `kb`, for lane `lane` of the
  //! warp whose tile starts at column `warp_n0` of the block tile.
  TILEPIPE_HOST_DEVICE static constexpr int offset(int lane, int warp_n0, int ni, int kb, int j) {
    return Layout::offset(warp_n0 + n_of(lane, ni), MmaK * kb + k_of(lane, j));
  }

  //! The split form of `offset` that a loader uses: this lane's byte offset of (ni, kb, j) =
  //! (0, 0, 0) once, then per load a constant XOR and a constant addition
  //! (`split_offset(lane_bytes(lane, warp_n0), ni, kb, j)`). Exact when `kSplits`.
  TILEPIPE_HOST_DEVICE static constexpr int lane_bytes(int lane, int warp_n0) {
    return Layout::chunk_offset(warp_n0 + lane / 4, 0) * 16 + 2 * (lane % 4);
  }
  TILEPIPE_HOST_DEVICE static constexpr int split_offset(int lane_bytes, int ni, int kb, int j) {
    const int d = Layout::chunk_offset(8 * ni, kb);  // the chunk of (ni, kb) for column 0
    return (lane_bytes ^ ((d & 7) * 16)) + (d & ~7) * 16 + 8 * j;
  }

 private:
  static constexpr int MmaK = 16;
  static constexpr bool splits() {
    for (int warp_n0 = 0; warp_n0 < TileN; warp_n0 += WarpN)
      for (int lane = 0; lane < 32; ++lane)
        for (int ni = 0; ni < kTiles; ++ni)
          for (int kb = 0; kb < kKBlocks; ++kb)
            for (int j = 0; j < 2; ++j)
              if (split_offset(lane_bytes(lane, warp_n0), ni, kb, j) != offset(lane, warp_n0, ni, kb, j))
                return false;
    return true;
  }

 public:
  //! Whether `split_offset` equals `offset` for every lane, warp position and load (checked
  //! exhaustively at compile time; the swizzle's XOR only touches the low three chunk bits).
  static constexpr bool kSplits = splits();
};

}  // namespace tilepipe
