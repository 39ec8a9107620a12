// Example: the README's first code, one call of the provided GEMM, as a program that checks it.
//
// D = A * B in f16 with f32 accumulation (A row-major, B column-major, D row-major). The inputs
// are small integers, so every element of D is exact: all of them are compared with a CPU
// reference, and D is poisoned (NaN) first, so an element the GEMM did not write shows.
//
// Usage: quickstart [M N K]   (default 1000 1500 512). Exits non-zero on a wrong element, a
// refused argument, a CUDA error, or when no GPU is present.

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdlib>
#include <random>
#include <vector>

// [readme:quickstart]
#include <cstdio>

#include <tilepipe/gemm/gemm_multistage.cuh>

// D = A * B on `stream`: A is m x k row-major, B k x n column-major, D m x n row-major, all f16
// in GPU memory; the products are summed in f32. Returns false, saying why, if nothing ran.
bool gemm_f16(const __half* a, const __half* b, __half* d, int m, int n, int k,
              cudaStream_t stream) {
  using Gemm = tilepipe::GemmMultistage<__half, __half, tilepipe::Layout::kRowMajor,
                                        tilepipe::Layout::kColumnMajor, /*Stages=*/4>;
  Gemm::Arguments args;  // D = alpha * A * B + beta * C, with alpha = 1 and beta = 0 unless set
  args.m = m;
  args.n = n;
  args.k = k;
  args.a = a;
  args.lda = k;  // leading dimensions, in elements
  args.b = b;
  args.ldb = k;
  args.d = d;
  args.ldd = n;
  // Checks the arguments and the GPU, then launches (asynchronously, like any kernel).
  const tilepipe::Status status = Gemm::run(args, stream);
  if (!status) std::fprintf(stderr, "gemm_f16: %s\n", status.what());  // names the argument
  return status.ok();
}
// [readme:quickstart]

#define CHECK_CUDA(expr)                                                        \
  do {                                                                          \
    const cudaError_t err_ = (expr);                                            \
    if (err_ != cudaSuccess) {                                                  \
      std::fprintf(stderr, "%s failed: %s\n", #expr, cudaGetErrorString(err_)); \
      return 1;                                                                 \
    }                                                                           \
  } while (0)

int main(int argc, char** argv) {
  int m = 1000, n = 1500, k = 512;
  if (argc == 4) {
    m = std::atoi(argv[1]);
    n = std::atoi(argv[2]);
    k = std::atoi(argv[3]);
  } else if (argc != 1) {
    std::fprintf(stderr, "usage: %s [M N K]\n", argv[0]);
    return 2;
  }
  // |A * B| <= 4K stays an integer that f16 holds exactly (at most 2048).
  if (m < 1 || n < 1 || k < 1 || 4 * k > 2048) {
    std::fprintf(stderr, "M, N >= 1 and K in [1, 512]\n");
    return 2;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "quickstart: no CUDA device found; this example needs an sm_80+ GPU\n");
    return 1;
  }

  // Inputs in [-2, 2]: every product and sum is exact in f32 and in the f16 result.
  std::mt19937 rng(2026);
  std::uniform_int_distribution<int> small(-2, 2);
  std::vector<__half> a(static_cast<std::size_t>(m) * k), b(static_cast<std::size_t>(n) * k);
  for (auto& x : a) x = __float2half(static_cast<float>(small(rng)));
  for (auto& x : b) x = __float2half(static_cast<float>(small(rng)));

  __half *d_a, *d_b, *d_d;
  const std::size_t size_d = static_cast<std::size_t>(m) * n;
  CHECK_CUDA(cudaMalloc(&d_a, a.size() * sizeof(__half)));
  CHECK_CUDA(cudaMalloc(&d_b, b.size() * sizeof(__half)));
  CHECK_CUDA(cudaMalloc(&d_d, size_d * sizeof(__half)));
  CHECK_CUDA(cudaMemcpy(d_a, a.data(), a.size() * sizeof(__half), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(d_b, b.data(), b.size() * sizeof(__half), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(d_d, 0xFF, size_d * sizeof(__half)));  // NaN everywhere

  if (!gemm_f16(d_a, d_b, d_d, m, n, k, /*stream=*/nullptr)) return 1;
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());

  std::vector<__half> d(size_d);
  CHECK_CUDA(cudaMemcpy(d.data(), d_d, size_d * sizeof(__half), cudaMemcpyDeviceToHost));
  long long bad = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float want = 0.0f;  // exact: integers below 2^24
      for (int p = 0; p < k; ++p)
        want += __half2float(a[static_cast<std::size_t>(i) * k + p]) *
                __half2float(b[static_cast<std::size_t>(j) * k + p]);
      const float got = __half2float(d[static_cast<std::size_t>(i) * n + j]);
      if (got != want && ++bad <= 5)
        std::fprintf(stderr, "D(%d, %d) = %g, want %g\n", i, j, got, want);
    }
  std::printf("quickstart %dx%dx%d: %lld of %lld elements of D wrong: %s\n", m, n, k, bad,
              static_cast<long long>(size_d), bad == 0 ? "OK" : "FAILED");
  cudaFree(d_a);
  cudaFree(d_b);
  cudaFree(d_d);
  return bad == 0 ? 0 : 1;
}
