#pragma once
//! \file
//! ByteFragmentMap and ByteFragmentMapA: where a warp's `mma.sync.m16n8k16` fragments lie in the
//! K-contiguous shared tiles of a GEMM whose B is 1-byte elements (int8, fp8 e4m3) converted to
//! f16 / bf16 after the load, and whose A is f16 / bf16.
//!
//! **The k order.** The mma's fragment of lane `l` (g = l / 4, t = l % 4) holds, in register j
//! (0, 1) of a k16 block, the elements `2t + 8j` and `+ 1` of the block (arch/mma.cuh). Which
//! physical k of the tile a k16 block's "k" means is ours to choose, as long as A and B choose
//! alike: the sum over k does not care. Stored as bytes, a column of B's k-tile is TileK bytes,
//! 4 or 8 chunks of 16, and lane t takes whole chunks: one 128-bit shared load per n8 tile and
//! chunk. Within a chunk, k-block `kb` (of four) is the four bytes `4 kb + {0, 1, 2, 3}`, bytes 0,
//! 1 for register 0 and 2, 3 for register 1. So, with `chunk(t, h)` lane t's chunk of half h:
//!
//!     physical k of (lane, k-block 4 h + kb, j) = 16 chunk(t, h) + 4 kb + 2 j   (and + 1).
//!
//! - TileK = 64: one chunk a lane, `chunk(t, 0) = t`.
//! - TileK = 128: two, `chunk(t, h) = 2t + ((t >> 1) ^ h)`: lanes 0..3 take chunks {0, 2, 5, 7}
//!   in half 0 and {1, 3, 4, 6} in half 1, so lane t's k are `[32 t, 32 t + 32)` either way and
//!   lie in the 64-deep half `t / 2` of the k-tile (a group of 64 has one scale per lane).
//!
//! A follows: lane (g, t) needs `A(g, k)` and `A(g + 8, k)` for the 16 k of each of its chunks,
//! two 16-byte chunks of A per row and chunk of B. `ldmatrix` cannot give either order (it hands
//! lane t the 32-bit word t of a 16-byte row).
//!
//! Bank conflicts (tested on the host): a 128-bit load is served eight lanes at a time, lanes g
//! in {2i, 2i + 1} times t in 0..3, rows r and r + 1 of the stored tile (r even); the layout's
//! XOR swizzles a row's chunks with the row (SwizzledTileLayout). For B with 64-byte rows, rows r
//! and r + 1 are one 128-byte line, which the swizzle only permutes. With 128-byte rows the XOR
//! with r and r + 1 differs in bit 0, so the four chunks of one load must hold one of each pair
//! {2p, 2p + 1}, as {0, 2, 5, 7} and {1, 3, 4, 6} do; and A's chunks `2 chunk(t, h) + c`, c fixed,
//! then fall in four different bank groups of each row (0, 4, 2, 6 plus c, in half 0), which row
//! r + 1's XOR moves to the other four. This is why the order is not simply `chunk = 2t + h`: in
//! it, A's chunks of lanes t and t + 2 share bank groups.

#include "../detail/macros.cuh"
#include "swizzled_tile.cuh"

namespace tilepipe {

//! The k order of a byte-B GEMM's fragments (see the file comment), shared by A and B.
//!
//! \tparam TileK  the k-tile it orders: 64 or 128
template <int TileK>
struct ByteKOrder {
  static_assert(TileK == 64 || TileK == 128,
                "ByteKOrder: the k-tile must be 64 or 128 deep (one or two 16-byte chunks of a "
                "column a lane)");
  static constexpr int kTileK = TileK;
  static constexpr int kHalves = TileK / 64;  //!< chunks of a column a lane loads
  static constexpr int kKBlocks = TileK / 16;

  //! Lane `lane`'s 16-byte chunk (of TileK / 16) of a column's k-tile in half `h`.
  TILEPIPE_HOST_DEVICE static constexpr int chunk(int lane, int h) {
    return TileK == 64 ? lane % 4 : 2 * (lane % 4) + (((lane % 4) >> 1) ^ h);
  }
  //! Physical k (within the k-tile) of the first element of register `j` of k-block `kb` for
  //! lane `lane`; the register's second element is the next k.
  TILEPIPE_HOST_DEVICE static constexpr int k_of(int lane, int kb, int j) {
    return 16 * chunk(lane, kb / 4) + 4 * (kb % 4) + 2 * j;
  }
  //! Which 64-deep half of the k-tile all of lane `lane`'s k lie in (0 for a k-tile of 64).
  TILEPIPE_HOST_DEVICE static constexpr int half_of(int lane) { return chunk(lane, 0) / 4; }
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
//! \tparam TileK   block tile extent along K (bytes of a stored row): 64 or 128
//! \tparam WarpN   the warp tile's extent along N, a multiple of 16 that divides TileN
template <int TileN, int TileK, int WarpN>
struct ByteFragmentMap {
  using Order = ByteKOrder<TileK>;
  static_assert(
      WarpN % 16 == 0 && TileN % WarpN == 0,
      "ByteFragmentMap: the warp tile's N extent must be a multiple of 16 that divides TileN");
  using Layout = SwizzledTileLayout<TileN, TileK, 1>;
  static constexpr int kTiles = WarpN / 8;  //!< n8 tiles of the warp
  static constexpr int kHalves = Order::kHalves;
  static constexpr int kKBlocks = Order::kKBlocks;

  //! Column (within the warp tile) of lane `lane`'s fragment of n8 tile `ni`.
  TILEPIPE_HOST_DEVICE static constexpr int n_of(int lane, int ni) { return 8 * ni + lane / 4; }

  //! Byte offset in the tile of the 16 bytes that lane `lane` of the warp whose tile starts at
  //! column `warp_n0` loads for n8 tile `ni` and half `h`: chunk `Order::chunk(lane, h)` of its
  //! column.
  TILEPIPE_HOST_DEVICE static constexpr int offset(int lane, int warp_n0, int ni, int h) {
    return Layout::offset(warp_n0 + n_of(lane, ni), 16 * Order::chunk(lane, h));
  }

  //! The split form of `offset` a loader uses: `split_offset(lane_bytes(lane, warp_n0), ni, h)`.
  TILEPIPE_HOST_DEVICE static constexpr int lane_bytes(int lane, int warp_n0) {
    return offset(lane, warp_n0, 0, 0);
  }
  TILEPIPE_HOST_DEVICE static constexpr int split_offset(int lane_bytes, int ni, int h) {
    return detail::split_chunk_bytes(lane_bytes, Layout::chunk_offset(8 * ni, h));
  }

 private:
  static constexpr bool splits() {
    for (int warp_n0 = 0; warp_n0 < TileN; warp_n0 += WarpN)
      for (int lane = 0; lane < 32; ++lane)
        for (int ni = 0; ni < kTiles; ++ni)
          for (int h = 0; h < kHalves; ++h)
            if (split_offset(lane_bytes(lane, warp_n0), ni, h) != offset(lane, warp_n0, ni, h))
              return false;
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
//! \tparam TileK   block tile extent along K: 64 or 128, as B's
//! \tparam WarpM   the warp tile's extent along M, a multiple of 16 that divides TileM
template <int TileM, int TileK, int WarpM>
struct ByteFragmentMapA {
  using Order = ByteKOrder<TileK>;
  static_assert(
      WarpM % 16 == 0 && TileM % WarpM == 0,
      "ByteFragmentMapA: the warp tile's M extent must be a multiple of 16 that divides TileM");
  using Layout = SwizzledTileLayout<TileM, TileK, 2>;
  static constexpr int kTiles = WarpM / 16;  //!< m16 tiles of the warp
  static constexpr int kHalves = Order::kHalves;
  static constexpr int kKBlocks = Order::kKBlocks;

  //! Row (within the warp tile) of the load `r` (0: row g, 1: row g + 8) of m16 tile `mi`.
  TILEPIPE_HOST_DEVICE static constexpr int m_of(int lane, int mi, int r) {
    return 16 * mi + lane / 4 + 8 * r;
  }

  //! Element offset in the tile of the 8 elements (one chunk) that lane `lane` loads for m16 tile
  //! `mi`, row `r`, B's half `h` and chunk `c` (0, 1): k `[16 Order::chunk(lane, h) + 8 c, + 8)`
  //! of its row. They are the registers of k-blocks `4 h + 2 c` (elements 0..3) and `+ 1` (4..7).
  TILEPIPE_HOST_DEVICE static constexpr int offset(int lane, int warp_m0, int mi, int r, int h,
                                                   int c) {
    return Layout::offset(warp_m0 + m_of(lane, mi, r), 16 * Order::chunk(lane, h) + 8 * c);
  }

  //! The split form of `offset`, in bytes: `split_offset(lane_bytes(lane, warp_m0), mi, r, h, c)`.
  TILEPIPE_HOST_DEVICE static constexpr int lane_bytes(int lane, int warp_m0) {
    return 2 * offset(lane, warp_m0, 0, 0, 0, 0);
  }
  TILEPIPE_HOST_DEVICE static constexpr int split_offset(int lane_bytes, int mi, int r, int h,
                                                         int c) {
    return detail::split_chunk_bytes(lane_bytes, Layout::chunk_offset(16 * mi + 8 * r, 2 * h + c));
  }

 private:
  static constexpr bool splits() {
    for (int warp_m0 = 0; warp_m0 < TileM; warp_m0 += WarpM)
      for (int lane = 0; lane < 32; ++lane)
        for (int mi = 0; mi < kTiles; ++mi)
          for (int r = 0; r < 2; ++r)
            for (int h = 0; h < kHalves; ++h)
              for (int c = 0; c < 2; ++c)
                if (split_offset(lane_bytes(lane, warp_m0), mi, r, h, c) !=
                    2 * offset(lane, warp_m0, mi, r, h, c))
                  return false;
    return true;
  }

 public:
  //! Whether `split_offset` equals twice `offset` for every lane, warp position and load.
  static constexpr bool kSplits = splits();
};

}  // namespace tilepipe
