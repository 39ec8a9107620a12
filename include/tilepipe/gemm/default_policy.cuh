#pragma once
//! \file
//! DefaultTileConfig: the tile configuration GemmMultistage uses unless told otherwise, for its
//! stage count; DefaultGemmPolicy is the same with the stages, for a mainloop of one's own. A light
//! header (no CUDA includes) so that host code can name the default without the GEMM itself.

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
//! sm_90-class shared memory (where it was measured faster, docs/performance-log.md entry 11), unless
//! TILEPIPE_PORTABLE_DEFAULT_POLICY is defined.
template <int Stages>
inline constexpr bool kUseDeepDefault =
#if defined(TILEPIPE_PORTABLE_DEFAULT_POLICY)
    false;
#else
    kMinSmemBytesPerBlockOfTargets >= 227 * 1024 &&
    Stages * (DeepDefaultTile::Tile::kM + DeepDefaultTile::Tile::kN) * DeepDefaultTile::Tile::kK * 2 <=
        kMinSmemBytesPerBlockOfTargets;  // 16-bit A and B tiles per stage
#endif

}  // namespace detail

//! The tile configuration GemmMultistage uses unless told otherwise, for a stage count.
//!
//! - Built only for targets with sm_90-class shared memory (227 KB per block: sm_90, sm_100),
//!   at up to 4 stages: 256 x 128 x 64 with eight 64 x 64 warp tiles. On an H200 it runs
//!   3-4% faster than the portable tile at 4096^3 and 8192^3 (docs/performance-log.md, entry 11).
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
//! 64 fragment floats: ptxas (nvcc 13.0) gives its kernels 234 to 255 registers, no spills, in
//! every layout at 3 and 4 stages for sm_80 and sm_90a (the codegen test checks one of them).
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

}  // namespace tilepipe
