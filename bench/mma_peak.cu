// The mma.sync m16n8k16 ceiling: a register-only microbenchmark. Every warp runs kChains
// independent accumulator chains of mma.sync on operands that never leave registers, so nothing
// but the tensor cores' issue rate limits it. The GEMM's ratio to this number says how much of the
// instruction's throughput the mainloop keeps busy; cuBLAS on Hopper uses wgmma instead and is
// not bound by it.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <type_traits>
#include <vector>

#include <tilepipe/arch/mma.cuh>

#include "bench_common.cuh"

namespace tilepipe_bench {
namespace {

#define PEAK_CHECK(expr)                                                                \
  do {                                                                                  \
    const cudaError_t err_ = (expr);                                                    \
    if (err_ != cudaSuccess) {                                                          \
      std::fprintf(stderr, "[bench] %s failed: %s\n", #expr, cudaGetErrorString(err_)); \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)

constexpr int kThreads = 256;  // 8 warps a block
constexpr int kChains = 8;     // independent accumulators per warp: hides the mma latency
constexpr int kIterations = 4096;

// Pseudo-random 16-bit values in [-1, 1), two to a register, so that the tensor cores see data
// like a GEMM's (zeros draw less power and can run faster).
template <class Element>
__device__ std::uint32_t random_pair(std::uint32_t seed) {
  seed = seed * 747796405u + 2891336453u;
  const float x = float(seed >> 8) * (2.0f / 16777216.0f) - 1.0f;
  seed = seed * 747796405u + 2891336453u;
  const float y = float(seed >> 8) * (2.0f / 16777216.0f) - 1.0f;
  if constexpr (std::is_same_v<Element, __half>) {
    const __half2 h = __floats2half2_rn(x, y);
    return *reinterpret_cast<const std::uint32_t*>(&h);
  } else {
    const __nv_bfloat162 h = __floats2bfloat162_rn(x, y);
    return *reinterpret_cast<const std::uint32_t*>(&h);
  }
}

template <class Element>
__global__ void __launch_bounds__(kThreads) mma_peak_kernel(int iterations, float* out) {
  const std::uint32_t tid = blockIdx.x * blockDim.x + threadIdx.x;
  std::uint32_t a[4];  // one A fragment (16 x 16)
  std::uint32_t b[2];  // one B fragment (16 x 8)
  for (int i = 0; i < 4; ++i) a[i] = random_pair<Element>(tid * 8 + i);
  for (int i = 0; i < 2; ++i) b[i] = random_pair<Element>(tid * 8 + 4 + i);
  float acc[kChains][4];  // (chains, one m16n8 f32 tile)
  for (int c = 0; c < kChains; ++c)
    for (int j = 0; j < 4; ++j) acc[c][j] = 0.0f;

  for (int it = 0; it < iterations; ++it) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) tilepipe::arch::mma_m16n8k16<Element>(acc[c], a, b, acc[c]);
  }
  // Every accumulator reaches memory, so no chain can be dropped.
  float sum = 0.0f;
  for (int c = 0; c < kChains; ++c)
    for (int j = 0; j < 4; ++j) sum += acc[c][j];
  out[tid] = sum;
}

// Exactly one full wave: every SM holds as many blocks as it can, for the whole launch.
int peak_blocks(void (*kernel)(int, float*)) {
  int device = 0, sms = 0, blocks_per_sm = 0;
  PEAK_CHECK(cudaGetDevice(&device));
  PEAK_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  PEAK_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, kernel, kThreads, 0));
  return sms * std::max(1, blocks_per_sm);
}

}  // namespace

MmaPeakKernel::MmaPeakKernel(DType dtype, int iterations) : dtype_(dtype), iterations_(iterations) {
  blocks_ =
      peak_blocks(dtype == DType::kF16 ? mma_peak_kernel<__half> : mma_peak_kernel<__nv_bfloat16>);
  PEAK_CHECK(cudaMalloc(&out_, sizeof(float) * blocks_ * kThreads));
}

MmaPeakKernel::~MmaPeakKernel() { cudaFree(out_); }

void MmaPeakKernel::launch(cudaStream_t stream) const {
  auto kernel = dtype_ == DType::kF16 ? mma_peak_kernel<__half> : mma_peak_kernel<__nv_bfloat16>;
  kernel<<<blocks_, kThreads, 0, stream>>>(iterations_, out_);
}

long long MmaPeakKernel::mma_per_launch() const {
  return static_cast<long long>(blocks_) * (kThreads / 32) * kChains * iterations_;
}

double MmaPeakKernel::flops() const { return 2.0 * 16 * 8 * 16 * double(mma_per_launch()); }

PeakResult measure_mma_peak(DType dtype, int runs, cudaStream_t stream) {
  const MmaPeakKernel peak(dtype, kIterations);
  for (int i = 0; i < 3; ++i) peak.launch(stream);
  PEAK_CHECK(cudaGetLastError());
  std::vector<cudaEvent_t> events(runs + 1);
  for (auto& e : events) PEAK_CHECK(cudaEventCreate(&e));
  PEAK_CHECK(cudaEventRecord(events[0], stream));
  for (int i = 0; i < runs; ++i) {
    peak.launch(stream);
    PEAK_CHECK(cudaEventRecord(events[i + 1], stream));
  }
  PEAK_CHECK(cudaGetLastError());
  PEAK_CHECK(cudaStreamSynchronize(stream));
  std::vector<float> ms(runs);
  for (int i = 0; i < runs; ++i) PEAK_CHECK(cudaEventElapsedTime(&ms[i], events[i], events[i + 1]));
  for (auto& e : events) PEAK_CHECK(cudaEventDestroy(e));
  std::sort(ms.begin(), ms.end());
  const double median = runs % 2 ? ms[runs / 2] : 0.5 * (ms[runs / 2 - 1] + ms[runs / 2]);

  PeakResult r;
  r.mma_per_launch = peak.mma_per_launch();
  r.tflops = peak.flops() / (median * 1e-3) / 1e12;
  r.median_ms = median;
  r.runs = runs;
  r.blocks = peak.blocks();
  r.threads_per_block = kThreads;
  r.chains_per_warp = kChains;
  r.iterations = kIterations;
  return r;
}

}  // namespace tilepipe_bench
