#pragma once
//! \file
//! GemmAutoHeuristic: GemmAuto's rule (gemm_auto.cuh), a pure host function of the problem's
//! shape and the SM count, so that it is tested and tuned without a GPU. Its measurements are in
//! docs/performance.md; the thresholds below say why in a line each.
//!
//! With S the device's SM count and tiles(T) = ceil(M / T.m) * ceil(N / T.n) * batch:
//!
//! 1. **Large** (128 x 256 x 64, 3 stages) if tiles(Large) >= kMinWaveFraction * S: about one
//!    block per SM or more. Except when its last wave would leave the GPU badly underused (average
//!    wave fill below kMinLargeWaveEfficiency) and Medium fills a wave: then Medium. That exception
//!    is the Ampere tier's only: the Hopper tier's Large kernel is persistent and stays ahead.
//! 2. **Medium** (128 x 128 x 32, 4 stages) if tiles(Medium) >= kMinMediumWaveFraction * S and M
//!    fills the tile's 128 rows.
//! 3. Otherwise **Small** (64 x 64 x 64, 3 stages, several blocks per SM) with split-K: the factor
//!    doubles from 1 while tiles(Small) * split is less than a wave of resident Small blocks
//!    (kMinWaveFraction * S * kSmallBlocksPerSm), every slice keeps kMinKTilesPerSlice k-tiles and
//!    the factor stays within kMaxSplitK, so no slice is empty.
//!
//! Where the Hopper tier runs (an sm_90 GPU, a build for `90a`, arguments GemmSm90 takes), the
//! rule chooses among GemmSm90's tiles instead (one persistent block per SM), and whether its
//! persistent kernel runs stream-K:
//!
//! 1. **Large** on the Hopper tier (128 x 256 x 64, 4 stages, clusters of 2) if M > 64 and
//!    tiles(128 x 256) >= kMinHopperLargeFraction * S;
//! 2. **Hopper64x128** (one consumer warpgroup, 6 stages) if its tiles fill
//!    kMinHopperWaveFraction * S, or if M <= 64 (decode: few tiles, which stream-K spreads);
//! 3. otherwise **Hopper64x64** (8 stages).
//!
//! Then **stream-K** (`stream_k = S` blocks: S workers, S / 2 clusters for Large) where the tile's
//! waves over the workers would be less than kMinHopperWaveEfficiency full on average and every
//! worker still gets at least kMinStreamKTilesPerWorker k-tiles: the idle part of the last wave
//! becomes shares of the work instead, and a problem of few tiles and long K uses every SM.
//!
//! The rule is nearly monotone: more output tiles never get the Small tile once they had a larger
//! one, nor a larger split factor, and a longer K never gets a smaller split factor; only the
//! wave-tail exception moves between Large and Medium.

#include <cstdint>
#include <string>

#include "gemm_tier.cuh"
#include "tile_configs.cuh"

namespace tilepipe {

//! Which of GemmAuto's tile configurations runs a problem, and with how many K slices.
struct GemmAutoConfig {
  //! kLarge runs on either tier (the Hopper tier where the device and the arguments allow);
  //! kMedium and kSmall on the Ampere tier; kHopper64x128 and kHopper64x64 on the Hopper tier.
  enum class Tile { kLarge, kMedium, kSmall, kHopper64x128, kHopper64x64 };
  Tile tile = Tile::kLarge;
  int split_k = 1;   //!< K slices that run (1: no split-K); only the Small tile splits
  int stream_k = 0;  //!< the Hopper tier's tiles only: stream-K's blocks (0: none), every SM

  constexpr bool operator==(const GemmAutoConfig& o) const {
    return tile == o.tile && split_k == o.split_k && stream_k == o.stream_k;
  }
  constexpr bool operator!=(const GemmAutoConfig& o) const { return !(*this == o); }

  //! Whether the tile exists only on the Hopper tier.
  constexpr bool hopper_only() const {
    return tile == Tile::kHopper64x128 || tile == Tile::kHopper64x64;
  }

  //! The tile configuration, as the benchmark names it ("64x64x64/w32x32/s3"; the Hopper tier's
  //! tiles as "64x128x64/s6,hopper"). kLarge is named by its Ampere-tier policy.
  std::string tile_name() const {
    switch (tile) {
      case Tile::kLarge: return policy_name<GemmAutoLargePolicy>();
      case Tile::kMedium: return policy_name<GemmAutoMediumPolicy>();
      case Tile::kSmall: return policy_name<GemmAutoSmallPolicy>();
      case Tile::kHopper64x128: return hopper_name<GemmAutoHopper64x128Config>();
      case Tile::kHopper64x64: return hopper_name<GemmAutoHopper64x64Config>();
    }
    return "?";
  }
  //! "128x256x64/w64x64/s3", "64x64x64/w32x32/s3,splitK=4" or "64x128x64/s6,hopper,streamK=132".
  std::string name() const {
    return tile_name() + (split_k > 1 ? ",splitK=" + std::to_string(split_k) : std::string()) +
           (stream_k > 0 ? ",streamK=" + std::to_string(stream_k) : std::string());
  }

 private:
  template <class P>
  static std::string policy_name() {
    return std::to_string(P::Tile::kM) + "x" + std::to_string(P::Tile::kN) + "x" +
           std::to_string(P::Tile::kK) + "/w" + std::to_string(P::Warp::kM) + "x" +
           std::to_string(P::Warp::kN) + "/s" + std::to_string(P::kStages);
  }
  template <class C>
  static std::string hopper_name() {
    return std::to_string(C::kM) + "x" + std::to_string(C::kN) + "x" + std::to_string(C::kK) +
           "/s" + std::to_string(C::kStages) + ",hopper";
  }
};

//! GemmAuto's rule (see the top of this file), a pure host function of the problem's shape and
//! the SM count, so that it can be tested and tuned without a GPU.
struct GemmAutoHeuristic {
  //! "About one full wave": a configuration is used when its blocks fill at least this fraction
  //! of the resident slots; below 1 so that 128 Large tiles on 132 SMs count as one.
  static constexpr double kMinWaveFraction = 0.9;
  //! Medium's own threshold, lower: a Medium wave of 0.8 or more beats the Small tile at any
  //! split. Medium also needs M >= 128: with fewer rows most of its MMAs are wasted.
  static constexpr double kMinMediumWaveFraction = 0.8;
  //! The Large tile only where its waves are at least this full on average (tiles / SMs over the
  //! whole number of waves); otherwise Medium, two blocks per SM, fills the last wave better.
  static constexpr double kMinLargeWaveEfficiency = 0.9;
  //! Resident Small blocks per SM (by registers and shared memory on sm_80 and sm_90); the Large
  //! and Medium tiles are counted as one block per SM.
  static constexpr int kSmallBlocksPerSm = 4;
  //! Every K slice keeps at least this many k-tiles of the Small tile (16 x 64 = 1024 of K), so
  //! that the pipeline's prologue and the f32 workspace traffic stay small next to the work.
  static constexpr int kMinKTilesPerSlice = 16;
  //! The largest split factor (the reduction reads every slice once).
  static constexpr int kMaxSplitK = 16;
  //! On the Hopper tier, the Large tile from this fraction of the SMs on: its 128 x 256 tiles with
  //! two consumer warpgroups keep the tensor cores far busier than 64-row tiles.
  static constexpr double kMinHopperLargeFraction = 0.5;
  //! On the Hopper tier, a wave of the 64 x 128 tile is this fraction of the SMs (one persistent
  //! block per SM).
  static constexpr double kMinHopperWaveFraction = 0.8;
  //! On the Hopper tier, stream-K where the tile's waves over the workers (SMs, or clusters of
  //! two for Large) are on average less full than this.
  static constexpr double kMinHopperWaveEfficiency = 0.9;
  //! On the Hopper tier, stream-K only where every worker still gets this many k-tiles (of 64):
  //! shorter shares pay more for the fix-up and the pipeline's start than the idle SMs cost.
  static constexpr std::int64_t kMinStreamKTilesPerWorker = 8;

  //! The configuration for an `m x n x k` problem with `batch` batches on `sm_count` SMs, where
  //! the Large configuration would run on tier `large_tier`. Empty problems (no output) get the
  //! Small tile without split-K.
  static constexpr GemmAutoConfig select(std::int64_t m, std::int64_t n, std::int64_t k,
                                         std::int64_t batch, int sm_count,
                                         GemmTier large_tier = GemmTier::kAmpere) {
    using Tile = GemmAutoConfig::Tile;
    const double sms = sm_count > 0 ? sm_count : 1;
    const double wave = kMinWaveFraction * sms;
    if (m <= 0 || n <= 0 || batch <= 0) return GemmAutoConfig{Tile::kSmall, 1};
    if (large_tier == GemmTier::kHopper) {
      const double hopper_wave = kMinHopperWaveFraction * sms;
      const std::int64_t large_tiles = hopper_tiles<GemmAutoHopperLargeConfig>(m, n, batch);
      const std::int64_t k_tiles = k > 0 ? (k + 63) / 64 : 0;
      const int sm = sm_count > 0 ? sm_count : 1;
      if (m > 64 && large_tiles >= kMinHopperLargeFraction * sms) {
        constexpr int kCluster = GemmAutoHopperLargeConfig::kClusterM;
        const std::int64_t items = (m + 128 * kCluster - 1) / (128 * kCluster) * ((n + 255) / 256);
        return GemmAutoConfig{Tile::kLarge, 1,
                              stream_k_pays(items * batch, k_tiles, sm / kCluster) ? sm : 0};
      }
      const std::int64_t tiles_64x128 = hopper_tiles<GemmAutoHopper64x128Config>(m, n, batch);
      if (tiles_64x128 >= hopper_wave || m <= 64)
        return GemmAutoConfig{Tile::kHopper64x128, 1,
                              stream_k_pays(tiles_64x128, k_tiles, sm) ? sm : 0};
      const std::int64_t tiles_64x64 = hopper_tiles<GemmAutoHopper64x64Config>(m, n, batch);
      return GemmAutoConfig{Tile::kHopper64x64, 1,
                            stream_k_pays(tiles_64x64, k_tiles, sm) ? sm : 0};
    }
    const std::int64_t large_tiles = tiles<GemmAutoLargePolicy>(m, n, batch);
    const bool medium_fills =
        m >= GemmAutoMediumPolicy::Tile::kM &&
        tiles<GemmAutoMediumPolicy>(m, n, batch) >= kMinMediumWaveFraction * sms;
    if (large_tiles >= wave) {
      // A last wave that leaves many SMs idle costs the Large tile more than the Medium one
      // (measured, see kMinLargeWaveEfficiency).
      const std::int64_t slots = sm_count > 0 ? sm_count : 1;  // one Large block per SM
      const std::int64_t whole_waves = (large_tiles + slots - 1) / slots;
      const bool good_tail =
          double(large_tiles) >= kMinLargeWaveEfficiency * double(whole_waves * slots);
      return GemmAutoConfig{good_tail || !medium_fills ? Tile::kLarge : Tile::kMedium, 1};
    }
    if (medium_fills) return GemmAutoConfig{Tile::kMedium, 1};

    constexpr int kTileK = GemmAutoSmallPolicy::Tile::kK;
    const std::int64_t small_tiles = tiles<GemmAutoSmallPolicy>(m, n, batch);
    const std::int64_t k_tiles = k > 0 ? (k + kTileK - 1) / kTileK : 0;
    const double slots = wave * kSmallBlocksPerSm;
    int split = 1;
    while (2 * split <= kMaxSplitK && double(small_tiles) * split < slots &&
           k_tiles >= std::int64_t(2) * split * kMinKTilesPerSlice)
      split *= 2;
    // split <= k_tiles, so split_k_slices runs exactly `split` slices.
    return GemmAutoConfig{Tile::kSmall, split};
  }

 private:
  // Whether `items` work items of `k_tiles` k-tiles each run faster as stream-K on `workers`
  // persistent workers than whole (see the top of this file).
  static constexpr bool stream_k_pays(std::int64_t items, std::int64_t k_tiles, int workers) {
    if (items <= 0 || workers <= 0) return false;
    const std::int64_t waves = (items + workers - 1) / workers;
    const bool ragged = double(items) < kMinHopperWaveEfficiency * double(waves * workers);
    return ragged && items * k_tiles >= kMinStreamKTilesPerWorker * workers;
  }

  template <class P>
  static constexpr std::int64_t tiles(std::int64_t m, std::int64_t n, std::int64_t batch) {
    return tiles_of(m, n, batch, P::Tile::kM, P::Tile::kN);
  }
  template <class C>
  static constexpr std::int64_t hopper_tiles(std::int64_t m, std::int64_t n, std::int64_t batch) {
    return tiles_of(m, n, batch, C::kM, C::kN);
  }
  static constexpr std::int64_t tiles_of(std::int64_t m, std::int64_t n, std::int64_t batch,
                                         int tile_m, int tile_n) {
    return (m + tile_m - 1) / tile_m * ((n + tile_n - 1) / tile_n) * batch;
  }
};

}  // namespace tilepipe
