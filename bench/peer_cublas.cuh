#pragma once
//! \file
//! cuBLAS, the reference and the first peer: `cublasGemmEx` with f32 compute and its default
//! algorithm choice, D in the input type for the timed runs and in f32 for the reference. For f32
//! inputs it runs twice: `CUBLAS_COMPUTE_32F` (SGEMM, full f32: also the reference) and
//! `CUBLAS_COMPUTE_32F_FAST_TF32` (tensor cores on tf32-rounded inputs).

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
//! (CUDA_R_16F / CUDA_R_16BF / CUDA_R_32F as the inputs, or CUDA_R_32F for the reference), with
//! `compute` (CUBLAS_COMPUTE_32F_FAST_TF32 only for f32 inputs).
cublasStatus_t cublas_gemm(cublasHandle_t handle, const Problem& p, const void* a, const void* b,
                           void* d, cudaDataType_t d_type,
                           cublasComputeType_t compute = CUBLAS_COMPUTE_32F);

//! The CUDA data type of `d` (A, B, and D of the timed runs).
cudaDataType_t cuda_type_of(DType d);

}  // namespace tilepipe_bench
