#pragma once
//! \file
//! Fp8ScheduleHeuristic: how GemmFp8Sm90's persistent kernel should cut a problem (whole tiles,
//! split-K or stream-K), a pure host function of the shape and the SM count, so that callers that
//! pick no schedule of their own (the PyTorch operator, the benchmark) get a good one, and so that
//! it is tested without a GPU. A light header: no CUDA includes.
//!
//! With S the SM count, T = ceil(M / 128) * ceil(N / TileN) tiles and KT = ceil(K / 128)
//! k-tiles, for each of GemmFp8Sm90's two tiles (TileN 128, Fp8TileConfig; 256, Fp8WideTileConfig):
//!
//! 1. **Split-K** where the tiles fill less than kMinWaveFraction of the SMs (decode-sized M):
//!    the factor doubles from 1 while T times it still fits one wave, every slice keeps
//!    kMinKTilesPerSlice k-tiles, and it stays within kMaxSplitK. A 64 x 4096 x 7168 problem
//!    (32 tiles) ran 1.35 x faster split in 4 than whole; 64 x 7168 x 2048 (16 k-tiles) ran
//!    faster whole than split in 2 (H200, performance log 43).
//! 2. **Stream-K** (S blocks) where the last wave of tiles would leave the SMs badly used (waves
//!    less than kMinWaveEfficiency full on average) and K is long (kMinStreamKTiles): 4096 x 2112
//!    x 7168 (544 tiles, 4.1 waves) ran 1.08 x faster; with K = 1536 stream-K lost a third.
//! 3. Otherwise whole tiles.
//!
//! Then the tile: the wide one where its estimated time is less, the time being the waves of
//! units times a unit's k-tiles (stream-K: all the k-tiles over S), a wide k-tile counting 2 x
//! kWideSpeed narrow ones, and where it needs no more K slices than the narrow one (with more, the
//! partial tiles' traffic grows: 128 x 7168 x 16384 ran 0.85-0.92 x as fast wide in 4 slices as
//! narrow in 2). Measured on the H200 over 20 shapes (M 64, 128, 4096; performance log 50) this
//! picks the faster tile in 19, e.g. wide 64 x 24576 x 1536 (1.19-1.30 x) and 4096 x 7168 x 2048
//! (1.06-1.12 x), narrow 64 x 4096 x 7168 (wide 0.85-0.89 x) and 4096 x 2112 x 7168 (wide 0.89-0.95
//! x: N's last wide tile is mostly empty); not 64 x 7168 x 16384 (wide 4 slices, 0.99-1.10 x narrow
//! 2).

#include <cstdint>

namespace tilepipe {

//! GemmFp8Arguments' `split_k` and `stream_k` for one problem, and the tile to run it with.
struct GemmFp8Schedule {
  int split_k = 1;    //!< K slices (1: none)
  int stream_k = 0;   //!< stream-K's blocks (0: none)
  bool wide = false;  //!< Fp8WideTileConfig (128 x 256) rather than Fp8TileConfig (128 x 128)
  constexpr bool operator==(const GemmFp8Schedule& o) const {
    return split_k == o.split_k && stream_k == o.stream_k && wide == o.wide;
  }
};

//! The rule above, for GemmFp8Sm90's two tiles.
struct Fp8ScheduleHeuristic {
  static constexpr int kTileM = 128, kTileN = 128, kWideTileN = 256, kTileK = 128;
  //! Split-K below this fraction of a wave of tiles.
  static constexpr double kMinWaveFraction = 0.8;
  //! At most this many K slices, each at least this many k-tiles long (the f32 partial tiles'
  //! traffic and each slice's pipeline prologue stay small next to its work).
  static constexpr int kMaxSplitK = 4;
  static constexpr std::int64_t kMinKTilesPerSlice = 12;
  //! Stream-K where the waves are on average less full than this, and K has this many k-tiles.
  static constexpr double kMinWaveEfficiency = 0.9;
  static constexpr std::int64_t kMinStreamKTiles = 32;
  //! The wide tile's time per multiply against the narrow one's (measured: 0.90-0.98 where both
  //! fill the SMs alike).
  static constexpr double kWideSpeed = 0.95;

  static constexpr GemmFp8Schedule select(std::int64_t m, std::int64_t n, std::int64_t k,
                                          int sm_count) {
    const std::int64_t sms = sm_count > 0 ? sm_count : 1;
    if (m <= 0 || n <= 0 || k <= 0) return {};
    const GemmFp8Schedule narrow = select_for(m, n, k, sms, kTileN);
    GemmFp8Schedule wide = select_for(m, n, k, sms, kWideTileN);
    wide.wide = true;
    const bool faster = kWideSpeed * time(m, n, k, sms, wide) < time(m, n, k, sms, narrow);
    return faster && wide.split_k <= narrow.split_k ? wide : narrow;
  }

  //! Steps 1-3 for tiles `tile_n` wide.
  static constexpr GemmFp8Schedule select_for(std::int64_t m, std::int64_t n, std::int64_t k,
                                              std::int64_t sms, int tile_n) {
    const std::int64_t tiles = (m + kTileM - 1) / kTileM * ((n + tile_n - 1) / tile_n);
    const std::int64_t k_tiles = (k + kTileK - 1) / kTileK;
    if (static_cast<double>(tiles) < kMinWaveFraction * static_cast<double>(sms)) {
      int split = 1;
      while (split * 2 <= kMaxSplitK && tiles * split * 2 <= sms &&
             k_tiles / (split * 2) >= kMinKTilesPerSlice)
        split *= 2;
      return {split, 0, false};
    }
    const std::int64_t waves = (tiles + sms - 1) / sms;
    const bool ragged =
        static_cast<double>(tiles) < kMinWaveEfficiency * static_cast<double>(waves * sms);
    if (ragged && k_tiles >= kMinStreamKTiles) return {1, static_cast<int>(sms), false};
    return {};
  }

  //! The estimated time of schedule `s`, in the narrow tile's k-tiles (before kWideSpeed).
  static constexpr double time(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t sms,
                               const GemmFp8Schedule& s) {
    const int tile_n = s.wide ? kWideTileN : kTileN;
    const std::int64_t tiles = (m + kTileM - 1) / kTileM * ((n + tile_n - 1) / tile_n);
    const double per_tile =
        static_cast<double>((k + kTileK - 1) / kTileK) * (tile_n / kTileN);  // narrow k-tiles
    if (s.stream_k > 0) return static_cast<double>(tiles) * per_tile / static_cast<double>(sms);
    const std::int64_t units = tiles * s.split_k;
    return static_cast<double>((units + sms - 1) / sms) * per_tile / s.split_k;
  }
};

}  // namespace tilepipe
