#pragma once
// The problems that the operators (ops.cpp and the other *_op.cpp files, built by the host
// compiler with the torch headers) hand to the GEMMs (gemm.cu, scaled_mm.cu, grouped_mm.cu and
// the generated instances, built by nvcc without them): plain pointers, extents and strides, so
// that neither side needs the other's headers.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include <tilepipe/layout/tile_shape.cuh>
#include <tilepipe/status.cuh>

namespace tilepipe_torch {

enum class DType { kF16, kBF16, kF32, kE4M3, kE5M2 };

//! What is applied to `A * B + bias` before D is stored.
enum class Activation { kNone, kRelu, kGelu, kGeluTanh, kSilu };

//! One matrix operand as tilepipe sees it: storage order, leading dimension and batch stride, in
//! elements (tilepipe's GemmArguments). Any of them may be unaligned: GemmAuto takes them.
struct Operand {
  const void* data = nullptr;
  tilepipe::Layout layout = tilepipe::Layout::kRowMajor;
  std::int64_t ld = 0;
  std::int64_t batch_stride = 0;
};

//! D[i] = act(A[i] * B[i] + bias) for i < batch; D is row-major.
struct Problem {
  DType ab = DType::kF16;  //!< A and B: kF16 or kBF16
  DType d = DType::kF16;   //!< D: the same as A and B, or kF32
  int batch = 1, m = 0, n = 0, k = 0;
  Operand a, b;
  void* d_data = nullptr;
  std::int64_t ldd = 0, batch_stride_d = 0;
  const void* bias = nullptr;     //!< n values, one per column of D, or null
  DType bias_type = DType::kF32;  //!< the bias's element type: A's or kF32
  Activation activation = Activation::kNone;
  void* workspace = nullptr;  //!< workspace_size(p) bytes (GemmAuto's)
  std::size_t workspace_bytes = 0;
};

//! Runs `p` on `stream` (the current device's) through tilepipe::GemmAuto, which picks the tile,
//! the tier and the split per problem.
tilepipe::Status run_gemm(const Problem& p, cudaStream_t stream);

//! The bytes of workspace `run_gemm(p)` needs on the current device (0 for most problems).
std::size_t workspace_size(const Problem& p);

//! How an FP8 product is scaled (tilepipe::Fp8Scaling; this header stays free of device code).
enum class ScaleMode { kTensorwise, kRowwise, kBlockwise };

//! D = (scale_a * A) (scale_b * B) with A and B in fp8 (tilepipe::GemmFp8Sm90): A is M x K
//! row-major, B is stored N x K (K contiguous), D is M x N row-major; the scales as GemmFp8Sm90
//! takes them (gemm/gemm_fp8.cuh).
struct ScaledMmProblem {
  DType ab = DType::kE4M3;  //!< A and B: kE4M3 or kE5M2
  DType d = DType::kBF16;   //!< D: kBF16, kF16 or kF32
  ScaleMode scaling = ScaleMode::kTensorwise;
  int m = 0, n = 0, k = 0;
  const void* a = nullptr;
  const void* b = nullptr;
  void* d_data = nullptr;
  std::int64_t lda = 0, ldb = 0, ldd = 0;
  const float* scale_a = nullptr;
  const float* scale_b = nullptr;
  std::int64_t ld_scale_a = 0, ld_scale_b = 0;  //!< kBlockwise
  void* workspace = nullptr;                    //!< scaled_mm_workspace_size(p) bytes
  std::size_t workspace_bytes = 0;
};

//! Runs `p` on `stream` through tilepipe::GemmFp8Sm90, split-K or stream-K as
//! tilepipe::Fp8ScheduleHeuristic chooses for the current device.
tilepipe::Status run_scaled_mm(const ScaledMmProblem& p, cudaStream_t stream);

//! The bytes of workspace `run_scaled_mm(p)` needs on the current device.
std::size_t scaled_mm_workspace_size(const ScaledMmProblem& p);

//! G products D_g = A_g B_g of one N and K whose row counts are on the device
//! (tilepipe::GemmGroupedSm90): A and D row-major, the groups' rows one after the other (group g
//! ends at row `sizes[g]`) or, `masked`, a block of `m` rows per group (group g's first
//! `sizes[g]` valid); B `[G, N, K]` (`layout_b` kColumnMajor) or `[G, K, N]` (kRowMajor).
//! Leading dimensions and strides in elements.
struct GroupedMmProblem {
  DType ab = DType::kBF16;  //!< A and B: kBF16 or kF16
  DType d = DType::kBF16;   //!< D: A's type, or kF32 with kBF16
  bool masked = false;
  tilepipe::Layout layout_b = tilepipe::Layout::kColumnMajor;
  int groups = 0, m = 0, n = 0, k = 0;  //!< m: A's rows (contiguous) or each group's (masked)
  const int* sizes = nullptr;           //!< G int32 on the device: end rows or row counts
  const void* a = nullptr;
  std::int64_t lda = 0, batch_stride_a = 0;
  const void* b = nullptr;
  std::int64_t ldb = 0, batch_stride_b = 0;
  void* d_data = nullptr;
  std::int64_t ldd = 0, batch_stride_d = 0;
  void* claims = nullptr;  //!< an int32 on the device: the blocks claim tiles on demand
};

//! Runs `p` on `stream` in one launch, with no host read of the sizes (sizes out of range are
//! clamped into A's and D's rows, as GemmGroupedSm90 does).
tilepipe::Status run_grouped_mm(const GroupedMmProblem& p, cudaStream_t stream);

//! G products D_g = (scale_a A_g)(scale_b B_g) on fp8 operands of one N and K whose row counts
//! are on the device (tilepipe::GemmGroupedFp8Sm90): A and D row-major, the groups' rows one
//! after the other (group g ends at row `sizes[g]`) or, `masked`, a block of `m` rows per group
//! (group g's first `sizes[g]` valid); B `[G, N, K]` (K contiguous); the scales as
//! GemmGroupedFp8Sm90 takes them (gemm/gemm_grouped_fp8.cuh). Leading dimensions and strides
//! in elements.
struct ScaledGroupedMmProblem {
  DType ab = DType::kE4M3;  //!< A and B: kE4M3 or kE5M2
  DType d = DType::kBF16;   //!< D: kBF16
  ScaleMode scaling = ScaleMode::kRowwise;
  bool masked = false;
  int groups = 0, m = 0, n = 0, k = 0;  //!< m: A's rows (contiguous) or each group's (masked)
  const int* sizes = nullptr;           //!< G int32 on the device: end rows or row counts
  const void* a = nullptr;
  std::int64_t lda = 0, batch_stride_a = 0;
  const void* b = nullptr;
  std::int64_t ldb = 0, batch_stride_b = 0;
  void* d_data = nullptr;
  std::int64_t ldd = 0, batch_stride_d = 0;
  const float* scale_a = nullptr;
  const float* scale_b = nullptr;
  std::int64_t ld_scale_a = 0, ld_scale_b = 0;  //!< kBlockwise
  void* claims = nullptr;  //!< an int32 on the device: the blocks claim tiles on demand
};

//! Runs `p` on `stream` in one launch, with no host read of the sizes.
tilepipe::Status run_scaled_grouped_mm(const ScaledGroupedMmProblem& p, cudaStream_t stream);

//! tilepipe::hopper_tier_available: an sm_90 GPU running this extension's sm_90a code.
bool hopper_tier_available(int device);

}  // namespace tilepipe_torch
