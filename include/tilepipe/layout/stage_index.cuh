#pragma once
//! \file
//! Index arithmetic of a ring of `Stages` shared-memory slots.
//!
//! This is the only place that does arithmetic with the stage count; the ring buffer and the
//! mainloop ask it rather than writing `% Stages` themselves.

#include "../detail/macros.cuh"

namespace tilepipe {

//! A slot index in `[0, Stages)` that wraps around.
template <int Stages>
class StageIndex {
  static_assert(Stages >= 2, "StageIndex: a pipeline needs at least 2 stages");

 public:
  static constexpr int kStages = Stages;
  //! Committed groups that may still be in flight when the oldest one must have landed:
  //! the depth passed to `pipeline_consumer_wait_prior`.
  static constexpr int kLoadsInFlight = Stages - 2;
  //! Tiles the prologue issues before the first wait.
  static constexpr int kPrologueTiles = Stages - 1;

  constexpr StageIndex() = default;
  TILEPIPE_HOST_DEVICE constexpr explicit StageIndex(int slot) : slot_(slot) {}

  //! The slot that k-tile `k_tile` (counting from 0) occupies.
  TILEPIPE_HOST_DEVICE static constexpr StageIndex of_tile(int k_tile) {
    return StageIndex(k_tile % Stages);
  }

  TILEPIPE_HOST_DEVICE constexpr int get() const { return slot_; }

  //! Moves to the next slot, wrapping from `Stages - 1` to 0 (no division).
  TILEPIPE_HOST_DEVICE constexpr StageIndex& advance() {
    slot_ = (slot_ + 1 == Stages) ? 0 : slot_ + 1;
    return *this;
  }

  TILEPIPE_HOST_DEVICE friend constexpr bool operator==(StageIndex a, StageIndex b) {
    return a.slot_ == b.slot_;
  }
  TILEPIPE_HOST_DEVICE friend constexpr bool operator!=(StageIndex a, StageIndex b) {
    return a.slot_ != b.slot_;
  }

 private:
  int slot_ = 0;
};

}  // namespace tilepipe
