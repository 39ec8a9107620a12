#pragma once
// Random device data from a counter-based hash, reproducible on the host, and element types
// named at run time. bench/ uses it too (bench_common.cuh), for the benchmark's inputs.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace tptest {

enum class DType { kF16, kBF16, kF32 };
inline const char* name_of(DType t) {
  return t == DType::kF16 ? "f16" : t == DType::kBF16 ? "bf16" : "f32";
}
inline std::size_t size_of(DType t) { return t == DType::kF32 ? 4 : 2; }

// Fills n elements of type t at p with values from a counter-based hash of (seed, index):
// uniform in [-1, 1) (rounded to t), or small integers in [-range, range] when range > 0.
// The same values are available on the host through hash_value().
__host__ __device__ inline float hash_value(std::uint64_t seed, std::uint64_t i, int range) {
  std::uint64_t x =
      seed * 0x9E3779B97F4A7C15ull + i * 0xBF58476D1CE4E5B9ull + 0x94D049BB133111EBull;
  x ^= x >> 31;
  x *= 0xD6E8FEB86659FD93ull;
  x ^= x >> 32;
  x *= 0xD6E8FEB86659FD93ull;
  x ^= x >> 29;
  if (range > 0)
    return static_cast<float>(static_cast<int>(x % std::uint64_t(2 * range + 1)) - range);
  return static_cast<float>(x >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

template <class T>
__global__ void fill_kernel(T* p, std::uint64_t n, std::uint64_t seed, int range) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::uint64_t(gridDim.x) * blockDim.x) {
    const float v = hash_value(seed, i, range);
    if constexpr (std::is_same_v<T, float>) p[i] = v;
    else if constexpr (std::is_same_v<T, __half>) p[i] = __float2half_rn(v);
    else p[i] = __float2bfloat16_rn(v);
  }
}

inline cudaError_t fill(DType t, void* p, std::uint64_t n, std::uint64_t seed, int range = 0,
                        cudaStream_t stream = nullptr) {
  if (n == 0) return cudaSuccess;
  const unsigned blocks = static_cast<unsigned>(std::min<std::uint64_t>((n + 255) / 256, 4096));
  switch (t) {
    case DType::kF16:
      fill_kernel<<<blocks, 256, 0, stream>>>(static_cast<__half*>(p), n, seed, range);
      break;
    case DType::kBF16:
      fill_kernel<<<blocks, 256, 0, stream>>>(static_cast<__nv_bfloat16*>(p), n, seed, range);
      break;
    case DType::kF32:
      fill_kernel<<<blocks, 256, 0, stream>>>(static_cast<float*>(p), n, seed, range);
      break;
  }
  return cudaGetLastError();
}

// Host value of an element stored as t.
inline double load_as_double(DType t, const void* p, std::size_t i) {
  switch (t) {
    case DType::kF16: return __half2float(static_cast<const __half*>(p)[i]);
    case DType::kBF16: return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    case DType::kF32: return static_cast<const float*>(p)[i];
  }
  return 0;
}

}  // namespace tptest
