#pragma once
//! \file
//! `mov.u32` from the special registers `%tid.x` and `%ctaid.x` (any sm), as a volatile read: the
//! compiler takes each call as a new value, so nothing computed from it is hoisted out of a loop
//! or shared between calls. A persistent kernel reads its indices this way in every iteration, so
//! that per-thread offsets are recomputed rather than kept live across its mainloop.

#include "../detail/macros.cuh"

namespace tilepipe::arch {

//! `threadIdx.x`, read anew.
TILEPIPE_DEVICE int opaque_thread_index() {
  int v;
  asm volatile("mov.u32 %0, %%tid.x;\n" : "=r"(v));
  return v;
}

//! `blockIdx.x`, read anew.
TILEPIPE_DEVICE int opaque_block_index() {
  int v;
  asm volatile("mov.u32 %0, %%ctaid.x;\n" : "=r"(v));
  return v;
}

}  // namespace tilepipe::arch
