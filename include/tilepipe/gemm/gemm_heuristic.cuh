#pragma once
//! \file
//! GemmAuto: GemmMultistage with the tile configuration and the split-K factor chosen per
//! problem by a small, documented rule (GemmAutoHeuristic), so that small and skinny problems
//! are not run with a tile made for large ones.
//!
//! The rule, with S the device's SM count and tiles(T) = ceil(M / T.m) * ceil(N / T.n) * batch:
//!
//! 1. **Large** (128 x 256 x 64, eight 64 x 64 warp tiles, 3 stages: the fastest tile of the
//!    benchmark's sweep on large problems, 5 to 15% ahead of the portable 4-stage default
//!    256 x 128 x 32 in the same runs; as fast as the sm_90 default 256 x 128 x 64) if
//!    tiles(Large) >= kMinWaveFraction * S, i.e. the output has about one thread block per SM or
//!    more (one Large block fills an SM).
//!    Except when its last wave would leave the GPU badly underused (average wave fill below
//!    kMinLargeWaveEfficiency) and the Medium tile fills a wave: then Medium. That exception
//!    is the Ampere tier's only: where Large runs on the Hopper tier (below), its kernel is
//!    persistent and its clusters share B, and it stays ahead of Medium on such problems
//!    (1024 x 14336 x 4096 on an H100: 0.76 x cuBLAS against Medium's 0.58; entry 20).
//! 2. **Medium** (128 x 128 x 32, four 64 x 64 warp tiles, 4 stages) if
//!    tiles(Medium) >= kMinMediumWaveFraction * S and M fills the tile's 128 rows.
//! 3. Otherwise **Small** (64 x 64 x 64, four 32 x 32 warp tiles, 3 stages: several resident
//!    blocks per SM), and split-K: the split factor doubles from 1 while the blocks,
//!    tiles(Small) * split, are fewer than one full wave of resident Small blocks
//!    (kMinWaveFraction * S * kSmallBlocksPerSm), as long as every slice keeps at least
//!    kMinKTilesPerSlice k-tiles and the factor stays within kMaxSplitK. So every one of the
//!    slices runs (`split_k_slices`) and none is empty.
//!
//! On a device that runs the Hopper tier (an sm_90 GPU, a build for `90a`, arguments GemmSm90
//! takes), the rule chooses among GemmSm90's tiles instead (one persistent block per SM):
//!
//! 1. **Large** on the Hopper tier (128 x 256 x 64, 4 stages, clusters of 2) if M > 64 and
//!    tiles(128 x 256) >= kMinHopperLargeFraction * S;
//! 2. **Hopper64x128** (64 x 128 x 64, one consumer warpgroup, 6 stages) if its tiles fill a
//!    wave, kMinHopperWaveFraction * S;
//! 3. the Ampere rule's **Small** tile with its split-K if M <= 32, K >= kMinSplitKOnHopper and
//!    even 64 x 64 tiles are fewer than half the SMs: the one case measured where splitting K
//!    beats every unsplit Hopper tile (16 x 4096 x 14336: 0.87 x cuBLAS against 0.78);
//! 4. otherwise **Hopper64x64** (64 x 64 x 64, 8 stages).
//!
//! Measured on an H100 (entry 21 of docs/performance-log.md): on the benchmark's model shapes with
//! M = 16..256 these tiles ran at 0.84 to 1.13 x cuBLAS, where the Ampere tier's Small and Medium
//! tiles ran at 0.51 to 0.89. `tier(args)` says which tier a call takes.
//!
//! Arguments that are not 16-byte aligned (`GemmMultistage::vector_aligned`) run the Medium
//! configuration's narrow kernel, without split-K, whatever the rule says: only Medium is compiled
//! with one, so that GemmAuto adds one kernel, not three, for them. `GemmAuto<..., AnyAlignment =
//! false>` compiles none and refuses such arguments.
//!
//! The rule is nearly monotone: a problem with more output tiles never gets the Small tile once
//! it had a larger one, nor a larger split factor, and a longer K never gets a smaller split
//! factor; only the wave-tail exception moves between Large and Medium. The thresholds are named
//! constants below, set from the first H200 measurements (docs/performance-log.md, entry 7) and meant to be
//! tuned from the benchmark's "auto" column.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "gemm_multistage.cuh"

namespace tilepipe {

//! GemmAuto's candidate tile configurations.
//! Its 3-stage ring is 144 KB: it fits sm_80, sm_87, sm_90 and datacenter Blackwell, not the
//! 99 KB of sm_86 / sm_89 / sm_120, for which GemmAuto fails to compile with SmemRingBuffer's
//! message (use GemmMultistage with DefaultGemmPolicy there).
using GemmAutoLargePolicy = GemmPolicy<128, 256, 64, 64, 64, 3>;   //!< 128 x 256 x 64, w64x64, s3
using GemmAutoMediumPolicy = GemmPolicy<128, 128, 32, 64, 64, 4>;  //!< 128 x 128 x 32, w64x64, s4
using GemmAutoSmallPolicy = GemmPolicy<64, 64, 64, 32, 32, 3>;     //!< 64 x 64 x 64, w32x32, s3
//! GemmAuto's Large tile on the Hopper tier (GemmSm90's default: 128 x 256 x 64, 4 stages,
//! clusters of 2).
using GemmAutoHopperLargeConfig = DefaultHopperTileConfig<4>;
//! GemmAuto's Hopper-tier tiles for problems too small for 128 x 256 tiles (one consumer
//! warpgroup each, no cluster; deep rings, since each k-tile is little work).
using GemmAutoHopper64x128Config = HopperTileConfig<64, 128, 6, 1>;  //!< 64 x 128 x 64, s6
using GemmAutoHopper64x64Config = HopperTileConfig<64, 64, 8, 1>;    //!< 64 x 64 x 64, s8

namespace detail {
//! The GemmMultistage of a GemmAuto candidate policy: its tile, its stages.
template <class ElementAB, class ElementD, Layout LayoutA, Layout LayoutB, class OutputOp,
          class Policy, bool SplitK = false, bool AnyAlignment = false>
using GemmOfPolicy = GemmMultistage<ElementAB, ElementD, LayoutA, LayoutB, Policy::kStages,
                                    OutputOp, typename Policy::Config, SplitK, AnyAlignment>;
}  // namespace detail

//! Which of GemmAuto's tile configurations runs a problem, and with how many K slices.
struct GemmAutoConfig {
  //! kLarge runs on either tier (the Hopper tier where the device and the arguments allow);
  //! kMedium and kSmall on the Ampere tier; kHopper64x128 and kHopper64x64 on the Hopper tier.
  enum class Tile { kLarge, kMedium, kSmall, kHopper64x128, kHopper64x64 };
  Tile tile = Tile::kLarge;
  int split_k = 1;  //!< K slices that run (1: no split-K); only the Small tile splits

  constexpr bool operator==(const GemmAutoConfig& o) const {
    return tile == o.tile && split_k == o.split_k;
  }
  constexpr bool operator!=(const GemmAutoConfig& o) const { return !(*this == o); }

  //! Whether the tile exists only on the Hopper tier.
  constexpr bool hopper_only() const { return tile == Tile::kHopper64x128 || tile == Tile::kHopper64x64; }

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
  //! "128x256x64/w64x64/s3" or "64x64x64/w32x32/s3,splitK=4".
  std::string name() const {
    return tile_name() + (split_k > 1 ? ",splitK=" + std::to_string(split_k) : std::string());
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
  //! "About one full wave": a tile configuration is used when its thread blocks fill at least
  //! this fraction of the resident slots. Below 1 so that 128 Large tiles on 132 SMs (2048^3,
  //! 1024 x 4096 x 4096 on an H200: the Large tile is the fastest measured there) count as one.
  static constexpr double kMinWaveFraction = 0.9;
  //! The Medium tile's own threshold, lower: 128 x 14336 x 4096 is 112 Medium tiles (0.85 of an
  //! H100's 132 SMs) and ran at 0.81 x cuBLAS with Medium against 0.59-0.74 with the Small tile
  //! at any split (entry 20). Medium also needs M >= 128: with fewer rows most of its MMAs are
  //! wasted (16 and 64 x 14336 x 4096 ran at 0.48 and 0.53 with Medium, 0.80 and 0.94 with Small).
  static constexpr double kMinMediumWaveFraction = 0.8;
  //! The Large tile is used only if its waves are at least this full on average (tiles / SMs
  //! over the whole number of waves); otherwise the Medium tile, two blocks per SM, is used.
  //! Measured on an H200: 1024 x 14336 x 4096 (448 Large tiles, 3.39 waves, 85%) ran at 398 to
  //! 403 TFLOP/s with the Large tile and 410 to 422 with the Medium one, while at 4096^3 (3.88
  //! waves, 97%) Large ran 447 against 405.
  static constexpr double kMinLargeWaveEfficiency = 0.9;
  //! Resident Small blocks per SM (64 x 64 x 64, 3 stages: 4 on an H200, by registers and
  //! shared memory); the Large and Medium tiles are counted as one block per SM.
  static constexpr int kSmallBlocksPerSm = 4;
  //! Every K slice keeps at least this many k-tiles of the Small tile (16 x 64 = 1024 of K), so
  //! that the pipeline's prologue and the f32 workspace traffic stay small next to the work.
  //! (With 8, 1024^3 split in two and ran at 117 TFLOP/s against 152 unsplit on an H200.)
  static constexpr int kMinKTilesPerSlice = 16;
  //! The largest split factor (the reduction reads every slice once).
  static constexpr int kMaxSplitK = 16;
  //! On the Hopper tier, the Large tile from this fraction of the SMs on: its 128 x 256 tiles
  //! with two consumer warpgroups keep the tensor cores far busier than 64-row tiles. 1000 x
  //! 3000 x 4104 (96 Large tiles, 0.73 of an H100) ran at 0.81-0.93 x cuBLAS with them against
  //! 0.34-0.40 with 384 tiles of 64 x 128; 128 x 14336 x 4096 (56, 0.42) at 0.90 against 0.96
  //! (entry 21).
  static constexpr double kMinHopperLargeFraction = 0.5;
  //! On the Hopper tier, a wave of the 64 x 128 tile is this fraction of the SMs (one persistent
  //! block per SM): 16 x 14336 x 4096 has 112 tiles (0.85 of an H100) and ran at 0.98 x cuBLAS
  //! with them against 0.75 with 224 tiles of 64 x 64 (entry 21).
  static constexpr double kMinHopperWaveFraction = 0.8;
  //! On the Hopper tier, the shortest K for which a problem whose 64 x 64 tiles are fewer than
  //! half the SMs splits K on the Ampere tier's Small tile instead (with M <= 32, see the rule).
  static constexpr std::int64_t kMinSplitKOnHopper = 8192;

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
      if (m > 64 && large_tiles >= kMinHopperLargeFraction * sms) return GemmAutoConfig{Tile::kLarge, 1};
      if (hopper_tiles<GemmAutoHopper64x128Config>(m, n, batch) >= hopper_wave)
        return GemmAutoConfig{Tile::kHopper64x128, 1};
      const bool split_pays = m <= 32 && k >= kMinSplitKOnHopper &&
                              hopper_tiles<GemmAutoHopper64x64Config>(m, n, batch) < 0.5 * sms;
      if (!split_pays) return GemmAutoConfig{Tile::kHopper64x64, 1};
      return select(m, n, k, batch, sm_count, GemmTier::kAmpere);
    }
    const std::int64_t large_tiles = tiles<GemmAutoLargePolicy>(m, n, batch);
    const bool medium_fills = m >= GemmAutoMediumPolicy::Tile::kM &&
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

//! A GEMM that picks its tile configuration and split-K factor per problem
//! (GemmAutoHeuristic), from three GemmMultistage instantiations.
//!
//! \tparam ElementAB  `__half` or `__nv_bfloat16` (A and B)
//! \tparam ElementD   `__half`, `__nv_bfloat16` or `float` (C and D)
//! \tparam LayoutA    layout of A (M x K)
//! \tparam LayoutB    layout of B (K x N)
//! \tparam OutputOp   the output operator (output_ops.cuh), as for GemmMultistage
//! \tparam AnyAlignment  compile Medium's narrow kernel in, for arguments that are not 16-byte
//!                    aligned (as GemmMultistage's `AnyAlignment`)
//!
//! The arguments are GemmMultistage's; `args.split_k` is ignored (the heuristic sets it), and
//! `args.workspace` / `args.workspace_bytes` must hold `workspace_size(args)` bytes, which is 0
//! unless the heuristic splits K. Only the Small configuration is compiled with split-K.
//!
//! \code
//! using Gemm = tilepipe::GemmAuto<__half, __half, tilepipe::Layout::kRowMajor,
//!                                 tilepipe::Layout::kColumnMajor>;
//! Gemm::Arguments args;  // m, n, k, a, b, d, ...
//! std::size_t bytes = Gemm::workspace_size(args);   // for the current device
//! void* ws = nullptr;
//! if (bytes) cudaMalloc(&ws, bytes);
//! args.workspace = ws; args.workspace_bytes = bytes;
//! tilepipe::Status s = Gemm::run(args, stream);
//! \endcode
template <class ElementAB, class ElementD, Layout LayoutA, Layout LayoutB, class OutputOp = Identity,
          bool AnyAlignment = true>
class GemmAuto {
 public:
  using Arguments = GemmArguments<ElementAB, ElementD, OutputOp>;
  using Config = GemmAutoConfig;
  using Heuristic = GemmAutoHeuristic;
  using Large = detail::GemmOfPolicy<ElementAB, ElementD, LayoutA, LayoutB, OutputOp, GemmAutoLargePolicy>;
  using Medium = detail::GemmOfPolicy<ElementAB, ElementD, LayoutA, LayoutB, OutputOp, GemmAutoMediumPolicy,
                                      /*SplitK=*/false, AnyAlignment>;
  using Small = detail::GemmOfPolicy<ElementAB, ElementD, LayoutA, LayoutB, OutputOp, GemmAutoSmallPolicy,
                                     /*SplitK=*/true>;
  //! What the Large configuration runs on a device that runs the Hopper tier.
  using Hopper = GemmSm90<ElementAB, ElementD, LayoutA, LayoutB, GemmAutoHopperLargeConfig::kStages,
                          OutputOp, GemmAutoHopperLargeConfig>;
  //! The Hopper tier's tiles for smaller problems.
  using Hopper64x128 = GemmSm90<ElementAB, ElementD, LayoutA, LayoutB, GemmAutoHopper64x128Config::kStages,
                                OutputOp, GemmAutoHopper64x128Config>;
  using Hopper64x64 = GemmSm90<ElementAB, ElementD, LayoutA, LayoutB, GemmAutoHopper64x64Config::kStages,
                               OutputOp, GemmAutoHopper64x64Config>;
  static constexpr Layout kLayoutA = LayoutA;
  static constexpr Layout kLayoutB = LayoutB;

  //! The tier `run(args)` takes on the current device (for arguments `can_implement` accepts).
  static GemmTier tier(const Arguments& args) {
    int sms = 0;
    if (!current_sm_count(&sms)) return GemmTier::kAmpere;
    const Arguments a = with_split(args, 1);
    switch (select(args, sms).tile) {
      case Config::Tile::kLarge: return takes<Hopper>(a) ? GemmTier::kHopper : GemmTier::kAmpere;
      case Config::Tile::kHopper64x128: return takes<Hopper64x128>(a) ? GemmTier::kHopper : GemmTier::kAmpere;
      case Config::Tile::kHopper64x64: return takes<Hopper64x64>(a) ? GemmTier::kHopper : GemmTier::kAmpere;
      default: return GemmTier::kAmpere;
    }
  }

  //! The configuration `run` uses for `args` on a GPU with `sm_count` SMs where the Large
  //! configuration runs on tier `large_tier` (no device needed): the heuristic's, or Medium for
  //! arguments that are not 16-byte aligned.
  static Config select(const Arguments& args, int sm_count, GemmTier large_tier) {
    if (AnyAlignment && !Medium::vector_aligned(args)) return Config{Config::Tile::kMedium, 1};
    return Heuristic::select(args.m, args.n, args.k, args.batch_count, sm_count, large_tier);
  }
  //! The same, with the Large configuration's tier on the current device for `args`.
  static Config select(const Arguments& args, int sm_count) {
    return select(args, sm_count, large_tier(args));
  }
  //! The tier the Large configuration takes for `args` on the current device.
  static GemmTier large_tier(const Arguments& args) {
    return Hopper::can_implement(with_split(args, 1)) ? GemmTier::kHopper : GemmTier::kAmpere;
  }

  //! Bytes of workspace `run` needs for `args` on a GPU with `sm_count` SMs.
  static std::size_t workspace_size(const Arguments& args, int sm_count) {
    return workspace_size(args, select(args, sm_count));
  }
  //! Bytes of workspace `run` needs for `args` on the current device (0 if it cannot be queried:
  //! `run` then reports the error).
  static std::size_t workspace_size(const Arguments& args) {
    int sms = 0;
    if (!current_sm_count(&sms)) return 0;
    return workspace_size(args, sms);
  }
  //! Bytes of workspace configuration `config` needs for `args`.
  static std::size_t workspace_size(const Arguments& args, const Config& config) {
    if (config.tile != Config::Tile::kSmall) return 0;
    return Small::workspace_size(with_split(args, config.split_k));
  }

  //! Checks `args` for the configuration chosen on the current device (see GemmMultistage).
  static Status can_implement(const Arguments& args) {
    int sms = 0;
    Status s = current_sm_count(&sms);
    if (!s) return s;
    return can_implement(args, select(args, sms));
  }
  //! Checks `args` for configuration `config`. A Hopper-only tile the Hopper tier cannot run
  //! here is checked as what `run` then runs: the Small tile without split-K.
  static Status can_implement(const Arguments& args, const Config& config) {
    if (config.tile != Config::Tile::kSmall && config.split_k != 1) return invalid_config(config);
    const Arguments a = with_split(args, config.split_k);
    switch (config.tile) {
      case Config::Tile::kLarge: return Large::can_implement(a);
      case Config::Tile::kMedium: return Medium::can_implement(a);
      case Config::Tile::kSmall: return Small::can_implement(a);
      case Config::Tile::kHopper64x128:
        return Hopper64x128::can_implement(a) ? Status::success() : Small::can_implement(a);
      case Config::Tile::kHopper64x64:
        return Hopper64x64::can_implement(a) ? Status::success() : Small::can_implement(a);
    }
    return invalid_config(config);
  }

  //! Chooses the configuration for the current device and runs it on `stream`. The choice needs
  //! only whether the Hopper tier takes the arguments; the tensor maps are encoded (once) only
  //! when a Hopper-tier tile runs.
  static Status run(const Arguments& args, cudaStream_t stream = nullptr) {
    int sms = 0;
    Status s = current_sm_count(&sms);
    if (!s) return s;
    return run(args, select(args, sms), stream);
  }
  //! Runs configuration `config` (e.g. one chosen earlier by `select`) on `stream`. Where the
  //! Hopper tier cannot run it (another GPU, or TMA cannot address the operands), the Large tile
  //! runs on the Ampere tier, and the Hopper-only tiles run as the Small tile without split-K.
  static Status run(const Arguments& args, const Config& config, cudaStream_t stream = nullptr) {
    if (config.tile != Config::Tile::kSmall && config.split_k != 1) return invalid_config(config);
    const Arguments a = with_split(args, config.split_k);
    switch (config.tile) {
      case Config::Tile::kLarge: return run_on_hopper<Hopper, Large>(a, stream);
      case Config::Tile::kMedium: return Medium::run(a, stream);
      case Config::Tile::kSmall: return Small::run(a, stream);
      case Config::Tile::kHopper64x128: return run_on_hopper<Hopper64x128, Small>(a, stream);
      case Config::Tile::kHopper64x64: return run_on_hopper<Hopper64x64, Small>(a, stream);
    }
    return invalid_config(config);
  }

  //! The current device's SM count.
  static Status current_sm_count(int* sm_count) {
    int device = 0;
    cudaError_t e = cudaGetDevice(&device);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(sm_count, cudaDevAttrMultiProcessorCount, device);
    if (e != cudaSuccess)
      return Status::error(Status::Code::kCudaError,
                           std::string("GemmAuto: querying the SM count failed: ") + cudaGetErrorString(e));
    return Status::success();
  }

 private:
  // Whether the Hopper tier's GEMM `H` runs `args` here (its checks, then its tensor maps).
  template <class H>
  static bool takes(const Arguments& args, typename H::Params* params = nullptr) {
    typename H::Params p{};
    if (!H::can_implement(args) || !H::make_params(p, args)) return false;
    if (params) *params = p;
    return true;
  }
  // `H` where the Hopper tier takes `args` (one tensor-map encode), else `Fallback`.
  template <class H, class Fallback>
  static Status run_on_hopper(const Arguments& args, cudaStream_t stream) {
    typename H::Params p{};
    if (takes<H>(args, &p)) return H::launch(p, stream);
    return Fallback::run(args, stream);
  }

  static Arguments with_split(const Arguments& args, int split_k) {
    Arguments a = args;
    a.split_k = split_k;
    return a;
  }
  static Status invalid_config(const Config& config) {
    return Status::error(Status::Code::kInvalidArgument,
                         "GemmAuto: configuration " + config.name() +
                             " is not one GemmAuto runs (only the Small tile splits K)");
  }
};

}  // namespace tilepipe
