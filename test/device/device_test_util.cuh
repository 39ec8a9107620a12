#pragma once
// Helpers shared by the device tests: error checks, an RAII device buffer, and random 16-bit data.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

// Guards a test of the Hopper tier: skips (saying why) on a GPU that is not sm_90 or in a build
// without 90a; where both hold it does not ask the library, so a test whose tier cannot run there
// fails instead of passing silently. The arguments are the library's own answer (e.g.
// `GemmSm90<A, B, LA, LB>::available()`; variadic, for a template's commas), asserted to agree.
// A GPU whose compute capability cannot be read fails the test rather than skipping it.
#define TP_REQUIRE_HOPPER_TIER(...)                                                             \
  do {                                                                                          \
    const int tp_cc_ = ::tptest::gpu_compute_capability();                                      \
    ASSERT_GT(tp_cc_, 0) << "the current GPU's compute capability could not be read";           \
    if (tp_cc_ != 90)                                                                           \
      GTEST_SKIP() << "the Hopper tier needs an sm_90 GPU (H100, H200); this is sm_" << tp_cc_; \
    if (!::tptest::build_has_sm90a())                                                           \
      GTEST_SKIP() << "this build has no sm_90a code (CMAKE_CUDA_ARCHITECTURES lacks 90a)";     \
    ASSERT_TRUE((__VA_ARGS__)) << "an sm_90 GPU and a build for 90a, yet the library says the " \
                                  "Hopper tier is not available";                               \
  } while (0)

// Fails the current test (and returns from it) when a CUDA call does not succeed.
#define TP_CUDA_ASSERT(expr)                                                         \
  do {                                                                               \
    const cudaError_t tp_err_ = (expr);                                              \
    ASSERT_EQ(tp_err_, cudaSuccess) << #expr << ": " << cudaGetErrorString(tp_err_); \
  } while (0)

// Checks the launch itself and then the kernel's completion.
#define TP_CUDA_ASSERT_LAUNCH()              \
  do {                                       \
    TP_CUDA_ASSERT(cudaGetLastError());      \
    TP_CUDA_ASSERT(cudaDeviceSynchronize()); \
  } while (0)

namespace tptest {

// The current GPU's compute capability as 10 * major + minor (90 for H100 and H200), or 0 where
// it cannot be read.
inline int gpu_compute_capability() {
  int device = 0, major = 0, minor = 0;
  const bool read =
      cudaGetDevice(&device) == cudaSuccess &&
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess &&
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) == cudaSuccess;
  return read ? 10 * major + minor : 0;
}

// Whether the current GPU is an sm_90 part (H100, H200), which has the Hopper tier's instructions.
inline bool gpu_is_sm90() { return gpu_compute_capability() == 90; }

// Whether this test program was built with sm_90a code (CMake's architectures name 90a).
constexpr bool build_has_sm90a() {
#if defined(TILEPIPE_TEST_BUILD_HAS_SM90A)
  return true;
#else
  return false;
#endif
}

// cudaDeviceSynchronize with a deadline, for kernels whose bugs deadlock (a barrier phase that
// never completes): past `seconds` the test fails and the program exits, since nothing else
// stops a running kernel, instead of hanging until ctest's timeout.
inline cudaError_t synchronize_within(double seconds, const char* what) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  cudaError_t e;
  while ((e = cudaStreamQuery(nullptr)) == cudaErrorNotReady) {
    if (std::chrono::steady_clock::now() > deadline) {
      ADD_FAILURE() << what << " did not finish within " << seconds << " s (deadlocked?); exiting";
      std::fflush(stdout);
      std::_Exit(1);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return e == cudaSuccess ? cudaDeviceSynchronize() : e;
}

// Whether the Hopper tier must run here, by the rule of TP_REQUIRE_HOPPER_TIER (an sm_90 GPU and a
// build for 90a), not by the library's own answer: for tests that expect a tier or count problems.
inline bool hopper_tier_expected() { return gpu_is_sm90() && build_has_sm90a(); }

// Device memory for `n` elements of T, freed on scope exit.
template <class T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t n) : n_(n) {
    if (cudaMalloc(&ptr_, bytes()) != cudaSuccess) ptr_ = nullptr;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { cudaFree(ptr_); }

  T* get() const { return ptr_; }
  std::size_t size() const { return n_; }
  std::size_t bytes() const { return n_ * sizeof(T); }
  bool ok() const { return ptr_ != nullptr; }

  cudaError_t upload(const std::vector<T>& host) {
    return cudaMemcpy(ptr_, host.data(), bytes(), cudaMemcpyHostToDevice);
  }
  cudaError_t download(std::vector<T>& host) const {
    host.resize(n_);
    return cudaMemcpy(host.data(), ptr_, bytes(), cudaMemcpyDeviceToHost);
  }
  // Fills every byte with `byte` (0xFF makes 16-bit and 32-bit floats NaN) and waits for it:
  // cudaMemset runs on the legacy default stream, which a kernel on a non-blocking stream does
  // not wait for, so without the wait the poison could land after that kernel's output.
  cudaError_t poison(unsigned char byte = 0xFF) {
    const cudaError_t e = cudaMemset(ptr_, byte, bytes());
    return e == cudaSuccess ? cudaDeviceSynchronize() : e;
  }

 private:
  T* ptr_ = nullptr;
  std::size_t n_;
};

// Random non-zero 16-bit patterns: a copy test can tell every element from zero-fill.
inline std::vector<std::uint16_t> random_nonzero_bits(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(1, 0xFFFF);
  std::vector<std::uint16_t> v(n);
  for (auto& x : v) x = static_cast<std::uint16_t>(dist(rng));
  return v;
}

// Random finite f32 bit patterns, never zero: magnitudes in [2^-126, 1), either sign.
inline std::vector<std::uint32_t> random_nonzero_bits32(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::uint32_t> magnitude(0x00800000u, 0x3F7FFFFFu);
  std::uniform_int_distribution<std::uint32_t> sign(0, 1);
  std::vector<std::uint32_t> v(n);
  for (auto& x : v) x = magnitude(rng) | (sign(rng) << 31);
  return v;
}

// Checks tiles a loader copied out: `out` holds `row0.size()` tiles of `tile_rows x tile_cols`
// elements (row-major each), tile t copied from `(row0[t], col0[t])` of the `rows x cols` source
// `src` (leading dimension `ld`), with zeros where it lies outside. Bit patterns are compared;
// the first 10 mismatches are reported as failures; returns how many there were.
template <class Bits>
int count_tile_mismatches(const std::vector<Bits>& out, const std::vector<Bits>& src, int rows,
                          int cols, std::int64_t ld, const std::vector<int>& row0,
                          const std::vector<int>& col0, int tile_rows, int tile_cols) {
  int mismatches = 0;
  for (std::size_t t = 0; t < row0.size(); ++t)
    for (int r = 0; r < tile_rows; ++r)
      for (int c = 0; c < tile_cols; ++c) {
        const int gr = row0[t] + r, gc = col0[t] + c;
        const bool inside = gr < rows && gc < cols;
        const Bits want = inside ? src[std::size_t(gr) * ld + gc] : Bits{0};
        const Bits got = out[(t * tile_rows + r) * tile_cols + c];
        if (got != want && ++mismatches <= 10) {
          ADD_FAILURE() << "tile at (" << row0[t] << ", " << col0[t] << "), element (" << r << ", "
                        << c << "): got 0x" << std::hex << +got << ", want 0x" << +want
                        << (inside ? "" : " (zero fill)");
        }
      }
  return mismatches;
}

// Small random integers in [-range, range]: exact in f16/bf16, and their dot products are exact
// in f32 for the K used by the tests.
inline std::vector<int> random_small_ints(std::size_t n, int range, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(-range, range);
  std::vector<int> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

template <class T>
T from_float(float f);
template <>
inline __half from_float<__half>(float f) {
  return __float2half(f);
}
template <>
inline __nv_bfloat16 from_float<__nv_bfloat16>(float f) {
  return __float2bfloat16(f);
}

template <class T>
std::vector<T> to_elements(const std::vector<int>& v) {
  std::vector<T> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = from_float<T>(static_cast<float>(v[i]));
  return out;
}

// Reinterprets 16-bit patterns as elements of a 16-bit type.
template <class T>
std::vector<T> from_bits(const std::vector<std::uint16_t>& bits) {
  static_assert(sizeof(T) == 2, "16-bit element type expected");
  std::vector<T> out(bits.size());
  std::memcpy(out.data(), bits.data(), bits.size() * 2);
  return out;
}

// Sets the kernel's dynamic shared memory limit when it needs more than the default 48 KB.
template <class Kernel>
cudaError_t allow_smem(Kernel kernel, std::size_t bytes) {
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              static_cast<int>(bytes));
}

}  // namespace tptest
