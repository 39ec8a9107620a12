// Example: run tilepipe::GemmMultistage<..., Stages = 4> on random inputs, check it against
// cuBLAS and report the error and the speed.
//
// Usage: gemm_multistage [M N K] [--layout tn|nn|nt|tt] [--dtype f16|bf16] [--iters N]
//   defaults: 4096 4096 4096, tn (A row-major, B column-major), f16; D is row-major, same type.
// Exits non-zero when the result is outside the error bound or when no suitable GPU is present.

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <tilepipe/gemm/gemm_multistage.cuh>

using tilepipe::Layout;

namespace {

#define CHECK_CUDA(expr)                                                        \
  do {                                                                          \
    const cudaError_t err_ = (expr);                                            \
    if (err_ != cudaSuccess) {                                                  \
      std::fprintf(stderr, "%s failed: %s\n", #expr, cudaGetErrorString(err_)); \
      std::exit(1);                                                             \
    }                                                                           \
  } while (0)

struct Options {
  int m = 4096, n = 4096, k = 4096;
  std::string layout = "tn", dtype = "f16";
  int iters = 20;
};

// Runs one configuration; returns the process exit code.
template <class T, Layout LA, Layout LB>
int run(const Options& o, const cudaDeviceProp& prop) {
  // The leading dimensions below are rounded up to 16 bytes, so the narrow kernel for other
  // alignments would never run: AnyAlignment = false leaves it out (a quarter of this file's
  // compile time), which takes spelling out the parameters before it at their defaults.
  using Gemm = tilepipe::GemmMultistage<T, T, LA, LB, /*Stages=*/4, tilepipe::Identity,
                                        tilepipe::DefaultTileConfig<4>, /*SplitK=*/false,
                                        /*AnyAlignment=*/false>;
  const int m = o.m, n = o.n, k = o.k;
  // Tight leading dimensions, rounded up to 16 bytes: GemmMultistage's 16-byte kernels.
  auto up8 = [](long long x) { return (x + 7) / 8 * 8; };
  const long long lda = LA == Layout::kRowMajor ? up8(k) : up8(m);
  const long long ldb = LB == Layout::kRowMajor ? up8(n) : up8(k);
  const long long ldd = up8(n);
  const size_t size_a = size_t(LA == Layout::kRowMajor ? m : k) * lda;
  const size_t size_b = size_t(LB == Layout::kRowMajor ? k : n) * ldb;
  const size_t size_d = size_t(m) * ldd;

  std::vector<T> a(size_a), b(size_b);
  std::mt19937 rng(1234);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (auto& x : a) x = T(dist(rng));
  for (auto& x : b) x = T(dist(rng));
  T *d_a, *d_b, *d_d;
  float* d_ref;
  CHECK_CUDA(cudaMalloc(&d_a, size_a * sizeof(T)));
  CHECK_CUDA(cudaMalloc(&d_b, size_b * sizeof(T)));
  CHECK_CUDA(cudaMalloc(&d_d, size_d * sizeof(T)));
  CHECK_CUDA(cudaMalloc(&d_ref, size_t(m) * n * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(d_a, a.data(), size_a * sizeof(T), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(d_b, b.data(), size_b * sizeof(T), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(d_d, 0xFF, size_d * sizeof(T)));  // NaN: unwritten elements show

  typename Gemm::Arguments args;
  args.m = m;
  args.n = n;
  args.k = k;
  args.a = d_a;
  args.lda = lda;
  args.b = d_b;
  args.ldb = ldb;
  args.d = d_d;
  args.ldd = ldd;
  tilepipe::Status status = Gemm::can_implement(args);
  if (!status) {
    std::fprintf(stderr, "can_implement: %s\n", status.what());
    return 1;
  }
  // Warm up, then time `iters` runs one by one with events and take the median.
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  for (int i = 0; i < 3; ++i) status = Gemm::run(args);
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<float> ms;
  for (int i = 0; i < o.iters && status; ++i) {
    CHECK_CUDA(cudaEventRecord(start));
    status = Gemm::run(args);
    CHECK_CUDA(cudaEventRecord(stop));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float t = 0;
    CHECK_CUDA(cudaEventElapsedTime(&t, start, stop));
    ms.push_back(t);
  }
  if (!status) {
    std::fprintf(stderr, "run: %s\n", status.what());
    return 1;
  }
  std::sort(ms.begin(), ms.end());
  const double median_ms = ms[ms.size() / 2];

  // cuBLAS reference in f32 (column-major m x n), f32 accumulation.
  cublasHandle_t handle;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "cublasCreate failed\n");
    return 1;
  }
  const float one = 1.0f, zero = 0.0f;
  const cudaDataType_t t = std::is_same_v<T, __half> ? CUDA_R_16F : CUDA_R_16BF;
  const cublasStatus_t cs = cublasGemmEx(
      handle, LA == Layout::kColumnMajor ? CUBLAS_OP_N : CUBLAS_OP_T,
      LB == Layout::kColumnMajor ? CUBLAS_OP_N : CUBLAS_OP_T, m, n, k, &one, d_a, t, int(lda), d_b,
      t, int(ldb), &zero, d_ref, CUDA_R_32F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  cublasDestroy(handle);
  if (cs != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "cublasGemmEx failed (%d)\n", int(cs));
    return 1;
  }
  std::vector<T> d(size_d);
  std::vector<float> ref(size_t(m) * n);
  CHECK_CUDA(cudaMemcpy(d.data(), d_d, size_d * sizeof(T), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(ref.data(), d_ref, ref.size() * sizeof(float), cudaMemcpyDeviceToHost));

  // Bound per element: D's rounding (unit roundoff u) plus f32 accumulation in another order.
  const double u = std::is_same_v<T, __half> ? std::ldexp(1.0, -11) : std::ldexp(1.0, -8);
  double err2 = 0, ref2 = 0, max_err = 0;
  long long bad = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      const double want = ref[size_t(j) * m + i];
      const double got = float(d[size_t(i) * ldd + j]);
      const double err = std::fabs(got - want);
      if (!(err <= 2 * u * std::fabs(want) + 1e-5 * std::sqrt(double(k)) + 1e-6)) ++bad;
      max_err = std::isnan(got) ? INFINITY : std::max(max_err, err);
      err2 += (got - want) * (got - want);
      ref2 += want * want;
    }
  const double rel = ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
  const double tflops = 2.0 * m * n * k / (median_ms * 1e-3) / 1e12;
  std::printf("GemmMultistage<Stages=4> %s %s %dx%dx%d on %s, %s tier\n", o.dtype.c_str(),
              o.layout.c_str(), m, n, k, prop.name, tilepipe::to_string(Gemm::tier(args)));
  std::printf(
      "  vs cuBLAS: relative error %.3e, max |error| %.3e, %lld elements outside the bound\n", rel,
      max_err, bad);
  std::printf("  time: median %.3f ms of %d runs = %.1f TFLOP/s\n", median_ms, int(ms.size()),
              tflops);
  std::printf("  %s\n", bad == 0 ? "VERIFIED" : "FAILED");
  cudaFree(d_a);
  cudaFree(d_b);
  cudaFree(d_d);
  cudaFree(d_ref);
  return bad == 0 ? 0 : 1;
}

template <class T>
int dispatch_layout(const Options& o, const cudaDeviceProp& prop) {
  // First letter: A (t = row-major, "transposed" in BLAS terms), second: B (n = column-major).
  if (o.layout == "tn") return run<T, Layout::kRowMajor, Layout::kColumnMajor>(o, prop);
  if (o.layout == "nn") return run<T, Layout::kColumnMajor, Layout::kColumnMajor>(o, prop);
  if (o.layout == "nt") return run<T, Layout::kColumnMajor, Layout::kRowMajor>(o, prop);
  if (o.layout == "tt") return run<T, Layout::kRowMajor, Layout::kRowMajor>(o, prop);
  std::fprintf(stderr, "unknown --layout %s (tn, nn, nt, tt)\n", o.layout.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--layout" || arg == "--dtype" || arg == "--iters") && i + 1 < argc) {
      const std::string v = argv[++i];
      if (arg == "--layout") o.layout = v;
      else if (arg == "--dtype") o.dtype = v;
      else o.iters = std::max(1, std::atoi(v.c_str()));
    } else if (!arg.empty() && arg[0] != '-') {
      sizes.push_back(std::atoi(arg.c_str()));
    } else {
      std::fprintf(stderr,
                   "usage: %s [M N K] [--layout tn|nn|nt|tt] [--dtype f16|bf16] [--iters N]\n",
                   argv[0]);
      return 2;
    }
  }
  if (sizes.size() == 3) {
    o.m = sizes[0];
    o.n = sizes[1];
    o.k = sizes[2];
  } else if (!sizes.empty()) {
    std::fprintf(stderr, "give all three of M N K\n");
    return 2;
  }
  if (o.m < 1 || o.n < 1 || o.k < 1) {
    std::fprintf(stderr, "M, N and K must be at least 1\n");
    return 2;
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::fprintf(stderr,
                 "gemm_multistage: no CUDA device found; this example needs an sm_80+ GPU\n");
    return 1;
  }
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  if (o.dtype == "f16") return dispatch_layout<__half>(o, prop);
  if (o.dtype == "bf16") return dispatch_layout<__nv_bfloat16>(o, prop);
  std::fprintf(stderr, "unknown --dtype %s (f16, bf16)\n", o.dtype.c_str());
  return 2;
}
