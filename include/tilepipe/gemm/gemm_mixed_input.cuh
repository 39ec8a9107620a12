#pragma once
//! \file
//! GemmMixedInput: weight-only quantized GEMM on the Ampere tier (cp.async, mma.sync; any sm_80+
//! GPU): f16 / bf16 activations A times int8 weights B with per-group scales,
//! `D = op(alpha * A * dequant(B) + beta * C)`. B moves at one byte per element through the same
//! tile loader and shared-memory ring as A, each k-tile with its row of scales; a warp loads a
//! whole k-tile of B's bytes and of A with 128-bit shared loads (warp/byte_fragment_loader.cuh)
//! and dequantizes B in registers (warp/fragment_transform.cuh) on its way to the same
//! `mma.sync.m16n8k16`.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "../epilogue/output_ops.cuh"
#include "../epilogue/staged_epilogue.cuh"
#include "../layout/tile_raster.cuh"
#include "../mainloop/multistage_mainloop.cuh"
#include "../status.cuh"
#include "../warp/fragment_transform.cuh"
#include "kernel.cuh"
#include "mixed_input_arguments.cuh"
#include "launch.cuh"
#include "split_k.cuh"
#include "tile_configs.cuh"

namespace tilepipe {

//! A weight-only quantized GEMM (W8A16): see MixedInputArguments for the operands.
//!
//! \tparam ElementA  `__half` or `__nv_bfloat16`: A, the scales, and what the MMA multiplies
//! \tparam ElementB  B's stored element: `std::int8_t`, or `__nv_fp8_e4m3` (converted with the
//!                   `cvt.rn.f16x2.e4m3x2` of sm_89+ where the build has it, integer operations
//!                   on sm_80)
//! \tparam ElementD  `__half`, `__nv_bfloat16` or `float` (C and D)
//! \tparam LayoutA   `Layout::kRowMajor` (the only one)
//! \tparam LayoutB   `Layout::kColumnMajor` (the only one: K contiguous)
//! \tparam Stages    shared-memory pipeline depth
//! \tparam OutputOp  what is done to each element before it is stored (output_ops.cuh)
//! \tparam Tile      block and warp tile, a `TileConfig` with MathDefault and a k-tile of 64 or
//!                   128
//!
//! \code
//! using Gemm = tilepipe::GemmMixedInput<__half, std::int8_t, __half>;
//! Gemm::Arguments args;
//! args.m = m; args.n = n; args.k = k;
//! args.a = x; args.lda = k;                  // activations, M x K row-major
//! args.b = w; args.ldb = k;                  // int8 weights, N x K (Linear.weight)
//! args.scale = scales; args.group = 128;     // ceil(K / 128) x N
//! args.d = y; args.ldd = n;
//! args.split_k = 4;                          // decode: few output tiles, long K
//! std::size_t bytes = Gemm::workspace_size(args);  // then args.workspace, workspace_bytes
//! tilepipe::Status s = Gemm::run(args, stream);
//! \endcode
//!
//! What runs where. With one slice (`split_k_slices(args)`), the one kernel, on any sm_80+ GPU.
//! With more, split-K, always compiled in, in one of two ways (`args.split_k_reduction`, and
//! `split_k_reduction(args, &r)` says which `run` takes):
//! - the cluster reduction (ClusterKernel, one kernel; sm_90 and newer, 2 to 8 slices): the slices
//!   of an output tile run as one cluster of (1, slices, 1) blocks, the others hand their f32
//!   accumulators to rank 0 through distributed shared memory, and rank 0 adds them in slice
//!   order and runs the epilogue. It touches no workspace. Its kernel is compiled only for sm_90
//!   and newer targets (empty elsewhere, and never launched there).
//! - the workspace reduction (PartialKernel, then split_k_reduce_kernel; any sm_80+ GPU): each
//!   slice writes its f32 partial products to the workspace, and a second kernel sums them in the
//!   same order (see GemmMultistageSplitK).
//! kAuto, the default, takes the cluster reduction where the device runs it, else the workspace.
//! Both add the same f32 values in the same order: with `beta == 0` they give the same D, bit for
//! bit; with `beta != 0`, the reduction kernel may fuse `alpha * sum + beta * C` into one fma
//! where the epilogue rounds `alpha * sum` first, so D may differ in its last bit.
template <class ElementA, class ElementB, class ElementD, Layout LayoutA = Layout::kRowMajor,
          Layout LayoutB = Layout::kColumnMajor, int Stages = 5, class OutputOp = Identity,
          class Tile = MixedInputTileConfig>
class GemmMixedInput {
  static_assert(std::is_same_v<ElementA, __half> || std::is_same_v<ElementA, __nv_bfloat16>,
                "GemmMixedInput: A (and the scales) must be __half or __nv_bfloat16");
  static_assert(
      std::is_same_v<ElementB, std::int8_t> || std::is_same_v<ElementB, __nv_fp8_e4m3>,
      "GemmMixedInput: B must be std::int8_t or __nv_fp8_e4m3 (weight-only quantization)");
  static_assert(is_supported_element_v<ElementD>,
                "GemmMixedInput: C and D must be __half, __nv_bfloat16 or float");
  static_assert(LayoutA == Layout::kRowMajor,
                "GemmMixedInput: LayoutA must be Layout::kRowMajor (A is M x K with K contiguous)");
  static_assert(LayoutB == Layout::kColumnMajor,
                "GemmMixedInput: LayoutB must be Layout::kColumnMajor (B is stored N x K with K "
                "contiguous, as PyTorch stores Linear.weight)");
  static_assert(!detail::HasStages<Tile>::value,
                "GemmMixedInput: pass the tile as a TileConfig; the stage count is Stages");
  static_assert(std::is_same_v<typename Tile::Math, MathDefault>,
                "GemmMixedInput: the tile's math must be MathDefault (f32 accumulators)");

 public:
  using Arguments = MixedInputArguments<ElementA, ElementB, ElementD, OutputOp>;
  using Transform = Dequantize<ElementA, ElementB>;
  using Policy = typename Tile::template WithStages<Stages>;
  using Mainloop = MultistageMainloop<MixedInput<ElementA, Transform>, LayoutA, LayoutB, Policy>;
  using Epilogue =
      StagedEpilogue<ElementD, Policy, sizeof(typename Mainloop::SharedStorage), OutputOp>;
  using Raster = GroupedRaster<8>;
  using Kernel = GemmKernel<Mainloop, Epilogue, Raster>;
  using Params = typename Kernel::Params;
  //! Split-K's first kernel: the same mainloop over (tiles, slices), f32 into the workspace.
  using PartialKernel =
      GemmKernel<Mainloop, StagedEpilogue<float, Policy, sizeof(typename Mainloop::SharedStorage)>,
                 Raster, SliceReduction::kWorkspace>;
  //! Split-K in one kernel (sm_90+): the slices of a tile in one cluster, summed by its rank 0.
  using ClusterKernel = GemmKernel<Mainloop, Epilogue, Raster, SliceReduction::kCluster>;
  static constexpr int kThreads = Policy::kThreads;
  static constexpr std::size_t kSharedBytes =
      std::max({Kernel::kSharedBytes, PartialKernel::kSharedBytes, ClusterKernel::kSharedBytes});
  //! The most slices the cluster reduction sums (the blocks of one portable cluster).
  static constexpr int kMaxClusterSlices = ClusterKernel::kMaxClusterSlices;

  //! Checks `args` against everything the kernels rely on (`check_arguments`) and the current
  //! device. On failure the status's message names the offending argument.
  static Status can_implement(const Arguments& args) {
    Status s = check_arguments(args);
    detail::DeviceInfo dev;
    if (s) s = detail::current_device_info(dev, "GemmMixedInput");
    return s ? check_device_properties(dev.device, dev.major, dev.minor, dev.smem_optin) : s;
  }

  //! The argument part of `can_implement`: queries no device, so it works without a GPU.
  static Status check_arguments(const Arguments& a) {
    return detail::MixedInputArgumentChecks::check(a, Policy::Tile::kM, Policy::Tile::kN,
                                                   split_k_slices(a), workspace_size(a),
                                                   kMaxClusterSlices);
  }

  //! The device part of `can_implement`, from the properties of device `device`.
  static Status check_device_properties(int device, int major, int minor, int smem_optin) {
    return detail::check_gemm_kernel_device("GemmMixedInput", device, major, minor, kSharedBytes,
                                            smem_optin);
  }

  //! The device part of the cluster reduction's checks, from what `run` queries: device `device`
  //! is sm_`major``minor`, the code it runs of ClusterKernel was compiled for sm_`code_arch` (90
  //! for sm_90 or sm_90a; 0: none; see KernelLauncher::compiled_arch), and `clusters` clusters
  //! of `slices` blocks of it fit on the device at once (cudaOccupancyMaxActiveClusters; not
  //! looked at unless the rest holds). Fails with kUnsupportedDevice and a message naming
  //! `split_k_reduction` and what is missing; kAuto takes the workspace reduction then.
  static Status check_cluster_properties(int device, int major, int minor, int code_arch,
                                         int slices, int clusters) {
    const std::string on = "GemmMixedInput: split_k_reduction = kCluster cannot run on device " +
                           std::to_string(device) + ": ";
    const auto unsupported = [&](const std::string& why) {
      return Status::error(Status::Code::kUnsupportedDevice, on + why);
    };
    if (major < 9)
      return unsupported(
          "it is sm_" + std::to_string(major) + std::to_string(minor) +
          ", and thread-block clusters need sm_90 or newer; use kWorkspace or kAuto");
    if (code_arch < 90)
      return unsupported(
          code_arch <= 0
              ? std::string("this program has no code of the cluster kernel for it")
              : "this program's code for it was compiled for sm_" + std::to_string(code_arch) +
                    ", and thread-block clusters need code for sm_90 or newer (CMake architecture "
                    "90, 90a or newer); use kWorkspace or kAuto");
    if (clusters < 1)
      return unsupported("no cluster of " + std::to_string(slices) +
                         " blocks of the cluster kernel fits on it; use kWorkspace or kAuto");
    return Status::success();
  }

  //! How `run` sums `args`'s slices on the current device, into `*reduction`: kCluster or
  //! kWorkspace (kAuto resolved), or kAuto when there is only one slice (nothing to sum). Fails
  //! where `args.split_k_reduction` is kCluster and the device cannot run it
  //! (check_cluster_properties), or a device query fails. Queries the device the first time for
  //! each device and slice count; `args` must have passed `check_arguments`.
  static Status split_k_reduction(const Arguments& args, SplitKReduction* reduction) {
    const SplitKSlices slices = split_k_slices(args);
    *reduction = SplitKReduction::kAuto;
    if (args.m == 0 || args.n == 0 || slices.count <= 1) return Status::success();
    *reduction = SplitKReduction::kWorkspace;
    const SplitKReduction asked = args.split_k_reduction;
    if (asked == SplitKReduction::kWorkspace) return Status::success();
    if (slices.count > kMaxClusterSlices)  // kCluster: refused by check_arguments, and here
      return asked == SplitKReduction::kCluster ? check_arguments(args) : Status::success();
    detail::DeviceInfo dev;
    Status s = detail::current_device_info(dev, "GemmMixedInput");
    if (!s) return s;
    int code_arch = 0, clusters = 0;
    if (dev.major >= 9) code_arch = KernelLauncher<ClusterKernel>::compiled_arch(dev.device);
    if (dev.major >= 9 && code_arch >= 90) {
      s = KernelLauncher<ClusterKernel>::resident_clusters(dim3(1, slices.count, 1), &clusters,
                                                           "GemmMixedInput");
      if (!s) return s;
    }
    s = check_cluster_properties(dev.device, dev.major, dev.minor, code_arch, slices.count,
                                 clusters);
    if (s) *reduction = SplitKReduction::kCluster;
    return asked == SplitKReduction::kCluster ? s : Status::success();
  }

  //! The K slices that `args.split_k` gives (see `tilepipe::split_k_slices`).
  static SplitKSlices split_k_slices(const Arguments& args) {
    return tilepipe::split_k_slices(args.k, args.split_k, Policy::Tile::kK);
  }

  //! A split-K factor for `args` on a GPU with `sm_count` SMs (the decode rule): the largest
  //! power of two whose thread blocks, output tiles x slices, still fit on the SMs in one wave,
  //! with at least 4 k-tiles per slice (a second, partial wave of slices costs more than the
  //! split saves). M = 16 on 132 SMs: N = K = 4096 (64 tiles) splits 2, N = K = 14336 (224
  //! tiles, 2 blocks on most SMs) not at all.
  static int split_k_for(const Arguments& args, int sm_count) {
    const std::int64_t tiles = std::int64_t((args.m + Policy::Tile::kM - 1) / Policy::Tile::kM) *
                               ((args.n + Policy::Tile::kN - 1) / Policy::Tile::kN);
    const int k_tiles = (args.k + Policy::Tile::kK - 1) / Policy::Tile::kK;
    int split = 1;
    while (tiles * split * 2 <= sm_count && k_tiles >= 8 * split) split *= 2;
    return split;
  }

  //! Bytes of workspace `run` needs: 0 without split-K or with `split_k_reduction = kCluster`,
  //! else (kWorkspace, and kAuto, which may take either) `slices x M x N` floats (the contiguous
  //! extent rounded up to 4). Queries no device.
  static std::size_t workspace_size(const Arguments& args) {
    if (args.m <= 0 || args.n <= 0 || args.split_k_reduction == SplitKReduction::kCluster) return 0;
    const SplitKSlices slices = split_k_slices(args);
    return slices.count <= 1 ? 0 : workspace_layout(args, slices.count).bytes();
  }

  //! Checks the arguments and launches on `stream`. Returns the first error; launches nothing then.
  static Status run(const Arguments& args, cudaStream_t stream = nullptr) {
    Status s = can_implement(args);
    if (!s) return s;
    if (args.m == 0 || args.n == 0) return Status::success();
    const SplitKSlices slices = split_k_slices(args);
    if (slices.count > 1) {
      SplitKReduction reduction;
      s = split_k_reduction(args, &reduction);
      if (!s) return s;
      return reduction == SplitKReduction::kCluster ? run_cluster(args, slices, stream)
                                                    : run_split_k(args, slices, stream);
    }
    Params p = kernel_params<Params>(args);
    p.epilogue = output_params(args);
    return KernelLauncher<Kernel>::launch(p, Kernel::shape(p, 1), stream, "GemmMixedInput");
  }

 private:
  static SplitKWorkspace workspace_layout(const Arguments& a, int slices) {
    return SplitKWorkspace::make(a.m, a.n, a.layout_cd, slices, 1);
  }

  // The fields of a GemmKernel's Params that come from the arguments (D and C apart).
  template <class P>
  static P kernel_params(const Arguments& a) {
    auto p = detail::operand_params<P>(a, Policy::Tile::kM, Policy::Tile::kN);
    p.transform_b = Transform::make(a.scale, a.n, a.n, a.k, a.group);
    return p;
  }

  // The slices of each tile as one cluster, summed in it and written to D by its rank 0.
  static Status run_cluster(const Arguments& args, SplitKSlices slices, cudaStream_t stream) {
    using ClusterParams = typename ClusterKernel::Params;
    ClusterParams p = kernel_params<ClusterParams>(args);
    p.slices = slices;
    p.epilogue = output_params(args);
    return KernelLauncher<ClusterKernel>::launch(p, ClusterKernel::shape(p, 1), stream,
                                                 "GemmMixedInput (split-K in clusters)");
  }

  // The partial kernel into the workspace, then the reduction into D.
  static Status run_split_k(const Arguments& args, SplitKSlices slices, cudaStream_t stream) {
    return detail::run_split_k<PartialKernel, ElementD, OutputOp>(
        kernel_params<typename PartialKernel::Params>(args), args, slices, 1, 0, 0, stream,
        "GemmMixedInput");
  }
};

}  // namespace tilepipe
