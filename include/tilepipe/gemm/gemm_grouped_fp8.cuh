#pragma once
//! \file
//! GemmGroupedFp8Sm90: the grouped GEMM (gemm_grouped.cuh) on FP8 operands, as DeepSeek-V3's
//! mixture-of-experts layers run: `G` problems `D_g = output_op(sum over k of scale_a * A_g[i][k]
//! * scale_b * B_g[j][k])` of one N and K whose row counts exist only on the device, in the
//! contiguous and masked forms, e4m3 or e5m2 A and B, each group's B `[N, K]` (K contiguous, as
//! wgmma reads fp8), D of bf16, f16 or f32. One persistent launch, no host read of the sizes.
//! Each k-tile of 128 is folded into f32 on the CUDA cores as in GemmFp8Sm90 (the mainloop's
//! per-k-block seam), the scales found per group (Fp8ScaleFold's `kStrided` groups):
//!
//! | mode | scale_a | scale_b |
//! | --- | --- | --- |
//! | kTensorwise | `scale_a[0]` | `scale_b[g]` |
//! | kRowwise | `scale_a[i]`, i a row of A (masked: `scale_a[g * m + i]`) | `scale_b[g * N + j]` |
//! | kBlockwise | `scale_a[kb * ld_scale_a + i]` (masked: `+ g * ceil(K/128) * ld_scale_a`) |
//! `scale_b[(g * ceil(N/128) + nb) * ld_scale_b + kb]` |
//!
//! with `kb = k / 128`, `nb = j / 128`, `ld_scale_a >= m` and `ld_scale_b >= ceil(K / 128)`:
//! block-wise, A has one scale per row per 128 of K (M-major, over all of A's rows in the
//! contiguous form) and each group's B one per 128 x 128 block. Row-wise B's column scales are
//! applied after the last k-tile, in the fold (the epilogue does not know a row's group).
//! Bad sizes are clamped and reported in `*status` as in GemmGroupedSm90; tiles are claimed on
//! demand where a workspace is given (else dealt), and a consumer warpgroup whose rows all lie
//! past its group's end issues no wgmma, as there.

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
#include "grouped_host.cuh"
#include "grouped_scheduler.cuh"
#include "kernel_sm90.cuh"
#include "launch.cuh"

namespace tilepipe {

//! The arguments of an FP8 grouped GEMM (GemmGroupedFp8Sm90): GemmGroupedArguments' members but
//! alpha, and the scales. Leading dimensions and strides in elements.
template <class ElementAB, class ElementD, class OutputOp = Identity>
struct GemmGroupedFp8Arguments {
  GroupedForm form = GroupedForm::kContiguous;
  int groups = 0;             //!< G (1 .. GemmGroupedFp8Sm90::kMaxGroups)
  int m = 0;                  //!< contiguous: rows of A and D; masked: rows of each group's A and D
  int n = 0, k = 0;           //!< every group's N and K
  const int* offs = nullptr;  //!< contiguous: G end rows, on the device
  const int* counts = nullptr;  //!< masked: G row counts, on the device
  const ElementAB* a = nullptr;
  std::int64_t lda = 0, batch_stride_a = 0;  //!< batch_stride_a: masked only
  const ElementAB* b = nullptr;              //!< `[G, N, K]`, K contiguous
  std::int64_t ldb = 0, batch_stride_b = 0;  //!< batch_stride_b: between groups' B (0: one B)
  ElementD* d = nullptr;
  std::int64_t ldd = 0, batch_stride_d = 0;  //!< batch_stride_d: masked only
  const float* scale_a = nullptr;            //!< on the device, as the table above says
  const float* scale_b = nullptr;            //!< on the device, as the table above says
  std::int64_t ld_scale_a = 0;               //!< kBlockwise: between A's k-blocks (>= m)
  std::int64_t ld_scale_b = 0;  //!< kBlockwise: between B's blocks of 128 rows (>= ceil(K/128))
  int* status = nullptr;  //!< optional, on the device: 0, or 1 + the first group whose size was bad
  //! Optional: `workspace_size(args)` (4) bytes on the device, zeroed by `launch` (one workspace
  //! per launch in flight): with it the blocks claim tiles on demand (GemmGroupedArguments').
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  OutputOp output_op{};  //!< applied to every scaled element of D
};

//! \tparam ElementAB  `__nv_fp8_e4m3` or `__nv_fp8_e5m2`
//! \tparam ElementD   `__nv_bfloat16`, `__half` or `float`
//! \tparam Scaling    the scale mode (the table above)
//! \tparam OutputOp   applied after the scales (output_ops.cuh)
//! \tparam Config     a HopperTileConfig of 128 cooperative rows without a cluster: GemmFp8Sm90's
//!                    128 x 128 tile with 6 stages (Fp8TileConfig; with the group table it takes
//!                    all 227 KB of shared memory) or its 128 x 256 one (Fp8WideTileConfig). By
//!                    default the wide one block-wise (on the H200 1.07-1.21 x the narrow one with
//!                    balanced groups, 0.90-1.07 x with Zipf-routed ones) and the narrow one
//!                    tensorwise and row-wise, whose fold is an add only there (the wide tile ran
//!                    0.89-1.12 x tensorwise, below 1.0 on 15 of 20 problems; performance log 62)
template <class ElementAB, class ElementD, Fp8Scaling Scaling, class OutputOp = Identity,
          class Config = std::conditional_t<Scaling == Fp8Scaling::kBlockwise, Fp8WideTileConfig,
                                            Fp8TileConfig>>
class GemmGroupedFp8Sm90 {
  static_assert(is_fp8_element_v<ElementAB>,
                "GemmGroupedFp8Sm90: A and B must be __nv_fp8_e4m3 or __nv_fp8_e5m2");
  static_assert(std::is_same_v<ElementD, __nv_bfloat16> || std::is_same_v<ElementD, __half> ||
                    std::is_same_v<ElementD, float>,
                "GemmGroupedFp8Sm90: D must be __nv_bfloat16, __half or float");
  static_assert(Config::kClusterM == 1 && Config::kM == 128 &&
                    Config::kSchedule == HopperSchedule::kCooperative,
                "GemmGroupedFp8Sm90: the tile must be 128 rows of two cooperative consumer "
                "warpgroups, without a cluster (Fp8TileConfig's or Fp8WideTileConfig's shape)");
  static_assert(Scaling != Fp8Scaling::kBlockwise || Config::kN % kFp8ScaleBlock == 0,
                "GemmGroupedFp8Sm90: block-wise scales need a tile of whole 128-wide scale "
                "blocks (128 or 256 wide)");

 public:
  using Arguments = GemmGroupedFp8Arguments<ElementAB, ElementD, OutputOp>;
  using Mainloop =
      WarpSpecializedMainloop<ElementAB, Layout::kRowMajor, Layout::kColumnMajor, Config>;
  using Accumulators = typename Mainloop::Accumulators;
  using Epilogue = WarpgroupEpilogue<ElementD, Accumulators, OutputOp>;
  using Fold = detail::Fp8ScaleFold<Scaling, Accumulators, detail::Fp8ScaleGroups::kStrided>;
  //! The most groups (GemmGroupedSm90's).
  static constexpr int kMaxGroups = 256;
  using Scheduler =
      GroupedScheduler<Config::kM, Config::kN, Config::kClusterM, GroupedRaster<8>, kMaxGroups>;
  using Kernel = GemmKernelSm90<Mainloop, Epilogue, GroupedRaster<8>, Fold, Scheduler>;
  using Params = typename Kernel::Params;
  using Host = detail::GroupedHost<Config::kM, Config::kN, Config::kClusterM, kMaxGroups>;
  static constexpr int kTileK = Mainloop::kTileK;
  static_assert(kTileK == kFp8ScaleBlock,
                "GemmGroupedFp8Sm90: a k-tile must be one 128-deep block of the scales");
  static constexpr std::size_t kSharedBytes = Kernel::kSharedBytes;
  static_assert(kSharedBytes <= 227 * 1024,
                "GemmGroupedFp8Sm90: this tile and stage count need more shared memory than an "
                "sm_90 block has (227 KB) beside the group table; use fewer stages");

  static bool available() { return hopper_tier_on_current_device(); }

  //! Bytes of `args.workspace`, for claiming tiles on demand: an int32 counter.
  static std::size_t workspace_size(const Arguments&) { return sizeof(unsigned); }

  //! The device-free checks; each failure names the argument.
  static Status check_arguments(const Arguments& a) {
    Status s = Host::sizes(kName, a);
    if (s) s = Host::claims(kName, a);
    if (s) s = Host::tiles(kName, a);
    if (!s || a.m == 0 || a.n == 0) return s;  // no element of D
    s = check_scales(a);
    if (s) s = Host::operands(kName, a, sizeof(ElementAB), sizeof(ElementD), true);
    return s;
  }

  //! `check_arguments`, then the device: an sm_90 GPU running `sm_90a` code.
  static Status can_implement(const Arguments& a) {
    const Status s = check_arguments(a);
    return s ? detail::hopper_tier_status(kName) : s;
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
    p.work.claims = static_cast<unsigned*>(a.workspace);
    if (a.m == 0 || a.n == 0) return Status::success();
    // The fold is built for every unit, also with K = 0 (tensorwise and row-wise read their
    // scales in its constructor; block-wise reads none without a k-tile).
    const bool masked = a.form == GroupedForm::kMasked;
    const std::int64_t blocks_n = (a.n + kFp8ScaleBlock - 1) / kFp8ScaleBlock;
    const std::int64_t k_blocks = (a.k + kFp8ScaleBlock - 1) / kFp8ScaleBlock;
    p.k_block.a = a.scale_a;
    p.k_block.b = a.scale_b;
    p.k_block.ld_a = a.ld_scale_a;
    p.k_block.ld_b = a.ld_scale_b;
    p.k_block.m = a.m;
    p.k_block.n = a.n;
    p.k_block.blocks_n = static_cast<int>(blocks_n);
    p.k_block.k_blocks = static_cast<int>(k_blocks);
    p.k_block.group_a = !masked                             ? 0
                        : Scaling == Fp8Scaling::kRowwise   ? a.m
                        : Scaling == Fp8Scaling::kBlockwise ? k_blocks * a.ld_scale_a
                                                            : 0;
    p.k_block.group_b = Scaling == Fp8Scaling::kTensorwise ? 1
                        : Scaling == Fp8Scaling::kRowwise  ? a.n
                                                           : blocks_n * a.ld_scale_b;
    return Host::template operand_params<Kernel, Epilogue, typename Mainloop::Loader>(kName, p, a,
                                                                                      1.0f);
  }

  //! Launches the persistent kernel for `p` (every resident block: the work is known only on the
  //! device); where D has no element, only the sizes' check, if `a.status` asks for it.
  static Status launch(const Params& p, const Arguments& a, cudaStream_t stream) {
    return Host::template launch<Kernel>(kName, p, a.m > 0 && a.n > 0, stream);
  }

 private:
  static constexpr const char* kName = "GemmGroupedFp8Sm90";

  // The scales (D has elements): pointers, and block-wise their leading dimensions.
  static Status check_scales(const Arguments& a) {
    // Block-wise scales of K = 0 have no element, and none is read.
    if (Scaling == Fp8Scaling::kBlockwise && a.k == 0) return Status::success();
    const auto vector = [](const char* name, const float* ptr) {
      if (ptr == nullptr) return Host::invalid(kName, std::string(name) + " is a null pointer");
      if (reinterpret_cast<std::uintptr_t>(ptr) % alignof(float) != 0)
        return Host::invalid(kName, std::string(name) + " is not aligned to 4 bytes (f32 scales)");
      return Status::success();
    };
    Status s = vector("scale_a", a.scale_a);
    if (s) s = vector("scale_b", a.scale_b);
    if (!s || Scaling != Fp8Scaling::kBlockwise) return s;
    const std::int64_t k_blocks = (a.k + kFp8ScaleBlock - 1) / kFp8ScaleBlock;
    if (a.ld_scale_a < a.m)
      return Host::invalid(kName, "ld_scale_a = " + std::to_string(a.ld_scale_a) +
                                      " is smaller than m = " + std::to_string(a.m) +
                                      " (block-wise scale_a holds m scales per 128 of K)");
    if (a.ld_scale_b < k_blocks)
      return Host::invalid(
          kName, "ld_scale_b = " + std::to_string(a.ld_scale_b) +
                     " is smaller than ceil(k / 128) = " + std::to_string(k_blocks) +
                     " (block-wise scale_b holds one scale per 128 x 128 block of B, K-major)");
    return Status::success();
  }
};

}  // namespace tilepipe
