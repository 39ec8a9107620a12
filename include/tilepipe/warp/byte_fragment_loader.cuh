#pragma once
//! \file
//! The fragment loaders of a GEMM whose B is 1-byte elements (int8, fp8 e4m3): ByteFragmentLoaderB
//! loads a warp's B bytes of a whole k-tile, unconverted (a fragment transform,
//! warp/fragment_transform.cuh, turns them into the f16 / bf16 fragments `mma.sync.m16n8k16`
//! takes), and ByteFragmentLoaderA loads the warp's A fragments of the k-tile in the same k order
//! (ByteKOrder). Both use 128-bit shared loads, free of bank conflicts
//! (layout/byte_fragment_map.cuh).

#include <cstdint>

#include "../block/smem_tile.cuh"
#include "../layout/byte_fragment_map.cuh"
#include "fragments.cuh"

namespace tilepipe {

//! The stored (unconverted) B bytes of a warp's `TileK x WarpN` k-tile: per n8 tile and k-block,
//! one register holding the four bytes of ByteKOrder (bytes 0, 1: the two elements of the mma's
//! B register 0; bytes 2, 3: those of register 1).
template <int WarpN, int TileK>
struct RawFragmentB {
  static_assert(WarpN % 16 == 0, "RawFragmentB: WarpN must be a multiple of 16");
  static constexpr int kTiles = WarpN / 8;
  static constexpr int kKBlocks = TileK / 16;
  std::uint32_t x[kTiles][kKBlocks];  // (WarpN / 8, TileK / 16) four bytes each
};

//! A warp's A fragments of a whole k-tile in ByteKOrder: the mma's A fragment of each k-block.
template <int WarpM, int TileK>
struct KTileFragmentA {
  static constexpr int kKBlocks = TileK / 16;
  FragmentA<WarpM> kb[kKBlocks];  // (TileK / 16) x (WarpM / 16, 4 registers)
};

//! Warp-scope loader of 1-byte B from a `TileN x TileK` (K contiguous) shared tile.
//!
//! \tparam Stored  B's 1-byte element (`std::int8_t`, `__nv_fp8_e4m3`)
//! \tparam TileN   block tile extent along N
//! \tparam TileK   block tile extent along K: 64 or 128
//! \tparam WarpN   this warp's extent along N, a multiple of 16 that divides TileN
//!
//! One `load` issues `WarpN / 8 x TileK / 64` 128-bit shared loads: all of a k-tile's B bytes.
//!
//! \code
//! tilepipe::ByteFragmentLoaderB<std::int8_t, 128, 64, 32> load_b(lane, warp_n0);
//! tilepipe::RawFragmentB<32, 64> raw;
//! load_b.load(raw, ring.read_stage().b);
//! \endcode
template <class Stored, int TileN, int TileK, int WarpN>
class ByteFragmentLoaderB {
  static_assert(sizeof(Stored) == 1, "ByteFragmentLoaderB: B's stored element must be 1 byte wide");
  using Map = ByteFragmentMap<TileN, TileK, WarpN>;
  static_assert(Map::kSplits,
                "ByteFragmentLoaderB: this tile's loads need plain addressing, not offered");

 public:
  using Tile = SmemTile<Stored, TileN, TileK>;
  using Fragment = RawFragmentB<WarpN, TileK>;
  static constexpr int kKBlocks = Map::kKBlocks;

  //! `lane` is the lane index (0..31); `warp_n0` the warp tile's first column of B within the
  //! block tile.
  TILEPIPE_DEVICE ByteFragmentLoaderB(int lane, int warp_n0)
      : lane_bytes_(Map::lane_bytes(lane, warp_n0)) {}

  //! Loads all k-blocks of `tile` into `frag`.
  TILEPIPE_DEVICE void load(Fragment& frag, const Tile& tile) const {
    TILEPIPE_UNROLL
    for (int h = 0; h < Map::kHalves; ++h) load(frag, tile, h);
  }
  //! Loads the k-blocks `4 h .. 4 h + 3` of `tile` (its 64-deep half `h`) into `frag`.
  TILEPIPE_DEVICE void load(Fragment& frag, const Tile& tile, int h) const {
    const auto* base = reinterpret_cast<const unsigned char*>(tile.data);
    TILEPIPE_UNROLL
    for (int ni = 0; ni < Map::kTiles; ++ni) {
      const uint4 v = *reinterpret_cast<const uint4*>(base + Map::split_offset(lane_bytes_, ni, h));
      frag.x[ni][4 * h + 0] = v.x;  // k-block 4h, ...
      frag.x[ni][4 * h + 1] = v.y;
      frag.x[ni][4 * h + 2] = v.z;
      frag.x[ni][4 * h + 3] = v.w;
    }
  }

 private:
  int lane_bytes_;  // this lane's byte offset of n8 tile 0
};

//! Warp-scope loader of f16 / bf16 A fragments in ByteKOrder from a `TileM x TileK` (K
//! contiguous) shared tile: the A of a GEMM whose B a ByteFragmentLoaderB loads.
//!
//! \tparam Element  `__half` or `__nv_bfloat16`
//! \tparam TileM    block tile extent along M
//! \tparam TileK    block tile extent along K: 64 or 128
//! \tparam WarpM    this warp's extent along M, a multiple of 16 that divides TileM
//!
//! One `load` issues `WarpM / 4 x TileK / 64` 128-bit shared loads (four per m16 tile and 64 k):
//! all of a k-tile's A.
//!
//! \code
//! tilepipe::ByteFragmentLoaderA<__half, 16, 64, 16> load_a(lane, warp_m0);
//! tilepipe::KTileFragmentA<16, 64> a;
//! load_a.load(a, ring.read_stage().a);  // then a.kb[k_block] for each mma
//! \endcode
template <class Element, int TileM, int TileK, int WarpM>
class ByteFragmentLoaderA {
  static_assert(sizeof(Element) == 2, "ByteFragmentLoaderA: A's element must be 16 bits wide");
  using Map = ByteFragmentMapA<TileM, TileK, WarpM>;
  static_assert(Map::kSplits,
                "ByteFragmentLoaderA: this tile's loads need plain addressing, not offered");

 public:
  using Tile = SmemTile<Element, TileM, TileK>;
  using Fragment = KTileFragmentA<WarpM, TileK>;
  static constexpr int kKBlocks = Map::kKBlocks;

  //! `lane` is the lane index (0..31); `warp_m0` the warp tile's first row of A within the block
  //! tile.
  TILEPIPE_DEVICE ByteFragmentLoaderA(int lane, int warp_m0)
      : lane_bytes_(Map::lane_bytes(lane, warp_m0)) {}

  //! Loads all k-blocks of `tile` into `frag`.
  TILEPIPE_DEVICE void load(Fragment& frag, const Tile& tile) const {
    TILEPIPE_UNROLL
    for (int h = 0; h < Map::kHalves; ++h) load(frag, tile, h);
  }
  //! Loads the k-blocks `4 h .. 4 h + 3` of `tile` (its 64-deep half `h`) into `frag`.
  TILEPIPE_DEVICE void load(Fragment& frag, const Tile& tile, int h) const {
    const auto* base = reinterpret_cast<const unsigned char*>(tile.data);
    TILEPIPE_UNROLL
    for (int mi = 0; mi < Map::kTiles; ++mi) {
      TILEPIPE_UNROLL
      for (int r = 0; r < 2; ++r) {  // row g, row g + 8: mma registers r and 2 + r
        TILEPIPE_UNROLL
        for (int c = 0; c < 2; ++c) {
          const uint4 v =
              *reinterpret_cast<const uint4*>(base + Map::split_offset(lane_bytes_, mi, r, h, c));
          // Elements 0..3: k-block kb = 4h + 2c; 4..7: kb + 1. Of each, the first two elements
          // are register r's pair, the last two register 2 + r's (ByteKOrder).
          const int kb = 4 * h + 2 * c;
          frag.kb[kb].x[mi][r] = v.x;
          frag.kb[kb].x[mi][2 + r] = v.y;
          frag.kb[kb + 1].x[mi][r] = v.z;
          frag.kb[kb + 1].x[mi][2 + r] = v.w;
        }
      }
    }
  }

 private:
  int lane_bytes_;  // this lane's byte offset of (m16 tile 0, row g, chunk 0)
};

}  // namespace tilepipe
