#pragma once
//! \file
//! The benchmark's error handling: a CUDA call that fails ends the program with exit status 1
//! and the call's text (gemm_bench's exit statuses are listed in gemm_bench.cu).

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CHECK_CUDA(expr)                                                                \
  do {                                                                                  \
    const cudaError_t err_ = (expr);                                                    \
    if (err_ != cudaSuccess) {                                                          \
      std::fprintf(stderr, "[bench] %s:%d: %s failed: %s\n", __FILE__, __LINE__, #expr, \
                   cudaGetErrorString(err_));                                           \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)
