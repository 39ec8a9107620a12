#pragma once
//! \file
//! SmemRingBuffer: `Stages` shared-memory slots and the pipeline protocol that cycles them.

#include <cuda/pipeline>

#include "../arch/cp_async.cuh"
#include "../detail/smem_capacity.cuh"
#include "../layout/stage_index.cuh"

namespace tilepipe {

//! Block-scope ring of `Stages` slots of type `Stage` (a struct of `SmemTile`s, say one tile
//! of A and one of B) with a write stage, a read stage and a thread-scope `cuda::pipeline`.
//!
//! \tparam Stage   what one slot holds; every thread of the block fills part of it
//! \tparam Stages  number of slots, 2..8; `Stages - 1` tiles are in flight while one is read
//!
//! Protocol (every thread of the block, same order):
//! \code
//! ring.producer_acquire();                 // (no-op on a thread-scope pipeline)
//! loader.load(ring.write_stage().a, ...);  // async copies into the write stage
//! ring.producer_commit();                  // close the group, advance the write stage
//! ...
//! ring.consumer_wait();                    // oldest stage has landed for every thread
//! use(ring.read_stage());
//! ring.consumer_release();                 // advance the read stage
//! \endcode
//! Commit once per k-tile even when nothing was loaded: the wait counts groups, so a skipped
//! commit would make `consumer_wait` release a stage whose copies are still in flight.
template <class Stage, int Stages>
class SmemRingBuffer {
  static_assert(Stages >= 2, "SmemRingBuffer: a pipeline needs at least 2 stages");
  static_assert(Stages <= 8,
                "SmemRingBuffer: cp.async.wait_group can wait for at most 8 groups in flight; "
                "use at most 8 stages");

 public:
  using Index = StageIndex<Stages>;
  using Pipeline = cuda::pipeline<cuda::thread_scope_thread>;
  static constexpr int kStages = Stages;

  //! Shared memory of the ring: `Stages` slots, 128-byte aligned.
  struct SharedStorage {
    Stage stages[Stages];  // (STAGES)
  };

  static_assert(sizeof(SharedStorage) <= detail::kMaxSmemBytesPerBlock,
                "SmemRingBuffer: Stages x sizeof(Stage) is more shared memory than one thread "
                "block may have on this target architecture; use fewer stages or smaller tiles");

  TILEPIPE_DEVICE explicit SmemRingBuffer(SharedStorage& storage)
      : storage_(storage), pipe_(cuda::make_pipeline()) {}

  //! The slot that the next loads go to.
  TILEPIPE_DEVICE Stage& write_stage() { return storage_.stages[write_.get()]; }
  //! The slot that the consumer reads now (valid after `consumer_wait`).
  TILEPIPE_DEVICE const Stage& read_stage() const { return storage_.stages[read_.get()]; }
  //! Index of the read stage (for tests and traces).
  TILEPIPE_DEVICE int read_index() const { return read_.get(); }

  //! The pipeline that loads into the write stage are issued on.
  TILEPIPE_DEVICE Pipeline& pipeline() { return pipe_; }

  TILEPIPE_DEVICE void producer_acquire() { pipe_.producer_acquire(); }

  //! Closes this thread's group of copies into the write stage and moves to the next slot.
  TILEPIPE_DEVICE void producer_commit() {
    pipe_.producer_commit();
    write_.advance();
  }

  //! Waits until the read stage has landed for the whole block: this thread's oldest group is
  //! complete once at most `Stages - 2` younger groups are in flight, and the barrier extends
  //! that to the copies of every other thread. The barrier also guarantees that every thread
  //! is done reading the slot that was released before, so it may be overwritten next.
  TILEPIPE_DEVICE void consumer_wait() {
    cuda::pipeline_consumer_wait_prior<Index::kLoadsInFlight>(pipe_);
    __syncthreads();
  }

  //! Done reading the read stage: move to the next slot.
  TILEPIPE_DEVICE void consumer_release() {
    pipe_.consumer_release();
    read_.advance();
  }

  //! Waits for every copy still in flight and synchronises the block, so that the ring's shared
  //! memory can be reused (for example by an epilogue).
  TILEPIPE_DEVICE void drain() {
    arch::cp_async_wait<0>();
    __syncthreads();
  }

 private:
  SharedStorage& storage_;
  Pipeline pipe_;
  Index write_{};
  Index read_{};
};

}  // namespace tilepipe
