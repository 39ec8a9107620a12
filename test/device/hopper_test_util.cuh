#pragma once
// Helpers shared by the device tests of the Hopper tier's collectives (test_tma_tile_loader,
// test_mbarrier_ring, test_warpgroup_mma, test_warpgroup_epilogue): the guard's question, the
// picture of a ring slot the host checks against, 1024-byte aligned shared storage, and launches
// in clusters.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <tilepipe/gemm/kernel_sm90.cuh>
#include <tilepipe/layout/swizzled_tile.cuh>

namespace tptest {

// Whether the current device runs the Hopper tier: the argument of TP_REQUIRE_HOPPER_TIER.
inline bool hopper_tier_on_current_device() {
  int device = 0;
  return cudaGetDevice(&device) == cudaSuccess && tilepipe::hopper_tier_available(device);
}

template <class Element>
constexpr const char* element_name() {
  if constexpr (std::is_same_v<Element, __half>) return "f16";
  else if constexpr (std::is_same_v<Element, __nv_bfloat16>) return "bf16";
  else return "f32";
}

// Element offset of element (r, k) of a `Rows x TileK` operand tile in a ring slot, as
// TmaTileLoader's file comment describes it and WarpgroupMma's descriptors read it: r along M
// (A) or N (B), k along K. K-major, one 128-byte swizzled box of `Rows` lines of TileK
// elements; M/N-major, `Rows / kLine` boxes of TileK lines of kLine (128 bytes) one after the
// other. Each box is `SwizzledTileLayout`, which the host tests show equal to TMA's 128-byte
// swizzle.
template <int ElementBytes, bool KMajor, int Rows, int TileK>
constexpr int slot_offset(int r, int k) {
  constexpr int kLine = 128 / ElementBytes;
  static_assert(TileK == kLine, "a slot's k extent is one 128-byte swizzle line");
  if constexpr (KMajor) {
    return tilepipe::SwizzledTileLayout<Rows, TileK, ElementBytes>::offset(r, k);
  } else {
    return (r / kLine) * kLine * TileK +
           tilepipe::SwizzledTileLayout<TileK, kLine, ElementBytes>::offset(k, r % kLine);
  }
}

// A `Storage` at the first 1024-byte boundary of dynamic shared memory (the 128-byte swizzle's
// period, which TMA and wgmma assume); the launch asks for sizeof(Storage) + 1024 bytes. An
// offset from `smem`, as gemm_kernel_sm90 does, so that the pointer stays a shared one.
template <class Storage>
__device__ Storage& aligned_shared_storage(unsigned char* smem) {
  const auto misalignment = static_cast<unsigned>(__cvta_generic_to_shared(smem)) & 1023u;
  return *reinterpret_cast<Storage*>(smem + ((1024u - misalignment) & 1023u));
}

// Launches `kernel` on `blocks` blocks of `threads` in clusters of `cluster` blocks along x.
template <class... Params, class... Args>
cudaError_t launch_in_clusters(void (*kernel)(Params...), int blocks, int threads, std::size_t smem,
                               int cluster, Args... args) {
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = static_cast<unsigned>(cluster);
  attribute.val.clusterDim.y = 1;
  attribute.val.clusterDim.z = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(blocks));
  config.blockDim = dim3(static_cast<unsigned>(threads));
  config.dynamicSmemBytes = smem;
  config.attrs = &attribute;
  config.numAttrs = 1;
  return cudaLaunchKernelEx(&config, kernel, args...);
}

}  // namespace tptest
