// main() of every device test (test/device/test_*.cu).
//
// Runs the GoogleTest tests on the first CUDA device of compute capability >= 8.0.
// When there is none (no driver, no GPU, or only older GPUs) it prints one line saying
// why and exits with 77, which ctest reports as "skipped" (SKIP_RETURN_CODE 77), so a
// machine without a suitable GPU can still build and run the whole test suite.
#include <cstdio>
#include <string>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

namespace {

constexpr int kSkipReturnCode = 77;  // ctest's SKIP_RETURN_CODE for label "device"
constexpr int kMinMajor = 8;         // cp.async, ldmatrix and mma.sync.m16n8k16 need sm_80

int skip(const std::string& why) {
  std::printf("[tilepipe] SKIPPED: no CUDA device of compute capability >= %d.0 (%s)\n", kMinMajor,
              why.c_str());
  std::fflush(stdout);
  return kSkipReturnCode;
}

}  // namespace

int main(int argc, char** argv) {
  // Parse --gtest_* flags first, so --gtest_list_tests works without a GPU.
  ::testing::InitGoogleTest(&argc, argv);
  if (GTEST_FLAG_GET(list_tests)) {
    return RUN_ALL_TESTS();
  }

  int device_count = 0;
  const cudaError_t status = cudaGetDeviceCount(&device_count);
  if (status != cudaSuccess) {
    // cudaErrorNoDevice, cudaErrorInsufficientDriver (no driver at all), ...
    return skip(std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status));
  }
  if (device_count == 0) {
    return skip("cudaGetDeviceCount found 0 devices");
  }

  std::string found;  // "sm_75, sm_61" when only older devices exist
  for (int device = 0; device < device_count; ++device) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
      continue;
    }
    if (prop.major >= kMinMajor) {
      if (cudaSetDevice(device) != cudaSuccess) {
        continue;
      }
      std::printf("[tilepipe] device %d: %s (sm_%d%d, %d SMs, %.1f GiB)\n", device, prop.name,
                  prop.major, prop.minor, prop.multiProcessorCount,
                  static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0));
      std::fflush(stdout);
      return RUN_ALL_TESTS();
    }
    found += (found.empty() ? "found sm_" : ", sm_") + std::to_string(prop.major) +
             std::to_string(prop.minor);
  }
  return skip(found.empty() ? "no device properties could be read" : found);
}
