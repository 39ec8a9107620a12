#pragma once
//! \file
//! `cp.async` (sm_80+): asynchronous copies from global to shared memory.
//!
//! Full chunks go through `cuda::memcpy_async` in block/async_tile_loader.cuh; this file holds
//! the forms CCCL does not offer: the zero-fill (src-size) form of the 16-byte copy, used for
//! chunks that lie partly or wholly outside a matrix, and the 4- and 8-byte copies (`.ca`, the
//! only form of those sizes) of operands whose addresses are not 16-byte aligned. The copy belongs
//! to the calling thread's current cp.async group, exactly like a `cuda::memcpy_async` on a
//! `thread_scope_thread` pipeline, so it is completed by the same `producer_commit` /
//! `pipeline_consumer_wait_prior`.

#include <cstdint>

#include "../detail/macros.cuh"

namespace tilepipe::arch {

//! Copies `src_bytes` (0..16) bytes from `src` to the 16-byte chunk at `smem_dst` and zeros the
//! remaining `16 - src_bytes` bytes. With `src_bytes == 0` nothing is read; `src` must still be
//! a valid global address (pass a clamped one). Both addresses must be 16-byte aligned.
//! Caution: with 0 < src_bytes < 16 the hardware still performs a 16-byte read
//! (compute-sanitizer's memcheck reports one), so all 16 source bytes must be readable;
//! AsyncTileLoader therefore uses only src_bytes 0 and 16.
TILEPIPE_DEVICE void cp_async_zfill_16(void* smem_dst, const void* src, int src_bytes) {
  const auto dst = static_cast<std::uint32_t>(__cvta_generic_to_shared(smem_dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes)
               : "memory");
}

//! Copies `src_bytes` (0 or `Bytes`) bytes from `src` to `smem_dst` and zeros the rest of the
//! `Bytes` (4 or 8) bytes: `cp.async.ca`, cached in L1 (`.cg` exists only for 16 bytes). Both
//! addresses must be `Bytes`-aligned; with `src_bytes == 0` nothing is read, but `src` must
//! still be a valid global address.
template <int Bytes>
TILEPIPE_DEVICE void cp_async_ca_zfill(void* smem_dst, const void* src, int src_bytes) {
  static_assert(Bytes == 4 || Bytes == 8, "cp_async_ca_zfill<Bytes>: Bytes is 4 or 8");
  const auto dst = static_cast<std::uint32_t>(__cvta_generic_to_shared(smem_dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(dst), "l"(src), "n"(Bytes),
               "r"(src_bytes)
               : "memory");
}

//! Waits until at most `Pending` of the calling thread's committed groups are still in flight
//! (`cp.async.wait_group`). Covers only this thread's copies: a barrier must follow before other
//! threads read the data.
template <int Pending>
TILEPIPE_DEVICE void cp_async_wait() {
  static_assert(Pending >= 0, "cp_async_wait<Pending>: Pending is a count of groups, >= 0");
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
}

}  // namespace tilepipe::arch
