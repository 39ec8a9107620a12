#pragma once
//! \file
//! MbarrierRing: the Hopper tier's ring of `Stages` shared-memory slots, guarded by a "full" and
//! an "empty" mbarrier per slot (the Ampere tier's SmemRingBuffer counts cp.async groups
//! instead). A producer fills slots with TMA copies that complete on the slot's full barrier; the
//! consumers read a full slot, then arrive on its empty barrier so that the producer may refill it.
//!
//! Where each role stands is a `PipelineState<Stages>` (layout/pipeline_state.cuh: the slot and
//! the parity to wait for), which each role advances itself after every slot. The protocol and
//! its failure modes (a wrong parity, a missing arrival) are modelled on the host in
//! test_pipeline_state.cpp. In a cluster of CTAs that multicast into each other's slots, each
//! consumer releases the slot in every CTA, so that no producer overwrites a slot some CTA
//! still reads.
//!
//! \code
//! // producer (one thread)                     // each consumer warp
//! ring.producer_acquire(state);                ring.consumer_wait(state);
//! auto* bar = ring.producer_arm(state, bytes); ... read slot state.index() ...
//! tma_load(slot, map, bar, ...);               ring.consumer_release(state);  // lane 0
//! state.advance();                             state.advance();
//! \endcode

#include <cstdint>

#include "../arch/mbarrier.cuh"
#include "../detail/macros.cuh"
#include "../layout/pipeline_state.cuh"

namespace tilepipe {

//! Full/empty mbarrier pairs of a ring of `Stages` slots (the slots' data lives with the user).
//!
//! \tparam ClusterSize  CTAs whose producers fill each other's slots (TMA multicast): a consumer
//!   then releases a slot in every CTA of the cluster, and each empty barrier counts the
//!   arrivals of all of them. 1: no cluster.
template <int Stages, int ClusterSize = 1>
class MbarrierRing {
  static_assert(ClusterSize >= 1 && ClusterSize <= 8,
                "MbarrierRing: a cluster shares a ring across 1 to 8 CTAs");

 public:
  static constexpr int kStages = Stages;
  static constexpr int kClusterSize = ClusterSize;
  using State = PipelineState<Stages>;

  struct SharedStorage {
    std::uint64_t full[Stages];   //!< completes when the slot's copies have landed
    std::uint64_t empty[Stages];  //!< completes when every consumer is done with the slot
  };

  //! One thread initialises the barriers: a full barrier completes on the producer's one arrival
  //! plus the bytes it announced (its own copies' and the other CTAs' multicasts), an empty
  //! barrier on `consumer_arrivals` arrivals from each CTA of the cluster. The caller then makes
  //! them visible to all threads (`__syncthreads()`; in a cluster, `arch::cluster_sync()`, before
  //! any other CTA's copy or arrival can reach them).
  TILEPIPE_DEVICE static void init(SharedStorage& s, std::uint32_t consumer_arrivals) {
    TILEPIPE_UNROLL
    for (int i = 0; i < Stages; ++i) {
      arch::mbarrier_init(&s.full[i], 1);
      arch::mbarrier_init(&s.empty[i], consumer_arrivals * ClusterSize);
    }
    arch::fence_mbarrier_init();
  }

  TILEPIPE_DEVICE explicit MbarrierRing(SharedStorage& s) : s_(s) {}

  //! Producer: waits until the consumers have released the slot (returns at once on the first
  //! lap, whose slots are free).
  TILEPIPE_DEVICE void producer_acquire(State st) {
    arch::mbarrier_wait(&s_.empty[st.index()], st.phase() ^ 1u);
  }

  //! Producer: announces `bytes` of copies into the slot and returns the barrier they complete on.
  TILEPIPE_DEVICE std::uint64_t* producer_arm(State st, std::uint32_t bytes) {
    arch::mbarrier_arrive_expect_tx(&s_.full[st.index()], bytes);
    return &s_.full[st.index()];
  }

  //! Producer: completes the slot's phase without copies (what it carries is what the producer
  //! stored to shared memory before this, such as a tag).
  TILEPIPE_DEVICE void producer_signal(State st) { arch::mbarrier_arrive(&s_.full[st.index()]); }

  //! Consumer: waits until the slot's copies have landed.
  TILEPIPE_DEVICE void consumer_wait(State st) {
    arch::mbarrier_wait(&s_.full[st.index()], st.phase());
  }

  //! Consumer: one arrival saying this consumer is done reading the slot (in every CTA of the
  //! cluster, whose producers all write into this CTA's slot).
  TILEPIPE_DEVICE void consumer_release(State st) {
    if constexpr (ClusterSize == 1) {
      arch::mbarrier_arrive(&s_.empty[st.index()]);
    } else {
      TILEPIPE_UNROLL
      for (int cta = 0; cta < ClusterSize; ++cta)
        arch::mbarrier_arrive_cluster(&s_.empty[st.index()], cta);
    }
  }

 private:
  SharedStorage& s_;
};

}  // namespace tilepipe
