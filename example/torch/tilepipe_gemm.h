#pragma once
// The problem that the PyTorch binding (tilepipe_torch.cpp, built by the host compiler with the
// torch headers) hands to the GEMM (tilepipe_gemm.cu, built by nvcc without them): plain pointers,
// extents and strides, so that neither side needs the other's headers.

#include <cuda_runtime_api.h>

#include <cstdint>

#include <tilepipe/layout/tile_shape.cuh>
#include <tilepipe/status.cuh>

namespace tilepipe_torch {

enum class DType { kF16, kBF16, kF32 };

//! What is applied to `A * B + bias` before D is stored.
enum class Activation { kNone, kRelu, kGelu, kGeluTanh, kSilu };

//! One matrix operand as tilepipe sees it: storage order, leading dimension and batch stride, in
//! elements (tilepipe's GemmArguments).
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
  const float* bias = nullptr;  //!< n values, one per column of D, or null
  Activation activation = Activation::kNone;
};

//! Runs `p` on `stream` (the current device's), through tilepipe::GemmMultistage.
tilepipe::Status run_gemm(const Problem& p, cudaStream_t stream);

//! tilepipe::hopper_tier_available: an sm_90 GPU running this extension's sm_90a code.
bool hopper_tier_available(int device);

}  // namespace tilepipe_torch
