#pragma once
//! \file
//! KernelLauncher: the one place that launches tilepipe's kernels. A kernel describes itself
//! through a small interface; the launcher does the rest (the dynamic shared-memory attribute,
//! the cluster launch, occupancy queries remembered per device, and errors as a `Status`). The
//! provided GEMMs build their kernels' `Params` from their `Arguments` and call it; a kernel of
//! one's own that follows the interface can use it too.
//!
//! The interface of a kernel `K`:
//! - `K::Params`: what its blocks read, built on the host and passed by value;
//! - `K::kThreads`: threads per block;
//! - `K::kSharedBytes`: dynamic shared memory per block (0 for none);
//! - `K::entry()`: its `__global__` function, `void (*)(const K::Params)`.
//!
//! \code
//! tilepipe::Status s = tilepipe::KernelLauncher<Kernel>::launch(params, {grid}, stream, "MyGemm");
//! \endcode

#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <string>

#include "../status.cuh"

namespace tilepipe {

//! Where a kernel runs: its grid, and the blocks of a thread-block cluster (sm_90 and newer;
//! `{1, 1, 1}`, the default, launches without a cluster attribute).
struct LaunchShape {
  dim3 grid;
  dim3 cluster = dim3(1, 1, 1);
  bool clustered() const { return cluster.x * cluster.y * cluster.z > 1; }
};

namespace detail {

//! "`who`: `call` failed: <CUDA's message>", as a kCudaError status.
inline Status cuda_error(const std::string& who, const char* call, cudaError_t e) {
  return Status::error(Status::Code::kCudaError,
                       who + ": " + call + " failed: " + cudaGetErrorString(e));
}

//! A non-negative int per device (ids 0..255) and slot, computed the first time it is asked for
//! and remembered. `Tag` gives each use its own table. Devices outside the table are computed on
//! every call.
template <class Tag, int kSlots = 1>
struct PerDeviceCache {
  //! `*value` for (`device`, `slot`): the remembered one, else `compute(value)`, a callable that
  //! returns a Status and is remembered only when it succeeds.
  template <class Compute>
  static Status get(int device, int slot, int* value, Compute&& compute) {
    static std::atomic<int> known[256][kSlots];  // 0: not asked yet; else the value + 1
    const bool cached = device >= 0 && device < 256 && slot >= 0 && slot < kSlots;
    if (cached && (*value = known[device][slot].load(std::memory_order_relaxed) - 1) >= 0)
      return Status::success();
    Status s = compute(value);
    if (s && cached) known[device][slot].store(*value + 1, std::memory_order_relaxed);
    return s;
  }
};

//! What the launchers ask of the current device; read once per device.
struct DeviceInfo {
  int device = 0;
  int major = 0, minor = 0;  //!< compute capability
  int smem_optin = 0;        //!< the most dynamic shared memory a block may opt in to
  int sms = 0;               //!< streaming multiprocessors
};

struct DeviceAttributeCacheTag;

//! The current device's DeviceInfo; errors name `who`.
inline Status current_device_info(DeviceInfo& info, const std::string& who) {
  cudaError_t e = cudaGetDevice(&info.device);
  if (e != cudaSuccess) return cuda_error(who, "cudaGetDevice", e);
  const cudaDeviceAttr attrs[4] = {
      cudaDevAttrComputeCapabilityMajor, cudaDevAttrComputeCapabilityMinor,
      cudaDevAttrMaxSharedMemoryPerBlockOptin, cudaDevAttrMultiProcessorCount};
  int* fields[4] = {&info.major, &info.minor, &info.smem_optin, &info.sms};
  for (int i = 0; i < 4; ++i) {
    const Status s =
        PerDeviceCache<DeviceAttributeCacheTag, 4>::get(info.device, i, fields[i], [&](int* v) {
          const cudaError_t err = cudaDeviceGetAttribute(v, attrs[i], info.device);
          return err == cudaSuccess ? Status::success()
                                    : cuda_error(who, "cudaDeviceGetAttribute", err);
        });
    if (!s) return s;
  }
  return Status::success();
}

//! The device checks of a kernel made of the Ampere tier's collectives: the device is sm_80 or
//! newer (cp.async, mma.sync m16n8k16), and its opt-in limit of shared memory per block,
//! `smem_optin`, holds the kernel's `shared_bytes`. Messages start with `who`.
inline Status check_gemm_kernel_device(const std::string& who, int device, int major, int minor,
                                       std::size_t shared_bytes, int smem_optin) {
  const std::string dev = "device " + std::to_string(device);
  if (major < 8)
    return Status::error(Status::Code::kUnsupportedDevice,
                         who + ": " + dev + " is sm_" + std::to_string(major) +
                             std::to_string(minor) +
                             "; tilepipe needs sm_80 or newer (cp.async, mma.sync m16n8k16)");
  if (smem_optin < 0 || static_cast<std::size_t>(smem_optin) < shared_bytes)
    return Status::error(Status::Code::kInsufficientResources,
                         who + ": this configuration needs " + std::to_string(shared_bytes) +
                             " bytes of shared memory per block; " + dev + " allows " +
                             std::to_string(smem_optin) + "; use fewer stages");
  return Status::success();
}

}  // namespace detail

//! Launches kernel `Kernel` (see the file's comment for what it provides).
template <class Kernel>
struct KernelLauncher {
  using Params = typename Kernel::Params;
  using Entry = void (*)(const Params);

  //! Launches `Kernel` over `shape` on `stream`. Errors name `who` and the call that failed.
  static Status launch(const Params& p, LaunchShape shape, cudaStream_t stream,
                       const std::string& who) {
    // One pointer for the attribute and the launch: each translation unit has its own copy of a
    // kernel template, and the linker may take two functions that name it from different ones.
    const Entry kernel = Kernel::entry();
    Status s = allow_shared_bytes(kernel, who);
    if (!s) return s;
    if (!shape.clustered()) {
      kernel<<<shape.grid, Kernel::kThreads, Kernel::kSharedBytes, stream>>>(p);
      const cudaError_t e = cudaGetLastError();
      return e == cudaSuccess ? Status::success() : detail::cuda_error(who, "the launch", e);
    }
    cudaLaunchAttribute cluster{};
    const cudaLaunchConfig_t config = cluster_config(shape, cluster, stream);
    const cudaError_t e = cudaLaunchKernelEx(&config, kernel, p);
    return e == cudaSuccess ? Status::success() : detail::cuda_error(who, "cudaLaunchKernelEx", e);
  }

  //! How many clusters of `cluster` blocks fit on the current device at once, into `*clusters`
  //! (0 where none does); asked once per device and cluster size (at most 8 blocks).
  static Status resident_clusters(dim3 cluster, int* clusters, const std::string& who) {
    const Entry kernel = Kernel::entry();
    Status s = allow_shared_bytes(kernel, who);
    int device = 0;
    cudaError_t e = cudaGetDevice(&device);
    if (s && e != cudaSuccess) s = detail::cuda_error(who, "cudaGetDevice", e);
    if (!s) return s;
    const int blocks = static_cast<int>(cluster.x * cluster.y * cluster.z);
    return detail::PerDeviceCache<ClustersTag, 9>::get(device, blocks, clusters, [&](int* n) {
      cudaLaunchAttribute attr{};
      const cudaLaunchConfig_t config = cluster_config({cluster, cluster}, attr, nullptr);
      const cudaError_t err =
          cudaOccupancyMaxActiveClusters(n, reinterpret_cast<const void*>(kernel), &config);
      return err == cudaSuccess ? Status::success()
                                : detail::cuda_error(who, "cudaOccupancyMaxActiveClusters", err);
    });
  }

  //! How many blocks fit on the current device at once (blocks per SM times SMs, at least one per
  //! SM), into `*blocks`; asked once per device.
  static Status resident_blocks(int* blocks, const std::string& who) {
    detail::DeviceInfo dev;
    Status s = detail::current_device_info(dev, who);
    if (!s) return s;
    const Entry kernel = Kernel::entry();
    s = allow_shared_bytes(kernel, who);
    if (!s) return s;
    int per_sm = 0;
    s = detail::PerDeviceCache<BlocksTag>::get(dev.device, 0, &per_sm, [&](int* n) {
      const cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
          n, kernel, Kernel::kThreads, Kernel::kSharedBytes);
      return e == cudaSuccess
                 ? Status::success()
                 : detail::cuda_error(who, "cudaOccupancyMaxActiveBlocksPerMultiprocessor", e);
    });
    *blocks = dev.sms * (per_sm > 0 ? per_sm : 1);
    return s;
  }

  //! The architecture (10 x major + minor, e.g. 90) of the code device `device` runs of the
  //! kernel: the binary's, or the PTX's where that is lower (code JIT-compiled from older PTX
  //! has the device's binary version but the PTX's `__CUDA_ARCH__`); 0 where it has none.
  //! Asked once per device.
  static int compiled_arch(int device) {
    int arch = 0;
    (void)detail::PerDeviceCache<ArchTag>::get(device, 0, &arch, [](int* a) {
      cudaFuncAttributes attr{};
      *a = 0;
      if (cudaFuncGetAttributes(&attr, Kernel::entry()) != cudaSuccess)
        (void)cudaGetLastError();  // no code for this device: leave no error behind
      else
        *a = attr.ptxVersion > 0 && attr.ptxVersion < attr.binaryVersion ? attr.ptxVersion
                                                                         : attr.binaryVersion;
      return Status::success();
    });
    return arch;
  }

 private:
  struct ClustersTag;  // the caches' tables, one per question and kernel
  struct BlocksTag;
  struct ArchTag;

  // Above the default 48 KB a kernel must opt in to its shared memory; done before every use of
  // the pointer, since another translation unit's copy of the kernel may not have been.
  static Status allow_shared_bytes(Entry kernel, const std::string& who) {
    if (Kernel::kSharedBytes <= 48 * 1024) return Status::success();
    const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               static_cast<int>(Kernel::kSharedBytes));
    return e == cudaSuccess ? Status::success()
                            : detail::cuda_error(who, "cudaFuncSetAttribute", e);
  }

  // `shape` as a launch configuration with its cluster attribute in `attr` (which the
  // configuration points to, so it must outlive it).
  static cudaLaunchConfig_t cluster_config(LaunchShape shape, cudaLaunchAttribute& attr,
                                           cudaStream_t stream) {
    attr = cudaLaunchAttribute{};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = shape.cluster.x;
    attr.val.clusterDim.y = shape.cluster.y;
    attr.val.clusterDim.z = shape.cluster.z;
    cudaLaunchConfig_t config{};
    config.gridDim = shape.grid;
    config.blockDim = dim3(Kernel::kThreads);
    config.dynamicSmemBytes = Kernel::kSharedBytes;
    config.stream = stream;
    config.attrs = &attr;
    config.numAttrs = 1;
    return config;
  }
};

}  // namespace tilepipe
