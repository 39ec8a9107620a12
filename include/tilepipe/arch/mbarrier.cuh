#pragma once
//! \file
//! Shared-memory mbarriers (sm_90) through `cuda::ptx`: initialisation, arrivals (plain and with
//! an expected transaction count, for TMA copies), and the parity wait.

#include <cuda/ptx>

#include <cstdint>

#include "../detail/macros.cuh"

namespace tilepipe::arch {

//! Initialises the mbarrier at `bar` to complete a phase after `arrivals` arrivals. One thread
//! initialises; `fence_mbarrier_init` and a block barrier publish it to the other threads and to
//! the copy engine.
TILEPIPE_DEVICE void mbarrier_init(std::uint64_t* bar, std::uint32_t arrivals) {
  cuda::ptx::mbarrier_init(bar, arrivals);
}

//! Makes earlier `mbarrier_init`s visible to the asynchronous proxy (TMA's complete_tx).
TILEPIPE_DEVICE void fence_mbarrier_init() {
  cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
}

//! Arrives once and expects `bytes` more bytes of transactions (the TMA copies of this phase)
//! before the phase may complete.
TILEPIPE_DEVICE void mbarrier_arrive_expect_tx(std::uint64_t* bar, std::uint32_t bytes) {
  (void)cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta,
                                             cuda::ptx::space_shared, bar, bytes);
}

//! Arrives once (release semantics at CTA scope: this thread's earlier reads are done).
TILEPIPE_DEVICE void mbarrier_arrive(std::uint64_t* bar) { (void)cuda::ptx::mbarrier_arrive(bar); }

//! Returns once the phase of parity `parity` has completed. A barrier that has completed no
//! phase yet counts as having completed the one before phase 0, so waiting for parity 1 on a
//! fresh barrier returns at once.
TILEPIPE_DEVICE void mbarrier_wait(std::uint64_t* bar, std::uint32_t parity) {
  // try_wait suspends the thread for a hardware-chosen time before returning false.
  while (!cuda::ptx::mbarrier_try_wait_parity(bar, parity)) {
  }
}

}  // namespace tilepipe::arch
