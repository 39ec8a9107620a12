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
//! product lands in a second set of accumulators and is folded, scaled, into the f32 ones on the
//! CUDA cores (the mainloop's per-k-block seam, WarpSpecializedMainloop::consume with an
//! `on_k_block`), while the block's other consumer warpgroup keeps the tensor cores busy.
//!
//! Scale modes (`Fp8Scaling`), with `torch._scaled_mm`'s layouts:
//! | mode | scale_a | scale_b |
//! | --- | --- | --- |
//! | kTensorwise | `scale_a[0]` | `scale_b[0]` |
//! | kRowwise | `scale_a[i]`, one per row of A (M) | `scale_b[j]`, one per row of B = column of D
//! (N) | | kBlockwise | `scale_a[i + kb * ld_scale_a]`: per row, per 128 of K (M-major, `ld_scale_a
//! >= M`) | `scale_b[kb + nb * ld_scale_b]`: per 128 x 128 block of B (`ld_scale_b >= ceil(K /
//! 128)`) |
//!
//! where `kb = k / 128` and `nb = j / 128`. Tensorwise and block-wise scales are applied in the
//! fold; row-wise ones as A's in the fold and B's in the epilogue (a column scale per register
//! would cost the fold a register per column).

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
#include "gemm_sm90.cuh"
#include "kernel_sm90.cuh"
#include "launch.cuh"
#include "split_k.cuh"

namespace tilepipe {

//! How the f32 scales of an FP8 GEMM are laid out (gemm_fp8.cuh's table).
enum class Fp8Scaling {
  kTensorwise,  //!< one scale for A, one for B
  kRowwise,     //!< one per row of A, one per column of D
  kBlockwise,   //!< A: per row per 128 of K; B: per 128 x 128 block (DeepSeek-V3)
};

//! Rows, columns and depth of a scale block (kBlockwise): 128 of K, and 128 rows of B.
inline constexpr int kFp8ScaleBlock = 128;

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
  int split_k = 1;                 //!< slices of K (1: none), as GemmSm90's
  int stream_k = 0;                //!< stream-K's persistent blocks (0: none), as GemmSm90's
  void* workspace = nullptr;       //!< partial tiles of split-K and stream-K
  std::size_t workspace_bytes = 0;
  OutputOp output_op{};  //!< applied to every scaled element of D (output_ops.cuh)
};

namespace detail {

//! The k-block operator of an FP8 GEMM (GemmKernelSm90's `KBlockOp`): folds each k-tile's fp8
//! product into the f32 accumulators of one consumer warpgroup, times its scales.
template <Fp8Scaling Mode, class Accumulators>
class Fp8ScaleFold {
  static constexpr int kRegisters = Accumulators::kRegisters;
  //! Columns of the warpgroup's tile (N / 2 registers); 256 spans two blocks of B's scales.
  static constexpr int kN = 2 * kRegisters;
  static constexpr int kBlocksN = kN > kFp8ScaleBlock ? kN / kFp8ScaleBlock : 1;

 public:
  struct Params {
    const float* a = nullptr;
    const float* b = nullptr;
    std::int64_t ld_a = 0;  //!< kBlockwise
    std::int64_t ld_b = 0;  //!< kBlockwise
    int m = 0;              //!< rows of A: rows past it read row M - 1's scales (never stored)
    int blocks_n = 0;       //!< kBlockwise: B's blocks of 128 rows, ceil(N / 128)
    int k_blocks = 0;       //!< kBlockwise: ceil(K / 128)
  };

  //! For the warpgroup whose rows start at `m0`, columns at `n0`, k-tiles at `k_tile_begin`.
  TILEPIPE_DEVICE Fp8ScaleFold(const Params& p, int m0, int n0, int /*batch*/, int k_tile_begin) {
    const int t = static_cast<int>(threadIdx.x % 128);
    // This thread's two rows of the 64 (Accumulators::row_of: i / 2 % 2 picks the second).
    const int r0 = min(m0 + Accumulators::row_of(t, 0), p.m - 1);
    const int r1 = min(m0 + Accumulators::row_of(t, 2), p.m - 1);
    if constexpr (Mode == Fp8Scaling::kTensorwise) {
      s0_ = __ldg(p.a) * __ldg(p.b);
    } else if constexpr (Mode == Fp8Scaling::kRowwise) {
      s0_ = __ldg(p.a + r0);
      s1_ = __ldg(p.a + r1);
    } else {
      a0_ = p.a + r0;
      a1_ = p.a + r1;
      ld_a_ = p.ld_a;
      const int nb = n0 / kFp8ScaleBlock;
      b0_ = p.b + static_cast<std::int64_t>(nb) * p.ld_b;
      // A 256-wide tile's second block may lie past N: it then reads the first's scales.
      b1_ = nb + 1 < p.blocks_n ? b0_ + p.ld_b : b0_;
      k_block_ = k_tile_begin;
      last_k_block_ = p.k_blocks - 1;
      load(k_block_);
    }
  }

  //! Block-wise: takes k-tile `kt`'s scales, loaded one k-tile earlier, and starts loading the
  //! next one's, which then arrive during this k-tile's wait, wgmmas and fold. Called before the
  //! consumer waits for k-tile `kt` (kt = 0, 1, ... in order).
  TILEPIPE_DEVICE void prefetch(int /*kt*/) {
    if constexpr (Mode == Fp8Scaling::kBlockwise) {
      s0_ = la0_ * lb0_;
      s1_ = la1_ * lb0_;
      if constexpr (kBlocksN == 2) {
        s2_ = la0_ * lb1_;
        s3_ = la1_ * lb1_;
      }
      k_block_ = min(k_block_ + 1, last_k_block_);
      load(k_block_);
    }
  }

  //! `acc += partial * scale`, the scale of each register's row (and block of columns).
  TILEPIPE_DEVICE void operator()(Accumulators& acc, const Accumulators& partial, int) const {
    TILEPIPE_UNROLL
    for (int i = 0; i < kRegisters; ++i) {
      const bool second_row = (i / 2) % 2 != 0;
      float s;
      if constexpr (Mode == Fp8Scaling::kTensorwise) {
        s = s0_;
      } else if constexpr (kBlocksN == 2) {
        const bool second_block = i >= kRegisters / 2;  // columns 128.. (col_of: 8 * (i / 4))
        s = second_block ? (second_row ? s3_ : s2_) : (second_row ? s1_ : s0_);
      } else {
        s = second_row ? s1_ : s0_;
      }
      acc.x[i] = fmaf(partial.x[i], s, acc.x[i]);
    }
  }

 private:
  // Starts loading the scales of k-block `kb` (block-wise).
  TILEPIPE_DEVICE void load(int kb) {
    const std::int64_t ka = static_cast<std::int64_t>(kb) * ld_a_;
    la0_ = __ldg(a0_ + ka);
    la1_ = __ldg(a1_ + ka);
    lb0_ = __ldg(b0_ + kb);
    if constexpr (kBlocksN == 2) lb1_ = __ldg(b1_ + kb);
  }

  float s0_ = 0.0f, s1_ = 0.0f, s2_ = 0.0f, s3_ = 0.0f;      // this k-tile's, per row and block
  float la0_ = 0.0f, la1_ = 0.0f, lb0_ = 0.0f, lb1_ = 0.0f;  // the next one's, as loaded
  const float* a0_ = nullptr;  // scale_a of this thread's two rows, k-block 0
  const float* a1_ = nullptr;
  const float* b0_ = nullptr;  // scale_b of the tile's (two) blocks of columns, k-block 0
  const float* b1_ = nullptr;
  std::int64_t ld_a_ = 0;
  int k_block_ = 0, last_k_block_ = 0;
};

}  // namespace detail

//! Whether the current build and device can run GemmFp8Sm90: the Hopper tier's condition.
//!
//! \tparam ElementAB  `__nv_fp8_e4m3` or `__nv_fp8_e5m2` (A and B)
//! \tparam ElementD   `__nv_bfloat16`, `__half` or `float`
//! \tparam Scaling    the scale mode (Fp8Scaling)
//! \tparam OutputOp   applied after the scales (output_ops.cuh)
//! \tparam Config     a HopperTileConfig; its consumer warpgroups hold two sets of accumulators
//!                    (the running f32 sums and one k-tile's), so a warpgroup's N is at most 128
//!                    in practice (256 would need 256 registers for them alone)
template <class ElementAB, class ElementD, Fp8Scaling Scaling, class OutputOp = Identity,
          class Config = HopperTileConfig<128, 128, 6, 1>>
class GemmFp8Sm90 {
  static_assert(is_fp8_element_v<ElementAB>,
                "GemmFp8Sm90: A and B must be __nv_fp8_e4m3 or __nv_fp8_e5m2");
  static_assert(std::is_same_v<ElementD, __nv_bfloat16> || std::is_same_v<ElementD, __half> ||
                    std::is_same_v<ElementD, float>,
                "GemmFp8Sm90: D must be __nv_bfloat16, __half or float");

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
    const int im = Kernel::items_m(a.m), in = Kernel::items_n(a.n);
    const int kt = Mainloop::k_tiles(a.k);
    if (a.stream_k > 0) {
      const int sk = a.stream_k / Config::kClusterM;
      return Scheduler::stream_k(im, in, 1, kt, sk > 0 ? sk : 1);
    }
    if (a.split_k > 1)
      return Scheduler::split_k(im, in, 1, kt, split_k_slices(a.k, a.split_k, kTileK).count,
                                workers);
    return Scheduler::data_parallel(im, in, 1, kt, workers);
  }

  //! The number of blocks that fit on the current device at once (`stream_k` for one wave).
  static Status stream_k_blocks(int& blocks) {
    int clusters = 0;
    const Status s = KernelLauncher<Kernel>::resident_clusters(dim3(Config::kClusterM, 1, 1),
                                                               &clusters, "GemmFp8Sm90");
    blocks = clusters * Config::kClusterM;
    return s;
  }

  static bool available() {
    int device = 0;
    return cudaGetDevice(&device) == cudaSuccess && hopper_tier_available(device);
  }

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
    Status s = check_arguments(a);
    if (!s) return s;
    if (!available())
      return Status::error(Status::Code::kUnsupportedDevice,
                           "GemmFp8Sm90: the current device does not run the Hopper tier (it "
                           "needs an sm_90 GPU and a build for sm_90a, CMake architecture 90a)");
    return Status::success();
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
    Status s = stream_k_blocks(workers);
    if (!s) return s;
    workers /= Config::kClusterM;
    if (workers <= 0)
      return Status::error(Status::Code::kUnsupportedDevice,
                           "GemmFp8Sm90: no block of this kernel fits on the current device");
    p.work = scheduler(a, workers);
    if (Kernel::workspace_bytes(p.work) > 0) {
      auto* base = static_cast<unsigned char*>(a.workspace);
      p.counters = reinterpret_cast<std::uint64_t*>(base);
      p.epoch = detail::next_epoch();
      p.partials = reinterpret_cast<float*>(base + Kernel::counter_bytes(p.work));
    }
    const auto g = gemm_arguments(a);
    s = Epilogue::make_params(p.epilogue, output_params(g), 0, 0, 1);
    if (!s || a.k == 0) return renamed(s);
    p.k_block.a = a.scale_a;
    p.k_block.b = a.scale_b;
    p.k_block.ld_a = a.ld_scale_a;
    p.k_block.ld_b = a.ld_scale_b;
    p.k_block.m = a.m;
    p.k_block.blocks_n = (a.n + kFp8ScaleBlock - 1) / kFp8ScaleBlock;
    p.k_block.k_blocks = (a.k + kFp8ScaleBlock - 1) / kFp8ScaleBlock;
    return renamed(
        Mainloop::Loader::make_params(p.load, a.a, a.lda, 0, a.b, a.ldb, 0, a.m, a.n, a.k, 1));
  }

  static Status launch(const Params& p, cudaStream_t stream) {
    if (p.work.items() == 0) return Status::success();
    const dim3 cluster(Config::kClusterM, 1, 1);
    const auto blocks = static_cast<unsigned>(p.work.workers() * Config::kClusterM);
    return KernelLauncher<Kernel>::launch(p, {dim3(blocks), cluster}, stream, "GemmFp8Sm90");
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
