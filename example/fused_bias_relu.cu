// Example: fused epilogues, two ways.
//
// D = relu(A * B + bias), A (M x K) row-major, B (K x N) column-major, f16 in, f32 accumulate,
// f16 out, bias one f32 per column.
// 1. The common case: the provided GEMM with an output operator, Chain<BiasPerCol<float>, Relu>.
// 2. What the provided GEMM cannot express: a kernel of your own around tilepipe's mainloop that
//    also writes the pre-activation Z = A * B + bias (f32) as a second output, as a training
//    step keeps it for the backward pass. Its epilogue works on the accumulator registers, whose
//    element positions Accumulators::row_of / col_of describe.
//
// Usage: fused_bias_relu [M N K]   (default 1024 1024 1024). Verifies every element of all three
// outputs against a double-precision CPU reference and exits non-zero on a mismatch or when no
// GPU is present.

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

// [readme:bias_relu]
#include <tilepipe/gemm/gemm_multistage.cuh>

using BiasRelu = tilepipe::Chain<tilepipe::BiasPerCol<float>, tilepipe::Relu>;
using GemmBiasRelu =
    tilepipe::GemmMultistage<__half, __half, tilepipe::Layout::kRowMajor,
                             tilepipe::Layout::kColumnMajor, /*Stages=*/4, BiasRelu>;

// D = relu(A * B + bias) on `stream`: A, B and D as in quickstart.cu's gemm_f16, and `bias` one
// float per column of D.
tilepipe::Status gemm_bias_relu(const __half* a, const __half* b, const float* bias, __half* d,
                                int m, int n, int k, cudaStream_t stream) {
  GemmBiasRelu::Arguments args;
  args.m = m;
  args.n = n;
  args.k = k;
  args.a = a;
  args.lda = k;
  args.b = b;
  args.ldb = k;
  args.d = d;
  args.ldd = n;
  args.output_op.get<0>().bias = bias;  // the data of the Chain's first operator
  return GemmBiasRelu::run(args, stream);
}
// [readme:bias_relu]

// [readme:ampere_kernel]
#include <tilepipe/mainloop/multistage_mainloop.cuh>

// A 128 x 128 block tile, 32 deep in K, of four 64 x 64 warp tiles; four shared-memory stages.
using Policy = tilepipe::GemmPolicy</*Tile*/ 128, 128, 32, /*Warp*/ 64, 64, /*Stages*/ 4>;
using Mainloop = tilepipe::MultistageMainloop<__half, tilepipe::Layout::kRowMajor,
                                              tilepipe::Layout::kColumnMajor, Policy>;

// D = relu(A * B + bias) in f16 and Z = A * B + bias in f32, A (m x k) row-major, B (k x n)
// column-major, D and Z (m x n) row-major: one 128 x 128 tile per block of Mainloop::kThreads
// (128) threads. A and B move in 16-byte chunks: k, their leading dimension, is a multiple of 8.
__global__ void __launch_bounds__(Mainloop::kThreads)
    gemm_bias_relu_aux(const __half* a, const __half* b, const float* bias, __half* d, float* z,
                       int m, int n, int k) {
  // The ring of stages, 64 KB of dynamic shared memory, 128-byte aligned for its swizzled tiles.
  extern __shared__ __align__(128) unsigned char smem[];
  Mainloop mainloop(*reinterpret_cast<Mainloop::SharedStorage*>(smem), threadIdx.x);
  Mainloop::Accumulators acc;
  acc.clear();
  const int block_m0 = blockIdx.y * Policy::Tile::kM;
  const int block_n0 = blockIdx.x * Policy::Tile::kN;
  // acc += A * B for the block's tile. Every thread of the block takes part (the mainloop waits
  // at block barriers), so none may return before it. Rows, columns and k past the matrices
  // arrive as zeros: edge tiles need no special case.
  mainloop(acc, a, /*lda=*/k, b, /*ldb=*/k, m, n, k, block_m0, block_n0);

  // The epilogue, on the accumulator registers; no barrier follows, so threads may return.
  // for_each calls fn(row, col, value) for each acc.x[mi][ni][j] of the lane: element
  // (16 mi + lane / 4 + 8 (j / 2), 8 ni + 2 (lane % 4) + j % 2) of the warp's 64 x 64 tile,
  // which starts at (warp_m0(), warp_n0()) of the block's.
  const int row0 = block_m0 + mainloop.warp_m0(), col0 = block_n0 + mainloop.warp_n0();
  acc.for_each(threadIdx.x % 32, [&](int r, int c, float v) {
    const int row = row0 + r, col = col0 + c;
    if (row < m && col < n) {
      v += bias[col];
      z[static_cast<long long>(row) * n + col] = v;
      d[static_cast<long long>(row) * n + col] = __float2half(v > 0.0f ? v : 0.0f);
    }
  });
}
// [readme:ampere_kernel]

// [readme:ampere_launch]
// Runs gemm_bias_relu_aux on `stream` over the whole of D.
cudaError_t launch_bias_relu_aux(const __half* a, const __half* b, const float* bias, __half* d,
                                 float* z, int m, int n, int k, cudaStream_t stream) {
  // Four stages of a 128 x 32 tile of A and a 32 x 128 tile of B: 64 KB, past the 48 KB that
  // a kernel gets without asking.
  constexpr int kSmemBytes = sizeof(Mainloop::SharedStorage);
  const cudaError_t e = cudaFuncSetAttribute(
      gemm_bias_relu_aux, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
  if (e != cudaSuccess) return e;
  const dim3 grid((n + Policy::Tile::kN - 1) / Policy::Tile::kN,
                  (m + Policy::Tile::kM - 1) / Policy::Tile::kM);
  gemm_bias_relu_aux<<<grid, Mainloop::kThreads, kSmemBytes, stream>>>(a, b, bias, d, z, m, n, k);
  return cudaGetLastError();
}
// [readme:ampere_launch]

#define CHECK_CUDA(expr)                                                 \
  do {                                                                   \
    const cudaError_t err_ = (expr);                                     \
    if (err_ != cudaSuccess) {                                           \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #expr, \
                   cudaGetErrorString(err_));                            \
      return 1;                                                          \
    }                                                                    \
  } while (0)

int main(int argc, char** argv) {
  int m = 1024, n = 1024, k = 1024;
  if (argc == 4) {
    m = std::atoi(argv[1]);
    n = std::atoi(argv[2]);
    k = std::atoi(argv[3]);
  } else if (argc != 1) {
    std::fprintf(stderr, "usage: %s [M N K]\n", argv[0]);
    return 2;
  }
  // Rows of A, columns of B and rows of D move as 16-byte vectors: K and N (the leading
  // dimensions here) must be multiples of 8 f16 elements.
  if (m < 1 || n < 8 || n % 8 != 0 || k < 8 || k % 8 != 0) {
    std::fprintf(stderr, "need M >= 1 and N, K positive multiples of 8 (got %d %d %d)\n", m, n, k);
    return 2;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr,
                 "fused_bias_relu: no CUDA device found; this example needs an sm_80+ GPU\n");
    return 1;
  }
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  if (prop.major < 8) {
    std::fprintf(stderr, "fused_bias_relu: %s is sm_%d%d; tilepipe needs sm_80 or newer\n",
                 prop.name, prop.major, prop.minor);
    return 1;
  }

  std::mt19937 rng(2026);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<__half> a(std::size_t(m) * k), b(std::size_t(k) * n);  // b column-major: b[n*k + k]
  std::vector<float> bias(n);
  for (auto& x : a) x = __float2half(dist(rng));
  for (auto& x : b) x = __float2half(dist(rng));
  for (auto& x : bias) x = dist(rng);

  __half *d_a, *d_b, *d_d, *d_d2;
  float *d_bias, *d_z;
  CHECK_CUDA(cudaMalloc(&d_a, a.size() * sizeof(__half)));
  CHECK_CUDA(cudaMalloc(&d_b, b.size() * sizeof(__half)));
  CHECK_CUDA(cudaMalloc(&d_d, std::size_t(m) * n * sizeof(__half)));
  CHECK_CUDA(cudaMalloc(&d_d2, std::size_t(m) * n * sizeof(__half)));
  CHECK_CUDA(cudaMalloc(&d_z, std::size_t(m) * n * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&d_bias, n * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(d_a, a.data(), a.size() * sizeof(__half), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(d_b, b.data(), b.size() * sizeof(__half), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(d_bias, bias.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(d_d, 0xFF, std::size_t(m) * n * sizeof(__half)));  // NaN everywhere
  CHECK_CUDA(cudaMemset(d_d2, 0xFF, std::size_t(m) * n * sizeof(__half)));
  CHECK_CUDA(cudaMemset(d_z, 0xFF, std::size_t(m) * n * sizeof(float)));

  // 1. The provided GEMM, with the output operator.
  const tilepipe::Status status = gemm_bias_relu(d_a, d_b, d_bias, d_d, m, n, k, nullptr);
  if (!status) {
    std::fprintf(stderr, "fused_bias_relu: %s\n", status.what());
    return 1;
  }
  // 2. The kernel of one's own.
  CHECK_CUDA(launch_bias_relu_aux(d_a, d_b, d_bias, d_d2, d_z, m, n, k, nullptr));
  CHECK_CUDA(cudaDeviceSynchronize());

  std::vector<__half> d(std::size_t(m) * n), d2(d.size());
  std::vector<float> z(d.size());
  CHECK_CUDA(cudaMemcpy(d.data(), d_d, d.size() * sizeof(__half), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(d2.data(), d_d2, d2.size() * sizeof(__half), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(z.data(), d_z, z.size() * sizeof(float), cudaMemcpyDeviceToHost));

  // Reference in double; bound: f16 rounding of the output plus f32 accumulation error.
  std::vector<double> af(a.size()), bf(b.size());
  for (std::size_t i = 0; i < a.size(); ++i) af[i] = __half2float(a[i]);
  for (std::size_t i = 0; i < b.size(); ++i) bf[i] = __half2float(b[i]);
  long long bad = 0;
  double max_err = 0.0;
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < n; ++c) {
      double acc = bias[c], mag = std::fabs(bias[c]);
      for (int kk = 0; kk < k; ++kk) {
        const double p = af[std::size_t(r) * k + kk] * bf[std::size_t(c) * k + kk];
        acc += p;
        mag += std::fabs(p);
      }
      const double ref = acc > 0.0 ? acc : 0.0;
      const std::size_t i = std::size_t(r) * n + c;
      // D from either way (f16: its rounding plus f32 accumulation), Z (f32: accumulation only).
      const struct {
        const char* name;
        double got, want, tol;
      } checks[] = {{"D (GemmMultistage)", __half2float(d[i]), ref,
                     std::ldexp(std::fabs(ref), -10) + 1e-6 * mag + 1e-6},
                    {"D (own kernel)", __half2float(d2[i]), ref,
                     std::ldexp(std::fabs(ref), -10) + 1e-6 * mag + 1e-6},
                    {"Z (own kernel)", z[i], acc, 1e-6 * mag + 1e-6}};
      for (const auto& ch : checks) {
        const double err = std::fabs(ch.got - ch.want);
        if (!(err <= ch.tol) && ++bad <= 5)
          std::fprintf(stderr, "%s(%d, %d) = %g, want %g\n", ch.name, r, c, ch.got, ch.want);
        if (err > max_err || std::isnan(ch.got)) max_err = std::isnan(ch.got) ? INFINITY : err;
      }
    }
  std::printf(
      "fused_bias_relu %dx%dx%d on %s: max |error| %.3g, %lld of %lld outside the bound: %s\n", m,
      n, k, prop.name, max_err, bad, 3LL * m * n, bad ? "FAILED" : "OK");
  cudaFree(d_a);
  cudaFree(d_b);
  cudaFree(d_d);
  cudaFree(d_d2);
  cudaFree(d_z);
  cudaFree(d_bias);
  return bad ? 1 : 0;
}
