// cuBLAS (peer_cublas.cuh).
#include "peer_cublas.cuh"

namespace tilepipe_bench {

// cuBLAS is column-major: it computes D^T (n x m, column-major, ld = n) = B^T * A^T. B is
// column-major k x n, so B^T is op T on it; A^T is A itself as stored when A is row-major
// (TN: op N) and op T when A is column-major (NN).
cudaDataType_t cuda_type_of(DType d) {
  return d == DType::kF16 ? CUDA_R_16F : d == DType::kBF16 ? CUDA_R_16BF : CUDA_R_32F;
}

cublasStatus_t cublas_gemm(cublasHandle_t handle, const Problem& p, const void* a, const void* b,
                           void* d, cudaDataType_t d_type, cublasComputeType_t compute) {
  const float one = 1.0f, zero = 0.0f;
  const cudaDataType_t ab_type = cuda_type_of(p.dtype);
  const cublasOperation_t op_a = p.layout == LayoutPair::kTN ? CUBLAS_OP_N : CUBLAS_OP_T;
  return cublasGemmEx(handle, CUBLAS_OP_T, op_a, p.n, p.m, p.k, &one, b, ab_type, int(ldb_of(p)), a,
                      ab_type, int(lda_of(p)), &zero, d, d_type, int(ldd_of(p)), compute,
                      CUBLAS_GEMM_DEFAULT);
}

}  // namespace tilepipe_bench
