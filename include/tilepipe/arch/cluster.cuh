#pragma once
//! \file
//! Thread-block clusters (sm_90): a block's rank, the cluster barrier (whole and in its two
//! halves), and 16-byte loads from another block's shared memory (distributed shared memory,
//! `mapa` + `ld.shared::cluster`). Arrivals on another block's mbarrier are in mbarrier.cuh.
//! Call them only from code compiled for sm_90 or newer (`__CUDA_ARCH__ >= 900`).

#include <cuda/ptx>

#include <cstdint>

#include "../detail/macros.cuh"

namespace tilepipe::arch {

//! This block's rank in its cluster.
TILEPIPE_DEVICE std::uint32_t cluster_ctarank() {
  std::uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  return rank;
}

//! This thread's arrival at the cluster barrier, with release semantics at cluster scope: its
//! earlier shared-memory writes (and reads) are ordered before the others' acquire. Every thread
//! of every block of the cluster arrives, then waits (`cluster_wait`) before it exits; all threads
//! of a warp call it together (`.aligned`).
TILEPIPE_DEVICE void cluster_arrive() {
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
}

//! This thread's arrival at the cluster barrier without ordering any of its memory accesses:
//! for a thread whose accesses the other blocks do not depend on. (A release costs a
//! `MEMBAR.ALL.GPU` in the SASS of sm_90a.)
TILEPIPE_DEVICE void cluster_arrive_relaxed() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
}

//! Waits until every thread of the cluster has arrived at the barrier's current phase, with
//! acquire semantics at cluster scope: their writes before arriving are visible after it.
TILEPIPE_DEVICE void cluster_wait() {
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

//! A barrier of every thread of every block in the cluster (release / acquire): after it, what
//! each block wrote to its shared memory before it, the mbarriers it initialised included, may
//! be used by the others.
//! Unlike `cluster_arrive` and `cluster_wait`, the threads of a warp need not call it together.
TILEPIPE_DEVICE void cluster_sync() {
  cuda::ptx::barrier_cluster_arrive(cuda::ptx::sem_release);
  cuda::ptx::barrier_cluster_wait(cuda::ptx::sem_acquire);
}

//! The address, in the cluster's shared-memory window, of the object at `p`'s offset in the
//! shared memory of block `cta` of the cluster (`p` points into this block's shared memory).
TILEPIPE_DEVICE std::uint32_t map_shared_rank(const void* p, std::uint32_t cta) {
  const auto local = static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
  std::uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(cta));
  return remote;
}

//! 16 bytes of four floats at `address` in the cluster's shared-memory window (`map_shared_rank`),
//! 16-byte aligned.
TILEPIPE_DEVICE float4 load_shared_cluster(std::uint32_t address) {
  float4 v;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(address)
               : "memory");
  return v;
}

}  // namespace tilepipe::arch
