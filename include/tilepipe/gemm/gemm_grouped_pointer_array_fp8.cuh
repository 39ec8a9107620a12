#pragma once
//! \file
//! GemmGroupedPointerArrayFp8Sm90: the pointer-array form of the FP8 grouped GEMM
//! (gemm_grouped_fp8.cuh): `G` problems `D_g = output_op(sum over k of scale_a * A_g[i][k] *
//! scale_b * B_g[j][k])` of one N and K whose A_g, B_g, D_g and scale arrays are each the group's
//! own, with pointers, row counts `M_g` and leading dimensions in device arrays that the host
//! never reads. e4m3 or e5m2 A_g `[M_g, K]` and B_g `[N, K]` (K contiguous, as wgmma reads fp8),
//! D_g of bf16, f16 or f32. As GemmGroupedPointerArraySm90: a preparing kernel checks each group
//! and writes its tensor maps, then the persistent kernel walks every group's tiles, each k-tile
//! of 128 folded into f32 on the CUDA cores (Fp8ScaleFold, `kPointers` groups) with the group's
//! scales:
//!
//! | mode | scale_a[g] | scale_b[g] |
//! | --- | --- | --- |
//! | kTensorwise | one float | one float |
//! | kRowwise | `[i]`, i < M_g | `[j]`, j < N |
//! | kBlockwise | `[kb * ld_scale_a[g] + i]` | `[nb * ld_scale_b + kb]` |
//!
//! with `kb = k / 128`, `nb = j / 128`, `ld_scale_a[g] >= M_g` and `ld_scale_b >= ceil(K / 128)`.
//!
//! Safety with device-side sizes: as GemmGroupedPointerArraySm90's, and a group whose scale
//! arrays are null or not 4-byte aligned, or (block-wise) whose `ld_scale_a` is below its rows,
//! is skipped and reported too (block-wise scales are not read, nor checked, with K = 0).

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "../epilogue/output_ops.cuh"
#include "../epilogue/warpgroup_epilogue.cuh"
#include "../layout/tile_raster.cuh"
#include "../mainloop/warp_specialized_mainloop.cuh"
#include "../numeric/element_traits.cuh"
#include "../status.cuh"
#include "fp8_scale_fold.cuh"
#include "gemm_fp8.cuh"
#include "kernel_sm90.cuh"
#include "pointer_array_host.cuh"

namespace tilepipe {

//! The arguments of GemmGroupedPointerArrayFp8Sm90: pointer_array_host.cuh's members, and the
//! scales (the table above; arrays of G on the device).
template <class ElementAB, class ElementD, class OutputOp = Identity>
struct GemmGroupedPointerArrayFp8Arguments
    : GroupedPointerArrayOperands<ElementAB, ElementD, OutputOp> {
  const float* const* scale_a = nullptr;     //!< each group's
  const float* const* scale_b = nullptr;     //!< each group's
  const std::int64_t* ld_scale_a = nullptr;  //!< kBlockwise: each group's (>= M_g), on the device
  std::int64_t ld_scale_b = 0;               //!< kBlockwise: every group's (>= ceil(K / 128))
};

//! \tparam ElementAB  `__nv_fp8_e4m3` or `__nv_fp8_e5m2`
//! \tparam ElementD   `__nv_bfloat16`, `__half` or `float`
//! \tparam Scaling    the scale mode (the table above)
//! \tparam OutputOp   applied after the scales (output_ops.cuh)
//! \tparam Config     as GemmGroupedFp8Sm90's (its defaults, by the same measurements)
template <class ElementAB, class ElementD, Fp8Scaling Scaling, class OutputOp = Identity,
          class Config = std::conditional_t<Scaling == Fp8Scaling::kBlockwise, Fp8WideTileConfig,
                                            Fp8TileConfig>>
class GemmGroupedPointerArrayFp8Sm90 {
  static_assert(is_fp8_element_v<ElementAB>,
                "GemmGroupedPointerArrayFp8Sm90: A and B must be __nv_fp8_e4m3 or __nv_fp8_e5m2");
  static_assert(std::is_same_v<ElementD, __nv_bfloat16> || std::is_same_v<ElementD, __half> ||
                    std::is_same_v<ElementD, float>,
                "GemmGroupedPointerArrayFp8Sm90: D must be __nv_bfloat16, __half or float");
  static_assert(Config::kClusterM == 1 && Config::kM == 128 &&
                    Config::kSchedule == HopperSchedule::kCooperative,
                "GemmGroupedPointerArrayFp8Sm90: the tile must be 128 rows of two cooperative "
                "consumer warpgroups, without a cluster (Fp8TileConfig's or Fp8WideTileConfig's "
                "shape)");
  static_assert(Scaling != Fp8Scaling::kBlockwise || Config::kN % kFp8ScaleBlock == 0,
                "GemmGroupedPointerArrayFp8Sm90: block-wise scales need a tile of whole 128-wide "
                "scale blocks (128 or 256 wide)");

 public:
  using Arguments = GemmGroupedPointerArrayFp8Arguments<ElementAB, ElementD, OutputOp>;
  static constexpr Fp8Scaling kScaling = Scaling;
  using Mainloop =
      WarpSpecializedMainloop<ElementAB, Layout::kRowMajor, Layout::kColumnMajor, Config>;
  using Accumulators = typename Mainloop::Accumulators;
  using Epilogue = WarpgroupEpilogue<ElementD, Accumulators, OutputOp>;
  using Fold = detail::Fp8ScaleFold<Scaling, Accumulators, detail::Fp8ScaleGroups::kPointers>;
  //! The most groups: the preparing kernel's block, and the scheduler's table.
  static constexpr int kMaxGroups = 256;
  using Scheduler =
      GroupedPointerArrays<ElementD, Config::kM, Config::kN, 1, GroupedRaster<8>, kMaxGroups>;
  using Kernel = GemmKernelSm90<Mainloop, Epilogue, GroupedRaster<8>, Fold, Scheduler>;
  using Params = typename Kernel::Params;
  using Host = detail::PointerArrayHost<Kernel, typename Mainloop::Loader, ElementAB, ElementD,
                                        Config::kM, Config::kN, kMaxGroups>;
  using PrepareParams = typename Host::PrepareParams;
  static_assert(Mainloop::kTileK == kFp8ScaleBlock,
                "GemmGroupedPointerArrayFp8Sm90: a k-tile must be one 128-deep block of the "
                "scales");
  static_assert(Kernel::kSharedBytes <= 227 * 1024,
                "GemmGroupedPointerArrayFp8Sm90: this tile and stage count need more shared "
                "memory than an sm_90 block has (227 KB) beside the group table; use fewer "
                "stages");

  //! Bytes of workspace for `groups` groups: `2 G` tensor maps, then G row counts.
  static constexpr std::size_t workspace_bytes(int groups) { return Host::workspace_bytes(groups); }

  static bool available() { return hopper_tier_on_current_device(); }

  //! The device-free checks of what the host holds; each failure names the argument.
  static Status check_arguments(const Arguments& a) {
    Status s = Host::check(kName, a);
    if (!s || a.m == 0 || a.n == 0) return s;  // no element of D: no scale is read
    s = Host::array(kName, "scale_a", a.scale_a, alignof(void*));
    if (s) s = Host::array(kName, "scale_b", a.scale_b, alignof(void*));
    if (!s || Scaling != Fp8Scaling::kBlockwise) return s;
    s = Host::array(kName, "ld_scale_a", a.ld_scale_a, alignof(std::int64_t));
    const std::int64_t k_blocks = (a.k + kFp8ScaleBlock - 1) / kFp8ScaleBlock;
    if (s && a.k > 0 && a.ld_scale_b < k_blocks)
      return Host::invalid(
          kName, "ld_scale_b = " + std::to_string(a.ld_scale_b) +
                     " is smaller than ceil(k / 128) = " + std::to_string(k_blocks) +
                     " (block-wise scale_b holds one scale per 128 x 128 block of B, K-major)");
    return s;
  }

  //! `check_arguments`, then the device: an sm_90 GPU running `sm_90a` code.
  static Status can_implement(const Arguments& a) {
    const Status s = check_arguments(a);
    return s ? detail::hopper_tier_status(kName) : s;
  }

  //! Checks, encodes the template maps and launches both kernels on `stream` (asynchronously, no
  //! host read of the device arrays). Where D has no element (m or n is 0) only the preparing
  //! kernel runs (the groups' checks, the status).
  static Status run(const Arguments& a, cudaStream_t stream = nullptr) {
    Status s = can_implement(a);
    if (!s) return s;
    PrepareParams prep{};
    Params p{};
    s = make_params(prep, p, a);
    if (!s) return s;
    return Host::launch(kName, prep, p, a.m > 0 && a.n > 0, stream);
  }

  //! Both kernels' parameters for arguments that passed `check_arguments`.
  static Status make_params(PrepareParams& prep, Params& p, const Arguments& a) {
    // The preparing kernel checks the scales the fold reads: block-wise none with K = 0.
    const bool reads_scales = Scaling != Fp8Scaling::kBlockwise || a.k > 0;
    if (a.m > 0 && a.n > 0 && reads_scales) {
      prep.scale_a = a.scale_a, prep.scale_b = a.scale_b;
      if (Scaling == Fp8Scaling::kBlockwise) prep.ld_scale_a = a.ld_scale_a;
    }
    p.k_block.a_of = a.scale_a, p.k_block.b_of = a.scale_b;
    p.k_block.ld_a_of = a.ld_scale_a;
    p.k_block.ld_b = a.ld_scale_b;
    p.k_block.n = a.n;
    p.k_block.blocks_n = (a.n + kFp8ScaleBlock - 1) / kFp8ScaleBlock;
    p.k_block.k_blocks = (a.k + kFp8ScaleBlock - 1) / kFp8ScaleBlock;
    const Status s = Host::make_params(kName, prep, p, a, true, 1.0f);
    p.k_block.rows = p.work.sizes;  // the checked row counts
    return s;
  }

 private:
  static constexpr const char* kName = "GemmGroupedPointerArrayFp8Sm90";
};

}  // namespace tilepipe
