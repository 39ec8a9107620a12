#pragma once
//! \file
//! hopper_tier_available: whether a device runs the Hopper tier (an sm_90 GPU running this
//! program's `sm_90a` code), asked once per device through a probe kernel.

#include <cuda_runtime.h>

#include <atomic>
#include <string>

#include "../status.cuh"

namespace tilepipe {

namespace detail {

//! A kernel whose `sm_90a` build, and only that, has static shared memory: on the current
//! device, `cudaFuncGetAttributes` of it reports shared memory exactly when the code the device
//! runs from this program was compiled for `sm_90a`, so the Hopper tier exists there.
//! (Never launched.)
template <int = 0>
__global__ void sm90a_probe_kernel(int* out) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __shared__ int marker;
  marker = static_cast<int>(threadIdx.x);
  __syncthreads();
  if (out != nullptr) *out = marker;
#else
  (void)out;
#endif
}

}  // namespace detail

//! Whether device `device` runs the Hopper tier: an sm_90 GPU running this program's `sm_90a`
//! code (a build for plain `90` has none). Asked once per device, then remembered. A kernel of
//! one's own made of the Hopper collectives runs under the same condition.
inline bool hopper_tier_available(int device) {
  static std::atomic<signed char> known[256];  // 0: not asked yet, 1: yes, -1: no
  if (device < 0 || device >= 256) return false;
  const signed char k = known[device].load(std::memory_order_relaxed);
  if (k != 0) return k > 0;
  int major = 0, minor = 0;
  bool yes =
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess &&
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) == cudaSuccess &&
      major == 9 && minor == 0;
  if (yes) {
    cudaFuncAttributes attr{};
    if (cudaFuncGetAttributes(&attr, detail::sm90a_probe_kernel<0>) == cudaSuccess) {
      yes = attr.sharedSizeBytes > 0;
    } else {
      (void)cudaGetLastError();  // the failed query leaves no error behind for the caller
      yes = false;
    }
  }
  known[device].store(yes ? 1 : -1, std::memory_order_relaxed);
  return yes;
}

//! Whether the current device runs the Hopper tier (hopper_tier_available).
inline bool hopper_tier_on_current_device() {
  int device = 0;
  return cudaGetDevice(&device) == cudaSuccess && hopper_tier_available(device);
}

namespace detail {

//! The device half of a Hopper-tier GEMM's `can_implement`: success where the current device runs
//! the tier, otherwise kUnsupportedDevice naming the GEMM `who`.
inline Status hopper_tier_status(const char* who) {
  if (hopper_tier_on_current_device()) return Status::success();
  return Status::error(Status::Code::kUnsupportedDevice,
                       std::string(who) +
                           ": the current device does not run the Hopper tier (it needs an sm_90 "
                           "GPU and a build for sm_90a, CMake architecture 90a)");
}

}  // namespace detail

}  // namespace tilepipe
