#pragma once
//! \file
//! GemmKernelSm90: the Hopper tier's persistent, warp-specialized GEMM kernel. About one block per
//! SM walks its units of work (WorkScheduler: whole tiles, split-K slices or stream-K segments,
//! whose partial sums WarpgroupPartials adds up); in each block a producer warpgroup feeds the ring
//! with TMA and consumer warpgroups multiply with wgmma and store: cooperative, `TileM / 64` of
//! them share each tile, 64 rows each; ping-pong, two take the block's tiles in turn, one storing
//! while the other multiplies. Compiled only for `sm_90a`: elsewhere the kernel is empty and the
//! provided GEMM never launches it (`hopper_tier_available` tells).

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../arch/cluster.cuh"
#include "../arch/special_register.cuh"
#include "../arch/wgmma.cuh"
#include "../detail/macros.cuh"
#include "../layout/tile_raster.cuh"
#include "../layout/tile_scheduler.cuh"
#include "../epilogue/warpgroup_partials.cuh"
#include "grouped_scheduler.cuh"
#include "hopper_tier_available.cuh"
#include "unit_place.cuh"

namespace tilepipe {

//! \tparam Mainloop  a WarpSpecializedMainloop
//! \tparam Epilogue  a WarpgroupEpilogue of its accumulators (TMA stores through shared memory)
//! \tparam Raster    the tile order within a batch (`GroupedRaster<8>`)
//! \tparam KBlockOp  void: the tensor cores accumulate the whole k range. Otherwise the consumers
//!                   run the mainloop's per-k-block seam with a `KBlockOp` made for each unit of
//!                   work, `KBlockOp(p.k_block, m0, n0, batch, k_tile_begin)` (`m0`: the first of
//!                   the warpgroup's 64 rows; `k_tile_begin`: the unit's first k-tile), which
//!                   folds each k-tile's product into the accumulators (FP8's scales, gemm_fp8.cuh).
//! \tparam Grouped   void: one (batched) problem. Otherwise a GroupedScheduler: many problems of
//!                   one N and K with their rows on the device, whole tiles each, a group's rows
//!                   past its end never stored (gemm_grouped.cuh); with per-group tensor maps of
//!                   A and B and per-group D in global memory (GroupedPointerArrays).
template <class Mainloop, class Epilogue, class Raster, class KBlockOp = void, class Grouped = void>
struct GemmKernelSm90 {
  using Tile = typename Mainloop::Tile;
  static constexpr bool kGrouped = !std::is_void_v<Grouped>;
  static constexpr bool kPointerArrays = std::is_base_of_v<detail::PointerArrayTag, Grouped>;
  //! The units of work: whole tiles, split-K slices or stream-K segments, chosen at run time
  //! (`Params::work`), so one kernel runs all three; or a grouped GEMM's tiles.
  using Scheduler = std::conditional_t<kGrouped, Grouped, WorkScheduler<Raster>>;
  using Accumulators = typename Mainloop::Accumulators;
  using Place = detail::UnitPlace<Tile::kM, Tile::kN, Mainloop::kClusterM>;
  using Partials = WarpgroupPartials<Accumulators>;
  static constexpr int kThreads = Mainloop::kThreads;
  //! Registers per thread after `setmaxnreg`: the producer needs few, the consumers hold the
  //! accumulators and share the rest of the SM's 65536 (a multiple of 8, at most 256):
  //! 128 * (40 + 2 * 232) = 64512 for two consumers.
  static constexpr int kProducerRegisters = 40;
  static constexpr int kConsumerRegisters =
      std::min(256, (65536 / 128 - kProducerRegisters) / Mainloop::kConsumers / 8 * 8);

  //! Named barriers: 0 is `__syncthreads`, 1 + c consumer c's epilogue and fix-up,
  //! `kOrderBarrier + c` says that ping-pong consumer c may start its next tile's mainloop.
  static constexpr int kOrderBarrier = 1 + Mainloop::kConsumers;
  //! Two cooperative consumers that fold k-blocks take turns at each unit's first k-tile on this
  //! barrier and the next (`consume`'s `stagger_barrier`; the ping-pong ones' order barriers).
  static constexpr int kStaggerBarrier = Tile::kConsumersPerTile == 2 ? kOrderBarrier : -1;

  //! Consumer warpgroups that store tiles (k-interleaved: consumer 0 alone).
  static constexpr int kStoringConsumers = Tile::kKInterleaved ? 1 : Mainloop::kConsumers;
  //! The scheduler's table (grouped only), k-interleaved consumers' exchange, the mainloop's
  //! ring, then each storing consumer warpgroup's epilogue buffers.
  struct SharedStorage : detail::SchedulerStorage<Scheduler>,
                         Partials::template Exchange<Tile::kKInterleaved> {
    typename Mainloop::SharedStorage mainloop;
    typename Epilogue::SharedStorage epilogue[kStoringConsumers];
  };
  //! Dynamic shared memory to request: the storage plus room to align it to 1024 bytes (the
  //! 128-byte swizzle's period, which TMA and wgmma both assume).
  static constexpr std::size_t kSharedBytes = sizeof(SharedStorage) + 1024;

  //! Clusters of `kClusterM` blocks along M share their B tiles (TMA multicast); the scheduler's
  //! items are then column-adjacent groups of `kClusterM` tiles, one per block; workers, clusters.
  static constexpr int kClusterM = Mainloop::kClusterM;
  //! Warpgroup tiles of one work item, each with its own workspace slot and counter per piece.
  static constexpr int kSubTiles = kClusterM * Tile::kConsumersPerTile;

  //! k per k-tile (the mainloop's), and the k-tiles of a K extent.
  static constexpr int kTileK = Mainloop::kTileK;
  TILEPIPE_HOST_DEVICE static constexpr int k_tiles(int k) { return Mainloop::k_tiles(k); }

  //! Whether the consumers fold each k-tile on the CUDA cores (`KBlockOp`).
  static constexpr bool kFoldsKBlocks = !std::is_void_v<KBlockOp>;
  //! Whether split-K pieces may be summed in a cluster (`Params::cluster_k`): one problem, one
  //! consumer warpgroup (two made ptxas spill in FP8's block-wise 128 x 128 kernel), no multicast;
  //! only where k-blocks are folded (GemmFp8Sm90 alone asks for it; elsewhere: compile time).
  static constexpr bool kReducesInCluster = kFoldsKBlocks && !kGrouped && !Tile::kPingPong &&
                                            Mainloop::kClusterM == 1 && Mainloop::kConsumers == 1;
  static_assert((!Tile::kKInterleaved && !Tile::kSplitColumns) ||
                    (kFoldsKBlocks && !kGrouped && kClusterM == 1),
                "GemmKernelSm90: k-interleaved or split-column consumers need a k-block operator "
                "(FP8's fold), one problem and no cluster");
  //! Rows and columns between consumer warpgroups' parts of a tile (k-interleaved: the same).
  static constexpr int kRowStep = Tile::kKInterleaved || Tile::kSplitColumns ? 0 : 64;
  static constexpr int kColumnStep = Tile::kSplitColumns ? Tile::kConsumerN : 0;
  //! Whether a consumer keeps its unit's place (4 registers) through the mainloop, not finding
  //! the unit again (0.6 us a decode tile, log 55): FP8's 64-row tiles (the others spill).
  static constexpr bool kKeepsPlace = kFoldsKBlocks && !kGrouped && Tile::kM == 64;
  //! Whether the producer sends each unit's number to the consumers with its first k-tile
  //! (`GroupedScheduler::Walk`: dealt or claimed on demand) rather than each role walking the
  //! deal: grouped, cooperative, unclustered (a fold then runs without the stagger, as a
  //! consumer with no rows of its group skips the unit).
  static constexpr bool kTagged = kGrouped && !Tile::kPingPong && Mainloop::kClusterM == 1;

  struct Params : detail::KBlockOpParams<KBlockOp> {
    typename Mainloop::Params load;      //!< the tensor maps of A and B
    typename Epilogue::Params epilogue;  //!< D's tensor map, C, alpha, beta, the output operator
    int k;
    Scheduler work;                     //!< the work items, their k-tiles and how they are cut
    float* partials = nullptr;          //!< `work.slots()` slots (partial units only)
    std::uint64_t* counters = nullptr;  //!< `work.counters()` per sub-tile (WarpgroupPartials)
    std::uint32_t epoch = 0;            //!< this launch's, for the counters
    //! Above 1 (split-K only, kReducesInCluster): one unit per block, each cluster of this many
    //! one tile's pieces in order, met at a barrier (`WarpgroupPartials::sum_in_cluster`).
    int cluster_k = 1;
  };

  //! Its `__global__` function (gemm_kernel_sm90), for KernelLauncher.
  using Entry = void (*)(const Params);
  static Entry entry();

  //! Work items (tiles, or groups of `kClusterM` tiles in one column) along M and N.
  TILEPIPE_HOST_DEVICE static constexpr int items_m(int m) {
    return ((m + Tile::kM - 1) / Tile::kM + kClusterM - 1) / kClusterM;
  }
  TILEPIPE_HOST_DEVICE static constexpr int items_n(int n) { return (n + Tile::kN - 1) / Tile::kN; }

  //! Bytes of the counters at the workspace's start (rounded up to 256, where the slots begin).
  static constexpr std::size_t counter_bytes(const Scheduler& w) {
    return (static_cast<std::size_t>(w.counters()) * kSubTiles * sizeof(std::uint64_t) + 255) /
           256 * 256;
  }
  //! Bytes of workspace the units of `w` need: 0 unless some are partial.
  static constexpr std::size_t workspace_bytes(const Scheduler& w) {
    if (w.slots() == 0) return 0;
    return counter_bytes(w) +
           static_cast<std::size_t>(w.slots()) * kSubTiles * Partials::kSlotFloats * sizeof(float);
  }

  TILEPIPE_DEVICE void operator()(const Params& p, SharedStorage& storage) const {
    if (threadIdx.x == 0) {
      Mainloop::init(storage.mainloop, p.load);
      Epilogue::prefetch(p.epilogue);
    }
    if constexpr (kGrouped) {
      if (threadIdx.x / 32 == 1) p.work.build(storage.work);  // warp 1, beside thread 0's init
    }
    if constexpr (kClusterM > 1) arch::cluster_sync();  // the peers' barriers are ready too
    else __syncthreads();
    if constexpr (kGrouped) roles(p, storage, typename Scheduler::Walk(p.work, storage.work));
    else roles(p, storage, p.work);
  }

 private:
  // The roles of the block, walking `work`'s units: the parameter's scheduler, or a grouped one's
  // walk over its table.
  template <class Work>
  TILEPIPE_DEVICE void roles(const Params& p, SharedStorage& storage, const Work& work) const {
    const int warpgroup = threadIdx.x / 128;
    // A cluster is kClusterM consecutive blocks, one worker; its rank picks the tile of each item.
    const int rank = static_cast<int>(blockIdx.x % kClusterM);
    const int worker = static_cast<int>(blockIdx.x / kClusterM);
    const int units = work.units(worker);
    Mainloop mainloop(storage.mainloop);
    typename Mainloop::State state;  // each role walks the ring from slot 0, phase 0

    // Each role is one branch, as setmaxnreg requires; no block-wide barrier follows.
    if (warpgroup == 0) {
      arch::setmaxnreg_dec<kProducerRegisters>();
      if (threadIdx.x == 0) {
        // A pointer-array group's maps are in global memory, acquired where the group changes.
        [[maybe_unused]] int group = -1;  // the group whose maps were acquired last
        const auto produce = [&](const auto& u, int tag) {
          if constexpr (kPointerArrays)
            mainloop.produce(p.work.maps_of(u.group, group), state, Place::m0_of(u, rank),
                             Place::n0_of(u), Place::batch_of(u), u.k_begin, u.k_end, tag);
          else
            mainloop.produce(p.load, state, Place::m0_of(u, rank), Place::n0_of(u),
                             Place::batch_of(u), u.k_begin, u.k_end, tag);
        };
        if constexpr (kTagged) {
          for (int j = 0, item; (item = work.next(worker, j)) >= 0; ++j)
            produce(work.unit_of(item), item);
          if (work.tagged()) mainloop.produce_tag(state, -1);  // the end, for the consumers
        } else {
          for (int j = 0; j < units; ++j) produce(work.unit(worker, j), Mainloop::kNoTag);
        }
        mainloop.produce_tail(state);
      }
      if constexpr (kReducesInCluster) {
        if (p.cluster_k > 1) Partials::meet_in_cluster();
      }
    } else {
      arch::setmaxnreg_inc<kConsumerRegisters>();
      const int consumer = warpgroup - 1;
      // Named barrier 1 + consumer: each consumer warpgroup's own (0 is __syncthreads).
      Epilogue epilogue(storage.epilogue[Tile::kKInterleaved ? 0 : consumer], 1 + consumer,
                        threadIdx.x % 128);
      Accumulators acc;
      if constexpr (Tile::kPingPong) {
        // Consumer c takes the block's units c, c + 2, ...; the ring holds every unit's k-tiles
        // in order, so each steps over the other's. One waits on its unit's slots only once the
        // other has finished the previous unit's mainloop: a parity wait tells only adjacent
        // phases apart, so none may run a lap ahead of the copies (test_pipeline_state.cpp
        // models it). That order also keeps one consumer's wgmmas on the tensor cores at a time.
        const int other = 1 - consumer;
        for (int j = 0; j < units; ++j) {
          const auto u = work.unit(worker, j);
          if (j % 2 != consumer) {
            state.advance(u.k_end - u.k_begin);  // the other's unit
            continue;
          }
          if (j != 0) arch::named_barrier_sync(kOrderBarrier + consumer, 256);
          if constexpr (kFoldsKBlocks) {
            mainloop.consume(
                acc, state, 0, u.k_end - u.k_begin, [] {},
                KBlockOp(p.k_block, Place::m0_of(u, rank), Place::n0_of(u), Place::batch_of(u),
                         u.k_begin));
          } else {
            mainloop.consume(acc, state, 0, u.k_end - u.k_begin);
          }
          if (j + 1 < units) arch::named_barrier_arrive(kOrderBarrier + other, 256);
          if (completes(p, acc, j, rank * Tile::kConsumersPerTile, 1 + consumer)) {
            Place::begin_store(epilogue, acc, p.epilogue, p.work, u, Place::m0_of(u, rank));
            epilogue.drain(p.epilogue);
          }
        }
      } else if constexpr (kTagged) {
        // Each unit as its number comes with its first k-tile (-1: no more), or with no k-tile
        // as dealt. Rows past the group's end are never stored: a consumer with none of its own
        // leaves the tensor cores to the other (a small group's last tile).
        for (int j = 0, item;
             (item = work.tagged() ? mainloop.wait_tag(state) : work.dealt(worker, j)) >= 0; ++j) {
          const auto u = work.unit_of(item);
          const auto drain = [&] { epilogue.drain(p.epilogue); };
          const int m0 = Place::m0_of(u, rank) + 64 * consumer;
          const int k_tiles = Place::k_tiles_of(u);
          if (m0 >= u.row_end) mainloop.skip(state, k_tiles, drain);
          else if constexpr (kFoldsKBlocks)
            mainloop.consume(acc, state, consumer, k_tiles, drain,
                             KBlockOp(p.k_block, m0, u.n0, u.group, u.k_begin));
          else mainloop.consume(acc, state, consumer, k_tiles, drain);
          const auto v = work.unit_of(item);  // found again, not kept beside the accumulators
          Place::begin_store(epilogue, acc, p.epilogue, p.work, v,
                             Place::m0_of(v, rank) + 64 * consumer);
        }
        epilogue.drain(p.epilogue);
      } else {
        if constexpr (kFoldsKBlocks) Mainloop::stagger_begin(consumer, kStaggerBarrier);
        for (int j = 0; j < units; ++j) {
          // The previous tile's last chunks go to shared memory while this tile's first wgmmas
          // run: the tensor cores wait only for the first chunks.
          [[maybe_unused]] int m0 = 0, n0 = 0, batch = 0, pieces = 0;
          if constexpr (kFoldsKBlocks) {
            const auto u = work.unit(worker, j);
            m0 = Place::m0_of(u, rank) + kRowStep * consumer;
            n0 = Place::n0_of(u) + kColumnStep * consumer;
            batch = Place::batch_of(u);
            if constexpr (kKeepsPlace) pieces = u.pieces;
            mainloop.consume(
                acc, state, consumer, Place::k_tiles_of(u), [&] { epilogue.drain(p.epilogue); },
                KBlockOp(p.k_block, m0, n0, batch, u.k_begin), kStaggerBarrier);
            if constexpr (Tile::kKInterleaved) {  // consumer 0 stores the sum
              if (!Partials::hand_over(acc, storage.exchange, consumer, kOrderBarrier, j,
                                       threadIdx.x % 128))
                continue;
            }
          } else {
            mainloop.consume(acc, state, consumer, Place::k_tiles_of(work.unit(worker, j)),
                             [&] { epilogue.drain(p.epilogue); });
          }
          // A cluster's block whose tile lies past M multiplies (for its peers' B), stores nothing.
          const bool whole = [&] {
            const int sub = rank * Tile::kConsumersPerTile + consumer;
            if constexpr (kReducesInCluster) {
              if (p.cluster_k > 1) {
                const long long first = worker - static_cast<int>(arch::cluster_ctarank());
                const auto slot = [&](int piece) {  // one unit a block, its pieces in rank order
                  const long long s = p.work.piece_slot(first, piece) * kSubTiles + sub;
                  return p.partials + s * Partials::kSlotFloats;
                };
                return Partials::sum_in_cluster(acc, p.cluster_k, slot, threadIdx.x % 128);
              }
            }
            if (kKeepsPlace && pieces == 1) return true;
            return completes(p, acc, j, sub, 1 + consumer);
          }();
          if (!whole) {
            epilogue.skip();
          } else if constexpr (kKeepsPlace) {
            epilogue.begin(acc, p.epilogue, m0, n0, batch);
          } else {
            const auto u = unit_anew(work, j);
            Place::begin_store(epilogue, acc, p.epilogue, p.work, u,
                               Place::m0_of(u, rank) + kRowStep * consumer);
          }
        }
        if constexpr (kFoldsKBlocks) Mainloop::stagger_end(consumer, kStaggerBarrier);
        epilogue.drain(p.epilogue);
      }
      epilogue.finish();
    }
  }

  // Unit `j` of this block's worker, from a block index the compiler cannot reuse (kKeepsPlace).
  template <class Work>
  TILEPIPE_DEVICE static auto unit_anew(const Work& work, int j) {
    return work.unit(static_cast<int>(arch::opaque_block_index() / kClusterM), j);
  }

  // Whether the consumer warpgroup of sub-tile `sub` stores its tile after unit `j`: always for
  // a whole tile; for a piece, only in the warpgroup that completes the tile, with `acc` then
  // the sum of its pieces (WarpgroupPartials).
  TILEPIPE_DEVICE static bool completes(const Params& p, Accumulators& acc, int j, int sub,
                                        int barrier) {
    if constexpr (kGrouped) {
      return true;  // whole tiles only
    } else {
      const WorkUnit u = unit_anew(p.work, j);
      if (u.pieces == 1) return true;
      const int thread = threadIdx.x % 128;
      const auto slot = [&](long long s) {
        return p.partials + (s * kSubTiles + sub) * Partials::kSlotFloats;
      };
      std::uint64_t* counter = p.counters + p.work.counter_of(u.item) * kSubTiles + sub;
      if (!Partials::arrive(acc, slot(u.slot), counter, u.pieces, p.epoch, barrier, thread))
        return false;
      const long long first_slot = u.first_slot;
      Partials::sum(
          acc, u.pieces, [&](int piece) { return slot(p.work.piece_slot(first_slot, piece)); },
          thread);
      return true;
    }
  }
};

}  // namespace tilepipe

// Its `__global__` function and `entry`, defined out of the class.
#include "kernel_sm90_entry.cuh"
