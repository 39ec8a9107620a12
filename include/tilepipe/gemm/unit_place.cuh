#pragma once
//! \file
//! UnitPlace: where the tile of a unit of work lies, for the persistent Hopper kernel
//! (GemmKernelSm90): its first row and column, the batch its A and B tiles come from and its
//! k-tiles, for a dense unit (WorkUnit: a tile, a split-K slice or a stream-K segment) and for a
//! grouped one (GroupedUnit) alike, so that the kernel's roles read the same for both; where its
//! epilogue stores it; and the parts of the kernel's parameters and shared memory that only some
//! kernels have.

#include <type_traits>

#include "../detail/macros.cuh"
#include "../layout/tile_scheduler.cuh"
#include "grouped_scheduler.cuh"

namespace tilepipe::detail {

//! \tparam TileM, TileN  a block's tile
//! \tparam ClusterM      blocks of a cluster, which take `ClusterM` tiles of one column per item
template <int TileM, int TileN, int ClusterM>
struct UnitPlace {
  template <class Unit>
  TILEPIPE_DEVICE static int k_tiles_of(const Unit& u) {
    return u.k_end - u.k_begin;
  }

  //! The first row of the tile of unit `u` that the block of rank `rank` in its cluster computes.
  TILEPIPE_DEVICE static int m0_of(const WorkUnit& u, int rank) {
    return (u.tile.m * ClusterM + rank) * TileM;
  }
  TILEPIPE_DEVICE static int m0_of(const GroupedUnit& u, int rank) { return u.row0 + rank * TileM; }

  //! Its first column, and the batch (a grouped unit's group) its A and B tiles come from.
  TILEPIPE_DEVICE static int n0_of(const WorkUnit& u) { return u.tile.n * TileN; }
  TILEPIPE_DEVICE static int n0_of(const GroupedUnit& u) { return u.n0; }
  TILEPIPE_DEVICE static int batch_of(const WorkUnit& u) { return u.tile.batch; }
  TILEPIPE_DEVICE static int batch_of(const GroupedUnit& u) { return u.group; }

  //! Begins the epilogue `e` of unit `u`'s warpgroup tile at row `m0` (of its tile, for the
  //! consumer warpgroup that stores it): a grouped unit's stops at its group's end (the next
  //! group's rows follow in D); a pointer-array group's goes to its own D (`work.d_of`).
  template <class Epilogue, class Accumulators, class Work>
  TILEPIPE_DEVICE static void begin_store(Epilogue& e, const Accumulators& acc,
                                          const typename Epilogue::Params& ep, const Work&,
                                          const WorkUnit& u, int m0) {
    e.begin(acc, ep, m0, n0_of(u), u.tile.batch);
  }
  template <class Epilogue, class Accumulators, class Work>
  TILEPIPE_DEVICE static void begin_store(Epilogue& e, const Accumulators& acc,
                                          const typename Epilogue::Params& ep, const Work& work,
                                          const GroupedUnit& u, int m0) {
    if constexpr (std::is_base_of_v<PointerArrayTag, Work>)
      e.begin_at(acc, ep, work.d_of(u.group), work.ldd_of(u.group), u.row_end, m0, u.n0);
    else e.begin(acc, ep, m0, u.n0, u.batch_d, u.row_end);
  }
};

//! The kernel parameters of a k-block operator (`KBlockOp::Params k_block`), none without one.
template <class KBlockOp>
struct KBlockOpParams {
  typename KBlockOp::Params k_block;
};
template <>
struct KBlockOpParams<void> {};

//! The shared memory of a scheduler that keeps a table there (GroupedScheduler), none without.
template <class Scheduler, class = void>
struct SchedulerStorage {};
template <class Scheduler>
struct SchedulerStorage<Scheduler, std::void_t<typename Scheduler::SharedStorage>> {
  typename Scheduler::SharedStorage work;
};

}  // namespace tilepipe::detail
