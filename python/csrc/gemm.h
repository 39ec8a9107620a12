#pragma once
// The problem that the operators (ops.cpp, built by the host compiler with the torch headers) hand
// to the GEMM (gemm.cu and the generated gemm_<ab>_<d>_<layouts>.cu, built by nvcc without them):
// plain pointers, extents and strides, so that neither side needs the other's headers.

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

//! tilepipe::hopper_tier_available: an sm_90 GPU running this extension's sm_90a code.
bool hopper_tier_available(int device);

}  // namespace tilepipe_torch
