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

#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

// [readme:hopper_kernel]
#include <tilepipe/gemm/kernel_sm90.cuh>  // hopper_tier_available
#include <tilepipe/mainloop/warp_specialized_mainloop.cuh>

// A 128 x 128 tile for two consumer warpgroups (64 rows each, one m64n128 wgmma per k step), four
// ring slots of 32 KB, and a producer warpgroup first: Config::kThreads = 384 threads.
using Config = tilepipe::HopperTileConfig</*TileM*/ 128, /*TileN*/ 128, /*Stages*/ 4>;
using Mainloop = tilepipe::WarpSpecializedMainloop<__half, tilepipe::Layout::kRowMajor,
                                                   tilepipe::Layout::kColumnMajor, Config>;
// The ring and its barriers, plus room to align them to 1024 bytes (the period of the 128-byte
// swizzle that TMA writes and wgmma reads): 130 KB, which the host must allow.
constexpr int kSmemBytes = sizeof(Mainloop::SharedStorage) + 1024;

// D = relu(A * B + bias) in f16 and Z = A * B + bias in f32, as gemm_bias_relu_aux, one 128 x 128
// tile per block. `load` holds the tensor maps of A and B, which TMA reads from the kernel's
// parameter memory: hence `const __grid_constant__`. The register cap of __launch_bounds__(n, 1)
// would also let the roles trade registers with setmaxnreg (GemmKernelSm90 does); this kernel has
// enough without.
__global__ void __launch_bounds__(Config::kThreads, 1)
    hopper_bias_relu(const __grid_constant__ Mainloop::Params load, const float* bias, __half* d,
                     float* z, int m, int n, int k) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)  // TMA and wgmma exist only in sm_90a code: empty elsewhere
  extern __shared__ unsigned char smem_raw[];
  // Aligned by an offset from the array, so that the pointer stays in the shared state space.
  const unsigned misalignment = static_cast<unsigned>(__cvta_generic_to_shared(smem_raw)) & 1023u;
  auto& smem =
      *reinterpret_cast<Mainloop::SharedStorage*>(smem_raw + ((1024u - misalignment) & 1023u));
  // One thread initialises the ring's mbarriers (and prefetches the tensor maps); every thread
  // must reach the barrier, so none may return before it.
  if (threadIdx.x == 0) Mainloop::init(smem, load);
  __syncthreads();

  Mainloop mainloop(smem);
  Mainloop::State state;  // slot 0, phase 0: each role walks the ring on its own
  const int m0 = blockIdx.y * Config::kM, n0 = blockIdx.x * Config::kN;
  const int k_tiles = Mainloop::k_tiles(k);
  const int warpgroup = threadIdx.x / 128;
  if (warpgroup == 0) {
    // Producer: one thread copies every k-tile of A and B into the ring (TMA zero-fills the parts
    // past M, N and K); the warpgroup's other 127 threads have nothing to do and return.
    if (threadIdx.x == 0) mainloop.produce(load, state, m0, n0, /*batch=*/0, k_tiles);
  } else {
    // Consumer c = warpgroup - 1 multiplies rows 64 c .. 64 c + 63 of the tile. All 128 threads
    // of both consumers call consume, even where those rows lie past M: wgmma is an instruction
    // of the whole warpgroup, and every warp releases the slots it has read.
    const int consumer = warpgroup - 1;
    Mainloop::Accumulators acc;
    mainloop.consume(acc, state, consumer, k_tiles);
    // acc.x[i] of thread t of the warpgroup is element (row_of(t, i), col_of(t, i)) of its
    // 64 x 128 rows: row 16 (t / 32) + (t % 32) / 4 + 8 ((i / 2) % 2), column
    // 8 (i / 4) + 2 (t % 4) + i % 2.
    const int thread = threadIdx.x % 128;
#pragma unroll
    for (int i = 0; i < Mainloop::Accumulators::kRegisters; ++i) {
      const int row = m0 + 64 * consumer + Mainloop::Accumulators::row_of(thread, i);
      const int col = n0 + Mainloop::Accumulators::col_of(thread, i);
      if (row < m && col < n) {
        const float v = acc.x[i] + bias[col];
        z[static_cast<long long>(row) * n + col] = v;
        d[static_cast<long long>(row) * n + col] = __float2half(v > 0.0f ? v : 0.0f);
      }
    }
  }
#endif
}
// [readme:hopper_kernel]

// [readme:hopper_launch]
// Runs hopper_bias_relu on `stream` over the whole of D, where the current device can: A (m x k)
// row-major and B (k x n) column-major, k a multiple of 8 (TMA's strides are multiples of 16
// bytes).
tilepipe::Status launch_hopper_bias_relu(const __half* a, const __half* b, const float* bias,
                                         __half* d, float* z, int m, int n, int k,
                                         cudaStream_t stream) {
  using tilepipe::Status;
  const auto cuda_error = [](cudaError_t e) {
    return Status::error(Status::Code::kCudaError, cudaGetErrorString(e));
  };
  int device = 0;
  if (const cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return cuda_error(e);
  // An sm_90 GPU running this program's sm_90a code (a build for plain 90 has none).
  if (!tilepipe::hopper_tier_available(device))
    return Status::error(Status::Code::kUnsupportedDevice,
                         "hopper_bias_relu needs an sm_90 GPU and a build for 90a");
  // The tensor maps of A and B, one batch: fails naming the argument TMA cannot address.
  Mainloop::Params load{};
  const Status s =
      Mainloop::Loader::make_params(load, a, /*lda=*/k, 0, b, /*ldb=*/k, 0, m, n, k, 1);
  if (!s) return s;
  if (const cudaError_t e = cudaFuncSetAttribute(
          hopper_bias_relu, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
      e != cudaSuccess)
    return cuda_error(e);
  const dim3 grid((n + Config::kN - 1) / Config::kN, (m + Config::kM - 1) / Config::kM);
  hopper_bias_relu<<<grid, Config::kThreads, kSmemBytes, stream>>>(load, bias, d, z, m, n, k);
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return cuda_error(e);
  return Status::success();
}
// [readme:hopper_launch]

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
    std::printf(
        "hopper_bias_relu: skipped: device %d does not run sm_90a code (needs an sm_90 GPU "
        "and a build for 90a)\n",
        device);
    return 0;
  }

  // Small-integer inputs: A and B in [-1, 1], bias in [-4, 4].
  std::mt19937 rng(2026);
  std::uniform_int_distribution<int> small(-1, 1), wide(-4, 4);
  std::vector<__half> a(static_cast<std::size_t>(m) * k), b(static_cast<std::size_t>(n) * k);
  std::vector<float> bias(n);
  for (auto& x : a) x = __float2half(static_cast<float>(small(rng)));
  for (auto& x : b) x = __float2half(static_cast<float>(small(rng)));
  for (auto& x : bias) x = static_cast<float>(wide(rng));

  __half *d_a, *d_b, *d_d;
  float *d_bias, *d_z;
  CHECK_CUDA(cudaMalloc(&d_a, a.size() * sizeof(__half)));
  CHECK_CUDA(cudaMalloc(&d_b, b.size() * sizeof(__half)));
  CHECK_CUDA(cudaMalloc(&d_bias, bias.size() * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&d_d, static_cast<std::size_t>(m) * n * sizeof(__half)));
  CHECK_CUDA(cudaMalloc(&d_z, static_cast<std::size_t>(m) * n * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(d_a, a.data(), a.size() * sizeof(__half), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(d_b, b.data(), b.size() * sizeof(__half), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(d_bias, bias.data(), bias.size() * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(d_d, 0xFF, static_cast<std::size_t>(m) * n * sizeof(__half)));  // NaN
  CHECK_CUDA(cudaMemset(d_z, 0xFF, static_cast<std::size_t>(m) * n * sizeof(float)));

  const tilepipe::Status s =
      launch_hopper_bias_relu(d_a, d_b, d_bias, d_d, d_z, m, n, k, /*stream=*/nullptr);
  if (!s) {
    std::fprintf(stderr, "hopper_bias_relu: %s\n", s.what());
    return 1;
  }
  CHECK_CUDA(cudaDeviceSynchronize());

  std::vector<__half> d(static_cast<std::size_t>(m) * n);
  std::vector<float> z(d.size());
  CHECK_CUDA(cudaMemcpy(d.data(), d_d, d.size() * sizeof(__half), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(z.data(), d_z, z.size() * sizeof(float), cudaMemcpyDeviceToHost));
  long long bad = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double ref = bias[j];
      for (int p = 0; p < k; ++p)
        ref += double(__half2float(a[std::size_t(i) * k + p])) *
               __half2float(b[std::size_t(j) * k + p]);
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
