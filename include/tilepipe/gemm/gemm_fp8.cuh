#pragma once
//! \file
//! GemmFp8Sm90: FP8 (e4m3, e5m2) GEMM on the Hopper tier with f32 scales, as FP8 models are
//! trained and served: `D = output_op(sum over k of scale_a * A[i][k] * scale_b * B[j][k])`, A
//! row-major (M x K), B stored N x K (K contiguous; column-major as a K x N matrix), D row-major
//! in f16, bf16 or f32. wgmma reads fp8 operands only K-major (the PTX ISA has no transpose for
//! them), and cuBLASLt takes FP8 in the same "TN" form.
//!
//! The tensor cores' own fp8 accumulation keeps fewer bits than f32 (the DeepSeek-V3 report puts
//! it near 14), so this GEMM never lets them accumulate past one k-tile of 128: each k-tile's
//! product lands in a second set of accumulators and is folded (added, or block-wise scaled) into
//! the f32 ones on the CUDA cores (the mainloop's per-k-block seam,
//! WarpSpecializedMainloop::consume with an `on_k_block`), while the block's other consumer
//! warpgroup keeps the tensor cores busy.
//!
//! Scale modes (`Fp8Scaling`), with `torch._scaled_mm`'s layouts:
//! | mode | scale_a | scale_b |
//! | --- | --- | --- |
//! | kTensorwise | `scale_a[0]` | `scale_b[0]` |
//! | kRowwise | `scale_a[i]`: per row of A (M) | `scale_b[j]`: per row of B, column of D (N) |
//! | kBlockwise | `scale_a[i + kb * ld_scale_a]` | `scale_b[kb + nb * ld_scale_b]` |
//!
//! where `kb = k / 128` and `nb = j / 128`: block-wise, A has a scale per row per 128 of K
//! (M-major, `ld_scale_a >= M`), B one per 128 x 128 block (`ld_scale_b >= ceil(K / 128)`).
//! Block-wise scales are applied in the fold; tensorwise and row-wise k-tiles are folded by an
//! add and A's scale (with B's, tensorwise) applied once after the last, row-wise B's in the
//! epilogue (a column scale per register would cost the fold a register per column).

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
#include "arguments.cuh"
#include "fp8_scale_fold.cuh"
#include "fp8_schedule.cuh"
#include "kernel_sm90.cuh"
#include "persistent_sm90.cuh"
#include "split_k.cuh"

namespace tilepipe {

//! GemmFp8Sm90's tiles: 128 x 128 x 128 with 6 stages (the default), 128 x 256 x 128 with 4,
//! 64 x 128 x 128 with 8 for decode-sized M, and for M <= 128 192 wide with 4 (128 rows) and 6
//! (64 rows) stages and 64 x 64 with 12, or with 11 and two consumer warpgroups that take
//! alternate k-tiles, and 64 x 256 with 4, two consumer warpgroups taking 128 columns each
//! (Config below says when each is faster).
using Fp8TileConfig = HopperTileConfig<128, 128, 6, 1>;
using Fp8WideTileConfig = HopperTileConfig<128, 256, 4, 1>;
using Fp8DecodeTileConfig = HopperTileConfig<64, 128, 8, 1>;
using Fp8Tile192Config = HopperTileConfig<128, 192, 4, 1>;
using Fp8DecodeTile192Config = HopperTileConfig<64, 192, 6, 1>;
using Fp8DecodeTile64Config = HopperTileConfig<64, 64, 12, 1>;
using Fp8DecodeTile64KInterleavedConfig =
    HopperTileConfig<64, 64, 11, 1, HopperSchedule::kKInterleaved>;
using Fp8DecodeTile256SplitConfig = HopperTileConfig<64, 256, 4, 1, HopperSchedule::kSplitColumns>;

//! The arguments of an FP8 GEMM (GemmFp8Sm90). One problem; no batches.
template <class ElementAB, class ElementD, class OutputOp = Identity>
struct GemmFp8Arguments {
  int m = 0, n = 0, k = 0;
  const ElementAB* a = nullptr;  //!< M x K, row-major: `a[i * lda + k]`
  const ElementAB* b = nullptr;  //!< N x K, K contiguous: `b[j * ldb + k]`
  ElementD* d = nullptr;         //!< M x N, row-major: `d[i * ldd + j]`
  std::int64_t lda = 0, ldb = 0, ldd = 0;
  const float* scale_a = nullptr;  //!< on the device, as `Fp8Scaling` says
  const float* scale_b = nullptr;  //!< on the device, as `Fp8Scaling` says
  std::int64_t ld_scale_a = 0;     //!< kBlockwise: between A's k-blocks (>= M)
  std::int64_t ld_scale_b = 0;     //!< kBlockwise: between B's blocks of 128 rows (>= ceil(K/128))
  //! Slices of K (1: none) and stream-K's persistent blocks (0: none), as GemmSm90's; for a
  //! measured choice per shape, Fp8ScheduleHeuristic::select (fp8_schedule.cuh).
  int split_k = 1;
  int stream_k = 0;
  void* workspace = nullptr;  //!< partial tiles of split-K and stream-K
  std::size_t workspace_bytes = 0;
  OutputOp output_op{};  //!< applied to every scaled element of D (output_ops.cuh)
};

//! Whether the current build and device can run GemmFp8Sm90: the Hopper tier's condition.
//!
//! \tparam ElementAB  `__nv_fp8_e4m3` or `__nv_fp8_e5m2` (A and B)
//! \tparam ElementD   `__nv_bfloat16`, `__half` or `float`
//! \tparam Scaling    the scale mode (Fp8Scaling)
//! \tparam OutputOp   applied after the scales (output_ops.cuh)
//! \tparam Config     a HopperTileConfig: Fp8TileConfig (128 x 128, 6 stages; each consumer
//!                    warpgroup holds the running f32 sums and two k-tiles' products, so that its
//!                    own wgmmas run through its folds) or Fp8WideTileConfig (128 x 256, 4 stages;
//!                    the sums take 128 registers, so each k-tile is multiplied and folded in two
//!                    halves into one set of half the width, the other warpgroup's wgmmas running
//!                    through the folds). Per byte that reaches shared memory the wide tile does
//!                    a third more multiplies: on the H200, 4096 x 7168 x 16384 ran 1.02 x
//!                    (tensorwise) and 1.10 x (block-wise) as fast, but it has half as many tiles.
//!                    Or Fp8DecodeTileConfig (64 x 128, 8 stages, one consumer warpgroup): no rows
//!                    wasted at M = 64, twice the tiles at M = 128 (fewer K slices), and 128 KB
//!                    of B in flight per SM where the 128-row tile has 96 KB: where B streams from
//!                    DRAM (M up to a few hundred, K long) it ran 1.05-1.7 x as fast on the H200.
//!                    Or Fp8Tile192Config / Fp8DecodeTile192Config (128 or 64 x 192; one set of
//!                    partial products, each k-tile folded once its wgmmas complete), tensorwise
//!                    and row-wise only (a 192-wide tile straddles B's 128-wide scale blocks):
//!                    where N / 192 tiles fill one wave and N / 128 or N / 256 leave a partial
//!                    one (M <= 128, N = 24576 on 132 SMs), 1.13-1.22 x as fast on the H200.
//!                    Or Fp8DecodeTile64Config (64 x 64, 12 stages, one consumer warpgroup):
//!                    twice the 64 x 128 tile's tiles, so fewer K slices where those are few
//!                    (1.02-1.17 x on the decode shapes whose tiles then fit one wave).
//!                    Or Fp8DecodeTile64KInterleavedConfig (64 x 64, 11 stages, two consumer
//!                    warpgroups taking alternate k-tiles of each tile, one adding the other's
//!                    sums through shared memory; tensorwise and row-wise): where the 64 x 64
//!                    tile runs unsplit, its one warpgroup's folds and wgmma latency set the pace;
//!                    two ran 1.05-1.18 x as fast on the H200 with K >= 2048 (log 60). Split,
//!                    its slices meet through the workspace (no cluster), and it lost there.
//!                    Or Fp8DecodeTile256SplitConfig (64 x 256, 4 stages, two consumer
//!                    warpgroups of 128 columns each, every mode): at M <= 64 with many
//!                    columns, one wave of tiles where the 64 x 128 tile needs two (1.03-1.28 x
//!                    on the H200 at N = 24576 and 32768, log 61).
//!                    Fp8ScheduleHeuristic picks one per shape (fp8_schedule.cuh)
template <class ElementAB, class ElementD, Fp8Scaling Scaling, class OutputOp = Identity,
          class Config = Fp8TileConfig>
class GemmFp8Sm90 {
  static_assert(is_fp8_element_v<ElementAB>,
                "GemmFp8Sm90: A and B must be __nv_fp8_e4m3 or __nv_fp8_e5m2");
  static_assert(std::is_same_v<ElementD, __nv_bfloat16> || std::is_same_v<ElementD, __half> ||
                    std::is_same_v<ElementD, float>,
                "GemmFp8Sm90: D must be __nv_bfloat16, __half or float");
  static_assert(Scaling != Fp8Scaling::kBlockwise || Config::kN % kFp8ScaleBlock == 0 ||
                    kFp8ScaleBlock % Config::kN == 0,
                "GemmFp8Sm90: block-wise scales need a tile whose columns fit B's 128-wide scale "
                "blocks (64, 128 or 256 wide; a 192-wide tile straddles them)");
  static_assert(Scaling != Fp8Scaling::kBlockwise || !Config::kKInterleaved,
                "GemmFp8Sm90: k-interleaved consumers (Fp8DecodeTile64KInterleavedConfig) take "
                "tensorwise and row-wise scales only");

 public:
  using Arguments = GemmFp8Arguments<ElementAB, ElementD, OutputOp>;
  //! The epilogue's operator: row-wise B scales per column of D, then the caller's.
  using EpilogueOp = std::conditional_t<Scaling == Fp8Scaling::kRowwise,
                                        Chain<ScalePerCol<float>, OutputOp>, OutputOp>;
  using Mainloop =
      WarpSpecializedMainloop<ElementAB, Layout::kRowMajor, Layout::kColumnMajor, Config>;
  using Accumulators = typename Mainloop::Accumulators;
  using Epilogue = WarpgroupEpilogue<ElementD, Accumulators, EpilogueOp>;
  using Fold = detail::Fp8ScaleFold<Scaling, Accumulators>;
  using Kernel = GemmKernelSm90<Mainloop, Epilogue, GroupedRaster<8>, Fold>;
  using Params = typename Kernel::Params;
  using Scheduler = typename Kernel::Scheduler;
  using Host = PersistentSm90<Kernel>;
  //! k per k-tile: 128 fp8 elements, one 128-byte swizzle row and one scale block.
  static constexpr int kTileK = Mainloop::kTileK;
  static_assert(kTileK == kFp8ScaleBlock,
                "GemmFp8Sm90: a k-tile must be one 128-deep block of the scales");
  static constexpr std::size_t kSharedBytes = Kernel::kSharedBytes;
  static_assert(kSharedBytes <= 227 * 1024,
                "GemmFp8Sm90: this tile and stage count need more shared memory than an sm_90 "
                "block has (227 KB); use fewer stages or a smaller tile");

  //! Bytes of workspace `run` needs: f32 partial tiles where split-K or stream-K cut tiles.
  static std::size_t workspace_size(const Arguments& a) {
    if (a.m <= 0 || a.n <= 0 || a.k <= 0) return 0;
    return Kernel::workspace_bytes(scheduler(a, 1));
  }

  //! As GemmSm90::scheduler.
  static Scheduler scheduler(const Arguments& a, int workers) {
    return Host::schedule(a.m, a.n, 1, a.k, a.split_k, a.stream_k, workers);
  }

  //! The number of blocks that fit on the current device at once (`stream_k` for one wave).
  static Status stream_k_blocks(int& blocks) {
    int clusters = 0;
    const Status s = Host::resident_clusters(clusters, "GemmFp8Sm90");
    blocks = clusters * Config::kClusterM;
    return s;
  }

  static bool available() { return hopper_tier_on_current_device(); }

  //! The device-free checks: extents, A, B and D (A and B 16-byte aligned with leading
  //! dimensions of a multiple of 16 bytes, as TMA needs), the scales, split-K, stream-K and the
  //! workspace. Each failure names the argument.
  static Status check_arguments(const Arguments& a) {
    using Checks = detail::GemmArgumentChecks<Layout::kRowMajor, Layout::kColumnMajor>;
    const auto g = gemm_arguments(a);
    Status s = renamed(Checks::check_stream_k_request(g));
    if (!s) return s;
    if (a.m > 0 && a.n > 0) {
      s = check_scales(a);
      if (!s) return s;
    }
    const std::size_t workspace = workspace_size(a);
    s = Checks::check(g, Config::kM, Config::kN, split_k_slices(a.k, a.split_k, kTileK),
                      a.stream_k > 0 ? 0 : workspace, /*split_k_compiled=*/true,
                      /*any_alignment=*/true);
    if (s) s = Checks::check_ab_vector_aligned(g);
    if (s) s = Checks::check_stream_k(g, a.stream_k > 0, workspace, /*compiled=*/true);
    return renamed(s);
  }

  static Status can_implement(const Arguments& a) {
    const Status s = check_arguments(a);
    return s ? detail::hopper_tier_status("GemmFp8Sm90") : s;
  }

  static Status run(const Arguments& a, cudaStream_t stream = nullptr) {
    Status s = can_implement(a);
    if (!s) return s;
    Params p{};
    s = make_params(p, a);
    if (!s) return s;
    return launch(p, stream);
  }

  //! The kernel's parameters for arguments that passed `check_arguments`.
  static Status make_params(Params& p, const Arguments& a) {
    p.k = a.k;
    if (a.m == 0 || a.n == 0) {
      p.work = Scheduler::data_parallel(0, 0, 0, 0, 1);
      return Status::success();
    }
    int workers = 0;
    Status s = Host::resident_clusters(workers, "GemmFp8Sm90");
    if (!s) return s;
    p.work = scheduler(a, workers);
    s = Host::reduce_in_clusters(p, a.m, a.n, 1, a.k, "GemmFp8Sm90");
    if (!s) return s;
    Host::attach_workspace(p, a.workspace);
    const auto g = gemm_arguments(a);
    s = Epilogue::make_params(p.epilogue, output_params(g), 0, 0, 1);
    if (!s) return renamed(s);
    // The fold is built for every unit, also with K = 0, where tensorwise and row-wise read
    // their scales in its constructor (block-wise reads none without a k-tile).
    p.k_block.a = a.scale_a;
    p.k_block.b = a.scale_b;
    p.k_block.ld_a = a.ld_scale_a;
    p.k_block.ld_b = a.ld_scale_b;
    p.k_block.m = a.m;
    p.k_block.blocks_n = (a.n + kFp8ScaleBlock - 1) / kFp8ScaleBlock;
    p.k_block.k_blocks = (a.k + kFp8ScaleBlock - 1) / kFp8ScaleBlock;
    if (a.k == 0) return Status::success();  // A and B are not read
    return renamed(
        Mainloop::Loader::make_params(p.load, a.a, a.lda, 0, a.b, a.ldb, 0, a.m, a.n, a.k, 1));
  }

  static Status launch(const Params& p, cudaStream_t stream) {
    return Host::launch(p, stream, "GemmFp8Sm90");
  }

 private:
  // The arguments as GemmSm90's, for the shared checks and the epilogue. (With K = 0 the fold
  // never runs and D = output_op(0), times B's scales in the row-wise epilogue.)
  static GemmArguments<ElementAB, ElementD, EpilogueOp> gemm_arguments(const Arguments& a) {
    GemmArguments<ElementAB, ElementD, EpilogueOp> g;
    g.m = a.m;
    g.n = a.n;
    g.k = a.k;
    g.a = a.a;
    g.b = a.b;
    g.d = a.d;
    g.lda = a.lda;
    g.ldb = a.ldb;
    g.ldd = a.ldd;
    g.layout_cd = Layout::kRowMajor;
    g.split_k = a.split_k;
    g.stream_k = a.stream_k;
    g.workspace = a.workspace;
    g.workspace_bytes = a.workspace_bytes;
    if constexpr (Scaling == Fp8Scaling::kRowwise) {
      g.output_op.template get<0>().scale = a.scale_b;
      g.output_op.template get<1>() = a.output_op;
    } else {
      g.output_op = a.output_op;
    }
    return g;
  }

  static Status check_scales(const Arguments& a) {
    const auto vector = [](const char* name, const float* p) {
      if (p == nullptr) return invalid(std::string(name) + " is a null pointer");
      if (reinterpret_cast<std::uintptr_t>(p) % alignof(float) != 0)
        return invalid(std::string(name) + " is not aligned to 4 bytes (f32 scales)");
      return Status::success();
    };
    // Block-wise scales of K = 0 have no element, and none is read.
    if (Scaling == Fp8Scaling::kBlockwise && a.k == 0) return Status::success();
    Status s = vector("scale_a", a.scale_a);
    if (s) s = vector("scale_b", a.scale_b);
    if (!s || Scaling != Fp8Scaling::kBlockwise) return s;
    const std::int64_t k_blocks = (a.k + kFp8ScaleBlock - 1) / kFp8ScaleBlock;
    if (a.ld_scale_a < a.m)
      return invalid("ld_scale_a = " + std::to_string(a.ld_scale_a) +
                     " is smaller than m = " + std::to_string(a.m) +
                     " (block-wise scale_a holds M scales per 128 of K, M-major)");
    if (a.ld_scale_b < k_blocks)
      return invalid("ld_scale_b = " + std::to_string(a.ld_scale_b) + " is smaller than ceil(k / " +
                     "128) = " + std::to_string(k_blocks) +
                     " (block-wise scale_b holds one scale per 128 x 128 block of B, K-major)");
    return Status::success();
  }

  static Status invalid(const std::string& msg) {
    return Status::error(Status::Code::kInvalidArgument, "GemmFp8Sm90: " + msg);
  }

  // The shared checks name GemmMultistage; say which GEMM refused.
  static Status renamed(Status s) {
    if (s) return s;
    std::string m = s.message();
    const std::string from = "GemmMultistage: ";
    if (m.rfind(from, 0) == 0) m = m.substr(from.size());
    return Status::error(s.code(), "GemmFp8Sm90: " + m);
  }
};

}  // namespace tilepipe
