#pragma once
//! \file
//! ByteFragmentLoaderB: a warp loads its B fragments of one k-block from a K-contiguous shared
//! tile of 1-byte elements (int8), unconverted: a fragment transform (warp/fragment_transform.cuh)
//! turns them into the f16 / bf16 fragments `mma.sync.m16n8k16` takes.

#include <cstdint>

#include "../block/smem_tile.cuh"
#include "../layout/byte_fragment_map.cuh"

namespace tilepipe {

//! The stored (unconverted) B fragment of a `16 x WarpN` k-block of 1-byte elements: per n8
//! tile, register j holds in its low 16 bits the two bytes that register j of the mma's B
//! fragment will hold as 16-bit elements (k `2t + 8j` in bits 0..7, `k + 1` in bits 8..15;
//! ByteFragmentMap), and zeros above.
template <int WarpN>
struct RawFragmentB {
  static_assert(WarpN % 16 == 0, "RawFragmentB: WarpN must be a multiple of 16");
  static constexpr int kTiles = WarpN / 8;
  std::uint32_t x[kTiles][2];  // (WarpN / 8, 2 registers of two bytes)
};

//! Warp-scope loader of 1-byte B fragments from a `TileN x TileK` (K contiguous) shared tile.
//!
//! \tparam Stored  B's 1-byte element (`std::int8_t`, `__nv_fp8_e4m3`)
//! \tparam TileN   block tile extent along N
//! \tparam TileK   block tile extent along K, a multiple of 16
//! \tparam WarpN   this warp's extent along N, a multiple of 16 that divides TileN
//!
//! One `load` issues `WarpN / 4` 16-bit shared loads (two per n8 tile; see ByteFragmentMap for
//! why not ldmatrix), free of bank conflicts.
//!
//! \code
//! tilepipe::ByteFragmentLoaderB<std::int8_t, 128, 64, 32> load_b(lane, warp_n0);
//! tilepipe::RawFragmentB<32> raw;
//! load_b.load(raw, ring.read_stage().b, /*k_block=*/0);
//! \endcode
template <class Stored, int TileN, int TileK, int WarpN>
class ByteFragmentLoaderB {
  static_assert(sizeof(Stored) == 1, "ByteFragmentLoaderB: B's stored element must be 1 byte wide");
  using Map = ByteFragmentMap<TileN, TileK, WarpN>;

 public:
  using Tile = SmemTile<Stored, TileN, TileK>;
  using Fragment = RawFragmentB<WarpN>;
  static constexpr int kKBlocks = Map::kKBlocks;

  //! `lane` is the lane index (0..31); `warp_n0` the warp tile's first column of B within the
  //! block tile.
  TILEPIPE_DEVICE ByteFragmentLoaderB(int lane, int warp_n0)
      : lane_(lane), warp_n0_(warp_n0), lane_bytes_(Map::lane_bytes(lane, warp_n0)) {}

  //! Loads k-block `k_block` of `tile` into `frag`. With `k_block` a compile-time constant, each
  //! load's address is this lane's offset XORed and offset by constants (`Map::kSplits`).
  TILEPIPE_DEVICE void load(Fragment& frag, const Tile& tile, int k_block) const {
    TILEPIPE_UNROLL
    for (int ni = 0; ni < Map::kTiles; ++ni) {
      TILEPIPE_UNROLL
      for (int j = 0; j < 2; ++j) {
        const int offset = Map::kSplits ? Map::split_offset(lane_bytes_, ni, k_block, j)
                                        : Map::offset(lane_, warp_n0_, ni, k_block, j);
        frag.x[ni][j] = *reinterpret_cast<const std::uint16_t*>(
            reinterpret_cast<const unsigned char*>(tile.data) + offset);
      }
    }
  }

 private:
  int lane_;
  int warp_n0_;
  int lane_bytes_;  // this lane's byte offset of (n8 tile 0, k-block 0, register 0)
};

}  // namespace tilepipe
