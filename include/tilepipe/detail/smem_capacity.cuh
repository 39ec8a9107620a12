#pragma once
//! \file
//! Shared memory one thread block may use (the opt-in maximum of dynamic shared memory, CUDA C++
//! Programming Guide, "Technical Specifications"), per architecture and for the build.
//!
//! - `kMaxSmemBytesPerBlock`: on the architecture being compiled. In the host pass no
//!   architecture is known, so it is the largest of the supported ones; the device pass of each
//!   target tightens it, so an oversized configuration fails to compile for the targets it does
//!   not fit.
//! - `kMinSmemBytesPerBlockOfTargets`: the smallest over every target of the translation unit
//!   (nvcc's `__CUDA_ARCH_LIST__`, the same in the host and the device passes), so host code may
//!   choose a configuration that every target can run. Without the macro it assumes the smallest.

namespace tilepipe::detail {

//! The opt-in maximum of dynamic shared memory per block of `sm_<arch / 10>` (arch as in
//! `__CUDA_ARCH__`, e.g. 900).
constexpr int max_smem_bytes_per_block(int arch) {
  if (arch == 800 || arch == 870) return 163 * 1024;  // A100, Orin
  if (arch == 860 || arch == 890 || arch >= 1200)
    return 99 * 1024;                  // consumer Ampere/Ada/Blackwell
  if (arch >= 900) return 227 * 1024;  // Hopper, datacenter Blackwell
  return 48 * 1024;                    // older: not supported
}

#if defined(__CUDA_ARCH__)
inline constexpr int kMaxSmemBytesPerBlock = max_smem_bytes_per_block(__CUDA_ARCH__);
#else
inline constexpr int kMaxSmemBytesPerBlock = 227 * 1024;
#endif

#if defined(__CUDA_ARCH_LIST__)
constexpr int min_smem_bytes_per_block_of_targets() {
  constexpr int archs[] = {__CUDA_ARCH_LIST__};
  int bytes = max_smem_bytes_per_block(archs[0]);
  for (int arch : archs) {
    const int b = max_smem_bytes_per_block(arch);
    bytes = b < bytes ? b : bytes;
  }
  return bytes;
}
inline constexpr int kMinSmemBytesPerBlockOfTargets = min_smem_bytes_per_block_of_targets();
#else
inline constexpr int kMinSmemBytesPerBlockOfTargets = 99 * 1024;
#endif

}  // namespace tilepipe::detail
