#pragma once
//! \file
//! WarpSpecializedMainloop::consume with a per-k-block operator (the seam the FP8 GEMM folds its
//! scales through), defined out of the class so that warp_specialized_mainloop.cuh stays its API.
//! Included by that header; not meant to be included alone.

#include "warp_specialized_mainloop.cuh"

namespace tilepipe {

template <class Element, Layout LayoutA, Layout LayoutB, class Config>
template <class Hook, class OnKBlock>
TILEPIPE_DEVICE void WarpSpecializedMainloop<Element, LayoutA, LayoutB, Config>::consume(
    Accumulators& acc, State& state, int rows, int k_tiles, Hook&& while_in_flight,
    OnKBlock&& on_k_block, int stagger_barrier) {
  static_assert(!Config::kKInterleaved || kConsumerN <= kPartialN,
                "WarpSpecializedMainloop: k-interleaved consumers fold whole k-tiles (one set of "
                "partial products as wide as the tile, at most 128 or 192 columns)");
  acc.clear();
  // k-interleaved (`rows` is then the consumer, 0 or 1): every other k-tile from its own, and the
  // ring's state past the whole unit at the end, as the other consumer leaves it.
  constexpr int kStride = Config::kKInterleaved ? 2 : 1;
  const int first = Config::kKInterleaved ? rows : 0;
  const State unit_start = state;
  const int unit_k_tiles = k_tiles;
  if constexpr (kStride > 1) {
    state.advance(first);
    k_tiles = (k_tiles - first + 1) / 2;
  }
  const auto past_unit = [&] {
    if constexpr (kStride > 1) state = State(unit_start).advance(unit_k_tiles);
  };
  if (k_tiles <= 0) {
    while_in_flight();
    past_unit();
    return;
  }
  const int a_part = a_offset(rows), b_part = b_offset(rows);
  const auto k_of = [&](int kt) { return first + kt * kStride; };  // in the unit
  // To this consumer's next k-tile.
  const auto step = [](State& st) {
    TILEPIPE_UNROLL
    for (int i = 0; i < kStride; ++i) st.advance();
  };
  const bool releases = threadIdx.x % 32 == 0;  // one arrival per warp
  const int traced = traced_.take(k_tiles);     // k-tile 0's number in the trace
  // Consumer 0 takes its credit after the unit's first fold, just before it signals, but at the
  // unit's start where the fold loads scales (block-wise), whose next loads are then in flight:
  // measured on the H200, block-wise ran 5% slower with the credit after the first fold, and
  // tensorwise and row-wise 1-2% faster there than at the start.
  constexpr bool kCreditAtStart = HasPrefetch<OnKBlock>::value;
  const auto staggered = [&](int kt) {
    if (kt == 0 && rows == 0 && stagger_barrier >= 0) {
      if (!kCreditAtStart) arch::named_barrier_sync(stagger_barrier + 1, 256);
      arch::named_barrier_arrive(stagger_barrier, 256);  // the signal
    }
  };

  if (kCreditAtStart && rows == 0 && stagger_barrier >= 0)
    arch::named_barrier_sync(stagger_barrier + 1, 256);  // consumer 1's credit
  if constexpr (HasPrefetch<OnKBlock>::value) on_k_block.prefetch(k_of(0));
  while_in_flight();
  if (rows == 1 && stagger_barrier >= 0) {
    arch::named_barrier_sync(stagger_barrier, 256);        // consumer 0's signal
    arch::named_barrier_arrive(stagger_barrier + 1, 256);  // the next unit's credit
  }
  if constexpr (kConsumerN > kPartialN) {
    // Each half's wgmmas complete before it is folded: none is in flight across the back edge.
    Partial p;
    for (int kt = 0; kt < k_tiles; ++kt) {
      ring_.consumer_wait(state);
      trace::record(trace::Event::kWaitDone, traced + kt);
      const Element* a = s_.a[state.index()] + a_part;
      const Element* b = s_.b[state.index()] + b_part;
      PartialMma::issue(p, a, b, /*accumulate=*/false);
      arch::wgmma_wait_group<0>();
      arch::wgmma_fence_operands(p.x);
      on_k_block(acc, static_cast<const Partial&>(p), kt, 0);
      PartialMma::issue(p, a, b + kPartialN * kTileK, /*accumulate=*/false);
      arch::wgmma_wait_group<0>();
      arch::wgmma_fence_operands(p.x);
      trace::record(trace::Event::kMmaDone, traced + kt);
      if (releases) ring_.consumer_release(state);
      state.advance();
      on_k_block(acc, static_cast<const Partial&>(p), kt, 1);
      if constexpr (HasPrefetch<OnKBlock>::value) on_k_block.prefetch(kt + 1);
      staggered(kt);
    }
  } else {
    // Waits for the slot `ahead` (0 or 1) past `state`'s, the next to fold, and issues its k-tile
    // (`kt`)'s wgmmas into `partial`.
    const auto issue = [&](Accumulators& partial, int ahead, int kt) {
      State st = state;
      if (ahead != 0) step(st);
      ring_.consumer_wait(st);
      trace::record(trace::Event::kWaitDone, traced + kt);
      Mma::issue(partial, s_.a[st.index()] + a_part, s_.b[st.index()] + b_part,
                 /*accumulate=*/false);
    };
    // k-tile `kt`'s wgmmas have completed: releases its slot, folds `partial`.
    const auto fold = [&](Accumulators& partial, int kt) {
      arch::wgmma_fence_operands(partial.x);
      trace::record(trace::Event::kMmaDone, traced + kt);
      if (releases) ring_.consumer_release(state);
      step(state);
      on_k_block(acc, static_cast<const Accumulators&>(partial), k_of(kt));
      if constexpr (HasPrefetch<OnKBlock>::value) on_k_block.prefetch(k_of(kt + 1));
    };
    Accumulators p0, p1;
    int kt = 0;
    // Chunks of four k-tiles, straight-line: k-tile kt + 1's wgmmas are issued before kt is
    // folded. The chunk's last k-tile folds with none of the warpgroup's own wgmmas in flight:
    // where a group is still in flight across a loop's back edge or a branch, ptxas serializes
    // every wgmma of the kernel (C7514). With one set (kOnePartial), only the loop below.
    for (; !kOnePartial && kt + 4 <= k_tiles; kt += 4) {
      issue(p0, 0, kt);
      issue(p1, 1, kt + 1);
      arch::wgmma_wait_group<1>();
      fold(p0, kt);
      staggered(kt);
      issue(p0, 1, kt + 2);
      arch::wgmma_wait_group<1>();
      fold(p1, kt + 1);
      issue(p1, 1, kt + 3);
      arch::wgmma_wait_group<1>();
      fold(p0, kt + 2);
      arch::wgmma_wait_group<0>();
      fold(p1, kt + 3);
    }
    // The rest, one k-tile at a time.
    for (; kt < k_tiles; ++kt) {
      issue(p0, 0, kt);
      arch::wgmma_wait_group<0>();
      fold(p0, kt);
      staggered(kt);
    }
  }
  if constexpr (HasFinish<OnKBlock>::value) on_k_block.finish(acc);
  past_unit();
}

}  // namespace tilepipe
