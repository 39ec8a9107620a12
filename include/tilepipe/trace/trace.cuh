#pragma once
//! \file
//! An opt-in pipeline trace: with `TILEPIPE_TRACE` defined (before the first tilepipe include,
//! or `-DTILEPIPE_TRACE`), lane 0 of every warp of the first `max_blocks` blocks records when it
//! issued each k-tile's copies, when its wait for the k-tile returned and when its MMAs on it
//! ended (`%globaltimer`, nanoseconds). render.hpp turns the records into Chrome trace-event JSON
//! (Perfetto) and a PNG. Without the macro `record` is an empty inline function: the kernels'
//! code is the same instruction for instruction (the codegen check compares the PTX).
//!
//! \code
//! #define TILEPIPE_TRACE
//! #include <tilepipe/tilepipe.cuh>
//! tilepipe::trace::DeviceBuffer buf{records, capacity, /*max_blocks=*/4, count};  // device memory
//! tilepipe::trace::attach(buf);   // in the translation unit that launches the kernel
//! Gemm::run(args);                // then copy `*count` records back
//! \endcode

#include "../detail/macros.cuh"
#include "record.hpp"

namespace tilepipe::trace {

//! Where the kernels write: `records` holds `capacity` Records, `*count` (zeroed by the host)
//! counts the events recorded (it may exceed `capacity`: those were dropped).
struct DeviceBuffer {
  Record* records = nullptr;
  unsigned capacity = 0;
  unsigned max_blocks = 0;
  unsigned* count = nullptr;
};

#if defined(TILEPIPE_TRACE)
namespace detail {
// One per translation unit (a device variable of a header, without relocatable device code):
// `attach` must be called from the translation unit whose kernels are traced.
static __device__ DeviceBuffer g_buffer;
}  // namespace detail

//! Host: makes this translation unit's kernels record into `buffer`.
inline cudaError_t attach(const DeviceBuffer& buffer) {
  return cudaMemcpyToSymbol(detail::g_buffer, &buffer, sizeof buffer);
}
#endif

//! Records event `e` of k-tile `k_tile` for the calling warp (lane 0 writes; the other lanes
//! return). Nothing at all without TILEPIPE_TRACE.
TILEPIPE_DEVICE void record(Event e, int k_tile) {
#if defined(TILEPIPE_TRACE) && defined(__CUDA_ARCH__)
  const DeviceBuffer& b = detail::g_buffer;
  if (b.records == nullptr || threadIdx.x % 32 != 0) return;
  const unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  if (block >= b.max_blocks) return;
  unsigned long long now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  const unsigned i = atomicAdd(b.count, 1u);
  if (i < b.capacity)
    b.records[i] = Record{now, block, threadIdx.x / 32, static_cast<std::uint32_t>(k_tile),
                          static_cast<std::uint32_t>(e)};
#else
  (void)e;
  (void)k_tile;
#endif
}

//! Numbers a role's k-tiles over a block's whole run (a persistent block's tiles one after
//! another), so that k_tile % Stages is the ring slot. Empty without TILEPIPE_TRACE.
struct KTileCounter {
#if defined(TILEPIPE_TRACE)
  int next_ = 0;
  TILEPIPE_DEVICE int next() { return next_++; }
  //! The number of the first of `n` k-tiles, and counts them all.
  TILEPIPE_DEVICE int take(int n) {
    const int first = next_;
    next_ += n;
    return first;
  }
#else
  TILEPIPE_DEVICE int next() { return 0; }
  TILEPIPE_DEVICE int take(int) { return 0; }
#endif
};

}  // namespace tilepipe::trace
