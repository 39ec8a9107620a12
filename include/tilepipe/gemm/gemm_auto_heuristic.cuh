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
//! rule chooses among GemmSm90's tiles instead (one persistent block per SM), and how its
//! persistent kernel cuts the work (WorkScheduler):
//!
//! 1. **Large** on the Hopper tier (128 x 256 x 64, 4 stages, clusters of 2 along M) if M > 128
//!    (with fewer rows the cluster's second tile is empty) and tiles(128 x 256) >=
//!    kMinHopperLargeFraction * S; with **stream-K** (`stream_k = S` blocks, S / 2 clusters) where
//!    its waves of cluster items would be less than kMinHopperWaveEfficiency full on average and
//!    either a whole wave remains data-parallel (items >= S / 2) or K is long
//!    (kMinStreamKTilesAlone k-tiles or more): a single partial wave of short tiles ran slower cut
//!    into pieces than whole.
//! 2. Otherwise **Hopper64x128** (one consumer warpgroup, 6 stages) if its tiles fill
//!    kMinHopperWaveFraction * S or M <= 64, else **Hopper64x64** (8 stages); either with
//!    **split-K**, doubling the factor (up to kMaxHopperSplitK) while the slices still fit one
//!    wave of S blocks and keep kMinHopperKTilesPerSlice k-tiles each: decode-sized problems have
//!    few tiles and read all of B, which only every SM streaming a slice reads at full speed.
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
  int split_k = 1;   //!< K slices that run (1: no split-K): the Small and Hopper64x* tiles
  int stream_k = 0;  //!< the Hopper tier's Large tile only: stream-K's blocks (0: none)

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
  //! On the Hopper tier, stream-K (Large) where its waves are on average less full than this.
  static constexpr double kMinHopperWaveEfficiency = 0.9;
  //! On the Hopper tier, the K (in k-tiles of 64) from which a single partial wave of Large tiles
  //! runs as stream-K: shorter tiles ran faster whole than cut in two.
  static constexpr std::int64_t kMinStreamKTilesAlone = 256;
  //! On the Hopper tier, split-K of the 64-row tiles: at most this factor, and each slice keeps
  //! this many k-tiles.
  static constexpr int kMaxHopperSplitK = 4;
  static constexpr std::int64_t kMinHopperKTilesPerSlice = 8;

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
      const std::int64_t k_tiles = k > 0 ? (k + 63) / 64 : 0;
      const int sm = sm_count > 0 ? sm_count : 1;
      if (m > 128 &&
          hopper_tiles<GemmAutoHopperLargeConfig>(m, n, batch) >= kMinHopperLargeFraction * sms) {
        constexpr int kCluster = GemmAutoHopperLargeConfig::kClusterM;
        const std::int64_t items =
            (m + 128 * kCluster - 1) / (128 * kCluster) * ((n + 255) / 256) * batch;
        const int workers = sm / kCluster > 0 ? sm / kCluster : 1;
        const std::int64_t waves = (items + workers - 1) / workers;
        const bool ragged = double(items) < kMinHopperWaveEfficiency * double(waves * workers);
        const bool stream = ragged && (items >= workers || k_tiles >= kMinStreamKTilesAlone);
        return GemmAutoConfig{Tile::kLarge, 1, stream ? sm : 0};
      }
      const std::int64_t tiles_64x128 = hopper_tiles<GemmAutoHopper64x128Config>(m, n, batch);
      const bool wide = tiles_64x128 >= kMinHopperWaveFraction * sms || m <= 64;
      const std::int64_t tiles =
          wide ? tiles_64x128 : hopper_tiles<GemmAutoHopper64x64Config>(m, n, batch);
      int split = 1;
      while (2 * split <= kMaxHopperSplitK && tiles * 2 * split <= sm &&
             k_tiles >= 2 * split * kMinHopperKTilesPerSlice)
        split *= 2;
      return GemmAutoConfig{wide ? Tile::kHopper64x128 : Tile::kHopper64x64, split};
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
