#pragma once
//! \file
//! GemmMultistage: the provided GEMM, `D = op(alpha * A * B + beta * C)` on tensor cores, and its
//! host launcher. It has two tiers: the Ampere tier (cp.async, ldmatrix, mma.sync; any sm_80+
//! GPU) and, with the default tile (or the tf32 one) on an sm_90 GPU in a build for `90a`, the
//! Hopper tier (TMA, mbarriers, wgmma: gemm_sm90.cuh). The parts live next door: the arguments
//! and their checks (arguments.cuh), the kernels (kernel.cuh, kernel_sm90.cuh), split-K
//! (split_k.cuh), stream-K (stream_k.cuh), the K-major copies of tf32 operands
//! (k_major_transpose.cuh), the default tile (default_policy.cuh).

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
#include "default_policy.cuh"
#include "gemm_sm90.cuh"
#include "k_major_transpose.cuh"
#include "kernel.cuh"
#include "split_k.cuh"
#include "stream_k.cuh"

namespace tilepipe {

//! Which set of instructions a GEMM call runs on.
enum class GemmTier {
  kAmpere,  //!< cp.async + ldmatrix + mma.sync (MultistageMainloop, GemmKernel)
  kHopper,  //!< TMA + mbarrier ring + wgmma (WarpSpecializedMainloop, GemmKernelSm90)
};

inline const char* to_string(GemmTier t) { return t == GemmTier::kHopper ? "hopper" : "ampere"; }

//! A complete GEMM: `D = output_op(alpha * A * B + beta * C)`, batched, f32 accumulation unless
//! the tile's math says otherwise.
//!
//! \tparam ElementAB   `__half` or `__nv_bfloat16` (A and B); `float` with a MathTF32 or
//!                     MathSimtF32 tile
//! \tparam ElementD    `__half`, `__nv_bfloat16` or `float` (C and D)
//! \tparam LayoutA     layout of A (M x K)
//! \tparam LayoutB     layout of B (K x N)
//! \tparam Stages      shared-memory pipeline depth (2..6 where it fits)
//! \tparam OutputOp    what is done to each element before it is stored (output_ops.cuh):
//!                     `Identity`, a bias, a scale, an activation, a `Chain` of them, or your own
//! \tparam Tile        block and warp tile and math, a `TileConfig` (no stage count: that is
//!                     `Stages`). Its math (numeric/math.cuh) is `MathDefault` unless given, e.g.
//!                     `DefaultTileConfig<4>::WithMath<MathF16Accumulate>` for f16 accumulators;
//!                     float A and B need `MathTF32` or `MathSimtF32`, e.g.
//!                     `DefaultF32TileConfig<MathTF32>`
//! \tparam SplitK      compile the split-K path in (see GemmMultistageSplitK)
//! \tparam AnyAlignment  compile the narrow kernel in, for arguments that are not 16-byte aligned
//!                     (see below); false refuses them and saves its compile time
//! \tparam StreamK     compile the stream-K path in (see GemmMultistageStreamK)
//!
//! \code
//! using Gemm = tilepipe::GemmMultistage<__half, __half, tilepipe::Layout::kRowMajor,
//!                                       tilepipe::Layout::kColumnMajor>;
//! Gemm::Arguments args;
//! args.m = m; args.n = n; args.k = k;
//! args.a = a; args.lda = k; args.b = b; args.ldb = k; args.d = d; args.ldd = n;
//! tilepipe::Status s = Gemm::run(args, stream);
//! if (!s) std::fprintf(stderr, "%s\n", s.what());
//! \endcode
//!
//! Split-K (for problems with few output tiles and a long K) is compiled in only with
//! `SplitK = true` (`GemmMultistageSplitK`), because it adds a second GEMM kernel to every
//! instantiation, which almost doubles its compile time. Then set `args.split_k` and give
//! `workspace_size(args)` bytes of device memory as `args.workspace` / `args.workspace_bytes`;
//! `run` launches two kernels: the partial products of the K slices, then their sum in a fixed
//! order with the output operator. With one effective slice (`split_k == 1`, the default) it
//! launches exactly the kernel it always has, with either value of `SplitK`.
//!
//! Stream-K (for problems whose tiles fill the GPU's waves unevenly, e.g. fewer tiles than SMs)
//! is compiled in only with `StreamK = true` (`GemmMultistageStreamK`), for the same reason. Then
//! set `args.stream_k` (usually to `stream_k_blocks`, the blocks that fit at once) and give
//! `workspace_size(args)` bytes of workspace: `run` zeroes the workspace's tile counters and
//! launches one persistent kernel (stream_k.cuh) on the Ampere tier. It needs f32 accumulators
//! (not `MathF16Accumulate`). With `stream_k == 0`, the default, nothing changes.
//!
//! **Alignment.** Arguments whose pointers, leading dimensions and batch strides (A, B, D, and C
//! when `beta != 0`) are all multiples of 16 bytes run the 16-byte kernels (`vector_aligned`).
//! With `AnyAlignment` (the default), any others whose pointers are aligned to their element run
//! a second Ampere kernel, compiled once per instantiation: each operand is copied in the widest
//! `cp.async` its alignment allows (16, 8 or 4 bytes, chosen at run time, uniform over the grid),
//! or element by element at 2 bytes; every k-tile takes the per-chunk path, and C and D are read
//! and written element by element. That kernel does not split K (`split_k` is then ignored, and
//! `workspace_size` is 0). `AnyAlignment = false` compiles only the 16-byte kernels and refuses
//! such arguments, naming the first misaligned one.
//!
//! **Tiers.** With the default `Tile` (whose math is `MathDefault`), or with float A and B and
//! `DefaultF32TileConfig<MathTF32>`, and 2..6 stages, `run` takes the Hopper tier (`GemmSm90` with
//! the same `Stages`, its own 128 x 256 or 128 x 128 tile) when the current device is an sm_90 GPU
//! running this program's `sm_90a` code and the call neither splits K nor asks for stream-K;
//! otherwise the Ampere tier. Any other math or tile (f16 accumulation, SIMT f32) always runs on
//! the Ampere tier. On the Hopper tier tf32 inputs are not rounded first (wgmma reads the f32 bits
//! as they are, see MathTF32). `tier(args)` says which one a call takes. A program built for plain `90` (no `a`)
//! runs the Ampere tier on Hopper GPUs, and arguments that are not 16-byte aligned run the Ampere
//! tier's narrow kernel (TMA needs 16 bytes).
//!
//! **tf32 in other layouts than TN.** wgmma reads tf32 operands from shared memory only K-major
//! (A row-major, B column-major). For A column-major or B row-major the Hopper tier first copies
//! that operand K-major into `args.workspace` (`transpose_to_k_major`, one kernel per operand,
//! on the same stream) and runs `GemmSm90` for A row-major and B column-major on the copy; the
//! copy is part of the call and of its time. `workspace_size(args)` gives the bytes (K rounded up
//! to 4 floats per row of the copy, times M or N, times the batches of an operand whose batch
//! stride is not 0); it is 0 where nothing would be copied (K = 0, arguments not 16-byte aligned,
//! split-K, or no Hopper tier in this instantiation). Without a workspace (`workspace` null) such
//! a call runs on the Ampere tier, as it did before the Hopper tier took these layouts (`tier`
//! says so, and `run_on(GemmTier::kHopper, ...)` fails naming `workspace`); a workspace that is
//! given is checked on every device like split-K's: at least `workspace_size(args)` bytes, 16-byte
//! aligned, apart from A, B, C and D.
template <class ElementAB, class ElementD, Layout LayoutA, Layout LayoutB, int Stages = 4,
          class OutputOp = Identity, class Tile = DefaultTileConfig<Stages>, bool SplitK = false,
          bool AnyAlignment = true, bool StreamK = false>
class GemmMultistage {
  static_assert(!detail::HasStages<Tile>::value,
                "GemmMultistage: pass the tile as a TileConfig<TileM, TileN, TileK, WarpM, WarpN>; "
                "the stage count is GemmMultistage's own Stages argument");
  static_assert(is_mma_m16n8k16_input_v<ElementAB> || std::is_same_v<ElementAB, float>,
                "GemmMultistage: A and B must be __half, __nv_bfloat16 or float");
  static_assert(is_supported_element_v<ElementD>,
                "GemmMultistage: C and D must be __half, __nv_bfloat16 or float");
  static_assert(!std::is_same_v<typename Tile::Math, MathF16Accumulate> ||
                    std::is_same_v<ElementAB, __half>,
                "GemmMultistage: f16 accumulation (MathF16Accumulate) needs __half A and B; bf16 "
                "has no mma.sync that accumulates in 16 bits, so keep MathDefault for bf16");
  static_assert((std::is_same_v<typename Tile::Math, MathTF32> ||
                 std::is_same_v<typename Tile::Math, MathSimtF32>) == std::is_same_v<ElementAB, float>,
                "GemmMultistage: float A and B need a tile whose math says how to multiply them: "
                "as tf32 on the tensor cores (DefaultF32TileConfig<MathTF32>) or in full f32 on the "
                "CUDA cores (DefaultF32TileConfig<MathSimtF32>); MathTF32 and MathSimtF32 take "
                "float A and B only");

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
  //! The narrow kernel (with `AnyAlignment`): the same tiles, copy widths chosen at run time.
  using NarrowKernel =
      GemmKernel<MultistageMainloop<ElementAB, LayoutA, LayoutB, Policy, /*AnyAlignment=*/true>,
                 StagedEpilogue<ElementD, Policy, sizeof(typename Mainloop::SharedStorage), OutputOp,
                                /*AnyAlignment=*/true>,
                 Raster>;
  static constexpr int kThreads = Policy::kThreads;
  static constexpr int kStages = Stages;
  static constexpr Layout kLayoutA = LayoutA;
  static constexpr Layout kLayoutB = LayoutB;
  //! Whether `run` can split K (`args.split_k > 1`); without it such arguments are refused.
  static constexpr bool kSplitK = SplitK;
  //! Whether `run` can run stream-K (`args.stream_k > 0`); without it such arguments are refused.
  static constexpr bool kStreamK = StreamK;
  //! The stream-K kernel (instantiated only with `StreamK`).
  using StreamKKernel = StreamKGemmKernel<Mainloop, Epilogue, Raster>;
  //! Whether `run` takes arguments that are not 16-byte aligned (the narrow kernel).
  static constexpr bool kAnyAlignment = AnyAlignment;
  static constexpr std::size_t kSharedBytes = Kernel::kSharedBytes;
  static constexpr int kMaxExtent = detail::GemmArgumentChecks<LayoutA, LayoutB>::kMaxExtent;
  //! Whether this instantiation has a Hopper tier: 2..6 stages, and the default tile with its
  //! MathDefault, or float A and B with `DefaultF32TileConfig<MathTF32>` (in any layout: see
  //! kCopyA and kCopyB).
  static constexpr bool kHasHopperTier =
      (std::is_same_v<Tile, DefaultTileConfig<Stages>> ||
       std::is_same_v<Tile, DefaultF32TileConfig<MathTF32>>) &&
      Stages >= 2 && Stages <= 6;
  //! Whether the Hopper tier copies A (column-major float) or B (row-major float) K-major into
  //! the workspace first: wgmma reads tf32 only K-major (hopper_tier_supports_v).
  static constexpr bool kCopyA =
      kHasHopperTier && std::is_same_v<ElementAB, float> && LayoutA == Layout::kColumnMajor;
  static constexpr bool kCopyB =
      kHasHopperTier && std::is_same_v<ElementAB, float> && LayoutB == Layout::kRowMajor;
  //! The Hopper tier's GEMM (`void` without one): for float, always A row-major and B
  //! column-major, reading the K-major copies where A or B are not.
  using HopperGemm = std::conditional_t<
      kHasHopperTier,
      GemmSm90<ElementAB, ElementD, kCopyA ? Layout::kRowMajor : LayoutA,
               kCopyB ? Layout::kColumnMajor : LayoutB, Stages, OutputOp>,
      void>;

  //! The tier `run(args)` takes on the current device (for arguments `can_implement` accepts).
  static GemmTier tier(const Arguments& args) {
    if constexpr (kHasHopperTier) {
      typename HopperGemm::Params p{};
      if (hopper_params(p, args)) return GemmTier::kHopper;
    }
    return GemmTier::kAmpere;
  }

  //! Whether every pointer, leading dimension and batch stride that `args` uses (A and B when
  //! K > 0, C when beta != 0, D; batch strides when batch_count > 1) is a multiple of 16 bytes:
  //! then `run` takes the 16-byte kernels, else the narrow one.
  static bool vector_aligned(const Arguments& a) {
    const int batches = a.batch_count;
    return (a.k == 0 || (detail::copy_bytes_of(a.a, a.lda, a.batch_stride_a, batches) == 16 &&
                         detail::copy_bytes_of(a.b, a.ldb, a.batch_stride_b, batches) == 16)) &&
           (a.beta == 0.0f || detail::copy_bytes_of(a.c, a.ldc, a.batch_stride_c, batches) == 16) &&
           detail::copy_bytes_of(a.d, a.ldd, a.batch_stride_d, batches) == 16;
  }

  //! Checks `args` against everything the kernel relies on (`check_arguments`) and the current
  //! device. On failure the status's message names the offending argument.
  static Status can_implement(const Arguments& args) {
    Status s = check_arguments(args);
    if (!s) return s;
    return check_device();
  }

  //! The argument part of `can_implement`: queries no device, so it works without a GPU.
  static Status check_arguments(const Arguments& a) {
    using Checks = detail::GemmArgumentChecks<LayoutA, LayoutB>;
    Status s = Checks::check_stream_k_request(a);
    if (!s) return s;
    // Once per call: it lays out the stream-K partition, split-K's slabs or the tf32 copies.
    const std::size_t workspace = workspace_size(a);
    s = Checks::check(a, Policy::Tile::kM, Policy::Tile::kN, split_k_slices(a), workspace, SplitK,
                      AnyAlignment);
    if (s) s = Checks::check_stream_k(a, stream_k_runs(a), workspace, StreamK);
    // The copies' workspace, where one is given (without one the call runs on the Ampere tier).
    if (s && copies_operands(a) && a.workspace != nullptr)
      s = Checks::check_workspace(a, workspace, kCopyWhat, "the tf32 copy workspace");
    return s;
  }

  //! The device part of `can_implement`, from the properties of device `device` (separate so
  //! that it can be tested without such a device).
  static Status check_device_properties(int device, int major, int minor, int smem_optin) {
    return detail::check_gemm_kernel_device("GemmMultistage", device, major, minor, kSharedBytes,
                                            smem_optin);
  }

  //! The K slices that `args.split_k` gives for this configuration's k-tile depth: how many
  //! actually run (`min(split_k, k-tiles)`, so none is empty; 1 when K fits in one k-tile or is
  //! 0) and where each begins. See `tilepipe::split_k_slices`. One for arguments that run the
  //! narrow kernel (not `vector_aligned`), which does not split K.
  static SplitKSlices split_k_slices(const Arguments& args) {
    const bool narrow = AnyAlignment && !vector_aligned(args);
    return tilepipe::split_k_slices(args.k, narrow ? 1 : args.split_k, Policy::Tile::kK);
  }

  //! Bytes of workspace `run` needs for `args`: with stream-K (`stream_k_runs`), the partial
  //! accumulators and tile counters of `StreamKWorkspace` for `stream_k_partition(args)` (0 when
  //! its tiles divide evenly); where split-K runs (more than one effective slice, see
  //! `split_k_slices`) `slices x batches x M x N` floats (N or M rounded up to 4); where the Hopper
  //! tier would copy tf32 A or B K-major (`kCopyA`, `kCopyB`), the copies' bytes
  //! (KMajorWorkspace), whatever the current device; else 0.
  static std::size_t workspace_size(const Arguments& args) {
    if (args.m <= 0 || args.n <= 0 || args.batch_count <= 0) return 0;
    if (stream_k_runs(args))
      return StreamKWorkspace::make(stream_k_partition(args), Policy::Tile::kM, Policy::Tile::kN).bytes();
    const SplitKSlices slices = split_k_slices(args);
    if (slices.count > 1) return workspace_layout(args, slices.count).bytes();
    return copies_operands(args) ? copy_layout(args).bytes : 0;
  }

  //! Whether `run` takes the stream-K kernel for `args`: `stream_k > 0`, something to compute
  //! (M, N, K and batch_count above 0) and 16-byte aligned arguments (`vector_aligned`).
  static bool stream_k_runs(const Arguments& args) {
    return args.stream_k > 0 && args.m > 0 && args.n > 0 && args.k > 0 && args.batch_count > 0 &&
           (!AnyAlignment || vector_aligned(args));
  }

  //! The chunks stream-K cuts each tile's k-tiles into (at most; layout/stream_k_partition.cuh):
  //! segments begin at one of 4 places in K, so the blocks that share tiles read A and B at few
  //! distinct k and keep them in L2. On an H100 (performance-log entry 35, 128 x 256 x 64 tile)
  //! 4 chunks ran the stream-K kernel 8% faster than one chunk per k-tile at 4096^3 (DRAM reads
  //! 329 MB against 487 MB) and 2% faster on 1000 x 3000 x 4104; 8 chunks, 2% faster still on
  //! that shape, were 6% slower than one per k-tile at 4096^3.
  static constexpr int kStreamKChunks = 4;

  //! How stream-K shares `args`' work tiles (output tiles x batches) and their k-tiles, in
  //! `kStreamKChunks` chunks per tile, over `min(args.stream_k, work)` blocks
  //! (layout/stream_k_partition.cuh).
  static StreamKPartition stream_k_partition(const Arguments& args) {
    const long long tiles = static_cast<long long>((args.m + Policy::Tile::kM - 1) / Policy::Tile::kM) *
                            ((args.n + Policy::Tile::kN - 1) / Policy::Tile::kN) * args.batch_count;
    const int k_tiles = (args.k + Policy::Tile::kK - 1) / Policy::Tile::kK;
    return tilepipe::stream_k_partition(tiles, k_tiles, args.stream_k, kStreamKChunks);
  }

  //! The stream-K kernel's blocks that fit on the current device at once (its occupancy per SM
  //! times the SMs): the `args.stream_k` that fills the GPU exactly once.
  static Status stream_k_blocks(int& blocks) {
    static_assert(StreamK, "GemmMultistage::stream_k_blocks: this GemmMultistage is compiled "
                           "without stream-K; use GemmMultistageStreamK");
    blocks = 0;
    int device = 0, sms = 0, per_sm = 0;
    cudaError_t e = cudaGetDevice(&device);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    if (e != cudaSuccess) return cuda_error("cudaDeviceGetAttribute", e);
    auto kernel = gemm_kernel<StreamKKernel>;
    if (StreamKKernel::kSharedBytes > 48 * 1024) {
      e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               static_cast<int>(StreamKKernel::kSharedBytes));
      if (e != cudaSuccess) return cuda_error("cudaFuncSetAttribute", e);
    }
    e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads,
                                                      StreamKKernel::kSharedBytes);
    if (e != cudaSuccess) return cuda_error("cudaOccupancyMaxActiveBlocksPerMultiprocessor", e);
    blocks = sms * (per_sm > 0 ? per_sm : 1);
    return Status::success();
  }

  //! Checks the arguments and launches on `stream`, on the Hopper tier where it can run them
  //! (see `tier`), else on the Ampere tier. Returns the first error; launches nothing then.
  static Status run(const Arguments& args, cudaStream_t stream = nullptr) {
    Status s = can_implement(args);
    if (!s) return s;
    if (args.m == 0 || args.n == 0 || args.batch_count == 0) return Status::success();
    if constexpr (kHasHopperTier) {
      typename HopperGemm::Params p{};
      if (hopper_params(p, args)) return launch_hopper(p, args, stream);
    }
    return run_ampere(args, stream);
  }

  //! `run` on a tier of the caller's choice (to compare the tiers, or to test one): fails, with a
  //! message saying why, where that tier cannot run `args` on the current device.
  static Status run_on(GemmTier t, const Arguments& args, cudaStream_t stream = nullptr) {
    Status s = can_implement(args);
    if (!s) return s;
    if (t == GemmTier::kHopper) {
      if constexpr (kHasHopperTier) {
        typename HopperGemm::Params p{};
        s = hopper_params(p, args);
        if (!s) return s;
        if (args.m == 0 || args.n == 0 || args.batch_count == 0) return Status::success();
        return launch_hopper(p, args, stream);
      } else {
        return Status::error(Status::Code::kInvalidArgument,
                             "GemmMultistage: this instantiation has no Hopper tier (it needs "
                             "2..6 stages and f16 or bf16 A and B with the default Tile, whose "
                             "math is MathDefault, or float A and B with "
                             "DefaultF32TileConfig<MathTF32>)");
      }
    }
    if (args.m == 0 || args.n == 0 || args.batch_count == 0) return Status::success();
    return run_ampere(args, stream);
  }

 private:
  static constexpr const char* kCopyWhat =
      "the K-major copy of tf32 A (column-major) or B (row-major) for the Hopper tier";

  // Whether `a` has an operand the Hopper tier would copy K-major: tf32 A column-major or B
  // row-major, in a problem with something to multiply.
  static bool has_operand_to_copy(const Arguments& a) {
    return (kCopyA || kCopyB) && a.m > 0 && a.n > 0 && a.k > 0 && a.batch_count > 0;
  }

  // Whether the Hopper tier copies A or B of `a` K-major: an operand to copy, 16-byte aligned
  // arguments (else the narrow kernel runs them), and no split-K or stream-K (which run on the
  // Ampere tier).
  static bool copies_operands(const Arguments& a) {
    return has_operand_to_copy(a) && vector_aligned(a) && split_k_slices(a).count <= 1 &&
           !stream_k_runs(a);
  }

  static KMajorWorkspace copy_layout(const Arguments& a) {
    return KMajorWorkspace::make(kCopyA, kCopyB, a.m, a.n, a.k, a.batch_count, a.batch_stride_a,
                                 a.batch_stride_b);
  }

  // The arguments GemmSm90 runs for `a`: A and B replaced by their K-major copies where made.
  static Arguments hopper_arguments(const Arguments& a) {
    Arguments h = a;
    if (!copies_operands(a)) return h;
    const KMajorWorkspace w = copy_layout(a);
    auto* base = static_cast<unsigned char*>(a.workspace);
    if (kCopyA) {
      h.a = reinterpret_cast<const ElementAB*>(base);
      h.lda = w.ld;
      h.batch_stride_a = w.batch_stride_a;
    }
    if (kCopyB) {
      h.b = reinterpret_cast<const ElementAB*>(base + w.offset_b);
      h.ldb = w.ld;
      h.batch_stride_b = w.batch_stride_b;
    }
    h.workspace = nullptr;
    h.workspace_bytes = 0;
    return h;
  }

  // The Hopper tier's parameters for `args` (already accepted by can_implement), if it takes
  // them: an sm_90a device, no split-K or stream-K, a workspace for the copies of tf32 operands
  // that are not K-major, and tensor maps TMA accepts. Otherwise the reason.
  template <class HopperParams>
  static Status hopper_params(HopperParams& p, const Arguments& args) {
    if (stream_k_runs(args))
      return Status::error(Status::Code::kInvalidArgument,
                           "GemmMultistage: stream_k = " + std::to_string(args.stream_k) +
                               " runs on the Ampere tier only");
    if (split_k_slices(args).count > 1)
      return Status::error(Status::Code::kInvalidArgument,
                           "GemmMultistage: split_k = " + std::to_string(args.split_k) +
                               " runs on the Ampere tier only");
    if (has_operand_to_copy(args)) {
      if (!vector_aligned(args))
        return Status::error(Status::Code::kInvalidArgument,
                             "GemmMultistage: tf32 with A column-major or B row-major takes the "
                             "Hopper tier only with 16-byte aligned arguments (the narrow kernel "
                             "runs the others)");
      if (args.workspace == nullptr)
        return Status::error(Status::Code::kInvalidArgument,
                             std::string("GemmMultistage: ") + kCopyWhat + " needs a workspace of " +
                                 std::to_string(workspace_size(args)) +
                                 " bytes (workspace_size(args)), but workspace is a null pointer; "
                                 "without one the call runs on the Ampere tier");
    }
    const Arguments h = hopper_arguments(args);
    Status s = HopperGemm::can_implement(h);
    if (s) s = HopperGemm::make_params(p, h);
    return s;
  }

  // The Hopper tier: the K-major copies of A and B where `args` needs them, then GemmSm90, all
  // on `stream`. `p` is hopper_params' for `args`.
  template <class HopperParams>
  static Status launch_hopper(const HopperParams& p, const Arguments& args, cudaStream_t stream) {
    if constexpr (kCopyA || kCopyB) {  // f16 and bf16 instantiations compile no copy kernel
      if (!copies_operands(args)) return HopperGemm::launch(p, stream);
      const KMajorWorkspace w = copy_layout(args);
      auto* base = static_cast<unsigned char*>(args.workspace);
      const int batches = args.batch_count;
      Status s;
      if (kCopyA)  // A column-major: K lines of M floats
        s = detail::transpose_to_k_major(
            {reinterpret_cast<const float*>(args.a), args.lda, args.batch_stride_a,
             reinterpret_cast<float*>(base), w.ld, w.batch_stride_a, args.m, args.k},
            w.batch_stride_a != 0 ? batches : 1, stream);
      if (s && kCopyB)  // B row-major: K lines of N floats
        s = detail::transpose_to_k_major(
            {reinterpret_cast<const float*>(args.b), args.ldb, args.batch_stride_b,
             reinterpret_cast<float*>(base + w.offset_b), w.ld, w.batch_stride_b, args.n, args.k},
            w.batch_stride_b != 0 ? batches : 1, stream);
      if (!s) return s;
    }
    return HopperGemm::launch(p, stream);
  }

  // The Ampere tier: split-K or stream-K where asked for, else the one kernel. The arguments have
  // been checked.
  static Status run_ampere(const Arguments& args, cudaStream_t stream) {
    if constexpr (StreamK) {
      if (stream_k_runs(args)) return run_stream_k(args, stream);
    }
    if constexpr (SplitK) {
      const SplitKSlices slices = split_k_slices(args);
      if (slices.count > 1) return run_split_k(args, slices, stream);
    }
    if constexpr (AnyAlignment) {
      if (!vector_aligned(args)) {
        using NarrowParams = typename NarrowKernel::Params;
        NarrowParams p = kernel_params<NarrowParams>(args);
        p.epilogue = {args.d, args.c, args.ldd, args.ldc, args.alpha, args.beta, args.layout_cd,
                      args.m, args.n, args.output_op};
        p.copy_bytes_a = detail::copy_bytes_of(args.a, args.lda, args.batch_stride_a, args.batch_count);
        p.copy_bytes_b = detail::copy_bytes_of(args.b, args.ldb, args.batch_stride_b, args.batch_count);
        return launch<NarrowKernel>(p, 1, args.batch_count, "the GemmMultistage narrow kernel launch",
                                    stream);
      }
    }
    Params p = kernel_params<Params>(args);
    p.epilogue = {args.d, args.c, args.ldd, args.ldc, args.alpha, args.beta, args.layout_cd,
                  args.m, args.n, args.output_op};
    return launch<Kernel>(p, 1, args.batch_count, "the GemmMultistage kernel launch", stream);
  }

  // Split-K's first kernel: the ordinary kernel over (tiles, slices, batches) with an f32
  // epilogue of its own into the workspace, shared by the GEMMs that differ only in D.
  using PartialEpilogue = StagedEpilogue<float, Policy, sizeof(typename Mainloop::SharedStorage)>;
  using PartialKernel = GemmKernel<Mainloop, PartialEpilogue, Raster, SliceReduction::kWorkspace>;

  static SplitKWorkspace workspace_layout(const Arguments& a, int slices) {
    return SplitKWorkspace::make(a.m, a.n, a.layout_cd, slices, a.batch_count);
  }

  // The fields of a GemmKernel's Params that come straight from the arguments.
  template <class P>
  static P kernel_params(const Arguments& a) {
    P p{};
    p.a = a.a;
    p.b = a.b;
    p.lda = a.lda;
    p.ldb = a.ldb;
    p.batch_stride_a = a.batch_stride_a;
    p.batch_stride_b = a.batch_stride_b;
    p.batch_stride_c = a.batch_stride_c;
    p.batch_stride_d = a.batch_stride_d;
    p.k = a.k;
    p.tiles_m = (a.m + Policy::Tile::kM - 1) / Policy::Tile::kM;
    p.tiles_n = (a.n + Policy::Tile::kN - 1) / Policy::Tile::kN;
    return p;
  }

  template <class K>
  static Status launch(const typename K::Params& p, int slices, int batches, const char* what,
                       cudaStream_t stream) {
    return detail::launch_gemm_kernel<K>(p, slices, batches, "GemmMultistage", what, stream);
  }

  // Split-K: the partial kernel, then the reduction. The arguments have been checked.
  static Status run_split_k(const Arguments& args, SplitKSlices slices, cudaStream_t stream) {
    const SplitKWorkspace ws = workspace_layout(args, slices.count);
    float* workspace = static_cast<float*>(args.workspace);
    using PartialParams = typename PartialKernel::Params;
    PartialParams p = kernel_params<PartialParams>(args);
    // Slab (slice, batch) is at (slice * batches + batch) * slab_elements, in D's orientation.
    p.batch_stride_d = ws.slab_elements;
    p.slice_stride_d = ws.slab_elements * args.batch_count;
    p.slices = slices;
    p.epilogue = {workspace, nullptr, ws.ld, 0, 1.0f, 0.0f, args.layout_cd, args.m, args.n, {}};
    const Status s = launch<PartialKernel>(p, slices.count, args.batch_count,
                                           "the split-K partial kernel launch", stream);
    if (!s) return s;

    const cudaError_t e = detail::reduce_split_k<ElementD, OutputOp>(
        args, workspace, ws, slices.count, args.batch_count, args.batch_stride_c,
        args.batch_stride_d, stream);
    if (e != cudaSuccess) return cuda_error("the split-K reduction kernel launch", e);
    return Status::success();
  }

  // Stream-K: zero the tile counters, then the persistent kernel. The arguments have been checked.
  static Status run_stream_k(const Arguments& args, cudaStream_t stream) {
    const StreamKPartition part = stream_k_partition(args);
    const StreamKWorkspace ws = StreamKWorkspace::make(part, Policy::Tile::kM, Policy::Tile::kN);
    using StreamKParams = typename StreamKKernel::Params;
    StreamKParams p = kernel_params<StreamKParams>(args);
    p.batches = args.batch_count;
    p.partition = part;
    p.partials = static_cast<float*>(args.workspace);
    p.counters = nullptr;
    p.epilogue = {args.d, args.c, args.ldd, args.ldc, args.alpha, args.beta, args.layout_cd,
                  args.m, args.n, args.output_op};
    if (ws.counters > 0) {
      p.counters = reinterpret_cast<std::uint32_t*>(static_cast<unsigned char*>(args.workspace) +
                                                    ws.counters_offset());
      const cudaError_t e = cudaMemsetAsync(p.counters, 0, ws.counters * sizeof(std::uint32_t), stream);
      if (e != cudaSuccess) return cuda_error("cudaMemsetAsync of the stream-K tile counters", e);
    }
    return detail::launch_gemm_kernel_on<StreamKKernel>(p, dim3(static_cast<unsigned>(part.blocks)),
                                                        "GemmMultistage",
                                                        "the stream-K kernel launch", stream);
  }

  static Status cuda_error(const char* what, cudaError_t e) {
    return Status::error(Status::Code::kCudaError, std::string("GemmMultistage: ") + what +
                                                       " failed: " + cudaGetErrorString(e));
  }

  static Status check_device() {
    int device = 0;
    cudaError_t e = cudaGetDevice(&device);
    if (e != cudaSuccess) return cuda_error("cudaGetDevice", e);
    int major = 0, minor = 0, smem_optin = 0;
    e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
    if (e == cudaSuccess)
      e = cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
    if (e != cudaSuccess) return cuda_error("cudaDeviceGetAttribute", e);
    return check_device_properties(device, major, minor, smem_optin);
  }
};

//! GemmMultistage with split-K compiled in (see GemmMultistage's `SplitK`).
template <class ElementAB, class ElementD, Layout LayoutA, Layout LayoutB, int Stages = 4,
          class OutputOp = Identity, class Tile = DefaultTileConfig<Stages>, bool AnyAlignment = true>
using GemmMultistageSplitK = GemmMultistage<ElementAB, ElementD, LayoutA, LayoutB, Stages, OutputOp,
                                            Tile, /*SplitK=*/true, AnyAlignment>;

//! GemmMultistage with stream-K compiled in (see GemmMultistage's `StreamK`).
template <class ElementAB, class ElementD, Layout LayoutA, Layout LayoutB, int Stages = 4,
          class OutputOp = Identity, class Tile = DefaultTileConfig<Stages>, bool AnyAlignment = true>
using GemmMultistageStreamK =
    GemmMultistage<ElementAB, ElementD, LayoutA, LayoutB, Stages, OutputOp, Tile, /*SplitK=*/false,
                   AnyAlignment, /*StreamK=*/true>;

}  // namespace tilepipe
