#pragma once
//! \file
//! GemmSm80: the Ampere tier as a complete GEMM (cp.async, ldmatrix, mma.sync; any sm_80+ GPU),
//! with the same arguments as GemmSm90. Its kernels: the 16-byte data-parallel one, and, by
//! GemmOptions, the narrow one (arguments that are not 16-byte aligned), split-K and stream-K.
//! GemmTiered (the front door, gemm_multistage.cuh) runs it wherever the Hopper tier does not.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "../epilogue/output_ops.cuh"
#include "../epilogue/staged_epilogue.cuh"
#include "../layout/tile_raster.cuh"
#include "../mainloop/multistage_mainloop.cuh"
#include "../status.cuh"
#include "arguments.cuh"
#include "gemm_options.cuh"
#include "kernel.cuh"
#include "launch.cuh"
#include "split_k.cuh"
#include "stream_k.cuh"
#include "tile_configs.cuh"

namespace tilepipe {

//! The kernel a GemmSm80 runs for given arguments.
enum class Sm80Kernel {
  kDataParallel,  //!< one block per output tile, 16-byte copies
  kNarrow,        //!< the same, copies as wide as the arguments' alignment allows
  kSplitK,        //!< the slices' partial products, then their sum
  kStreamK,       //!< the persistent stream-K kernel
};

//! `D = output_op(alpha * A * B + beta * C)` on the Ampere tier, batched. Template parameters as
//! GemmTiered's: `Tile` is a TileConfig (its math says how A and B are multiplied), `Stages` the
//! ring's depth, `Options` a GemmOptions.
template <class ElementAB, class ElementD, Layout LayoutA, Layout LayoutB, int Stages = 4,
          class OutputOp = Identity, class Tile = DefaultTileConfig<Stages>,
          class Options = GemmOptions<>>
class GemmSm80 {
  static_assert(!detail::HasStages<Tile>::value,
                "GemmSm80: pass the tile as a TileConfig<TileM, TileN, TileK, WarpM, WarpN>; "
                "the stage count is its own Stages argument");
  static_assert(is_mma_m16n8k16_input_v<ElementAB> || std::is_same_v<ElementAB, float>,
                "GemmSm80: A and B must be __half, __nv_bfloat16 or float");
  static_assert(is_supported_element_v<ElementD>,
                "GemmSm80: C and D must be __half, __nv_bfloat16 or float");
  static_assert(!std::is_same_v<typename Tile::Math, MathF16Accumulate> ||
                    std::is_same_v<ElementAB, __half>,
                "GemmSm80: f16 accumulation (MathF16Accumulate) needs __half A and B; bf16 has no "
                "mma.sync that accumulates in 16 bits, so keep MathDefault for bf16");
  static_assert((std::is_same_v<typename Tile::Math, MathTF32> ||
                 std::is_same_v<typename Tile::Math, MathSimtF32>) ==
                    std::is_same_v<ElementAB, float>,
                "GemmSm80: float A and B need a tile whose math says how to multiply them: as tf32 "
                "on the tensor cores (DefaultF32TileConfig<MathTF32>) or in full f32 on the CUDA "
                "cores (DefaultF32TileConfig<MathSimtF32>); MathTF32 and MathSimtF32 take float A "
                "and B only");

 public:
  using Policy = typename Tile::template WithStages<Stages>;
  using Arguments = GemmArguments<ElementAB, ElementD, OutputOp>;
  using Mainloop = MultistageMainloop<ElementAB, LayoutA, LayoutB, Policy>;
  //! Its staging buffer overlaps the ring, so it may be as large as the ring without growing the
  //! kernel's shared memory.
  using Epilogue =
      StagedEpilogue<ElementD, Policy, sizeof(typename Mainloop::SharedStorage), OutputOp>;
  using Raster = GroupedRaster<8>;
  using Kernel = GemmKernel<Mainloop, Epilogue, Raster>;
  using Params = typename Kernel::Params;
  //! The narrow kernel: the same tiles, copy widths chosen at run time.
  using NarrowKernel =
      GemmKernel<MultistageMainloop<ElementAB, LayoutA, LayoutB, Policy, /*AnyAlignment=*/true>,
                 StagedEpilogue<ElementD, Policy, sizeof(typename Mainloop::SharedStorage),
                                OutputOp, /*AnyAlignment=*/true>,
                 Raster>;
  //! Split-K's first kernel: slices of K, f32 partial products into the workspace.
  using PartialKernel =
      GemmKernel<Mainloop, StagedEpilogue<float, Policy, sizeof(typename Mainloop::SharedStorage)>,
                 Raster, SliceReduction::kWorkspace>;
  //! The stream-K kernel.
  using StreamKKernel = StreamKGemmKernel<Mainloop, Epilogue, Raster>;
  static constexpr int kThreads = Policy::kThreads;
  static constexpr int kStages = Stages;
  static constexpr Layout kLayoutA = LayoutA;
  static constexpr Layout kLayoutB = LayoutB;
  static constexpr bool kSplitK = Options::kSplitK;
  static constexpr bool kStreamK = Options::kStreamK;
  static constexpr bool kAnyAlignment = Options::kAnyAlignment;
  static constexpr std::size_t kSharedBytes = Kernel::kSharedBytes;
  static constexpr int kMaxExtent = detail::GemmArgumentChecks<LayoutA, LayoutB>::kMaxExtent;
  //! The chunks stream-K cuts each tile's k-tiles into (at most): segments begin at one of 4
  //! places in K, so blocks that share tiles read A and B at few distinct k and keep them in L2.
  static constexpr int kStreamKChunks = 4;

  //! Whether every pointer, leading dimension and batch stride that `a` uses (A and B when K > 0,
  //! C when beta != 0, D; batch strides when batch_count > 1) is a multiple of 16 bytes.
  static bool vector_aligned(const Arguments& a) {
    const int batches = a.batch_count;
    return (a.k == 0 || (detail::copy_bytes_of(a.a, a.lda, a.batch_stride_a, batches) == 16 &&
                         detail::copy_bytes_of(a.b, a.ldb, a.batch_stride_b, batches) == 16)) &&
           (a.beta == 0.0f || detail::copy_bytes_of(a.c, a.ldc, a.batch_stride_c, batches) == 16) &&
           detail::copy_bytes_of(a.d, a.ldd, a.batch_stride_d, batches) == 16;
  }

  //! Whether `run` takes the stream-K kernel for `a`: `stream_k > 0`, something to compute
  //! (M, N, K and batch_count above 0) and 16-byte aligned arguments.
  static bool stream_k_runs(const Arguments& a) {
    return a.stream_k > 0 && a.m > 0 && a.n > 0 && a.k > 0 && a.batch_count > 0 &&
           (!kAnyAlignment || vector_aligned(a));
  }

  //! The K slices that `a.split_k` gives for this tile's k-tile depth (`tilepipe::split_k_slices`);
  //! one for arguments that run the narrow kernel, which does not split K.
  static SplitKSlices split_k_slices(const Arguments& a) {
    const int split = kAnyAlignment && !vector_aligned(a) ? 1 : a.split_k;
    return tilepipe::split_k_slices(a.k, split, Policy::Tile::kK);
  }

  //! The kernel `run` takes for `a` (arguments `check_arguments` accepts).
  static Sm80Kernel kernel_for(const Arguments& a) {
    if (stream_k_runs(a)) return Sm80Kernel::kStreamK;
    if (split_k_slices(a).count > 1) return Sm80Kernel::kSplitK;
    if (kAnyAlignment && !vector_aligned(a)) return Sm80Kernel::kNarrow;
    return Sm80Kernel::kDataParallel;
  }

  //! How stream-K shares `a`'s work tiles (output tiles x batches) and their k-tiles, in
  //! `kStreamKChunks` chunks per tile, over `min(a.stream_k, work)` blocks.
  static StreamKPartition stream_k_partition(const Arguments& a) {
    const long long tiles = static_cast<long long>(tiles_m(a)) * tiles_n(a) * a.batch_count;
    const int k_tiles = (a.k + Policy::Tile::kK - 1) / Policy::Tile::kK;
    return tilepipe::stream_k_partition(tiles, k_tiles, a.stream_k, kStreamKChunks);
  }

  //! Bytes of workspace `run` needs for `a`: stream-K's partial tiles and counters, or split-K's
  //! `slices x batches x M x N` floats (N or M rounded up to 4); else 0.
  static std::size_t workspace_size(const Arguments& a) {
    if (a.m <= 0 || a.n <= 0 || a.batch_count <= 0) return 0;
    if (stream_k_runs(a)) return stream_k_workspace(a).bytes();
    const SplitKSlices slices = split_k_slices(a);
    return slices.count > 1
               ? SplitKWorkspace::make(a.m, a.n, a.layout_cd, slices.count, a.batch_count).bytes()
               : 0;
  }

  //! Checks `a` against everything the kernels rely on; queries no device. On failure the
  //! status's message names the offending argument.
  static Status check_arguments(const Arguments& a) {
    using Checks = detail::GemmArgumentChecks<LayoutA, LayoutB>;
    Status s = Checks::check_stream_k_request(a);
    if (!s) return s;
    const std::size_t workspace = workspace_size(a);
    s = Checks::check(a, Policy::Tile::kM, Policy::Tile::kN, split_k_slices(a), workspace, kSplitK,
                      kAnyAlignment);
    return s ? Checks::check_stream_k(a, stream_k_runs(a), workspace, kStreamK) : s;
  }

  //! The device part of `can_implement`, from the properties of device `device`.
  static Status check_device_properties(int device, int major, int minor, int smem_optin) {
    return detail::check_gemm_kernel_device("GemmMultistage", device, major, minor, kSharedBytes,
                                            smem_optin);
  }

  //! The device part of `can_implement`, for the current device.
  static Status check_device() {
    detail::DeviceInfo dev;
    const Status s = detail::current_device_info(dev, "GemmMultistage");
    return s ? check_device_properties(dev.device, dev.major, dev.minor, dev.smem_optin) : s;
  }

  //! `check_arguments`, then the current device.
  static Status can_implement(const Arguments& a) {
    const Status s = check_arguments(a);
    return s ? check_device() : s;
  }

  //! The stream-K kernel's blocks that fit on the current device at once: the `args.stream_k`
  //! that fills the GPU exactly once.
  static Status stream_k_blocks(int& blocks) {
    static_assert(kStreamK,
                  "stream_k_blocks: this GEMM is compiled without stream-K; use "
                  "GemmOptions<WithStreamK> (GemmMultistageStreamK)");
    blocks = 0;
    return KernelLauncher<StreamKKernel>::resident_blocks(&blocks, "GemmMultistage");
  }

  //! Checks `a` and launches on `stream`. Returns the first error; launches nothing then.
  static Status run(const Arguments& a, cudaStream_t stream = nullptr) {
    const Status s = can_implement(a);
    return s ? launch(a, stream) : s;
  }

  //! The launch of `run`, for arguments that passed `can_implement`.
  static Status launch(const Arguments& a, cudaStream_t stream) {
    if (a.m == 0 || a.n == 0 || a.batch_count == 0) return Status::success();
    switch (kernel_for(a)) {
      case Sm80Kernel::kStreamK:
        if constexpr (kStreamK) return run_stream_k(a, stream);
        break;
      case Sm80Kernel::kSplitK:
        if constexpr (kSplitK)
          return detail::run_split_k<PartialKernel, ElementD, OutputOp>(
              kernel_params<typename PartialKernel::Params>(a), a, split_k_slices(a), a.batch_count,
              a.batch_stride_c, a.batch_stride_d, stream, "GemmMultistage");
        break;
      case Sm80Kernel::kNarrow:
        if constexpr (kAnyAlignment) {
          auto p = kernel_params<typename NarrowKernel::Params>(a);
          p.epilogue = output_params(a);
          p.copy_bytes_a = detail::copy_bytes_of(a.a, a.lda, a.batch_stride_a, a.batch_count);
          p.copy_bytes_b = detail::copy_bytes_of(a.b, a.ldb, a.batch_stride_b, a.batch_count);
          return KernelLauncher<NarrowKernel>::launch(p, NarrowKernel::shape(p, a.batch_count),
                                                      stream, "GemmMultistage (narrow kernel)");
        }
        break;
      case Sm80Kernel::kDataParallel: break;
    }
    Params p = kernel_params<Params>(a);
    p.epilogue = output_params(a);
    return KernelLauncher<Kernel>::launch(p, Kernel::shape(p, a.batch_count), stream,
                                          "GemmMultistage");
  }

 private:
  static int tiles_m(const Arguments& a) { return (a.m + Policy::Tile::kM - 1) / Policy::Tile::kM; }
  static int tiles_n(const Arguments& a) { return (a.n + Policy::Tile::kN - 1) / Policy::Tile::kN; }

  static StreamKWorkspace stream_k_workspace(const Arguments& a) {
    return StreamKWorkspace::make(stream_k_partition(a), Policy::Tile::kM, Policy::Tile::kN);
  }

  template <class P>
  static P kernel_params(const Arguments& a) {
    return detail::operand_params<P>(a, Policy::Tile::kM, Policy::Tile::kN);
  }

  // Stream-K: zero the tile counters, then the persistent kernel.
  static Status run_stream_k(const Arguments& a, cudaStream_t stream) {
    const StreamKPartition part = stream_k_partition(a);
    const StreamKWorkspace ws = stream_k_workspace(a);
    auto p = kernel_params<typename StreamKKernel::Params>(a);
    p.batches = a.batch_count;
    p.partition = part;
    p.partials = static_cast<float*>(a.workspace);
    p.counters = nullptr;
    p.epilogue = output_params(a);
    if (ws.counters > 0) {
      p.counters = reinterpret_cast<std::uint32_t*>(static_cast<unsigned char*>(a.workspace) +
                                                    ws.counters_offset());
      const cudaError_t e =
          cudaMemsetAsync(p.counters, 0, ws.counters * sizeof(std::uint32_t), stream);
      if (e != cudaSuccess)
        return detail::cuda_error("GemmMultistage", "cudaMemsetAsync (stream-K's counters)", e);
    }
    return KernelLauncher<StreamKKernel>::launch(p, {dim3(static_cast<unsigned>(part.blocks))},
                                                 stream, "GemmMultistage (stream-K)");
  }
};

}  // namespace tilepipe
