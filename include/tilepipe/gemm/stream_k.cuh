#pragma once
//! \file
//! Stream-K for GemmMultistage's Ampere tier: a persistent grid in which every block computes an
//! even share of the GEMM's MAC-iterations (layout/stream_k_partition.cuh), and the fix-up that
//! turns the pieces of a shared tile into one result without any block waiting for another.
//!
//! Fix-up: a block that computes only part of a tile stores its f32 accumulators into a workspace
//! slot of its own, in register-fragment order (each thread writes its own fragments as float4s,
//! thread after thread, so every store is coalesced and the same thread reads them back), makes
//! them visible (`__threadfence`) and counts itself in on the tile's counter. The block whose
//! arrival completes the count sums the tile's slots in k order (its own included, so the sum is
//! the same whichever block arrives last: results are bit-identical from run to run) and runs the
//! ordinary epilogue. No block ever waits for another, so nothing assumes that the grid's blocks
//! are resident together. The counters are zeroed by `run` (cudaMemsetAsync) before every launch,
//! so the workspace needs no preparation and a launch that failed leaves nothing behind.

#include <cuda/atomic>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "../arch/special_register.cuh"
#include "../detail/macros.cuh"
#include "../layout/stream_k_partition.cuh"
#include "../layout/tile_raster.cuh"
#include "../layout/tile_scheduler.cuh"
#include "../layout/tile_shape.cuh"
#include "../warp/fragments.cuh"
#include "kernel.cuh"

namespace tilepipe {

//! Where stream-K's workspace keeps things: `slots` slots of `tile_floats` f32 partial
//! accumulators (one tile's worth each) from its start, then one 32-bit arrival counter per
//! tile of the stream-K region. A partition without a stream-K region needs no workspace.
struct StreamKWorkspace {
  std::int64_t slots = 0;
  std::int64_t tile_floats = 0;
  std::int64_t counters = 0;

  static constexpr StreamKWorkspace make(const StreamKPartition& p, int tile_m, int tile_n) {
    StreamKWorkspace w;
    w.slots = p.slots();
    w.tile_floats = std::int64_t(tile_m) * tile_n;
    w.counters = p.slots() > 0 ? p.sk_tiles() : 0;
    return w;
  }

  //! Byte offset of the counters (a multiple of 16: tiles are multiples of 16 x 8).
  constexpr std::size_t counters_offset() const {
    return static_cast<std::size_t>(slots) * static_cast<std::size_t>(tile_floats) * sizeof(float);
  }

  //! Bytes of the whole workspace; saturates at the largest `std::size_t` instead of wrapping.
  constexpr std::size_t bytes() const {
    if (slots <= 0) return 0;
    constexpr std::size_t kMax = std::numeric_limits<std::size_t>::max();
    const auto s = static_cast<std::size_t>(slots), t = static_cast<std::size_t>(tile_floats);
    if (s > kMax / sizeof(float) / t) return kMax;
    const std::size_t partials = s * t * sizeof(float);
    const std::size_t counter_bytes = static_cast<std::size_t>(counters) * sizeof(std::uint32_t);
    return partials > kMax - counter_bytes ? kMax : partials + counter_bytes;
  }
};

//! The stream-K kernel's body: GemmKernel's mainloop and epilogue, walked over a persistent grid
//! (`blockIdx.x` is the block of `Params::partition`, which counts batches as more tiles).
//!
//! \tparam Mainloop  a block-scope mainloop with f32 accumulators (`MultistageMainloop`)
//! \tparam Epilogue  a block-scope epilogue of its accumulators (`StagedEpilogue`)
//! \tparam Raster    the order of output tiles within a batch (`GroupedRaster<8>`)
template <class Mainloop, class Epilogue, class Raster>
struct StreamKGemmKernel {
  using Element = typename Mainloop::Element;
  using ElementB = typename Mainloop::ElementB;
  using Tile = typename Mainloop::Tile;
  using Accumulators = typename Mainloop::Accumulators;
  static constexpr int kThreads = Mainloop::kThreads;
  static constexpr int kFragments = Accumulators::kTilesM * Accumulators::kTilesN;
  static_assert(
      std::is_same_v<Accumulators,
                     tilepipe::Accumulators<Mainloop::Warp::kM, Mainloop::Warp::kN, float>>,
      "StreamKGemmKernel: stream-K sums partial accumulators in f32; use a tile whose "
      "math accumulates in f32 (MathDefault, MathTF32 or MathSimtF32, not "
      "MathF16Accumulate)");
  static_assert(kFragments * 4 * kThreads == Tile::kM * Tile::kN,
                "StreamKGemmKernel: the block's accumulators must cover its tile exactly once");

  //! What the fix-up and the epilogue need to know of the unit being computed, worked out before
  //! the mainloop: rebuilding it after the mainloop (64-bit divisions beside the accumulators)
  //! makes ptxas spill.
  struct UnitRecord {
    long long tile;        //!< the work tile
    long long slot;        //!< this block's workspace slot for it, when the segment is partial
    long long first_slot;  //!< the slot of the tile's first segment, when partial
    int segments;          //!< the tile's segments: 1 when this unit is the whole tile
  };

  //! The mainloop's ring, reused by the epilogue once the ring has drained, and the unit's record.
  struct SharedStorage {
    union {
      typename Mainloop::SharedStorage mainloop;
      typename Epilogue::SharedStorage epilogue;
    };
    UnitRecord unit;
  };
  static constexpr std::size_t kSharedBytes = sizeof(SharedStorage);

  struct Params {
    const Element* a;
    const ElementB* b;
    std::int64_t lda, ldb;
    std::int64_t batch_stride_a, batch_stride_b, batch_stride_c, batch_stride_d;
    int k;
    int tiles_m, tiles_n, batches;
    StreamKPartition partition;
    float* partials;                     //!< the workspace's slots (StreamKWorkspace)
    std::uint32_t* counters;             //!< one per stream-K tile, zero at launch
    typename Epilogue::Params epilogue;  //!< D, C, alpha, beta, the output operator, m and n
  };

  //! Its `__global__` function (gemm_kernel), for KernelLauncher.
  using Entry = void (*)(const Params);
  static Entry entry();

  TILEPIPE_DEVICE void operator()(const Params& p, SharedStorage& storage) const {
    const StreamKPartition& part = p.partition;
    const PersistentTileScheduler<Raster> scheduler(p.tiles_m, p.tiles_n, p.batches);
    // Whole tiles first (block b takes tiles b, b + blocks, ...: the blocks running together
    // work on neighbouring tiles), then this block's stream-K segments. One loop with one
    // mainloop, which needs nearly every register: nothing of the unit stays in registers across
    // it. Thread 0 records what the fix-up needs in shared memory (UnitRecord); the mainloop's
    // drain (a barrier) publishes it.
    for (int u = 0; u < units(part, unit_block_index()); ++u) {
      const int block = unit_block_index();
      const StreamKSegment seg = unit(part, block, u);
      const bool whole = part.whole(seg);
      const UnitRecord record{seg.tile, whole ? 0 : part.slot(block, seg.tile),
                              whole ? 0 : part.slot(part.first_block(seg.tile), seg.tile),
                              whole ? 1 : part.segments(seg.tile)};
      if (unit_thread_index() == 0)
        storage.unit = record;  // (a branch around more would be
                                // divergent to ptxas, see fix_up)
      Accumulators acc;
      multiply(p, storage, acc, scheduler.tile_of(seg.tile), seg.k_tile_begin, seg.k_tile_end);
      const UnitRecord& done = storage.unit;
      // Warp votes keep the branches uniform to ptxas (see fix_up).
      if (__all_sync(0xffffffffu, done.segments == 1) || fix_up(p, acc, done))
        epilogue(p, storage, acc, scheduler.tile_of(done.tile));
      __syncthreads();  // the epilogue's staging buffer is the next mainloop's ring
    }
  }

 private:
  // threadIdx.x and blockIdx.x, read anew where used (arch/special_register.cuh): otherwise the
  // compiler hoists the mainloop's and epilogue's per-thread offsets and the unit arithmetic out
  // of the loop, and keeping them live through every phase makes ptxas spill.
  TILEPIPE_DEVICE static int unit_thread_index() { return arch::opaque_thread_index(); }
  TILEPIPE_DEVICE static int unit_block_index() { return arch::opaque_block_index(); }

  // Units of `block`: its data-parallel tiles, then its stream-K segments.
  TILEPIPE_DEVICE static int units(const StreamKPartition& part, int block) {
    return static_cast<int>(part.dp_waves()) + part.block_segments(block);
  }

  // Unit `u` of `block`: data-parallel tile `u` while `u < dp_waves`, then its stream-K segments.
  TILEPIPE_DEVICE static StreamKSegment unit(const StreamKPartition& part, int block, int u) {
    const int dp_waves = static_cast<int>(part.dp_waves());
    if (u < dp_waves)
      return StreamKSegment{static_cast<long long>(u) * part.blocks + block, 0, part.k_tiles};
    return part.block_segment(block, u - dp_waves);
  }

  // acc = A * B over k-tiles [k_tile_begin, k_tile_end) of tile `t`; the last k-tile ends at K,
  // and the mainloop takes a segment's partial k-tile first, as it does a split-K slice's.
  TILEPIPE_DEVICE static void multiply(const Params& p, SharedStorage& storage, Accumulators& acc,
                                       const WorkTile& t, int k_tile_begin, int k_tile_end) {
    const int k0 = k_tile_begin * Tile::kK;
    const int k_end = k_tile_end * Tile::kK < p.k ? k_tile_end * Tile::kK : p.k;
    const std::int64_t a_k0 = Mainloop::kLayoutA == Layout::kRowMajor ? k0 : k0 * p.lda;
    const std::int64_t b_k0 = Mainloop::kLayoutB == Layout::kRowMajor ? k0 * p.ldb : k0;
    const std::int64_t batch = t.batch;
    const TileOrigin at = origin_of(t, p);
    Mainloop mainloop(storage.mainloop, unit_thread_index());
    acc.clear();
    mainloop(acc,
             Mainloop::operands(p.a + batch * p.batch_stride_a + a_k0, p.lda,
                                p.b + batch * p.batch_stride_b + b_k0, p.ldb),
             Mainloop::block_tile(p.epilogue.m, p.epilogue.n, k_end - k0, at.m0, at.n0, k0));
  }

  // D = op(alpha * acc + beta * C) for tile `t`. The mainloop has drained its ring.
  TILEPIPE_DEVICE static void epilogue(const Params& p, SharedStorage& storage,
                                       const Accumulators& acc, const WorkTile& t) {
    typename Epilogue::Params ep = p.epilogue;
    const std::int64_t batch = t.batch;
    ep.d += batch * p.batch_stride_d;
    if (ep.beta != 0.0f) ep.c += batch * p.batch_stride_c;
    const int thread = unit_thread_index();
    const Mainloop mainloop(storage.mainloop, thread);  // the warp's place in the tile
    Epilogue out(storage.epilogue, thread);
    const TileOrigin at = origin_of(t, p);
    out(acc, ep, at.m0, at.n0, mainloop.warp_m0(), mainloop.warp_n0(), at.skip_m, at.skip_n);
  }

  // Where tile `t` sits: an edge tile moves back inside D, as in GemmKernel.
  TILEPIPE_DEVICE static TileOrigin origin_of(const WorkTile& t, const Params& p) {
    constexpr int kGranule =
        Mainloop::kAnyAlignment ? 0 : move_granule<Element, ElementB, typename Epilogue::Element>();
    return tile_origin<Tile::kM, Tile::kN, kGranule>(TileCoord{t.m, t.n}, p.epilogue.m,
                                                     p.epilogue.n);
  }

  // Rows (m16 tiles) of fragments the fix-up loads at a time.
  static constexpr int kRowsInFlight = Accumulators::kTilesM > 1 ? Accumulators::kTilesM / 2 : 1;

  // Fragment `f` of this thread within a slot: float4 `f * kThreads + threadIdx.x`.
  TILEPIPE_DEVICE static float4* slot_of(const Params& p, long long slot) {
    return reinterpret_cast<float4*>(p.partials + slot * (Tile::kM * Tile::kN)) + threadIdx.x;
  }

  // A partial segment of stream-K tile `unit.tile`: stores `acc` in this block's slot and counts
  // the block in. Returns true in the block that completes the tile, with `acc` then the sum of
  // the tile's segments in k order; false in the others (they are done with the tile).
  TILEPIPE_DEVICE static bool fix_up(const Params& p, Accumulators& acc, const UnitRecord& unit) {
    const StreamKPartition& part = p.partition;
    const long long tile = unit.tile;
    float4* mine = slot_of(p, unit.slot);
    TILEPIPE_UNROLL
    for (int mi = 0; mi < Accumulators::kTilesM; ++mi) {
      TILEPIPE_UNROLL
      for (int ni = 0; ni < Accumulators::kTilesN; ++ni)
        __stcg(mine + (mi * Accumulators::kTilesN + ni) * kThreads,
               make_float4(acc.get(mi, ni, 0), acc.get(mi, ni, 1), acc.get(mi, ni, 2),
                           acc.get(mi, ni, 3)));
    }
    // The barrier orders every thread's stores before thread 0's count (a release at device
    // scope), so they are visible to whichever block's count (an acquire) completes the tile;
    // there, the barrier that shares the result orders the acquire before every thread's loads.
    // One fence in one thread per block: a __threadfence in every thread costs a fence per thread
    // for each partial segment.
    __syncthreads();
    const int segments = unit.segments;
    bool last = false;
    if (threadIdx.x == 0) {
      cuda::atomic_ref<std::uint32_t, cuda::thread_scope_device> counter(
          p.counters[tile - part.dp_tiles]);
      last = counter.fetch_add(1u, cuda::memory_order_acq_rel) + 1u ==
             static_cast<std::uint32_t>(segments);
    }
    // The warp vote adds nothing but tells ptxas that the branch is uniform. Without it, ptxas
    // takes the persistent loop for divergent and moves the mainloop's k-tile bookkeeping from
    // the uniform datapath to the vector one, lengthening every k-tile.
    if (!__any_sync(0xffffffffu, __syncthreads_or(last))) return false;

    // acc = ((s_0 + s_1) + s_2) + ...: the same additions in the same order in whichever block
    // completes the tile. The loads bypass L1 (__ldcg): the other blocks wrote through L2.
    for (int s = 0; s < segments; ++s) {
      const float4* src = slot_of(p, StreamKPartition::segment_slot(unit.first_slot, s));
      TILEPIPE_UNROLL
      for (int mi = 0; mi < Accumulators::kTilesM; ++mi) {
        TILEPIPE_UNROLL
        for (int ni = 0; ni < Accumulators::kTilesN; ++ni) {
          const float4 v = __ldcg(src + (mi * Accumulators::kTilesN + ni) * kThreads);
          const float x[4] = {v.x, v.y, v.z, v.w};
          TILEPIPE_UNROLL
          for (int j = 0; j < 4; ++j) acc.set(mi, ni, j, s == 0 ? x[j] : acc.get(mi, ni, j) + x[j]);
        }
        // At most kRowsInFlight rows of fragments loaded ahead: ptxas would otherwise issue a
        // whole slot's loads at once, as many registers as the accumulators, and spill ~100
        // bytes around the mainloop. It moves no load across __syncwarp (a memory-ordering point).
        if (mi % kRowsInFlight == kRowsInFlight - 1) __syncwarp();
      }
    }
    return true;
  }
};

template <class Mainloop, class Epilogue, class Raster>
auto StreamKGemmKernel<Mainloop, Epilogue, Raster>::entry() -> Entry {
  return gemm_kernel<StreamKGemmKernel>;
}

}  // namespace tilepipe
