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

enum class DType { kF16, kBF16, kF32 };

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

//! tilepipe::hopper_tier_available: an sm_90 GPU running this extension's sm_90a code.
bool hopper_tier_available(int device);

}  // namespace tilepipe_torch
