#pragma once
//! \file
//! ByteFragmentMap and ByteFragmentMapA: where a warp's `mma.sync.m16n8k16` fragments lie in the
//! K-contiguous shared tiles of a GEMM whose B is 1-byte elements (int8, fp8 e4m3) converted to
//! f16 / bf16 after the load, and whose A is f16 / bf16.
//!
//! **The k order.** The mma's fragment of lane `l` (g = l / 4, t = l % 4) holds, in register j
//! (0, 1) of a k16 block, the elements `2t + 8j` and `+ 1` of the block (arch/mma.cuh). Which
//! physical k of the tile a k16 block's "k" means is ours to choose, as long as A and B choose
//! alike: the sum over k does not care. Stored as bytes, a column of B's k-tile of 64 is 64 bytes,
//! and we give lane t its 16 bytes `[16t, 16t + 16)`: k-block `kb` (of four) takes the four bytes
//! `16t + 4 kb + {0, 1, 2, 3}`, bytes 0, 1 for register 0 and 2, 3 for register 1. So
//!
//!     physical k of (lane, kb, j) = 16 t + 4 kb + 2 j   (and + 1),
//!
//! and one 128-bit shared load per n8 tile fetches a lane's B bytes of the whole k-tile (the
//! 16-bit loads of the mma's natural order took eight). A follows: lane (g, t) needs
//! `A(g, 16t .. 16t + 15)` and the same of row g + 8, two 16-byte chunks per row, so four 128-bit
//! loads per m16 tile. `ldmatrix` cannot give either order (it hands lane t the 32-bit word t of a
//! 16-byte row). The k-tile is 64 deep exactly: with 128-byte rows of B the two rows of a load's
//! eight lanes would fall in the same four bank groups.
//!
//! Bank conflicts (tested on the host): a 128-bit load is served eight lanes at a time. For B the
//! eight lanes are two columns (rows of the tile) times four chunks: one 128-byte line, which the
//! swizzle only permutes. For A they are rows 2i, 2i + 1 times chunks {2t + c}: the swizzle's XOR
//! with the row index sends the even chunks of one row and the odd chunks of the other to eight
//! different bank groups.

#include "../detail/macros.cuh"
#include "swizzled_tile.cuh"

namespace tilepipe {

//! The k order of a byte-B GEMM's fragments (see the file comment), shared by A and B.
struct ByteKOrder {
  static constexpr int kTileK = 64;  //!< the k-tile it orders
  //! Physical k (within the k-tile) of the first element of register `j` of k-block `kb` for
  //! lane `lane`; the register's second element is the next k.
  TILEPIPE_HOST_DEVICE static constexpr int k_of(int lane, int kb, int j) {
    return 16 * (lane % 4) + 4 * kb + 2 * j;
  }
};

namespace detail {
//! The split addressing of the byte-B fragment loads: `offset(base + delta)` of a swizzled layout
//! as this lane's offset of delta 0 (`base_bytes`) XORed with, and moved by, constants of `delta`
//! alone (`d`, the physical chunk of delta measured from chunk 0). Exact where the layout's XOR of
//! the lane's chunk does not change under the move, which the maps check exhaustively.
TILEPIPE_HOST_DEVICE constexpr int split_chunk_bytes(int base_bytes, int d) {
  return (base_bytes ^ ((d & 7) * 16)) + (d & ~7) * 16;
}
}  // namespace detail

//! B's side: shared-memory byte offsets of a warp's 128-bit loads of 1-byte B fragments.
//!
//! \tparam TileN   block tile extent along N (rows of the stored tile)
//! \tparam TileK   block tile extent along K (bytes of a stored row): 64
//! \tparam WarpN   the warp tile's extent along N, a multiple of 16 that divides TileN
template <int TileN, int TileK, int WarpN>
struct ByteFragmentMap {
  static_assert(TileK == ByteKOrder::kTileK,
                "ByteFragmentMap: TileK must be 64 (a lane loads its 16 bytes of a column's k-tile)");
  static_assert(WarpN % 16 == 0 && TileN % WarpN == 0,
                "ByteFragmentMap: the warp tile's N extent must be a multiple of 16 that divides TileN");
  using Layout = SwizzledTileLayout<TileN, TileK, 1>;
  static constexpr int kTiles = WarpN / 8;  //!< n8 tiles of the warp
  static constexpr int kKBlocks = TileK / 16;

  //! Column (within the warp tile) of lane `lane`'s fragment of n8 tile `ni`.
  TILEPIPE_HOST_DEVICE static constexpr int n_of(int lane, int ni) { return 8 * ni + lane / 4; }

  //! Byte offset in the tile of the 16 bytes that lane `lane` of the warp whose tile starts at
  //! column `warp_n0` loads for n8 tile `ni`: k `[16 t, 16 t + 16)` of its column.
  TILEPIPE_HOST_DEVICE static constexpr int offset(int lane, int warp_n0, int ni) {
    return Layout::offset(warp_n0 + n_of(lane, ni), 16 * (lane % 4));
  }

  //! The split form of `offset` a loader uses: `split_offset(lane_bytes(lane, warp_n0), ni)`.
  TILEPIPE_HOST_DEVICE static constexpr int lane_bytes(int lane, int warp_n0) {
    return offset(lane, warp_n0, 0);
  }
  TILEPIPE_HOST_DEVICE static constexpr int split_offset(int lane_bytes, int ni) {
    return detail::split_chunk_bytes(lane_bytes, Layout::chunk_offset(8 * ni, 0));
  }

 private:
  static constexpr bool splits() {
    for (int warp_n0 = 0; warp_n0 < TileN; warp_n0 += WarpN)
      for (int lane = 0; lane < 32; ++lane)
        for (int ni = 0; ni < kTiles; ++ni)
          if (split_offset(lane_bytes(lane, warp_n0), ni) != offset(lane, warp_n0, ni)) return false;
    return true;
  }

 public:
  //! Whether `split_offset` equals `offset` for every lane, warp position and load (checked
  //! exhaustively at compile time).
  static constexpr bool kSplits = splits();
};

//! A's side: element offsets of a warp's 128-bit loads of f16 / bf16 A fragments in ByteKOrder.
//!
//! \tparam TileM   block tile extent along M (rows of the stored tile)
//! \tparam TileK   block tile extent along K: 64
//! \tparam WarpM   the warp tile's extent along M, a multiple of 16 that divides TileM
template <int TileM, int TileK, int WarpM>
struct ByteFragmentMapA {
  static_assert(TileK == ByteKOrder::kTileK, "ByteFragmentMapA: TileK must be 64 (B's k order)");
  static_assert(WarpM % 16 == 0 && TileM % WarpM == 0,
                "ByteFragmentMapA: the warp tile's M extent must be a multiple of 16 that divides TileM");
  using Layout = SwizzledTileLayout<TileM, TileK, 2>;
  static constexpr int kTiles = WarpM / 16;  //!< m16 tiles of the warp
  static constexpr int kKBlocks = TileK / 16;

  //! Row (within the warp tile) of the load `h` (0: row g, 1: row g + 8) of m16 tile `mi`.
  TILEPIPE_HOST_DEVICE static constexpr int m_of(int lane, int mi, int h) { return 16 * mi + lane / 4 + 8 * h; }

  //! Element offset in the tile of the 8 elements (one chunk) that lane `lane` loads for m16 tile
  //! `mi`, row `h` and chunk `c` (0, 1): k `[16 t + 8 c, + 8)` of its row. They are the registers
  //! of k-blocks `2 c` (elements 0..3) and `2 c + 1` (4..7).
  TILEPIPE_HOST_DEVICE static constexpr int offset(int lane, int warp_m0, int mi, int h, int c) {
    return Layout::offset(warp_m0 + m_of(lane, mi, h), 16 * (lane % 4) + 8 * c);
  }

  //! The split form of `offset`, in bytes: `split_offset(lane_bytes(lane, warp_m0), mi, h, c)`.
  TILEPIPE_HOST_DEVICE static constexpr int lane_bytes(int lane, int warp_m0) {
    return 2 * offset(lane, warp_m0, 0, 0, 0);
  }
  TILEPIPE_HOST_DEVICE static constexpr int split_offset(int lane_bytes, int mi, int h, int c) {
    return detail::split_chunk_bytes(lane_bytes, Layout::chunk_offset(16 * mi + 8 * h, c));
  }

 private:
  static constexpr bool splits() {
    for (int warp_m0 = 0; warp_m0 < TileM; warp_m0 += WarpM)
      for (int lane = 0; lane < 32; ++lane)
        for (int mi = 0; mi < kTiles; ++mi)
          for (int h = 0; h < 2; ++h)
            for (int c = 0; c < 2; ++c)
              if (split_offset(lane_bytes(lane, warp_m0), mi, h, c) != 2 * offset(lane, warp_m0, mi, h, c))
                return false;
    return true;
  }

 public:
  //! Whether `split_offset` equals twice `offset` for every lane, warp position and load.
  static constexpr bool kSplits = splits();
};

}  // namespace tilepipe
