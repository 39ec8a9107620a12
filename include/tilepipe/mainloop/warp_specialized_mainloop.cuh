#pragma once
//! \file
//! WarpSpecializedMainloop: the Hopper tier's mainloop. Its roles are warpgroups: a producer
//! whose one elected thread fills the ring with TMA copies, and consumer warpgroups that multiply
//! with wgmma, 64 rows each: cooperative, `TileM / 64` of them share each tile; ping-pong, two of
//! them take the tiles in turn, one storing its tile while the other multiplies. The roles only
//! meet at the ring's mbarriers, so the producer runs up to `Stages` k-tiles ahead, across tile
//! boundaries: while the consumers store one tile, the next one's k-tiles are already landing.
//!
//! The same shape as the Ampere tier's MultistageMainloop: a policy (tile and stage count), one
//! `SharedStorage`, named phases (`produce`, `consume`), and the stage arithmetic kept in
//! `PipelineState`.

#include <climits>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "../arch/cluster.cuh"
#include "../arch/wgmma.cuh"
#include "../block/mbarrier_ring.cuh"
#include "../block/tma_tile_loader.cuh"
#include "../detail/macros.cuh"
#include "../layout/pipeline_state.cuh"
#include "../layout/tile_shape.cuh"
#include "../trace/trace.cuh"
#include "../warp/warpgroup_mma.cuh"
#include "gemm_policy.cuh"

namespace tilepipe {

//! \tparam Element  `__half` or `__nv_bfloat16` (A and B), or `float` as tf32 or `__nv_fp8_e4m3` /
//!                  `__nv_fp8_e5m2` (K-major A and B only)
//! \tparam Config   a HopperTileConfig
template <class Element, Layout LayoutA, Layout LayoutB, class Config>
class WarpSpecializedMainloop {
 public:
  using Tile = Config;
  static constexpr int kStages = Config::kStages;
  static constexpr int kConsumers = Config::kConsumers;
  static constexpr int kThreads = Config::kThreads;

  static constexpr int kClusterM = Config::kClusterM;
  //! k per slot: one 128-byte swizzle row of `Element` (64 f16/bf16, 32 floats, 128 fp8).
  static constexpr int kTileK = 128 / static_cast<int>(sizeof(Element));

  using Loader =
      TmaTileLoader<Element, LayoutA, LayoutB, Config::kM, Config::kN, kTileK, kClusterM>;
  using Ring = MbarrierRing<kStages, kClusterM>;
  using State = typename Ring::State;
  static_assert(Config::kN != 192 || arch::is_wgmma_fp8_v<Element>,
                "WarpSpecializedMainloop: a 192-wide tile is FP8's (GemmFp8Sm90's decode tiles); "
                "the 16-bit and tf32 GEMMs take 64, 128 or 256");
  //! A consumer warpgroup's part of the tile: 64 rows of `kConsumerN` columns (the tile's width,
  //! or half of it with split columns).
  static constexpr int kConsumerN = Config::kConsumerN;
  using Mma = WarpgroupMma<Element, LayoutA, LayoutB, kConsumerN, kTileK>;
  using Accumulators = typename Mma::Accumulators;
  //! The per-k-block seam's partial products: at most 128 columns, so that a 256-wide part
  //! (whose accumulators take 128 registers) multiplies each k-tile in two halves into one set;
  //! a 192-wide part's are one set of its whole width (`kOnePartial`).
  static constexpr int kPartialN = kConsumerN > 128 && kConsumerN != 192 ? 128 : kConsumerN;
  //! Whether the seam keeps one set of partial products of the part's width, each k-tile's
  //! wgmmas completing before it is folded: a 192-wide part, whose 96 registers of sums and 96
  //! of products leave no room for a second set.
  static constexpr bool kOnePartial = kConsumerN == 192;
  using PartialMma = WarpgroupMma<Element, LayoutA, LayoutB, kPartialN, kTileK>;
  using Partial = typename PartialMma::Accumulators;
  using Params = typename Loader::Params;

  struct SharedStorage {
    alignas(1024) Element a[kStages][Loader::kElementsA];  // (Stages, TileM x kTileK), swizzled
    alignas(1024) Element b[kStages][Loader::kElementsB];  // (Stages, TileN x kTileK), swizzled
    typename Ring::SharedStorage ring;
    int tag[kStages];  // what `produce` or `produce_tag` sent with each slot
  };

  //! Consumer arrivals that release a slot: one per warp of the consumers that read it (from
  //! each CTA of the cluster).
  static constexpr std::uint32_t kReleaseArrivals = 4 * Config::kConsumersPerTile;
  //! `produce`'s tag for a slot that carries none.
  static constexpr int kNoTag = INT_MIN;

  //! Where consumer part `part`'s operands start in a slot: rows `64 * part ..` of A
  //! (cooperative), or columns `kConsumerN * part ..` of B (split columns); 0 for the others.
  TILEPIPE_HOST_DEVICE static constexpr int a_offset(int part) {
    return Config::kKInterleaved || Config::kSplitColumns ? 0 : part * 64 * kTileK;
  }
  TILEPIPE_HOST_DEVICE static constexpr int b_offset(int part) {
    return Config::kSplitColumns ? part * kConsumerN * kTileK : 0;
  }

  //! One thread of the block, before any role starts (then `__syncthreads()`, or in a cluster
  //! `arch::cluster_sync()`).
  TILEPIPE_DEVICE static void init(SharedStorage& s, const Params& p) {
    Ring::init(s.ring, kReleaseArrivals);
    Loader::prefetch(p);
  }

  TILEPIPE_DEVICE explicit WarpSpecializedMainloop(SharedStorage& s) : s_(s), ring_(s.ring) {
    if constexpr (kClusterM > 1) cta_rank_ = static_cast<int>(arch::cluster_ctarank());
  }

  //! k-tiles of a K extent (the last one zero-filled past K by TMA).
  TILEPIPE_HOST_DEVICE static constexpr int k_tiles(int k) { return (k + kTileK - 1) / kTileK; }

  // ---- producer (one thread) ---------------------------------------------------------------
  //! Copies the `k_tiles` k-tiles of the tile at `(m0, n0)` of batch `batch` into the ring,
  //! each slot as soon as the consumers have released it. `p`: the loader's Params, or TmaMaps.
  template <class LoadParams>
  TILEPIPE_DEVICE void produce(const LoadParams& p, State& state, int m0, int n0, int batch,
                               int k_tiles) {
    produce(p, state, m0, n0, batch, 0, k_tiles);
  }

  //! The same for k-tiles `[k_tile_begin, k_tile_end)` only (a split-K slice, a stream-K
  //! segment): the consumers then consume `k_tile_end - k_tile_begin` k-tiles. A `tag` other
  //! than `kNoTag` goes with the first k-tile's slot (if there is one) to the consumers, which
  //! read it with `wait_tag`: the unit's number, where only the producer knows it.
  template <class LoadParams>
  TILEPIPE_DEVICE void produce(const LoadParams& p, State& state, int m0, int n0, int batch,
                               int k_tile_begin, int k_tile_end, int tag = kNoTag) {
    for (int kt = k_tile_begin; kt < k_tile_end; ++kt) {
      ring_.producer_acquire(state);
      // The barrier's arrival below publishes the tag with the slot.
      if (tag != kNoTag && kt == k_tile_begin) s_.tag[state.index()] = tag;
      std::uint64_t* full = ring_.producer_arm(state, Loader::kBytesPerStage);
      // (Recorded before the copies, so that no consumer's wait can be recorded before it.)
      trace::record(trace::Event::kLoadIssued, traced_.next());
      Loader::load(p, s_.a[state.index()], s_.b[state.index()], full, kt * kTileK, m0, n0, batch,
                   cta_rank_);
      state.advance();
    }
  }

  //! Sends `tag` in the next slot, without copies (an end mark after the last tagged unit). In a
  //! cluster the consumers must release the slot (`skip(state, 1, ...)`) before `produce_tail`.
  TILEPIPE_DEVICE void produce_tag(State& state, int tag) {
    ring_.producer_acquire(state);
    s_.tag[state.index()] = tag;
    ring_.producer_signal(state);
    state.advance();
  }

  //! The producer's last step in a cluster: waits until every slot has been released by the
  //! consumers of every CTA, whose last arrivals reach this CTA's shared memory, so that the
  //! block may exit. Nothing to wait for without a cluster.
  TILEPIPE_DEVICE void produce_tail(State state) {
    if constexpr (kClusterM > 1) {
      TILEPIPE_UNROLL
      for (int i = 0; i < kStages; ++i) {
        ring_.producer_acquire(state);
        state.advance();
      }
    } else {
      (void)state;
    }
  }

  // ---- consumer (a whole warpgroup) --------------------------------------------------------
  //! The tag that `produce` or `produce_tag` sent with the slot at `state`, once it has
  //! landed (the slot stays the consumers' until `consume` or `skip` releases it). Lane 0, the
  //! lane whose arrival releases the slot for its warp, reads it and hands it to the other lanes:
  //! no other lane's read then has to be ordered before that arrival.
  TILEPIPE_DEVICE int wait_tag(State state) {
    ring_.consumer_wait(state);
    int tag = 0;
    if (threadIdx.x % 32 == 0) tag = s_.tag[state.index()];
    return __shfl_sync(0xffffffffu, tag, 0);
  }

  //! `acc = A * B` over `k_tiles` k-tiles for the warpgroup multiplying part `rows` of the tile:
  //! rows `64 * rows ..` (cooperative: the consumer's number; ping-pong: 0), or with split
  //! columns (`HopperSchedule::kSplitColumns`) columns `kConsumerN * rows ..`. One k-tile's wgmmas
  //! stay in flight while the next k-tile's are issued; a slot is released once the wgmmas reading
  //! it have completed.
  TILEPIPE_DEVICE void consume(Accumulators& acc, State& state, int rows, int k_tiles) {
    consume(acc, state, rows, k_tiles, [] {});
  }

  //! The same, calling `while_in_flight()` (the whole warpgroup) once the first two k-tiles'
  //! wgmmas are issued (the first one's where there is one k-tile; at once where there is none),
  //! before waiting for them: work of the previous tile, such as the rest of its epilogue
  //! (WarpgroupEpilogue::drain), then overlaps the tensor cores'. It must not touch `acc`.
  template <class Hook>
  TILEPIPE_DEVICE void consume(Accumulators& acc, State& state, int rows, int k_tiles,
                               Hook&& while_in_flight) {
    acc.clear();
    if (k_tiles <= 0) {
      while_in_flight();
      return;
    }
    const int a_part = a_offset(rows), b_part = b_offset(rows);
    const bool releases = threadIdx.x % 32 == 0;  // one arrival per warp

    ring_.consumer_wait(state);
    int traced = traced_.next();  // the k-tile's number in the trace (trace/trace.cuh)
    trace::record(trace::Event::kWaitDone, traced);
    Mma::issue(acc, s_.a[state.index()] + a_part, s_.b[state.index()] + b_part);
    State in_flight = state;
    state.advance();
    if (k_tiles == 1) while_in_flight();
    for (int kt = 1; kt < k_tiles; ++kt) {
      ring_.consumer_wait(state);
      trace::record(trace::Event::kWaitDone, traced + 1);
      Mma::issue(acc, s_.a[state.index()] + a_part, s_.b[state.index()] + b_part);
      if (kt == 1) while_in_flight();
      // The previous k-tile's group has completed: its slot may be refilled.
      arch::wgmma_wait_group<1>();
      trace::record(trace::Event::kMmaDone, traced);
      if (releases) ring_.consumer_release(in_flight);
      in_flight = state;
      state.advance();
      traced = traced_.next();
    }
    arch::wgmma_wait_group<0>();
    arch::wgmma_fence_operands(acc.x);
    trace::record(trace::Event::kMmaDone, traced);
    if (releases) ring_.consumer_release(in_flight);
  }

  //! In place of `consume` for a cooperative consumer with no row to multiply in this tile (its
  //! 64 rows lie past a grouped GEMM's group end): waits for each of the `k_tiles` slots and
  //! releases it at once, issuing no wgmma, so that the other consumer's wgmmas run alone on the
  //! tensor cores. `while_in_flight` as `consume`'s; `acc` is not written. Every thread waits
  //! for every slot, as in `consume`: a thread that ran ahead would wait on a slot laps ahead of
  //! the copies, which a parity wait cannot tell from one already filled.
  template <class Hook>
  TILEPIPE_DEVICE void skip(State& state, int k_tiles, Hook&& while_in_flight) {
    while_in_flight();
    traced_.take(k_tiles);
    for (int kt = 0; kt < k_tiles; ++kt) {
      ring_.consumer_wait(state);
      __syncwarp();  // the whole warp has seen the slot land before its one arrival frees it
      if (threadIdx.x % 32 == 0) ring_.consumer_release(state);
      state.advance();
    }
  }

  //! The per-k-block accumulate seam: `consume`, but with each k-tile's product handed to
  //! `on_k_block` rather than added by the tensor cores. For k-tile `kt` (0 for the unit's first)
  //! the wgmmas compute `partial = A_kt * B_kt` in one of two further sets of accumulators; once
  //! they have completed and the slot is released, the whole warpgroup calls
  //! `on_k_block(acc, partial, kt)`, which folds `partial` into `acc` (which starts at zero) on the
  //! CUDA cores: scaled per k-block (FP8 with block scales, gemm/gemm_fp8.cuh), or just added in
  //! f32, where the tensor cores' own accumulation keeps too few bits (fp8). k-tile `kt + 1`'s
  //! wgmmas are issued into the other set before k-tile `kt` is folded, so that the tensor cores
  //! run through the fold (three sets of accumulators: the consumers' `setmaxnreg` budget, not the
  //! launch's 168, must hold them). A part 256 wide has room for one set of half its width
  //! (`Partial`): each k-tile is multiplied and folded in two halves, one after the other,
  //! `on_k_block(acc, partial, kt, half)` folding columns `128 * half ..`; the block's other
  //! consumer keeps the tensor cores busy meanwhile. A part 192 wide has one set of its whole
  //! width (`kOnePartial`): each k-tile's wgmmas complete before it is folded. Where `on_k_block`
  //! has a member
  //! `void prefetch(int kt)`, it is
  //! called with `kt = 0` at the start and with `kt + 1` after k-tile `kt` is folded (`k_tiles`
  //! last, past the unit's end): loads it starts there (the scales) overlap a k-tile's wgmmas.
  //! Where it has a member `void finish(Accumulators& acc)`, it is called once after the last
  //! fold (not where `k_tiles` is 0): a factor common to every k-tile (FP8's tensorwise and
  //! row-wise scales) is then applied once, and the fold is an add.
  //! `while_in_flight` is called before the first k-tile's wait: work of the previous tile, such as
  //! the rest of its epilogue, then overlaps the other consumers' wgmmas.
  //!
  //! k-interleaved (`HopperSchedule::kKInterleaved`, a 64-row tile): `rows` is the consumer, 0 or
  //! 1, which folds k-tiles `rows`, `rows + 2`, ... of the unit's `k_tiles` (`kt` counts the
  //! unit's k-tiles, so those are the values `on_k_block` sees) into its own `acc`; both leave
  //! `state` past the whole unit. The caller adds the two (`WarpgroupPartials::hand_over`).
  //!
  //! `stagger_barrier` >= 0 (two cooperative consumers, `rows` 0 and 1, both calling with it):
  //! consumer 1 issues its first k-tile's wgmmas only once consumer 0's have completed (a signal
  //! on named barrier `stagger_barrier`, 256 threads), so that the two fold at different times.
  //! Consumer 0 signals a unit only with a credit from consumer 1 (barrier `stagger_barrier + 1`),
  //! which consumer 1 gives for the next unit as soon as it has taken this one's signal: were
  //! consumer 0 to signal regardless, it could signal a second unit before consumer 1 took the
  //! first (a unit of fewer k-tiles than the ring's slots), consumer 1 would take the two signals
  //! for one and wait for a third, and consumer 0 for slots that only consumer 1 can release.
  //! Given a unit ahead, the credit is there before consumer 0 asks for it. Around its units the
  //! caller gives the first credit and takes the last: `stagger_begin` and `stagger_end`. (Each
  //! barrier is arrived at by one consumer and waited at by the other, at different instructions,
  //! as `bar.arrive` and `bar.sync` allow.)
  template <class Hook, class OnKBlock>
  TILEPIPE_DEVICE void consume(Accumulators& acc, State& state, int rows, int k_tiles,
                               Hook&& while_in_flight, OnKBlock&& on_k_block,
                               int stagger_barrier = -1);

  //! Before a consumer's first `consume` with a `stagger_barrier`: consumer 1 gives the first
  //! unit's credit.
  TILEPIPE_DEVICE static void stagger_begin(int rows, int stagger_barrier) {
    if (rows == 1 && stagger_barrier >= 0) arch::named_barrier_arrive(stagger_barrier + 1, 256);
  }
  //! After its last: consumer 0 takes the credit that consumer 1 gave for a unit that never came,
  //! so that no arrival is left pending on the barrier.
  TILEPIPE_DEVICE static void stagger_end(int rows, int stagger_barrier) {
    if (rows == 0 && stagger_barrier >= 0) arch::named_barrier_sync(stagger_barrier + 1, 256);
  }

 private:
  template <class Op, class = void>
  struct HasPrefetch : std::false_type {};
  template <class Op>
  struct HasPrefetch<Op, std::void_t<decltype(std::declval<Op&>().prefetch(0))>> : std::true_type {
  };
  template <class Op, class = void>
  struct HasFinish : std::false_type {};
  template <class Op>
  struct HasFinish<Op,
                   std::void_t<decltype(std::declval<Op&>().finish(std::declval<Accumulators&>()))>>
      : std::true_type {};

  SharedStorage& s_;
  Ring ring_;
  int cta_rank_ = 0;            // in the cluster
  trace::KTileCounter traced_;  // k-tiles this role has passed, for the trace only
};

}  // namespace tilepipe

// The per-k-block seam's `consume`, defined out of the class.
#include "warp_specialized_fold.cuh"
