#pragma once
//! \file
//! Where a producer or a consumer stands in a ring of `Stages` mbarrier-guarded slots: the slot
//! and the parity of the slot's current phase.
//!
//! An mbarrier completes a phase each time its expected arrivals (and transaction bytes) are in;
//! a thread waits for phase `p` to complete with `try_wait.parity(p & 1)`. Walking the ring, a
//! slot is used once per lap, so the parity to wait for flips each time the index wraps. This
//! is the only place that does that arithmetic; the Hopper ring and mainloop ask it.
//!
//! The protocol (modelled on the host in test_pipeline_state.cpp):
//! - the producer waits on `empty[i]` with parity `phase ^ 1` (a fresh barrier counts as having
//!   completed the phase before phase 0, so the first lap does not wait), then arms `full[i]`
//!   with the bytes it will copy;
//! - a consumer waits on `full[i]` with parity `phase`, reads the slot, then arrives on
//!   `empty[i]`.

#include "../detail/macros.cuh"

namespace tilepipe {

//! Slot index and phase parity of a walk around a ring of `Stages` slots.
template <int Stages>
class PipelineState {
  static_assert(Stages >= 2, "PipelineState: a ring needs at least 2 stages");

 public:
  static constexpr int kStages = Stages;

  constexpr PipelineState() = default;
  TILEPIPE_HOST_DEVICE constexpr PipelineState(int index, unsigned phase)
      : index_(index), phase_(phase) {}

  //! The slot.
  TILEPIPE_HOST_DEVICE constexpr int index() const { return index_; }
  //! Parity of the slot's phase that this lap waits for (0 on the first lap, then 1, 0, ...).
  TILEPIPE_HOST_DEVICE constexpr unsigned phase() const { return phase_; }

  //! The next slot; the parity flips when the index wraps to 0.
  TILEPIPE_HOST_DEVICE constexpr PipelineState& advance() {
    if (++index_ == Stages) {
      index_ = 0;
      phase_ ^= 1u;
    }
    return *this;
  }

  //! `n` slots on (`n >= 0`): the same state as `n` calls of `advance()`. A ping-pong consumer
  //! skips the other consumer's tiles this way.
  TILEPIPE_HOST_DEVICE constexpr PipelineState& advance(int n) {
    index_ += n;
    phase_ ^= static_cast<unsigned>(index_ / Stages) & 1u;
    index_ %= Stages;
    return *this;
  }

  TILEPIPE_HOST_DEVICE friend constexpr bool operator==(PipelineState a, PipelineState b) {
    return a.index_ == b.index_ && a.phase_ == b.phase_;
  }

 private:
  int index_ = 0;
  unsigned phase_ = 0;
};

}  // namespace tilepipe
