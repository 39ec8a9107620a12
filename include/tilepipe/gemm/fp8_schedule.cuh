#pragma once
//! \file
//! Fp8ScheduleHeuristic: how GemmFp8Sm90's persistent kernel should cut a problem (whole tiles,
//! split-K or stream-K), a pure host function of the shape and the SM count, so that callers that
//! pick no schedule of their own (the PyTorch operator, the benchmark) get a good one, and so that
//! it is tested without a GPU. A light header: no CUDA includes.
//!
//! With S the SM count, T = ceil(M / 128) * ceil(N / 128) tiles and KT = ceil(K / 128) k-tiles:
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

#include <cstdint>

namespace tilepipe {

//! GemmFp8Arguments' `split_k` and `stream_k` for one problem.
struct GemmFp8Schedule {
  int split_k = 1;   //!< K slices (1: none)
  int stream_k = 0;  //!< stream-K's blocks (0: none)
  constexpr bool operator==(const GemmFp8Schedule& o) const {
    return split_k == o.split_k && stream_k == o.stream_k;
  }
};

//! The rule above (GemmFp8Sm90's default 128 x 128 x 128 tile).
struct Fp8ScheduleHeuristic {
  static constexpr int kTileM = 128, kTileN = 128, kTileK = 128;
  //! Split-K below this fraction of a wave of tiles.
  static constexpr double kMinWaveFraction = 0.8;
  //! At most this many K slices, each at least this many k-tiles long (the f32 partial tiles'
  //! traffic and each slice's pipeline prologue stay small next to its work).
  static constexpr int kMaxSplitK = 4;
  static constexpr std::int64_t kMinKTilesPerSlice = 12;
  //! Stream-K where the waves are on average less full than this, and K has this many k-tiles.
  static constexpr double kMinWaveEfficiency = 0.9;
  static constexpr std::int64_t kMinStreamKTiles = 32;

  static constexpr GemmFp8Schedule select(std::int64_t m, std::int64_t n, std::int64_t k,
                                          int sm_count) {
    const std::int64_t sms = sm_count > 0 ? sm_count : 1;
    if (m <= 0 || n <= 0 || k <= 0) return {};
    const std::int64_t tiles = (m + kTileM - 1) / kTileM * ((n + kTileN - 1) / kTileN);
    const std::int64_t k_tiles = (k + kTileK - 1) / kTileK;
    if (static_cast<double>(tiles) < kMinWaveFraction * static_cast<double>(sms)) {
      int split = 1;
      while (split * 2 <= kMaxSplitK && tiles * split * 2 <= sms &&
             k_tiles / (split * 2) >= kMinKTilesPerSlice)
        split *= 2;
      return {split, 0};
    }
    const std::int64_t waves = (tiles + sms - 1) / sms;
    const bool ragged =
        static_cast<double>(tiles) < kMinWaveEfficiency * static_cast<double>(waves * sms);
    if (ragged && k_tiles >= kMinStreamKTiles) return {1, static_cast<int>(sms)};
    return {};
  }
};

}  // namespace tilepipe
