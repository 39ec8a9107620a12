// cuBLAS (peer_cublas.cuh).
#include "peer_cublas.cuh"

namespace tilepipe_bench {

// cuBLAS is column-major: it computes D^T (n x m, column-major, ld = n) = B^T * A^T. B is
// column-major k x n, so B^T is op T on it; A^T is A itself as stored when A is row-major
// (TN: op N) and op T when A is column-major (NN).
cublasStatus_t cublas_gemm(cublasHandle_t handle, const Problem& p, const void* a, const void* b,
                           void* d, cudaDataType_t d_type) {
  const float one = 1.0f, zero = 0.0f;
  const cudaDataType_t ab_type = p.dtype == DType::kF16 ? CUDA_R_16F : CUDA_R_16BF;
  const cublasOperation_t op_a = p.layout == LayoutPair::kTN ? CUBLAS_OP_N : CUBLAS_OP_T;
  return cublasGemmEx(handle, CUBLAS_OP_T, op_a, p.n, p.m, p.k, &one, b, ab_type,
                      int(ldb_of(p)), a, ab_type, int(lda_of(p)), &zero, d, d_type,
                      int(ldd_of(p)), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

}  // namespace tilepipe_bench
