#pragma once
//! \file
//! GemmSm90: the Hopper tier as a complete GEMM (TMA, an mbarrier ring, wgmma, a persistent
//! warp-specialized kernel), with the same arguments as GemmMultistage. GemmMultistage runs it by
//! itself where it can (on an sm_90 GPU, in a program built for `90a`); instantiate it directly
//! to use the Hopper tier or nothing.

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
#include "arguments.cuh"
#include "kernel_sm90.cuh"
#include "launch.cuh"
#include "persistent_sm90.cuh"
#include "tile_configs.cuh"

namespace tilepipe {
//! Whether the Hopper tier multiplies A and B of type `ElementAB` in layouts `LayoutA` and
//! `LayoutB`: `__half` and `__nv_bfloat16` in every layout; `float` (as tf32) only with both
//! K-major, A row-major and B column-major, because wgmma reads tf32 operands from shared memory
//! only K-major (the PTX ISA has no transpose for them). GemmMultistage runs tf32 in the other
//! layouts on this tier by copying A or B K-major first (k_major_transpose.cuh).
template <class ElementAB, Layout LayoutA, Layout LayoutB>
inline constexpr bool hopper_tier_supports_v =
    std::is_same_v<ElementAB, __half> || std::is_same_v<ElementAB, __nv_bfloat16> ||
    (std::is_same_v<ElementAB, float> && LayoutA == Layout::kRowMajor &&
     LayoutB == Layout::kColumnMajor);

//! `D = output_op(alpha * A * B + beta * C)` on the Hopper tier, batched, f32 accumulation.
//!
//! \tparam ElementAB  `__half` or `__nv_bfloat16`; or `float`, multiplied as tf32 (wgmma m64nNk8,
//!                    which reads the f32 bits in shared memory as they are: see MathTF32), with A
//!                    row-major and B column-major only
//! \tparam ElementD   `__half`, `__nv_bfloat16` or `float`
//! \tparam Stages     ring slots (2..4 with the default 128 x 256 tile, up to 6 with 128 x 128)
//! \tparam OutputOp   as GemmMultistage's
//! \tparam Config     a HopperTileConfig
//!
//! Needs an sm_90 GPU and a program compiled for `sm_90a` (`available()` says whether both hold).
//!
//! **Split-K and stream-K** are schedulers of the same persistent kernel (WorkScheduler):
//! `split_k > 1` cuts every tile's K into up to `split_k` slices (`split_k_slices` of k-tiles of
//! `kTileK`), `stream_k > 0` gives `stream_k / ClusterM` workers (clusters, at least one) even
//! shares of all the MAC-iterations (whole waves of tiles stay whole). The pieces of a tile that
//! different blocks compute meet in `workspace` (`workspace_size(args)` bytes, 16-byte aligned,
//! overlapping no operand, and needing no preparation), and the block
//! that completes a tile sums them in k order: results are bit-identical from run to run.
//! `stream_k_blocks()` is the number of blocks that fit on the device at once.
template <class ElementAB, class ElementD, Layout LayoutA, Layout LayoutB, int Stages = 4,
          class OutputOp = Identity, class Config = DefaultHopperTileConfig<Stages>>
class GemmSm90 {
  static_assert(std::is_same_v<ElementAB, __half> || std::is_same_v<ElementAB, __nv_bfloat16> ||
                    std::is_same_v<ElementAB, float>,
                "GemmSm90: A and B must be __half, __nv_bfloat16 or float (as tf32)");
  static_assert(hopper_tier_supports_v<ElementAB, LayoutA, LayoutB>,
                "GemmSm90: float A and B run as tf32, and wgmma reads tf32 only K-major: A must be "
                "row-major and B column-major (GemmMultistage with a MathTF32 tile runs the other "
                "layouts here on K-major copies it makes in its workspace)");
  static_assert(is_supported_element_v<ElementD>,
                "GemmSm90: C and D must be __half, __nv_bfloat16 or float");
  static_assert(Config::kStages == Stages,
                "GemmSm90: the HopperTileConfig's stage count must be GemmSm90's Stages");

 public:
  using Arguments = GemmArguments<ElementAB, ElementD, OutputOp>;
  using Mainloop = WarpSpecializedMainloop<ElementAB, LayoutA, LayoutB, Config>;
  using Epilogue = WarpgroupEpilogue<ElementD, typename Mainloop::Accumulators, OutputOp>;
  using Kernel = GemmKernelSm90<Mainloop, Epilogue, GroupedRaster<8>>;
  using Params = typename Kernel::Params;
  static constexpr int kStages = Stages;
  static constexpr Layout kLayoutA = LayoutA;
  static constexpr Layout kLayoutB = LayoutB;
  //! k per k-tile (ring slot): 64 for f16/bf16, 32 for float.
  static constexpr int kTileK = Mainloop::kTileK;
  static constexpr int kThreads = Kernel::kThreads;
  static constexpr std::size_t kSharedBytes = Kernel::kSharedBytes;
  static_assert(kSharedBytes <= 227 * 1024,
                "GemmSm90: this tile and stage count need more shared memory than an sm_90 block "
                "has (227 KB); use fewer stages or a smaller tile");

  using Scheduler = typename Kernel::Scheduler;
  //! The host side every GEMM on GemmKernelSm90 shares (persistent_sm90.cuh).
  using Host = PersistentSm90<Kernel>;

  //! Bytes of workspace `run` needs for `a`: f32 partial tiles and arrival counters where
  //! `split_k > 1` or `stream_k > 0` cut tiles into pieces, else 0. Needs no device (split-K's
  //! slots and stream-K's count only the work and `a.stream_k`).
  static std::size_t workspace_size(const Arguments& a) {
    if (a.m <= 0 || a.n <= 0 || a.batch_count <= 0 || a.k <= 0) return 0;
    return Kernel::workspace_bytes(scheduler(a, 1));
  }

  //! The number of blocks of this GEMM that fit on the current device at once (whole clusters):
  //! `args.stream_k` for a stream-K grid of one wave.
  static Status stream_k_blocks(int& blocks) {
    int clusters = 0;
    const Status s = Host::resident_clusters(clusters, "GemmSm90");
    blocks = clusters * Config::kClusterM;
    return s;
  }

  //! How `run` cuts the work of `a` on `workers` persistent workers (clusters): data-parallel,
  //! split-K (`split_k > 1`) or stream-K (`stream_k > 0`, whose workers `a.stream_k` sets).
  static Scheduler scheduler(const Arguments& a, int workers) {
    return Host::schedule(a.m, a.n, a.batch_count, a.k, a.split_k, a.stream_k, workers);
  }

  //! Whether the current device runs this tier: an sm_90 GPU, and this program's code for it
  //! compiled for `sm_90a`. (A build for plain `90` has the Ampere tier only.)
  static bool available() { return hopper_tier_on_current_device(); }

  //! The device-free checks: GemmMultistage's with A and B 16-byte aligned (TMA's base addresses
  //! and strides must be multiples of 16 bytes; a D that is not is written from the registers, C
  //! is read element by element), split-K's and stream-K's, and the workspace where they need
  //! one. GemmMultistage runs A or B that this refuses for alignment on copies (hopper_tier.cuh)
  //! or on its narrow kernel.
  static Status check_arguments(const Arguments& a) {
    using Checks = detail::GemmArgumentChecks<LayoutA, LayoutB>;
    Status s = Checks::check_stream_k_request(a);
    if (!s) return s;
    const std::size_t workspace = workspace_size(a);
    s = Checks::check(a, Config::kM, Config::kN, split_k_slices(a.k, a.split_k, kTileK),
                      a.stream_k > 0 ? 0 : workspace, /*split_k_compiled=*/true,
                      /*any_alignment=*/true);
    if (s) s = Checks::check_ab_vector_aligned(a);
    if (!s) return s;
    return Checks::check_stream_k(a, a.stream_k > 0, workspace, /*compiled=*/true);
  }

  //! `check_arguments`, then the device: an sm_90 GPU running `sm_90a` code.
  static Status can_implement(const Arguments& a) {
    const Status s = check_arguments(a);
    return s ? detail::hopper_tier_status("GemmSm90") : s;
  }

  //! Checks, builds the tensor maps and launches on `stream`; returns the first error and then
  //! launches nothing.
  static Status run(const Arguments& a, cudaStream_t stream = nullptr) {
    Status s = can_implement(a);
    if (!s) return s;
    Params p{};
    s = make_params(p, a);
    if (!s) return s;
    return launch(p, stream);
  }

  //! The kernel's parameters for `a` (tensor maps included), for arguments that passed
  //! `check_arguments`. Fails where TMA cannot address A, B or D.
  static Status make_params(Params& p, const Arguments& a) {
    p.k = a.k;
    if (a.m == 0 || a.n == 0 || a.batch_count == 0) {  // nothing to launch
      p.work = Scheduler::data_parallel(0, 0, 0, 0, 1);
      return Status::success();
    }
    int workers = 0;
    Status s0 = Host::resident_clusters(workers, "GemmSm90");
    if (!s0) return s0;
    p.work = scheduler(a, workers);
    // (check_arguments has checked the workspace against workspace_size(a), the same bytes.)
    Host::attach_workspace(p, a.workspace);
    Status s = Epilogue::make_params(
        p.epilogue, {a.d, a.c, a.ldd, a.ldc, a.alpha, a.beta, a.layout_cd, a.m, a.n, a.output_op},
        a.batch_stride_c, a.batch_stride_d, a.batch_count);
    if (!s || a.k == 0) return s;  // with K = 0 the kernel only writes beta * C
    return Mainloop::Loader::make_params(p.load, a.a, a.lda, a.batch_stride_a, a.b, a.ldb,
                                         a.batch_stride_b, a.m, a.n, a.k, a.batch_count);
  }

  //! Launches the persistent kernel for `p`: one cluster of `Config::kClusterM` blocks per
  //! worker of `p.work`. (Its arrival counters need no clearing: `p.epoch` is new to them.)
  static Status launch(const Params& p, cudaStream_t stream) {
    return Host::launch(p, stream, "GemmSm90");
  }
};

}  // namespace tilepipe
