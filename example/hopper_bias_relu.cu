// Example: a kernel of your own from the Hopper tier's collectives (sm_90a).
//
// The same outputs as the second half of fused_bias_relu.cu, D = relu(A * B + bias) in f16 and the
// pre-activation Z = A * B + bias in f32 (A row-major, B column-major, one f32 bias per column),
// but built from TmaTileLoader, MbarrierRing and WarpgroupMma through WarpSpecializedMainloop:
// a producer warpgroup whose one thread copies k-tiles with TMA, and two consumer warpgroups that
// multiply with wgmma and write their 64 rows of each 128 x 128 tile with an epilogue of their own.
//
// Usage: hopper_bias_relu [M N K]   (default 1000 1500 512). Inputs are small integers, so every
// element of D and Z is exact: both are checked bit for bit against a double-precision CPU
// reference. Exits 0 with a message where the device does not run sm_90a code (another GPU, or a
// build without 90a), non-zero on a mismatch.

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include <tilepipe/gemm/kernel_sm90.cuh>
#include <tilepipe/mainloop/warp_specialized_mainloop.cuh>

using Element = __half;
// Two consumer warpgroups of m64n128 over a 128 x 128 tile, four ring slots of 32 KB.
using Config = tilepipe::HopperTileConfig</*TileM*/ 128, /*TileN*/ 128, /*Stages*/ 4>;
using Mainloop = tilepipe::WarpSpecializedMainloop<Element, tilepipe::Layout::kRowMajor,
                                                   tilepipe::Layout::kColumnMajor, Config>;
using Accumulators = Mainloop::Accumulators;
// The ring and its barriers, plus room to align them to 1024 bytes (TMA's 128-byte swizzle).
constexpr std::size_t kSmemBytes = sizeof(Mainloop::SharedStorage) + 1024;

// One 128 x 128 tile of D and Z per block. The tensor maps of A and B travel in `load`, which TMA
// reads from parameter memory (hence __grid_constant__).
__global__ void __launch_bounds__(Config::kThreads, 1)
hopper_bias_relu(const __grid_constant__ Mainloop::Params load, const float* bias, Element* d,
                 float* z, int m, int n, int k) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)  // wgmma exists only in sm_90a code
  extern __shared__ unsigned char smem_raw[];
  const auto aligned = (reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) & ~std::uintptr_t(1023);
  auto& smem = *reinterpret_cast<Mainloop::SharedStorage*>(aligned);
  if (threadIdx.x == 0) Mainloop::init(smem, load);  // the ring's barriers, the maps prefetched
  __syncthreads();

  Mainloop mainloop(smem);
  Mainloop::State state;  // slot 0, phase 0: each role walks the ring on its own
  const int m0 = blockIdx.y * Config::kM, n0 = blockIdx.x * Config::kN;
  const int k_tiles = Mainloop::k_tiles(k);
  const int warpgroup = threadIdx.x / 128;
  if (warpgroup == 0) {
    // Producer: one thread copies every k-tile of A and B into the ring (TMA zero-fills the
    // parts past M, N and K).
    if (threadIdx.x == 0) mainloop.produce(load, state, m0, n0, /*batch=*/0, k_tiles);
  } else {
    // Consumers: warpgroup g multiplies rows 64 (g - 1) .. of the tile, then writes them.
    const int consumer = warpgroup - 1;
    Accumulators acc;
    mainloop.consume(acc, state, consumer, k_tiles);
    const int thread = threadIdx.x % 128;
    for (int i = 0; i < Accumulators::kRegisters; ++i) {
      const int row = m0 + 64 * consumer + Accumulators::row_of(thread, i);
      const int col = n0 + Accumulators::col_of(thread, i);
      if (row < m && col < n) {
        const float v = acc.x[i] + bias[col];
        z[static_cast<long long>(row) * n + col] = v;
        d[static_cast<long long>(row) * n + col] = __float2half(v > 0.0f ? v : 0.0f);
      }
    }
  }
#endif
}

#define CHECK_CUDA(expr)                                                                   \
  do {                                                                                     \
    const cudaError_t err_ = (expr);                                                       \
    if (err_ != cudaSuccess) {                                                             \
      std::fprintf(stderr, "%s failed: %s\n", #expr, cudaGetErrorString(err_));            \
      return 1;                                                                            \
    }                                                                                      \
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
  // K is a multiple of 8 (TMA needs 16-byte row strides); |A * B + bias| <= 2K + 4 stays an
  // integer that f16 holds exactly (at most 2048).
  if (m < 1 || n < 1 || k < 8 || k % 8 != 0 || 2 * k + 4 > 2048) {
    std::fprintf(stderr, "M, N >= 1; K a multiple of 8 in [8, 1020]\n");
    return 2;
  }
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    std::fprintf(stderr, "hopper_bias_relu: no CUDA device found\n");
    return 1;
  }
  if (!tilepipe::hopper_tier_available(device)) {
    std::printf("hopper_bias_relu: skipped: device %d does not run sm_90a code (needs an sm_90 GPU "
                "and a build for 90a)\n", device);
    return 0;
  }

  // Small-integer inputs: A and B in [-1, 1], bias in [-4, 4].
  std::mt19937 rng(2026);
  std::uniform_int_distribution<int> small(-1, 1), wide(-4, 4);
  std::vector<Element> a(static_cast<std::size_t>(m) * k), b(static_cast<std::size_t>(n) * k);
  std::vector<float> bias(n);
  for (auto& x : a) x = __float2half(static_cast<float>(small(rng)));
  for (auto& x : b) x = __float2half(static_cast<float>(small(rng)));
  for (auto& x : bias) x = static_cast<float>(wide(rng));

  Element *d_a, *d_b, *d_d;
  float *d_bias, *d_z;
  CHECK_CUDA(cudaMalloc(&d_a, a.size() * sizeof(Element)));
  CHECK_CUDA(cudaMalloc(&d_b, b.size() * sizeof(Element)));
  CHECK_CUDA(cudaMalloc(&d_bias, bias.size() * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&d_d, static_cast<std::size_t>(m) * n * sizeof(Element)));
  CHECK_CUDA(cudaMalloc(&d_z, static_cast<std::size_t>(m) * n * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(d_a, a.data(), a.size() * sizeof(Element), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(d_b, b.data(), b.size() * sizeof(Element), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(d_bias, bias.data(), bias.size() * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(d_d, 0xFF, static_cast<std::size_t>(m) * n * sizeof(Element)));  // NaN
  CHECK_CUDA(cudaMemset(d_z, 0xFF, static_cast<std::size_t>(m) * n * sizeof(float)));

  // The tensor maps of A (m x k, row-major) and B (k x n, column-major), one batch.
  Mainloop::Params load{};
  const tilepipe::Status s =
      Mainloop::Loader::make_params(load, d_a, /*lda=*/k, 0, d_b, /*ldb=*/k, 0, m, n, k, 1);
  if (!s) {
    std::fprintf(stderr, "make_params: %s\n", s.what());
    return 1;
  }
  CHECK_CUDA(cudaFuncSetAttribute(hopper_bias_relu, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(kSmemBytes)));
  const dim3 grid((n + Config::kN - 1) / Config::kN, (m + Config::kM - 1) / Config::kM);
  hopper_bias_relu<<<grid, Config::kThreads, kSmemBytes>>>(load, d_bias, d_d, d_z, m, n, k);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());

  std::vector<Element> d(static_cast<std::size_t>(m) * n);
  std::vector<float> z(d.size());
  CHECK_CUDA(cudaMemcpy(d.data(), d_d, d.size() * sizeof(Element), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(z.data(), d_z, z.size() * sizeof(float), cudaMemcpyDeviceToHost));
  long long bad = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double ref = bias[j];
      for (int p = 0; p < k; ++p)
        ref += double(__half2float(a[std::size_t(i) * k + p])) * __half2float(b[std::size_t(j) * k + p]);
      const std::size_t at = std::size_t(i) * n + j;
      const float want_d = ref > 0 ? static_cast<float>(ref) : 0.0f;
      if (z[at] != static_cast<float>(ref) || __half2float(d[at]) != want_d) {
        if (bad < 5)
          std::fprintf(stderr, "(%d, %d): Z = %g, D = %g, want %g and %g\n", i, j, z[at],
                       __half2float(d[at]), ref, want_d);
        ++bad;
      }
    }
  std::printf("hopper_bias_relu %dx%dx%d: %lld of %lld elements of D and Z wrong: %s\n", m, n, k,
              bad, 2LL * m * n, bad == 0 ? "OK" : "FAILED");
  cudaFree(d_a);
  cudaFree(d_b);
  cudaFree(d_bias);
  cudaFree(d_d);
  cudaFree(d_z);
  return bad == 0 ? 0 : 1;
}
