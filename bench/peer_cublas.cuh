#pragma once
//! \file
//! cuBLAS, the reference and the first peer: `cublasGemmEx` with f32 compute and its default
//! algorithm choice, D in the input type for the timed runs and in f32 for the reference.

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include "problems.cuh"

#define CHECK_CUBLAS(expr)                                                              \
  do {                                                                                  \
    const cublasStatus_t st_ = (expr);                                                  \
    if (st_ != CUBLAS_STATUS_SUCCESS) {                                                 \
      std::fprintf(stderr, "[bench] %s:%d: %s failed: %s\n", __FILE__, __LINE__, #expr, \
                   cublasGetStatusString(st_));                                         \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)

namespace tilepipe_bench {

//! D (m x n, row-major) = A * B of problem `p` through cuBLAS, D of type `d_type`
//! (CUDA_R_16F / CUDA_R_16BF as the inputs, or CUDA_R_32F for the reference).
cublasStatus_t cublas_gemm(cublasHandle_t handle, const Problem& p, const void* a, const void* b,
                           void* d, cudaDataType_t d_type);

}  // namespace tilepipe_bench
