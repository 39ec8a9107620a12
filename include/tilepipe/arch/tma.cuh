#pragma once
//! \file
//! TMA (the tensor memory accelerator, sm_90), through `cuda::ptx`: 2-D and 3-D tile copies from
//! global to shared memory that complete on an mbarrier with a transaction count, and 3-D tile
//! stores from shared to global memory that complete in bulk groups.
//! The tensor map (`CUtensorMap`) is built on the host (detail/tensor_map.cuh) and passed to the
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

//! The 3-D copy multicast to the CTAs of the cluster in `cta_mask` (bit i: CTA rank i): the box
//! lands at `dst`'s offset in each of their shared memories and completes its bytes on the
//! mbarrier at `bar`'s offset in each.
TILEPIPE_DEVICE void tma_load_multicast(void* dst, const void* map, std::uint64_t* bar, int c0,
                                        int c1, int c2, std::uint16_t cta_mask) {
  const std::int32_t coords[3] = {c0, c1, c2};
  cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, dst, map,
                                  coords, bar, cta_mask);
}

//! Stores the box at `src` (shared memory, written by this block's threads and published to
//! the copy engine with `fence_proxy_async_shared`) to `(c0, c1, c2)` of the tensor map at `map`.
//! Elements of the box past the tensor's extent are not written. One thread issues it; it joins
//! that thread's open bulk group (`tma_store_commit` closes it).
TILEPIPE_DEVICE void tma_store(const void* map, const void* src, int c0, int c1, int c2) {
  const std::int32_t coords[3] = {c0, c1, c2};
  cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_global, cuda::ptx::space_shared, map, coords,
                                  src);
}

//! Closes this thread's bulk group of stores.
TILEPIPE_DEVICE void tma_store_commit() { cuda::ptx::cp_async_bulk_commit_group(); }

//! Waits until at most `N` of this thread's bulk groups are still reading shared memory (their
//! source may then be overwritten).
template <int N>
TILEPIPE_DEVICE void tma_store_wait_read() {
  cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<N>{});
}

//! Waits until at most `N` of this thread's bulk groups are incomplete (writes done).
template <int N>
TILEPIPE_DEVICE void tma_store_wait() {
  cuda::ptx::cp_async_bulk_wait_group(cuda::ptx::n32_t<N>{});
}

//! Orders this thread's earlier shared-memory writes before later copy-engine reads of them.
TILEPIPE_DEVICE void fence_proxy_async_shared() {
  cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
}

//! Barrier `id` (1..15; 0 is `__syncthreads`) among `threads` threads (a multiple of 32).
TILEPIPE_DEVICE void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

//! Arrives on barrier `id` (among `threads` threads) without waiting: the threads that
//! `named_barrier_sync` on it go on once all `threads` have arrived or synced.
TILEPIPE_DEVICE void named_barrier_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

//! Barrier `id` among `threads` threads, which also tells each of them whether `pred` was
//! non-zero in any of them (`__syncthreads_or` for a named barrier).
TILEPIPE_DEVICE bool named_barrier_or(int id, int threads, int pred) {
  int any;
  asm volatile(
      "{\n"
      "  .reg .pred p, q;\n"
      "  setp.ne.s32 p, %1, 0;\n"
      "  bar.red.or.pred q, %2, %3, p;\n"
      "  selp.s32 %0, 1, 0, q;\n"
      "}\n"
      : "=r"(any)
      : "r"(pred), "r"(id), "r"(threads)
      : "memory");
  return any != 0;
}

//! Orders this thread's later TMA copies through the tensor map at `map` (in global memory, 128
//! bytes, 128-byte aligned) after the writes that made it, released with `tensor_map_release`
//! (in another kernel too): the TMA unit drops any copy of the map it had cached.
TILEPIPE_DEVICE void tensor_map_acquire(const void* map) {
  cuda::ptx::fence_proxy_tensormap_generic(cuda::ptx::sem_acquire, cuda::ptx::scope_gpu, map,
                                           cuda::ptx::n32_t<128>{});
}

//! Releases this thread's writes of tensor maps in global memory (`tensormap.replace`) to the
//! GPU's TMA copies through them, after a `tensor_map_acquire` of each.
TILEPIPE_DEVICE void tensor_map_release() {
  cuda::ptx::fence_proxy_tensormap_generic(cuda::ptx::sem_release, cuda::ptx::scope_gpu);
}

//! Fetches the tensor map at `map` (a kernel parameter) into the TMA unit's cache ahead of the
//! first copy.
TILEPIPE_DEVICE void tma_prefetch_descriptor(const void* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<std::uint64_t>(map)) : "memory");
}

}  // namespace tilepipe::arch
