#pragma once
//! \file
//! Fp8ScheduleHeuristic: how GemmFp8Sm90's persistent kernel should cut a problem (whole tiles,
//! split-K or stream-K) and on which of its tiles, a pure host function of the shape and the
//! SM count, so that callers that pick no schedule of their own (the PyTorch operator, the
//! benchmark) get a good one, and so that it is tested without a GPU. A light header: no CUDA
//! includes.
//!
//! **Decode-sized M** (M <= 64, or M <= 256 with K of at least kDecodeMinKTiles k-tiles) runs the
//! 64 x 128 tile (Fp8DecodeTileConfig), never stream-K, split in K into the most slices (at most
//! kMaxSplitK, each at least kMinKTilesPerSlice k-tiles) whose clusters all fit on the GPU at once
//! (`cluster_slots`). GemmFp8Sm90 then sums each tile's slices in one cluster, met at its barrier
//! rather than counted in by atomics: on the H200 that ran 1.04-1.19 x as fast on nine of ten
//! split decode shapes (0.96 x on the tenth; performance log 53, the sums then read from the
//! peers' shared memory; from L2 since entry 55, another 1.02-1.12 x), and three and four slices
//! now pay where counted in they had lost beyond 60% of the SMs (64 x 7168 x 16384 in two
//! slices: 0.92 x unsplit counted in, 1.00 x in a cluster; block-wise 1.42 x). Where B streams
//! from DRAM, the ring's depth (8 stages of B's 16 KB, against 6 for the 128-row tiles) and no
//! half-empty tiles decide: on the H200 (performance log 51) tensorwise ran 1.5 x as fast as on
//! the 128-row tile on 64 x 7168 x 16384 and 64 x 4096 x 7168, 1.1-1.2 x on 128 x 7168 x 16384 and
//! 128 x 4096 x 7168, 1.2-1.5 x on 192 and 256 x 4096 x 7168; with short K at M >= 96 (24576 x
//! 1536, 32768 x 512) the 128-row tiles won, as they did at M = 384. Its stream-K ran 0.6-0.8 x
//! wherever tried. Block-wise scales take it only where it is split (its one consumer warpgroup
//! folds alone, and unsplit on long K it ran 0.78-0.96 x: 128 and 64 x 7168 x 16384, 128 x 4096 x
//! 7168; split 1.06-1.34 x), or where the 128 x 128 tiles would leave a fifth of the SMs idle with
//! K too short to split (64 and 128 x 7168 x 2048: 56 tiles against 112; 1.22-1.23 x,
//! performance log 55), or where at most 64 rows have K under kDecodeMinKTiles k-tiles (its
//! half-height tiles against 128-row ones half empty: 1.06 x the 128 x 256 tile on 64 x 24576 x
//! 1536, 1.03 x on 64 x 32768 x 512, in 20 ms runs, performance log 60). Tensorwise and row-wise it
//! runs 64 x 64 tiles instead (M <= 128) where they fit one wave, split by the same rule: on the
//! H200 1.12-1.17 x on 64 and 128 x 2112 x 7168, 64 x 4096 x 7168 and 64 x 7168 x 2048, 1.02-1.06 x
//! on 128 x 4096 x 7168 and 64 x 7168 x 16384; with more tiles than SMs (M = 128, N = 7168) it lost
//! (performance log 58). Where they run unsplit with 65 to 128 rows and K of at least
//! kDecodeMinKTiles k-tiles, or with 64 rows and K of 16 to kInterleaved64MaxKTiles k-tiles,
//! two consumer warpgroups take alternate k-tiles of each (Fp8DecodeTile64KInterleavedConfig):
//! 1.18-1.19 x on 128 x 4096 x 7168, 1.04-1.12 x at 64 rows with K of 2048 to 4096 (H200, 20 ms
//! runs, performance log 60; at 32 and 48 rows, a partly empty tile, 0.96-0.97 x; at 64 x 7168 x
//! 16384 0.88-0.90 x, log 61); split, the one-warpgroup tile's cluster sums win. Unsplit at M <=
//! 64, in every mode, where 64 x 128 tiles take more than one wave and 64 x 256 ones fit one
//! (`split_columns_fill_one_wave`), the 64 x 256 tile with two consumer warpgroups of 128 columns
//! each (Fp8DecodeTile256SplitConfig): 1.12-1.19 x the 64 x 128 tile on N = 32768, K = 512 at 32
//! and 64 rows, 1.03-1.07 x the 64 x 192 one on N = 24576, K = 1536 (tensorwise, row-wise),
//! 1.16-1.28 x the 64 x 128 one block-wise (performance log 61). Otherwise unsplit at M <= 64 it
//! runs 64 x 192 tiles (tensorwise and row-wise) where their waves hold fewer columns
//! (`waves_192_faster`), 1.13 x as fast where tried (performance log 58).
//!
//! **Otherwise**, with S the SM count, T = ceil(M / 128) * ceil(N / TileN) tiles and KT = ceil(K
//! / 128) k-tiles, for each of the 128-row tiles (TileN 128, Fp8TileConfig; 256,
//! Fp8WideTileConfig):
//!
//! 1. **Split-K** where the tiles fill less than kMinWaveFraction of the SMs:
//!    the factor doubles from 1 while T times it still fits one wave, every slice keeps
//!    kMinKTilesPerSlice k-tiles, and it stays within kMaxSplitK.
//! 2. **Stream-K** (S blocks) where the last wave of tiles would leave the SMs badly used (waves
//!    less than kMinWaveEfficiency full on average) and K is long (kMinStreamKTiles): 4096 x 2112
//!    x 7168 (544 tiles, 4.1 waves) ran 1.08 x faster than whole tiles (the 128 x 192 tile takes
//!    that shape now, below); with K = 1536 stream-K lost a third.
//! 3. Otherwise whole tiles.
//!
//! Then the tile: the one of least estimated time (`time`): waves of units times a unit's cost,
//! which is a fixed cost per tile plus its k-tiles, each counting as many narrow k-tiles as the
//! tile is wider than 128 times a per-tile factor (stream-K: all the tiles' cost over S, times
//! a factor), with the constants per scale mode (`costs`). The wide tile only where it needs no
//! more K slices than the narrow one (with more, the partial tiles' traffic grows); the 128 x 192
//! tile (Fp8Tile192Config: tensorwise and row-wise) only as whole tiles. Block-wise keeps the
//! constants of performance log 50 (no fixed cost, a wide k-tile 0.95 of two narrow ones), which
//! pick the faster of the two tiles on every shape of M 4096 measured there. Tensorwise and
//! row-wise, whose fold is an add since log 56, log 59 fitted them on the H200 at M = 4096 and
//! 8192 (random normal data): a tile's fixed cost is 3 narrow k-tiles (the wide tile ran 1.25 x
//! the narrow one at K = 512 with as many waves' worth of columns), a wide k-tile 1.06 x two
//! narrow ones (narrow 1.035 x wide at 8192^3, 1.04 x at 4096 x 4096 x 7168), a 192-wide one
//! 1.04 x one and a half (level with the narrow tile at 8192^3, where 42.7 columns of tiles waste
//! a third of the last: the narrow one keeps it), stream-K 1.15 x its ideal (4096 x 2112 x 7168:
//! 352 whole 128 x 192 tiles 1.06-1.07 x the narrow tile's stream-K). So long K at M >= 4096 runs
//! the narrow tile, short K (4096 x 7168 x 2048, 4096 x 24576 x 1536, N = 32768 at K = 512) the
//! wide one, and at M = 128 the 128 x 192 tile takes 128 x 24576 x 1536 (one wave of 128 tiles:
//! 1.22 x the wide tile's 96, performance log 58).

#include <cstdint>

namespace tilepipe {

//! How the f32 scales of an FP8 GEMM are laid out (gemm_fp8.cuh's table).
enum class Fp8Scaling {
  kTensorwise,  //!< one scale for A, one for B
  kRowwise,     //!< one per row of A, one per column of D
  kBlockwise,   //!< A: per row per 128 of K; B: per 128 x 128 block (DeepSeek-V3)
};

//! GemmFp8Sm90's tiles, as Fp8ScheduleHeuristic names them.
enum class Fp8Tile {
  k128x128,  //!< Fp8TileConfig
  k128x256,  //!< Fp8WideTileConfig
  k64x128,   //!< Fp8DecodeTileConfig
  k128x192,  //!< Fp8Tile192Config (tensorwise and row-wise)
  k64x192,   //!< Fp8DecodeTile192Config (tensorwise and row-wise)
  k64x64,    //!< Fp8DecodeTile64Config (tensorwise and row-wise)
  //! Fp8DecodeTile64KInterleavedConfig (tensorwise and row-wise)
  k64x64Interleaved,
  //! Fp8DecodeTile256SplitConfig
  k64x256Split,
};

//! GemmFp8Arguments' `split_k` and `stream_k` for one problem, and the tile to run it with.
struct GemmFp8Schedule {
  int split_k = 1;                   //!< K slices (1: none)
  int stream_k = 0;                  //!< stream-K's blocks (0: none)
  Fp8Tile tile = Fp8Tile::k128x128;  //!< the GemmFp8Sm90 configuration to run
  constexpr bool operator==(const GemmFp8Schedule& o) const {
    return split_k == o.split_k && stream_k == o.stream_k && tile == o.tile;
  }
};

//! The rule above (`select`), per scale mode.
struct Fp8ScheduleHeuristic {
  static constexpr int kTileM = 128, kTileN = 128, kWideTileN = 256, kTileK = 128;
  //! The 192-wide tiles: for M up to kTileM (128 rows) or kDecodeTileM (64), not block-wise.
  static constexpr int kTile192N = 192;
  static constexpr int kDecodeTileM = 64;
  //! The 64 x 64 tile's width: tensorwise and row-wise, up to kTileM rows.
  static constexpr int kDecode64TileN = 64;
  //! The decode tile for every M up to kDecodeMaxM with K of at least kDecodeMinKTiles k-tiles,
  //! and for M up to kDecodeTileM whatever K.
  static constexpr std::int64_t kDecodeMaxM = 256, kDecodeMinKTiles = 16;
  //! At exactly 64 rows, k-interleaved consumers up to this many k-tiles only: with longer K, B
  //! streams from DRAM and the one-consumer tile's extra ring slot counts more (64 x 7168 x
  //! 16384: 0.88-0.90 x tensorwise, performance log 61).
  static constexpr std::int64_t kInterleaved64MaxKTiles = 32;
  //! Split-K below this fraction of a wave of tiles.
  static constexpr double kMinWaveFraction = 0.8;
  //! At most this many K slices, each at least this many k-tiles long (the f32 partial tiles'
  //! traffic and each slice's pipeline prologue stay small next to its work).
  static constexpr int kMaxSplitK = 4;
  static constexpr std::int64_t kMinKTilesPerSlice = 12;
  //! Stream-K where the waves are on average less full than this, and K has this many k-tiles.
  static constexpr double kMinWaveEfficiency = 0.9;
  static constexpr std::int64_t kMinStreamKTiles = 32;
  //! The cost model of `time`, per scale mode (the rule above): a tile's fixed cost in narrow
  //! k-tiles, a k-tile's cost against as many narrow ones for the wide and the 128 x 192 tile,
  //! and stream-K's against its ideal.
  struct Costs {
    double fixed, wide, t192, stream_k;
  };
  static constexpr Costs costs(Fp8Scaling scaling) {
    return scaling == Fp8Scaling::kBlockwise ? Costs{0.0, 0.95, 1.0, 1.0}
                                             : Costs{3.0, 1.06, 1.04, 1.15};
  }

  static constexpr GemmFp8Schedule select(std::int64_t m, std::int64_t n, std::int64_t k,
                                          int sm_count,
                                          Fp8Scaling scaling = Fp8Scaling::kTensorwise) {
    const std::int64_t sms = sm_count > 0 ? sm_count : 1;
    if (m <= 0 || n <= 0 || k <= 0) return {};
    const std::int64_t k_tiles = (k + kTileK - 1) / kTileK;
    const bool blockwise = scaling == Fp8Scaling::kBlockwise;
    if (m <= kDecodeTileM || (m <= kDecodeMaxM && k_tiles >= kDecodeMinKTiles)) {
      const std::int64_t tiles_64 =
          (m + kDecodeTileM - 1) / kDecodeTileM * ((n + kDecode64TileN - 1) / kDecode64TileN);
      if (!blockwise && m <= kTileM && tiles_64 <= sms) {
        GemmFp8Schedule s = select_decode(m, n, k_tiles, sms, kDecode64TileN, Fp8Tile::k64x64);
        if (s.split_k == 1 && k_tiles >= kDecodeMinKTiles &&
            (m > kDecodeTileM || (m == kDecodeTileM && k_tiles <= kInterleaved64MaxKTiles)))
          s.tile = Fp8Tile::k64x64Interleaved;
        return s;
      }
      GemmFp8Schedule decode = select_decode(m, n, k_tiles, sms);
      if (m <= kDecodeTileM && decode.split_k == 1 && split_columns_fill_one_wave(n, sms))
        decode.tile = Fp8Tile::k64x256Split;
      else if (!blockwise && m <= kDecodeTileM && decode.split_k == 1 &&
               waves_192_faster(m, n, sms, kDecodeTileM, kTileN))
        decode.tile = Fp8Tile::k64x192;
      if (!blockwise || decode.split_k > 1 || decode.tile == Fp8Tile::k64x256Split ||
          unsplit_and_underfilled(m, n, k_tiles, sms) ||
          (m <= kDecodeTileM && k_tiles < kDecodeMinKTiles))
        return decode;
    }
    const Costs c = costs(scaling);
    const GemmFp8Schedule narrow = select_for(m, n, k, sms, kTileN);
    GemmFp8Schedule wide = select_for(m, n, k, sms, kWideTileN);
    wide.tile = Fp8Tile::k128x256;
    const bool faster = time(m, n, k, sms, wide, c) < time(m, n, k, sms, narrow, c);
    const GemmFp8Schedule best = faster && wide.split_k <= narrow.split_k ? wide : narrow;
    if (!blockwise && select_for(m, n, k, sms, kTile192N).split_k == 1) {
      const GemmFp8Schedule t192{1, 0, Fp8Tile::k128x192};
      if (time(m, n, k, sms, t192, c) < time(m, n, k, sms, best, c)) return t192;
    }
    return best;
  }

  //! Whether whole tiles `tile_m` x 192 take fewer waves' worth of columns than `tile_m` x
  //! `tile_n` ones: where N / 192 tiles fill a wave that N / 128 would overrun (N = 24576 on 132
  //! SMs: 128 tiles against 192), measured 1.13 x (M = 64) as fast on the H200.
  static constexpr bool waves_192_faster(std::int64_t m, std::int64_t n, std::int64_t sms,
                                         int tile_m, int tile_n) {
    const std::int64_t rows = (m + tile_m - 1) / tile_m;
    const std::int64_t waves = (rows * ((n + tile_n - 1) / tile_n) + sms - 1) / sms;
    const std::int64_t waves_192 = (rows * ((n + kTile192N - 1) / kTile192N) + sms - 1) / sms;
    return waves_192 * kTile192N < waves * tile_n;
  }

  //! Whether one row of 64 x 256 tiles fits one wave where 64 x 128 ones need more (M <= 64).
  static constexpr bool split_columns_fill_one_wave(std::int64_t n, std::int64_t sms) {
    return (n + kTileN - 1) / kTileN > sms && (n + kWideTileN - 1) / kWideTileN <= sms;
  }

  //! A 64-row tile's schedule (`tile_n` wide): the most K slices, up to kMaxSplitK of at least
  //! kMinKTilesPerSlice k-tiles each, whose clusters of one block per slice all fit at once.
  static constexpr GemmFp8Schedule select_decode(std::int64_t m, std::int64_t n,
                                                 std::int64_t k_tiles, std::int64_t sms,
                                                 int tile_n = kTileN,
                                                 Fp8Tile tile = Fp8Tile::k64x128) {
    const std::int64_t tiles = (m + kDecodeTileM - 1) / kDecodeTileM * ((n + tile_n - 1) / tile_n);
    int split = 1;
    for (int s = 2; s <= kMaxSplitK; ++s)
      if (k_tiles / s >= kMinKTilesPerSlice && tiles <= cluster_slots(s, sms)) split = s;
    return {split, 0, tile};
  }

  //! Whether the narrow tile's tiles would fill less than kMinWaveFraction of the SMs with K too
  //! short to split them (step 1 finds no split).
  static constexpr bool unsplit_and_underfilled(std::int64_t m, std::int64_t n,
                                                std::int64_t k_tiles, std::int64_t sms) {
    const std::int64_t tiles = (m + kTileM - 1) / kTileM * ((n + kTileN - 1) / kTileN);
    return static_cast<double>(tiles) < kMinWaveFraction * static_cast<double>(sms) &&
           split_k(tiles, k_tiles, static_cast<double>(sms)) == 1;
  }

  //! About how many clusters of `size` blocks, one per SM, fit at once on `sms` SMs: every pair
  //! of SMs holds one of 2; of 3 or more, 90% of the SMs' worth, as a GPC's SMs are seldom a
  //! multiple of the size (the H200's 132 SMs hold 39 of 3 and 30 of 4, where this says 39 and
  //! 29; cudaOccupancyMaxActiveClusters).
  static constexpr std::int64_t cluster_slots(int size, std::int64_t sms) {
    return size <= 2 ? sms / size : sms * 9 / 10 / size;
  }

  //! The K slices of `tiles` tiles of `k_tiles` k-tiles: doubling from 1 while the units stay
  //! within `max_units`, each slice keeps kMinKTilesPerSlice k-tiles, and at most kMaxSplitK.
  static constexpr int split_k(std::int64_t tiles, std::int64_t k_tiles, double max_units) {
    int split = 1;
    while (split * 2 <= kMaxSplitK && static_cast<double>(tiles * split * 2) <= max_units &&
           k_tiles / (split * 2) >= kMinKTilesPerSlice)
      split *= 2;
    return split;
  }

  //! Steps 1-3 for tiles `tile_n` wide.
  static constexpr GemmFp8Schedule select_for(std::int64_t m, std::int64_t n, std::int64_t k,
                                              std::int64_t sms, int tile_n) {
    const std::int64_t tiles = (m + kTileM - 1) / kTileM * ((n + tile_n - 1) / tile_n);
    const std::int64_t k_tiles = (k + kTileK - 1) / kTileK;
    if (static_cast<double>(tiles) < kMinWaveFraction * static_cast<double>(sms)) {
      return {split_k(tiles, k_tiles, static_cast<double>(sms)), 0, Fp8Tile::k128x128};
    }
    const std::int64_t waves = (tiles + sms - 1) / sms;
    const bool ragged =
        static_cast<double>(tiles) < kMinWaveEfficiency * static_cast<double>(waves * sms);
    if (ragged && k_tiles >= kMinStreamKTiles) return {1, static_cast<int>(sms), Fp8Tile::k128x128};
    return {};
  }

  //! The estimated time of schedule `s` on a 128-row tile, in the narrow tile's k-tiles.
  static constexpr double time(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t sms,
                               const GemmFp8Schedule& s, const Costs& c) {
    const bool wide = s.tile == Fp8Tile::k128x256, t192 = s.tile == Fp8Tile::k128x192;
    const int tile_n = wide ? kWideTileN : t192 ? kTile192N : kTileN;
    const double factor = wide ? c.wide : t192 ? c.t192 : 1.0;
    const std::int64_t tiles = (m + kTileM - 1) / kTileM * ((n + tile_n - 1) / tile_n);
    const double k_tiles =  // in narrow k-tiles
        static_cast<double>((k + kTileK - 1) / kTileK) * tile_n / kTileN * factor;
    if (s.stream_k > 0)
      return c.stream_k * static_cast<double>(tiles) * (c.fixed + k_tiles) /
             static_cast<double>(sms);
    const std::int64_t units = tiles * s.split_k;
    return static_cast<double>((units + sms - 1) / sms) * (c.fixed + k_tiles / s.split_k);
  }
};

}  // namespace tilepipe
