#pragma once
//! \file
//! TMA (the tensor memory accelerator, sm_90): 2-D and 3-D tile copies from global to shared
//! memory that complete on an mbarrier with a transaction count, through `cuda::ptx`.
//! The tensor map (`CUtensorMap`) is built on the host (host/tensor_map.cuh) and passed to the
//! kernel as a `const __grid_constant__` parameter.

#include <cuda/ptx>

#include <cstdint>

#include "../detail/macros.cuh"

namespace tilepipe::arch {

//! Copies the box at `(c0, c1)` (element coordinates, innermost first) of the tensor map at
//! `map` to `dst`, completing `bytes of the box` on the mbarrier `bar`. Boxes that reach past the
//! tensor's extent are zero-filled there.
TILEPIPE_DEVICE void tma_load(void* dst, const void* map, std::uint64_t* bar, int c0, int c1) {
  const std::int32_t coords[2] = {c0, c1};
  cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, dst, map,
                                  coords, bar);
}

//! The 3-D form (`c2`: the batch).
TILEPIPE_DEVICE void tma_load(void* dst, const void* map, std::uint64_t* bar, int c0, int c1,
                              int c2) {
  const std::int32_t coords[3] = {c0, c1, c2};
  cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, dst, map,
                                  coords, bar);
}

//! Fetches the tensor map at `map` (a kernel parameter) into the TMA unit's cache ahead of the
//! first copy.
TILEPIPE_DEVICE void tma_prefetch_descriptor(const void* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<std::uint64_t>(map)) : "memory");
}

}  // namespace tilepipe::arch
