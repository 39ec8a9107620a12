#pragma once
//! \file
//! Every tile configuration the provided GEMMs use, in one place: the Ampere tier's default
//! (DefaultTileConfig, DefaultF32TileConfig), the Hopper tier's (DefaultHopperTileConfig),
//! GemmAuto's candidates and GemmMixedInput's. The tile types themselves (TileConfig, GemmPolicy,
//! HopperTileConfig) are in mainloop/gemm_policy.cuh. A light header (no CUDA includes), so that
//! host code can name a configuration without the GEMM itself.

#include <type_traits>

#include "../detail/smem_capacity.cuh"
#include "../mainloop/gemm_policy.cuh"

namespace tilepipe {
namespace detail {

//! 256 x 128 x 32, eight 64 x 64 warp tiles: its ring fits every supported target at up to six
//! stages (144 KB); 24 KB a stage.
using PortableDefaultTile = TileConfig<256, 128, 32, 64, 64>;

//! 256 x 128 x 64, the same warps with a 64-deep k-tile: half the barriers and k-tile
//! switches per mma. 48 KB a stage, so 4 stages (192 KB) fit only sm_90-class shared memory.
using DeepDefaultTile = TileConfig<256, 128, 64, 64, 64>;

//! The deep tile when its ring fits every target of the translation unit and every target has
//! sm_90-class shared memory (where it runs faster: half the barriers per mma), unless
//! TILEPIPE_PORTABLE_DEFAULT_POLICY is defined.
template <int Stages>
inline constexpr bool kUseDeepDefault =
#if defined(TILEPIPE_PORTABLE_DEFAULT_POLICY)
    false;
#else
    kMinSmemBytesPerBlockOfTargets >= 227 * 1024 &&
    Stages * (DeepDefaultTile::Tile::kM + DeepDefaultTile::Tile::kN) * DeepDefaultTile::Tile::kK *
            2 <=
        kMinSmemBytesPerBlockOfTargets;  // 16-bit A and B tiles per stage
#endif

}  // namespace detail

//! The tile configuration GemmMultistage uses unless told otherwise, for a stage count.
//!
//! - Built only for targets with sm_90-class shared memory (227 KB per block: sm_90, sm_100),
//!   at up to 4 stages: 256 x 128 x 64 with eight 64 x 64 warp tiles, faster there than the
//!   portable tile on large problems (docs/performance.md).
//! - Otherwise (any sm_80/sm_86/sm_89/sm_120 target, or 5 and 6 stages): 256 x 128 x 32 with
//!   the same warps, whose ring fits every supported target.
//!
//! The choice follows nvcc's `__CUDA_ARCH_LIST__` (the targets of the translation unit), so a
//! build for `sm_80;sm_90` gets the portable tile everywhere. Define
//! TILEPIPE_PORTABLE_DEFAULT_POLICY to always get the portable tile (e.g. to link translation
//! units built for different targets that must agree on the type). Problems with few output
//! tiles (M or N of a few hundred) run faster with a smaller tile, e.g.
//! `TileConfig<64, 64, 64, 32, 32>`, or with GemmAuto (gemm_heuristic.cuh).
template <int Stages>
using DefaultTileConfig = std::conditional_t<detail::kUseDeepDefault<Stages>,
                                             detail::DeepDefaultTile, detail::PortableDefaultTile>;

//! A tile configuration for f32 A and B under `Math` (MathTF32 or MathSimtF32): 128 x 128 x 32
//! with eight 64 x 32 warp tiles, 32 KB a stage. f32 elements take twice the bytes of f16, so
//! DefaultTileConfig's 256 x 128 x 32 would need 192 KB at 4 stages, more than an A100's 163 KB;
//! and 64 x 64 warp tiles, whose 32-bit fragment loads need more address registers than ldmatrix,
//! spill. 3 stages (96 KB) fit every supported target; 4 stages (128 KB) fit sm_80 and sm_90 but
//! not sm_86, sm_89 or sm_120. Under MathSimtF32 a lane holds 64 accumulators and two k-blocks of
//! 64 fragment floats, close to the register limit without spilling (the codegen test checks).
//! \code
//! using Gemm = tilepipe::GemmMultistage<float, float, tilepipe::Layout::kRowMajor,
//!                                       tilepipe::Layout::kColumnMajor, 3, tilepipe::Identity,
//!                                       tilepipe::DefaultF32TileConfig<tilepipe::MathTF32>>;
//! // the same in full f32 on the CUDA cores:
//! using GemmF32 = tilepipe::GemmMultistage<float, float, tilepipe::Layout::kRowMajor,
//!                                          tilepipe::Layout::kColumnMajor, 3, tilepipe::Identity,
//!                                          tilepipe::DefaultF32TileConfig<tilepipe::MathSimtF32>>;
//! \endcode
template <class Math>
using DefaultF32TileConfig = TileConfig<128, 128, 32, 64, 32, Math>;

//! DefaultTileConfig with its stages: the policy of GemmMultistage's default mainloop.
template <int Stages>
using DefaultGemmPolicy = typename DefaultTileConfig<Stages>::template WithStages<Stages>;

//! The Hopper tier's tile for a ring of `Stages` slots: 128 x 256 (two consumer warpgroups of
//! m64n256) where its ring fits an sm_90 block's 227 KB of shared memory (up to 4 stages), else
//! 128 x 128; in clusters of two blocks along M that multicast their shared B tile. A slot of
//! float (tf32) A and B holds 32 of k instead of 64: the same bytes, so the same tiles.
template <int Stages>
using DefaultHopperTileConfig =
    HopperTileConfig<128, (Stages <= 4 ? 256 : 128), Stages, /*ClusterM=*/2>;

//! GemmAuto's candidate tiles on the Ampere tier. Large's 3-stage ring is 144 KB: it fits sm_80,
//! sm_87, sm_90 and datacenter Blackwell, not the 99 KB of sm_86 / sm_89 / sm_120, for which
//! GemmAuto fails to compile with SmemRingBuffer's message (use GemmMultistage there).
using GemmAutoLargePolicy = GemmPolicy<128, 256, 64, 64, 64, 3>;   //!< 128 x 256 x 64, w64x64, s3
using GemmAutoMediumPolicy = GemmPolicy<128, 128, 32, 64, 64, 4>;  //!< 128 x 128 x 32, w64x64, s4
using GemmAutoSmallPolicy = GemmPolicy<64, 64, 64, 32, 32, 3>;     //!< 64 x 64 x 64, w32x32, s3
//! GemmAuto's Large tile on the Hopper tier (GemmSm90's default).
using GemmAutoHopperLargeConfig = DefaultHopperTileConfig<4>;
//! GemmAuto's Hopper-tier tiles for problems too small for 128 x 256 tiles (one consumer
//! warpgroup each, no cluster; deep rings, since each k-tile is little work).
using GemmAutoHopper64x128Config = HopperTileConfig<64, 128, 6, 1>;  //!< 64 x 128 x 64, s6
using GemmAutoHopper64x64Config = HopperTileConfig<64, 64, 8, 1>;    //!< 64 x 64 x 64, s8

//! GemmMixedInput's tile unless told otherwise: 16 x 64 x 128 with four 16 x 16 warp tiles, made
//! for decode (M of 1 to 16 fills the tile's rows; larger M takes more row tiles, which share B
//! through L2). 12.25 KB a stage. The k-tile of 128 reads 128 contiguous bytes of each weight
//! column a stage: whole 128-byte lines of the weights stream faster than halves.
using MixedInputTileConfig = TileConfig<16, 64, 128, 16, 16>;

}  // namespace tilepipe
