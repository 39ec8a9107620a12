#pragma once
//! \file
//! TileConfig and GemmPolicy: the tuning knobs of a multistage GEMM in one place. A TileConfig is
//! the block and warp tiles and the math (numeric/math.cuh); a GemmPolicy adds the stage count.
//! The provided GEMMs take a TileConfig and their own `Stages` argument, so a user writes the
//! stage count once.

#include <type_traits>

#include "../layout/tile_shape.cuh"
#include "../numeric/math.cuh"

namespace tilepipe {

template <int TileM, int TileN, int TileK, int WarpM, int WarpN, int Stages, class Math>
struct GemmPolicy;

//! Block tile, warp tile and math of a multistage GEMM, without a stage count.
//!
//! \tparam TileM, TileN, TileK  the block's tile of D (TileM x TileN) and its k-tile depth
//! \tparam WarpM, WarpN         each warp's tile of D; the block has
//!                              (TileM / WarpM) x (TileN / WarpN) warps
//! \tparam MathT                how the warps multiply (numeric/math.cuh): `MathDefault`, or
//!                              e.g. `MathF16Accumulate` for f16 accumulators, `MathTF32` for f32
//!                              inputs on the tensor cores, `MathSimtF32` for f32 inputs in full
//!                              precision on the CUDA cores
template <int TileM, int TileN, int TileK, int WarpM, int WarpN, class MathT = MathDefault>
struct TileConfig {
  static_assert(
      is_math_v<MathT>,
      "TileConfig: the last argument must be a math tag of numeric/math.cuh (MathDefault, "
      "MathF16Accumulate, MathTF32, MathSimtF32)");
  static_assert(
      TileK % MathT::kKBlock == 0,
      "TileConfig: TileK must be a multiple of the math's k-block (MathT::kKBlock): 16 for "
      "mma.sync m16n8k16 (MathDefault, MathF16Accumulate), 8 for m16n8k8 (MathTF32), 4 "
      "for the SIMT k-block (MathSimtF32)");
  static_assert(WarpM % 16 == 0 && WarpN % 16 == 0,
                "TileConfig: the warp tile must be a multiple of 16 in M and in N");
  static_assert(TileM % WarpM == 0 && TileN % WarpN == 0,
                "TileConfig: the warp tile must divide the block tile");

  using Math = MathT;
  using Tile = GemmShape<TileM, TileN, TileK>;
  using Warp = GemmShape<WarpM, WarpN, TileK>;
  static constexpr int kWarpsM = TileM / WarpM;
  static constexpr int kWarpsN = TileN / WarpN;
  static constexpr int kThreads = 32 * kWarpsM * kWarpsN;

  //! This tile with `Stages` stages.
  template <int Stages>
  using WithStages = GemmPolicy<TileM, TileN, TileK, WarpM, WarpN, Stages, MathT>;
  //! This tile with another math.
  template <class OtherMath>
  using WithMath = TileConfig<TileM, TileN, TileK, WarpM, WarpN, OtherMath>;
};

//! Block tile, warp tile, stage count and math of a multistage mainloop (what
//! `MultistageMainloop` takes): a TileConfig plus `Stages`, 2..6 being the useful range.
template <int TileM, int TileN, int TileK, int WarpM, int WarpN, int Stages,
          class MathT = MathDefault>
struct GemmPolicy : TileConfig<TileM, TileN, TileK, WarpM, WarpN, MathT> {
  static_assert(Stages >= 2, "GemmPolicy: a multistage pipeline needs at least 2 stages");
  using Config = TileConfig<TileM, TileN, TileK, WarpM, WarpN, MathT>;
  static constexpr int kStages = Stages;
};

//! How the Hopper tier's consumer warpgroups share the work (GemmKernelSm90).
enum class HopperSchedule {
  //! `TileM / 64` consumers multiply one tile together, 64 rows each, then all store it: the
  //! tensor cores wait while they convert.
  kCooperative,
  //! Two consumers, each with whole `64 x TileN` tiles in turn: while one stores its tile, the
  //! other multiplies the next. An order barrier passes the mainloop from one to the other.
  kPingPong,
  //! Two consumers share each `64 x TileN` tile by k-tiles, alternately (consumer c takes c,
  //! c + 2, ...); one hands its sums to the other through shared memory, which stores the tile.
  //! Only where the consumers fold each k-tile (GemmFp8Sm90, tensorwise and row-wise): there one
  //! warpgroup's fold and its wgmmas' latency, not the tensor cores, set a small tile's pace.
  kKInterleaved,
  //! Two consumers share each `64 x TileN` tile by columns, `TileN / 2` each, and each stores its
  //! half: one wave of wide tiles where M is one 64-row tile, with the work per k-tile of two
  //! narrow ones but half the waves. Only where the consumers fold each k-tile (GemmFp8Sm90).
  kSplitColumns,
};

//! Tile and pipeline depth of the Hopper tier.
//!
//! \tparam TileM   rows of D per tile: 64 per consumer warpgroup (64 or 128: one or two)
//! \tparam TileN   columns of D per tile: 64, 128, 192 (fp8 only) or 256 (one wgmma's N)
//! \tparam Stages  ring slots, each a `TileM x TileK` A tile and a `TileK x TileN` B tile, TileK
//!                 one 128-byte swizzle row of the element (WarpSpecializedMainloop::kTileK)
//! \tparam ClusterM  CTAs per cluster along M (1, 2 or 4): the cluster's tiles share their B
//!                   tile, which each CTA copies a part of and multicasts (TmaTileLoader)
//! \tparam Schedule  cooperative (the consumers share each tile), ping-pong (two consumers
//!                   take `64 x TileN` tiles in turn), k-interleaved (two share each tile's
//!                   k-tiles) or split columns (two take half its columns each); TileM must be 64
//!                   for the last three
template <int TileM, int TileN, int Stages, int ClusterM = 1,
          HopperSchedule Schedule = HopperSchedule::kCooperative>
struct HopperTileConfig {
  static_assert(TileM == 64 || TileM == 128,
                "HopperTileConfig: TileM must be 64 or 128 (one or two consumer warpgroups of 64 "
                "rows)");
  static_assert(Schedule == HopperSchedule::kCooperative || TileM == 64,
                "HopperTileConfig: a ping-pong, k-interleaved or split-column tile is 64 rows (one "
                "warpgroup's)");
  static_assert(Schedule != HopperSchedule::kSplitColumns || TileN == 256,
                "HopperTileConfig: a split-column tile is 256 wide (two consumers of 128 columns; "
                "the epilogue stores whole 64-column chunks of 16-bit D)");
  static_assert(TileN == 64 || TileN == 128 || TileN == 192 || TileN == 256,
                "HopperTileConfig: TileN must be 64, 128, 192 or 256 (the N of one wgmma)");
  static_assert(Stages >= 2, "HopperTileConfig: the ring needs at least 2 stages");
  static_assert(ClusterM == 1 || ClusterM == 2 || ClusterM == 4,
                "HopperTileConfig: ClusterM must be 1, 2 or 4");
  static constexpr int kM = TileM;
  static constexpr int kN = TileN;
  //! k per slot of 16-bit A and B (a 128-byte row); for the element's own, use the mainloop's
  //! `kTileK` (32 for float), as all k arithmetic does.
  static constexpr int kK = 64;
  static constexpr int kStages = Stages;
  static constexpr HopperSchedule kSchedule = Schedule;
  static constexpr bool kPingPong = Schedule == HopperSchedule::kPingPong;
  static constexpr bool kKInterleaved = Schedule == HopperSchedule::kKInterleaved;
  static constexpr bool kSplitColumns = Schedule == HopperSchedule::kSplitColumns;
  //! Consumer warpgroups in the block, and how many parts of each tile they multiply: 64-row
  //! parts, or (split columns) `64 x kConsumerN` ones (k-interleaved: both the one, each its
  //! k-tiles; it is summed and stored as one).
  static constexpr int kConsumers = kPingPong || kKInterleaved || kSplitColumns ? 2 : TileM / 64;
  static constexpr int kConsumersPerTile = kPingPong || kKInterleaved ? 1 : kConsumers;
  //! Columns of a consumer's part (its wgmmas' N and its accumulators').
  static constexpr int kConsumerN = kSplitColumns ? TileN / 2 : TileN;
  static constexpr int kClusterM = ClusterM;
  //! One producer warpgroup and the consumers.
  static constexpr int kThreads = 128 * (1 + kConsumers);
};

namespace detail {
//! Whether `T` carries a stage count (a GemmPolicy rather than a TileConfig).
template <class T, class = void>
struct HasStages : std::false_type {};
template <class T>
struct HasStages<T, std::void_t<decltype(T::kStages)>> : std::true_type {};
}  // namespace detail

}  // namespace tilepipe
