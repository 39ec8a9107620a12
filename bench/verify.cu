// The comparison of a result with the reference (verify.cuh).
#include "verify.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstddef>

#include "check.cuh"

namespace tilepipe_bench {
namespace {

// sums[0] += sum (got - want)^2, sums[1] += sum want^2, *nonfinite += count of NaN/Inf in got.
// Both matrices are m x n row-major with leading dimension n.
template <class T>
__global__ void compare_kernel(const T* got, const float* want, std::size_t count, double* sums,
                               unsigned long long* nonfinite) {
  double err2 = 0, ref2 = 0;
  unsigned long long bad = 0;
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const float g = float(got[i]);
    const double w = want[i];
    if (!isfinite(g)) {
      ++bad;
      continue;
    }
    err2 += (g - w) * (g - w);
    ref2 += w * w;
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    err2 += __shfl_down_sync(0xFFFFFFFFu, err2, offset);
    ref2 += __shfl_down_sync(0xFFFFFFFFu, ref2, offset);
    bad += __shfl_down_sync(0xFFFFFFFFu, bad, offset);
  }
  if (threadIdx.x % 32 == 0) {
    atomicAdd(&sums[0], err2);
    atomicAdd(&sums[1], ref2);
    if (bad) atomicAdd(nonfinite, bad);
  }
}

}  // namespace

Verifier::Verifier() {
  CHECK_CUDA(cudaMalloc(&sums_, 2 * sizeof(double) + sizeof(unsigned long long)));
}

Verifier::~Verifier() { cudaFree(sums_); }

Comparison Verifier::compare(const Problem& p, const Buffers& buf, int blocks,
                             cudaStream_t stream) {
  Comparison c;
  CHECK_CUDA(cudaMemsetAsync(sums_, 0, 2 * sizeof(double) + sizeof(unsigned long long), stream));
  auto* nonfinite = reinterpret_cast<unsigned long long*>(sums_ + 2);
  if (p.dtype == DType::kF16)
    compare_kernel<<<blocks, 256, 0, stream>>>(static_cast<const __half*>(buf.d_of(0)), buf.ref,
                                               buf.elems_d, sums_, nonfinite);
  else if (p.dtype == DType::kBF16)
    compare_kernel<<<blocks, 256, 0, stream>>>(static_cast<const __nv_bfloat16*>(buf.d_of(0)),
                                               buf.ref, buf.elems_d, sums_, nonfinite);
  else
    compare_kernel<<<blocks, 256, 0, stream>>>(static_cast<const float*>(buf.d_of(0)), buf.ref,
                                               buf.elems_d, sums_, nonfinite);
  CHECK_CUDA(cudaGetLastError());
  double sums[2];
  CHECK_CUDA(cudaMemcpyAsync(sums, sums_, sizeof(sums), cudaMemcpyDeviceToHost, stream));
  CHECK_CUDA(cudaMemcpyAsync(&c.nonfinite, nonfinite, sizeof(c.nonfinite), cudaMemcpyDeviceToHost,
                             stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  c.rel_error = sums[1] > 0 ? std::sqrt(sums[0] / sums[1]) : std::sqrt(sums[0]);
  return c;
}

}  // namespace tilepipe_bench
