#pragma once
//! \file
//! WarpgroupPartials: the fix-up of a tile whose K is cut into pieces (split-K slices, stream-K
//! segments) that different blocks compute, for one warpgroup's wgmma accumulators; and the sum
//! of two warpgroups of one block that share a tile by k-tiles (`hand_over`).
//!
//! Each piece's warpgroup stores its f32 accumulators into a workspace slot of its own (thread
//! after thread as float4s, so every store is coalesced and the same thread reads the value
//! back), and counts itself in on the tile's counter (a device-scope release). The warpgroup whose
//! arrival completes the count (an acquire) sums every piece's slot in piece order, its own
//! included, and runs the ordinary epilogue: the additions are the same whichever piece arrives
//! last, so the result is bit-identical from run to run. No warpgroup ever waits for another
//! block, so nothing assumes that the grid's blocks are resident together.
//!
//! The counters need no clearing before a launch: each holds the epoch of the launch that last
//! counted on it beside its count, and an arrival under another epoch counts from zero. A launch
//! passes an epoch no earlier launch of the process used (GemmSm90: `detail::next_epoch`), and the
//! last arrival sets the count back to zero under its epoch, so that a CUDA graph that replays
//! the launch, epoch and all, finds its counters ready.

#include <cuda/atomic>

#include <cstdint>

#include "../arch/cluster.cuh"
#include "../arch/tma.cuh"
#include "../detail/macros.cuh"

namespace tilepipe {

//! \tparam Accumulators  a `WarpgroupMma::Accumulators` (`kRegisters` floats per thread)
template <class Accumulators>
struct WarpgroupPartials {
  static constexpr int kRegisters = Accumulators::kRegisters;
  static_assert(kRegisters % 4 == 0,
                "WarpgroupPartials: a thread's accumulators must be whole float4s (N % 8 == 0)");
  //! Floats of one warpgroup's slot: its 64 x N tile.
  static constexpr int kSlotFloats = kRegisters * 128;

  //! Stores `acc` into `slot` (kSlotFloats floats, 16-byte aligned) and counts the warpgroup in
  //! on `counter` under `epoch`. Returns true in the warpgroup whose arrival is the `pieces`-th,
  //! which then calls `sum`; the others are done with the tile. `barrier` is a named barrier of
  //! the warpgroup alone, `thread` its thread's index in it. The whole warpgroup calls it.
  TILEPIPE_DEVICE static bool arrive(const Accumulators& acc, float* slot, std::uint64_t* counter,
                                     int pieces, std::uint32_t epoch, int barrier, int thread) {
    float4* mine = reinterpret_cast<float4*>(slot) + thread;
    TILEPIPE_UNROLL
    for (int q = 0; q < kRegisters / 4; ++q) __stcg(mine + q * 128, quad(acc, q));
    // The barrier orders every thread's stores before thread 0's count (a release at device
    // scope, cumulative over what the barrier ordered before it); in the warpgroup that completes
    // the count, the barrier that shares the outcome orders the acquire before every load.
    arch::named_barrier_sync(barrier, 128);
    int last = 0;
    if (thread == 0) {
      cuda::atomic_ref<std::uint64_t, cuda::thread_scope_device> word(*counter);
      const std::uint64_t mine = static_cast<std::uint64_t>(epoch) << 32;
      std::uint64_t seen = word.load(cuda::memory_order_relaxed), next = 0;
      do {  // (epoch, count): count + 1 under this epoch, 1 after another's
        next = mine | (((seen >> 32) == epoch ? seen & 0xFFFFFFFFu : 0u) + 1u);
      } while (!word.compare_exchange_weak(seen, next, cuda::memory_order_acq_rel,
                                           cuda::memory_order_relaxed));
      last = (next & 0xFFFFFFFFu) == static_cast<std::uint64_t>(pieces);
      // Every piece has counted: the count goes back to zero for a replay of this launch.
      if (last) word.store(mine, cuda::memory_order_relaxed);
    }
    return arch::named_barrier_or(barrier, 128, last);
  }

  //! `acc = ((slot_of(0) + slot_of(1)) + slot_of(2)) + ...` over `pieces` slots, in that order
  //! (after `arrive` returned true). The loads bypass L1 (`__ldcg`): the other blocks wrote
  //! through L2.
  template <class SlotOf>
  TILEPIPE_DEVICE static void sum(Accumulators& acc, int pieces, SlotOf&& slot_of, int thread) {
    for (int s = 0; s < pieces; ++s) {
      const float4* src = reinterpret_cast<const float4*>(slot_of(s)) + thread;
      TILEPIPE_UNROLL
      for (int q = 0; q < kRegisters / 4; ++q) {
        const float4 v = __ldcg(src + q * 128);
        const float x[4] = {v.x, v.y, v.z, v.w};
        TILEPIPE_UNROLL
        for (int j = 0; j < 4; ++j) acc.x[4 * q + j] = s == 0 ? x[j] : acc.x[4 * q + j] + x[j];
        // At most 16 float4s in flight: ptxas would otherwise load a whole slot at once, as many
        // registers as the accumulators, and spill. (It moves no load across __syncwarp; fewer
        // in flight spilled too, in the 128 x 256 tile beside the epilogue's registers.)
        if (q % 16 == 15) __syncwarp();
      }
    }
  }

  //! Split-K within a cluster, one piece per block in rank order, whose blocks all call it
  //! (`pieces` of them): returns true in block 0, with `acc` then the sum of the pieces added in
  //! piece order, as `sum` adds them (the same bits). Each other block stores its sum into its
  //! slot (`slot_of(rank)`, as `arrive` does) and arrives at the cluster's barrier, a release;
  //! block 0 waits there, an acquire, and reads the slots back through L2. The barrier takes the
  //! place of `arrive`'s counter: no atomic, and only block 0 waits. (The sums went through block
  //! 0's reads of the others' shared memory before: on the H200 those ran at about 40 GB/s, 0.8 us
  //! for each other block's 32 KB, and needed a second barrier to keep the others' shared memory
  //! alive until they were done; performance log 55.) The consumer warpgroup calls it; the
  //! block's other threads call `meet_in_cluster`.
  template <class SlotOf>
  TILEPIPE_DEVICE static bool sum_in_cluster(Accumulators& acc, int pieces, SlotOf&& slot_of,
                                             int thread) {
    const std::uint32_t rank = arch::cluster_ctarank();
    if (rank != 0) {
      float4* mine = reinterpret_cast<float4*>(slot_of(static_cast<int>(rank))) + thread;
      TILEPIPE_UNROLL
      for (int q = 0; q < kRegisters / 4; ++q) __stcg(mine + q * 128, quad(acc, q));
      arch::cluster_arrive();  // release: the sums, to block 0's acquire
    } else {
      arch::cluster_arrive_relaxed();
    }
    arch::cluster_wait();
    if (rank != 0) return false;
    for (int r = 1; r < pieces; ++r) {
      const float4* src = reinterpret_cast<const float4*>(slot_of(r)) + thread;
      TILEPIPE_UNROLL
      for (int q = 0; q < kRegisters / 4; ++q) add_quad(acc, q, __ldcg(src + q * 128));
    }
    return true;
  }
  //! Shared memory for `hand_over` where `kUsed`, else nothing (an empty base adds no bytes).
  template <bool kUsed, class = void>
  struct Exchange {
    alignas(16) float exchange[2][kSlotFloats];
  };
  template <class Unused>
  struct Exchange<false, Unused> {};

  //! Two warpgroups of one block that share a tile by k-tiles (HopperSchedule::kKInterleaved),
  //! after unit `unit` of their block: warpgroup 1 stores its sums into one of `exchange`'s two
  //! buffers (an Exchange's, in shared memory) and goes on; warpgroup 0 adds them to its own and
  //! returns true (it then holds the tile's sum, added in the same order on every run). They meet
  //! at named barrier `barrier` (256 threads), `bar.sync` in both, which orders the stores before
  //! the loads; the buffers alternate by unit, so that a unit's stores wait for nothing but that
  //! barrier: warpgroup 1 rewrites a buffer two units on, after the next meeting, which warpgroup
  //! 0 reaches only once it has read it.
  TILEPIPE_DEVICE static bool hand_over(Accumulators& acc, float (*exchange)[kSlotFloats],
                                        int warpgroup, int barrier, int unit, int thread) {
    float4* buffer = reinterpret_cast<float4*>(exchange[unit % 2]) + thread;
    if (warpgroup == 1) {
      TILEPIPE_UNROLL
      for (int q = 0; q < kRegisters / 4; ++q) buffer[q * 128] = quad(acc, q);
    }
    arch::named_barrier_sync(barrier, 256);
    if (warpgroup == 1) return false;
    TILEPIPE_UNROLL
    for (int q = 0; q < kRegisters / 4; ++q) add_quad(acc, q, buffer[q * 128]);
    return true;
  }

  //! The cluster barrier of `sum_in_cluster`, for the threads of a block that do not sum (whole
  //! warps).
  TILEPIPE_DEVICE static void meet_in_cluster() {
    __syncwarp();
    arch::cluster_arrive_relaxed();
    arch::cluster_wait();
  }

 private:
  // A thread's accumulators `4 q .. 4 q + 3`, the float4 it keeps at `q * 128 + thread` of a slot
  // or buffer (so that each store and load of a warpgroup is one contiguous 2 KB run).
  TILEPIPE_DEVICE static float4 quad(const Accumulators& acc, int q) {
    return make_float4(acc.x[4 * q], acc.x[4 * q + 1], acc.x[4 * q + 2], acc.x[4 * q + 3]);
  }
  TILEPIPE_DEVICE static void add_quad(Accumulators& acc, int q, const float4& v) {
    acc.x[4 * q] += v.x;
    acc.x[4 * q + 1] += v.y;
    acc.x[4 * q + 2] += v.z;
    acc.x[4 * q + 3] += v.w;
  }
};

}  // namespace tilepipe
