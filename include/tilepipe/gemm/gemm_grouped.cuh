#pragma once
//! \file
//! GemmGroupedSm90: grouped GEMM on the Hopper tier, as a mixture-of-experts layer multiplies
//! each expert's tokens by that expert's weights: `G` problems `D_g = output_op(alpha * A_g *
//! B_g)` of one N and K whose row counts are known only on the device (after routing). One
//! persistent launch walks every group's tiles (GroupedScheduler, the scheduler seam of
//! GemmKernelSm90, with its tuned mainloop and epilogue), with no host read of the sizes and no
//! synchronisation, so that a CUDA graph may capture it and replay it with new sizes.
//!
//! Forms (`GroupedForm`), f16 or bf16 A and B, f32 accumulation, D of f16, bf16 or f32:
//! - contiguous (`torch._grouped_mm`'s): A `[m, K]` row-major holds the groups' rows one after
//!   the other, `offs[g]` (int32 on the device) the end row of group g, whose rows are
//!   `offs[g-1] .. offs[g]` (`offs[-1] = 0`); D `[m, N]` row-major likewise;
//! - masked: A `[G, m, K]`, D `[G, m, N]` (`batch_stride_a`, `batch_stride_d` apart), group g's
//!   valid rows the first `counts[g]` (int32 on the device); D's other rows are not written.
//!
//! B is `[G, N, K]` with K contiguous (`LayoutB = kColumnMajor`, a K x N column-major matrix per
//! group: a Linear layer's weight) or `[G, K, N]` with N contiguous (`kRowMajor`), `batch_stride_b`
//! apart. Whatever the sizes hold, only A, B and D as given are read or written: each group's rows
//! are clamped into `[0, m]` (GroupedScheduler), rows of D outside every group are not written,
//! and a size that needed the clamp is reported in `*status` (optional, int32 on the device,
//! written by every launch: 0, or 1 + the first bad group) for the host to read when it likes.

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
#include "grouped_host.cuh"
#include "grouped_scheduler.cuh"
#include "kernel_sm90.cuh"
#include "launch.cuh"

namespace tilepipe {

//! The arguments of a grouped GEMM (GemmGroupedSm90). Leading dimensions and strides in elements.
template <class ElementAB, class ElementD, class OutputOp = Identity>
struct GemmGroupedArguments {
  GroupedForm form = GroupedForm::kContiguous;
  int groups = 0;             //!< G (1 .. GemmGroupedSm90::kMaxGroups)
  int m = 0;                  //!< contiguous: rows of A and D; masked: rows of each group's A and D
  int n = 0, k = 0;           //!< every group's N and K
  const int* offs = nullptr;  //!< contiguous: G end rows, on the device
  const int* counts = nullptr;  //!< masked: G row counts, on the device
  const ElementAB* a = nullptr;
  std::int64_t lda = 0, batch_stride_a = 0;  //!< batch_stride_a: masked only
  const ElementAB* b = nullptr;
  std::int64_t ldb = 0, batch_stride_b = 0;  //!< batch_stride_b: between groups' B (0: one B)
  ElementD* d = nullptr;
  std::int64_t ldd = 0, batch_stride_d = 0;  //!< batch_stride_d: masked only
  float alpha = 1.0f;
  int* status = nullptr;  //!< optional, on the device: 0, or 1 + the first group whose size was bad
  //! Optional: `GemmGroupedSm90::workspace_size(args)` (4) bytes on the device, which `launch`
  //! zeroes on the stream (one workspace per launch in flight). With it the blocks claim tiles on
  //! demand instead of each taking every `blocks`-th, which keeps them all busy where tiles differ
  //! in cost (unbalanced groups: a small group's weights stream from memory, a large one's are
  //! found in L2). Not used with clusters or ping-pong consumers (`Config`), whose deal is fixed.
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  OutputOp output_op{};  //!< applied to every element of D, at its row and column in D's tensor
};

//! \tparam ElementAB  `__half` or `__nv_bfloat16`
//! \tparam ElementD   `__half`, `__nv_bfloat16` or `float`
//! \tparam LayoutB    kColumnMajor: each group's B is `[N, K]`, K contiguous; kRowMajor: `[K, N]`
//! \tparam OutputOp   as GemmSm90's (output_ops.cuh)
//! \tparam Config     a HopperTileConfig: GemmSm90's 128 x 256 tile and 4 stages, without a
//!                    cluster (a cluster's blocks take tiles of one group, so a group of one
//!                    tile row would leave its peer idle)
template <class ElementAB, class ElementD, Layout LayoutB = Layout::kColumnMajor,
          class OutputOp = Identity, class Config = HopperTileConfig<128, 256, 4, 1>>
class GemmGroupedSm90 {
  static_assert(std::is_same_v<ElementAB, __half> || std::is_same_v<ElementAB, __nv_bfloat16>,
                "GemmGroupedSm90: A and B must be __half or __nv_bfloat16");
  static_assert(is_supported_element_v<ElementD>,
                "GemmGroupedSm90: D must be __half, __nv_bfloat16 or float");

 public:
  using Arguments = GemmGroupedArguments<ElementAB, ElementD, OutputOp>;
  using Mainloop = WarpSpecializedMainloop<ElementAB, Layout::kRowMajor, LayoutB, Config>;
  using Epilogue = WarpgroupEpilogue<ElementD, typename Mainloop::Accumulators, OutputOp>;
  //! The most groups: the scheduler's table (4 bytes a group) fills the shared memory that the
  //! default tile's ring and epilogue leave (1 KB).
  static constexpr int kMaxGroups = 256;
  using Scheduler =
      GroupedScheduler<Config::kM, Config::kN, Config::kClusterM, GroupedRaster<8>, kMaxGroups>;
  using Kernel = GemmKernelSm90<Mainloop, Epilogue, GroupedRaster<8>, void, Scheduler>;
  using Params = typename Kernel::Params;
  using Host = detail::GroupedHost<Config::kM, Config::kN, Config::kClusterM, kMaxGroups>;
  static constexpr int kTileK = Mainloop::kTileK;
  static constexpr std::size_t kSharedBytes = Kernel::kSharedBytes;
  static_assert(kSharedBytes <= 227 * 1024,
                "GemmGroupedSm90: this tile and stage count need more shared memory than an sm_90 "
                "block has (227 KB) beside the group table; use fewer stages or a smaller tile");

  static bool available() { return hopper_tier_on_current_device(); }

  //! Bytes of `args.workspace`, for claiming tiles on demand: an int32 counter.
  static std::size_t workspace_size(const Arguments&) { return sizeof(unsigned); }

  //! The device-free checks; each failure names the argument.
  static Status check_arguments(const Arguments& a) {
    Status s = Host::sizes("GemmGroupedSm90", a);
    if (s) s = Host::claims("GemmGroupedSm90", a);
    if (s) s = Host::tiles("GemmGroupedSm90", a);
    if (!s || a.m == 0 || a.n == 0) return s;  // no element of D
    return Host::operands("GemmGroupedSm90", a, sizeof(ElementAB), sizeof(ElementD),
                          LayoutB == Layout::kColumnMajor);
  }

  //! `check_arguments`, then the device: an sm_90 GPU running `sm_90a` code.
  static Status can_implement(const Arguments& a) {
    const Status s = check_arguments(a);
    return s ? detail::hopper_tier_status("GemmGroupedSm90") : s;
  }

  //! Checks, builds the tensor maps and launches on `stream` (asynchronously; no host read of the
  //! sizes). Where D has no element (m or n is 0) only the sizes are checked, into `status`.
  static Status run(const Arguments& a, cudaStream_t stream = nullptr) {
    Status s = can_implement(a);
    if (!s) return s;
    Params p{};
    s = make_params(p, a);
    if (!s) return s;
    return launch(p, a, stream);
  }

  //! The kernel's parameters (tensor maps included) for arguments that passed `check_arguments`.
  static Status make_params(Params& p, const Arguments& a) {
    Host::schedule(p, a, Kernel::k_tiles(a.k));
    if constexpr (Kernel::kTagged) p.work.claims = static_cast<unsigned*>(a.workspace);
    if (a.m == 0 || a.n == 0) return Status::success();
    return Host::template operand_params<Kernel, Epilogue, typename Mainloop::Loader>(
        "GemmGroupedSm90", p, a, a.alpha);
  }

  //! Launches the persistent kernel for `p` (every resident cluster: the work is known only on
  //! the device); where D has no element, only the sizes' check, if `a.status` asks for it.
  static Status launch(const Params& p, const Arguments& a, cudaStream_t stream) {
    return Host::template launch<Kernel>("GemmGroupedSm90", p, a.m > 0 && a.n > 0, stream);
  }
};

}  // namespace tilepipe
