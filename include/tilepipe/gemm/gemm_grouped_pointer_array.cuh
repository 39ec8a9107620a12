#pragma once
//! \file
//! GemmGroupedPointerArraySm90: the pointer-array form of the grouped GEMM (gemm_grouped.cuh):
//! `G` problems `D_g = output_op(alpha * A_g * B_g)` of one N and K whose A_g, B_g and D_g are
//! matrices of their own, with pointers, row counts `M_g` and leading dimensions in device arrays
//! that the host never reads. Two launches in one stream, both capturable in a CUDA graph:
//! - a preparing kernel (one block, a thread per group) checks each group, writes the group's
//!   row count (0 for a skipped group) and, from two tensor maps encoded on the host for the
//!   shared N and K, the group's own maps of A_g and B_g (`tensormap.replace` of the address, the
//!   rows and the strides, then a release fence) into the caller's workspace
//!   (pointer_array_host.cuh, shared with the FP8 form, gemm_grouped_pointer_array_fp8.cuh);
//! - the persistent GemmKernelSm90 walks every group's tiles (GroupedScheduler's table over those
//!   row counts); its producer acquires a group's maps where its group changes and copies A_g's
//!   and B_g's tiles through them, and each tile of D_g is written from the registers, rows past
//!   `M_g` and columns past N skipped.
//!
//! Safety with device-side sizes: the kernels cannot know how large the allocations are, so the
//! pointers, `M_g` and leading dimensions must describe real matrices. What they can tell is bad
//! is skipped and reported: a group with `M_g < 0` or `M_g > m`, or (with `M_g > 0`) a null or
//! misaligned pointer (A_g, B_g: 16 bytes, TMA's; D_g: its element's) or a leading dimension
//! below its line or past TMA's 2^40-byte stride (A_g's and B_g's: multiples of 16 bytes) has
//! no tile computed and its D_g is not written; `*status` (optional) is then 1 + the first such
//! group, else 0. With K = 0, A and B are not read (D_g = output_op(0)).

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../epilogue/output_ops.cuh"
#include "../epilogue/warpgroup_epilogue.cuh"
#include "../layout/tile_raster.cuh"
#include "../mainloop/warp_specialized_mainloop.cuh"
#include "../numeric/element_traits.cuh"
#include "../status.cuh"
#include "grouped_scheduler.cuh"
#include "kernel_sm90.cuh"
#include "launch.cuh"
#include "pointer_array_host.cuh"

namespace tilepipe {

//! The arguments of GemmGroupedPointerArraySm90 (pointer_array_host.cuh's members, and alpha).
template <class ElementAB, class ElementD, class OutputOp = Identity>
struct GemmGroupedPointerArrayArguments
    : GroupedPointerArrayOperands<ElementAB, ElementD, OutputOp> {
  float alpha = 1.0f;
};

//! \tparam ElementAB  `__half` or `__nv_bfloat16`
//! \tparam ElementD   `__half`, `__nv_bfloat16` or `float`
//! \tparam LayoutB    kColumnMajor: each B_g is `[N, K]`, K contiguous; kRowMajor: `[K, N]`
//! \tparam OutputOp   as GemmSm90's (output_ops.cuh)
//! \tparam Config     a HopperTileConfig without a cluster (GemmGroupedSm90's)
template <class ElementAB, class ElementD, Layout LayoutB = Layout::kColumnMajor,
          class OutputOp = Identity, class Config = HopperTileConfig<128, 256, 4, 1>>
class GemmGroupedPointerArraySm90 {
  static_assert(std::is_same_v<ElementAB, __half> || std::is_same_v<ElementAB, __nv_bfloat16>,
                "GemmGroupedPointerArraySm90: A and B must be __half or __nv_bfloat16");
  static_assert(is_supported_element_v<ElementD>,
                "GemmGroupedPointerArraySm90: D must be __half, __nv_bfloat16 or float");
  static_assert(Config::kClusterM == 1,
                "GemmGroupedPointerArraySm90: the groups' B are apart, so a cluster's blocks "
                "could not share one B tile; use a Config without a cluster");

 public:
  using Arguments = GemmGroupedPointerArrayArguments<ElementAB, ElementD, OutputOp>;
  using Mainloop = WarpSpecializedMainloop<ElementAB, Layout::kRowMajor, LayoutB, Config>;
  using Epilogue = WarpgroupEpilogue<ElementD, typename Mainloop::Accumulators, OutputOp>;
  //! The most groups: the preparing kernel's block, and the scheduler's table (as GemmGroupedSm90).
  static constexpr int kMaxGroups = 256;
  using Scheduler =
      GroupedPointerArrays<ElementD, Config::kM, Config::kN, 1, GroupedRaster<8>, kMaxGroups>;
  using Kernel = GemmKernelSm90<Mainloop, Epilogue, GroupedRaster<8>, void, Scheduler>;
  using Params = typename Kernel::Params;
  using Host = detail::PointerArrayHost<Kernel, typename Mainloop::Loader, ElementAB, ElementD,
                                        Config::kM, Config::kN, kMaxGroups>;
  using PrepareParams = typename Host::PrepareParams;

  //! Bytes of workspace for `groups` groups: `2 G` tensor maps, then G row counts.
  static constexpr std::size_t workspace_bytes(int groups) { return Host::workspace_bytes(groups); }

  static bool available() { return hopper_tier_on_current_device(); }

  //! The device-free checks of what the host holds; each failure names the argument.
  static Status check_arguments(const Arguments& a) { return Host::check(kName, a); }

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
    return Host::make_params(kName, prep, p, a, LayoutB == Layout::kColumnMajor, a.alpha);
  }

 private:
  static constexpr const char* kName = "GemmGroupedPointerArraySm90";
};

}  // namespace tilepipe
