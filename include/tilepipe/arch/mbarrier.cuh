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

//! Arrives once on the mbarrier at `bar`'s offset in the shared memory of CTA `cta` of the
//! cluster (this CTA's own included). The arrival has the default semantics (release at CTA
//! scope), as for a consumer's release of a slot it has finished reading: the reads were
//! wgmma's, already complete. (`.release.cluster` made the Hopper GEMM run at half speed: it
//! orders every earlier memory access of the thread at cluster scope, on every k-tile.)
TILEPIPE_DEVICE void mbarrier_arrive_cluster(std::uint64_t* bar, std::uint32_t cta) {
  const auto local = static_cast<std::uint32_t>(__cvta_generic_to_shared(bar));
  asm volatile(
      "{\n\t.reg .b32 remote;\n\t"
      "mapa.shared::cluster.u32 remote, %0, %1;\n\t"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n\t}" ::"r"(local),
      "r"(cta)
      : "memory");
}

//! Returns once the phase of parity `parity` has completed. A barrier that has completed no
//! phase yet counts as having completed the one before phase 0, so waiting for parity 1 on a
//! fresh barrier returns at once.
TILEPIPE_DEVICE void mbarrier_wait(std::uint64_t* bar, std::uint32_t parity) {
  // try_wait suspends the thread for a hardware-chosen time before returning false.
  while (!cuda::ptx::mbarrier_try_wait_parity(bar, parity)) {
  }
}

}  // namespace tilepipe::arch
