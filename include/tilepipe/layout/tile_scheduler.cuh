#pragma once
//! \file
//! PersistentTileScheduler: which output tiles a persistent block computes, and in what order;
//! WorkScheduler: the same walk cut into units of (tile, k-range) work, whole tiles
//! (data-parallel), K slices (split-K) or even shares of every block's MAC-iterations (stream-K).
//!
//! A persistent kernel launches about one block per SM; block `b` of `G` takes work items
//! `b, b + G, b + 2G, ...` of the `tiles_m * tiles_n * batches` items. Items run batch by batch,
//! and within a batch in the order of `Raster` (a grouped order, so that the blocks running at
//! the same time share A and B tiles through L2). Every role of a block (the producer warp and
//! the consumer warpgroups) walks the same sequence, so they agree without talking.

#include "../detail/macros.cuh"
#include "stream_k_partition.cuh"
#include "tile_raster.cuh"

namespace tilepipe {

//! One output tile of one batch.
struct WorkTile {
  int m;      //!< tile row
  int n;      //!< tile column
  int batch;  //!< batch index
};

//! Persistent walk over the tiles of a batched GEMM (a bijection over tiles and batches,
//! host-tested).
template <class Raster>
class PersistentTileScheduler {
 public:
  TILEPIPE_HOST_DEVICE constexpr PersistentTileScheduler(int tiles_m, int tiles_n, int batches)
      : tiles_m_(tiles_m), tiles_n_(tiles_n), tiles_per_batch_(tiles_m * tiles_n),
        items_(static_cast<long long>(tiles_m) * tiles_n * batches) {}

  //! Work items in all.
  TILEPIPE_HOST_DEVICE constexpr long long items() const { return items_; }

  //! The tile of work item `item` (in `[0, items())`).
  TILEPIPE_HOST_DEVICE constexpr WorkTile tile_of(long long item) const {
    const int batch = static_cast<int>(item / tiles_per_batch_);
    const int in_batch = static_cast<int>(item - static_cast<long long>(batch) * tiles_per_batch_);
    const TileCoord t = Raster::tile_of(in_batch, tiles_m_, tiles_n_);
    return WorkTile{t.m, t.n, batch};
  }

  //! Blocks worth launching on `sms` multiprocessors with `blocks_per_sm` resident each: no more
  //! than there are items (at least 1).
  TILEPIPE_HOST_DEVICE constexpr int grid_size(int sms, int blocks_per_sm = 1) const {
    const long long slots = static_cast<long long>(sms) * blocks_per_sm;
    const long long g = items_ < slots ? items_ : slots;
    return g > 0 ? static_cast<int>(g) : 1;
  }

 private:
  int tiles_m_;
  int tiles_n_;
  int tiles_per_batch_;
  long long items_;
};

//! How a persistent kernel's work is cut into units (WorkScheduler).
enum class Decomposition : int {
  kDataParallel,  //!< every unit a whole tile
  kSplitK,        //!< every tile cut into the same number of K slices, each slice a unit
  kStreamK,       //!< every block an even share of the MAC-iterations (StreamKPartition)
};

//! A unit of a persistent block's work: k-tiles `[k_begin, k_end)` of one work item, as piece
//! `piece` (in k order) of the `pieces` that together cover the item's K. A unit with
//! `pieces > 1` is partial: its accumulators are summed with the other pieces' through workspace
//! slot `slot`; the item's pieces have slots `WorkScheduler::piece_slot(first_slot, piece)`.
struct WorkUnit {
  WorkTile tile;
  long long item = 0;  //!< the work item (tile and batch, in the scheduler's order)
  int k_begin = 0, k_end = 0;
  int piece = 0, pieces = 1;
  long long slot = 0, first_slot = 0;
};

//! The units of work of a persistent grid of `workers()` workers (blocks, or clusters sharing a
//! unit) over `tiles_m x tiles_n x batches` work items of `k_tiles` k-tiles each. Worker `w` runs
//! its units `0 .. units(w) - 1` in order; together the workers cover every k-tile of every item
//! exactly once (host-tested). Every role of a block walks the same units, so they agree without
//! talking. Partial units (split-K slices, stream-K segments that are not a whole tile) keep
//! their sums in `slots()` workspace slots, one arrival counter per item (`counter_of`) telling
//! the last piece to arrive that it sums them, in piece order: the result does not depend on the
//! order the pieces finish in.
//!
//! - Data-parallel: worker `w` of `G` takes items `w, w + G, ...` whole.
//! - Split-K (`splits` slices of near-equal length, clamped to `[1, k_tiles]`): units are
//!   (item, slice) pairs, item after item, dealt out the same way, so that an item's slices run
//!   at the same time on neighbouring workers; slot `item * splits + slice`.
//! - Stream-K: StreamKPartition (whole waves data-parallel, the rest in even shares).
template <class Raster>
class WorkScheduler {
 public:
  //! No work.
  TILEPIPE_HOST_DEVICE constexpr WorkScheduler() : tiles_(0, 0, 0) {}

  TILEPIPE_HOST_DEVICE static constexpr WorkScheduler data_parallel(int tiles_m, int tiles_n,
                                                                    int batches, int k_tiles,
                                                                    int workers) {
    WorkScheduler w(tiles_m, tiles_n, batches, k_tiles, Decomposition::kDataParallel);
    w.workers_ = clamp_workers(workers, w.tiles_.items());
    return w;
  }

  TILEPIPE_HOST_DEVICE static constexpr WorkScheduler split_k(int tiles_m, int tiles_n, int batches,
                                                              int k_tiles, int splits,
                                                              int workers) {
    WorkScheduler w(tiles_m, tiles_n, batches, k_tiles, Decomposition::kSplitK);
    w.splits_ = splits < 1 ? 1 : splits > w.k_tiles_ ? (w.k_tiles_ > 0 ? w.k_tiles_ : 1) : splits;
    if (w.splits_ == 1) w.kind_ = Decomposition::kDataParallel;
    w.workers_ = clamp_workers(workers, w.tiles_.items() * w.splits_);
    return w;
  }

  //! `k_chunks` as StreamKPartition's (0: one chunk per k-tile).
  TILEPIPE_HOST_DEVICE static constexpr WorkScheduler stream_k(int tiles_m, int tiles_n,
                                                               int batches, int k_tiles,
                                                               int workers, int k_chunks = 0) {
    WorkScheduler w(tiles_m, tiles_n, batches, k_tiles, Decomposition::kStreamK);
    w.part_ = stream_k_partition(w.tiles_.items(), w.k_tiles_, workers, k_chunks);
    w.workers_ = w.part_.blocks;
    if (w.part_.slots() == 0) {  // nothing is shared: whole waves, or no k-tile at all
      w.kind_ = Decomposition::kDataParallel;
      w.workers_ = clamp_workers(workers, w.tiles_.items());
    }
    return w;
  }

  TILEPIPE_HOST_DEVICE constexpr Decomposition kind() const { return kind_; }
  //! The workers worth launching: never more than there are units.
  TILEPIPE_HOST_DEVICE constexpr int workers() const { return workers_; }
  TILEPIPE_HOST_DEVICE constexpr long long items() const { return tiles_.items(); }
  TILEPIPE_HOST_DEVICE constexpr int k_tiles() const { return k_tiles_; }
  TILEPIPE_HOST_DEVICE constexpr int splits() const { return splits_; }
  TILEPIPE_HOST_DEVICE constexpr const StreamKPartition& partition() const { return part_; }

  //! Units of worker `w`.
  TILEPIPE_HOST_DEVICE constexpr int units(int w) const {
    if (kind_ == Decomposition::kStreamK)
      return static_cast<int>(part_.dp_waves()) + part_.block_segments(w);
    const long long n = kind_ == Decomposition::kSplitK ? items() * splits_ : items();
    return w < n ? static_cast<int>((n - 1 - w) / workers_ + 1) : 0;
  }

  //! Unit `j` (in `[0, units(w))`) of worker `w`.
  TILEPIPE_HOST_DEVICE constexpr WorkUnit unit(int w, int j) const {
    WorkUnit u;
    if (kind_ == Decomposition::kStreamK && j >= part_.dp_waves()) {
      const StreamKSegment seg = part_.block_segment(w, j - static_cast<int>(part_.dp_waves()));
      u.item = seg.tile;
      u.k_begin = seg.k_tile_begin;
      u.k_end = seg.k_tile_end;
      if (!part_.whole(seg)) {
        const int first = part_.first_block(seg.tile);
        u.piece = w - first;
        u.pieces = part_.segments(seg.tile);
        u.slot = part_.slot(w, seg.tile);
        u.first_slot = part_.slot(first, seg.tile);
      }
    } else if (kind_ == Decomposition::kSplitK) {
      const long long n = static_cast<long long>(j) * workers_ + w;
      u.item = n / splits_;
      u.piece = static_cast<int>(n - u.item * splits_);
      u.pieces = splits_;
      u.k_begin = static_cast<int>(static_cast<long long>(u.piece) * k_tiles_ / splits_);
      u.k_end = static_cast<int>(static_cast<long long>(u.piece + 1) * k_tiles_ / splits_);
      u.slot = n;
      u.first_slot = u.item * splits_;
    } else {
      u.item = static_cast<long long>(j) * workers_ + w;
      u.k_end = k_tiles_;
    }
    u.tile = tiles_.tile_of(u.item);
    return u;
  }

  //! The workspace slot of piece `piece` of a partial unit's item, from the unit's `first_slot`.
  TILEPIPE_HOST_DEVICE constexpr long long piece_slot(long long first_slot, int piece) const {
    return kind_ == Decomposition::kSplitK ? first_slot + piece
                                           : StreamKPartition::segment_slot(first_slot, piece);
  }

  //! Workspace slots of partial accumulators (0 when no unit is partial).
  TILEPIPE_HOST_DEVICE constexpr long long slots() const {
    if (kind_ == Decomposition::kSplitK) return items() * splits_;
    return kind_ == Decomposition::kStreamK ? part_.slots() : 0;
  }

  //! Arrival counters (one per item that may be cut), zero before the launch.
  TILEPIPE_HOST_DEVICE constexpr long long counters() const {
    if (kind_ == Decomposition::kSplitK) return items();
    return kind_ == Decomposition::kStreamK ? part_.sk_tiles() : 0;
  }
  //! The counter of a partial unit's item.
  TILEPIPE_HOST_DEVICE constexpr long long counter_of(long long item) const {
    return kind_ == Decomposition::kStreamK ? item - part_.dp_tiles : item;
  }

 private:
  TILEPIPE_HOST_DEVICE constexpr WorkScheduler(int tiles_m, int tiles_n, int batches, int k_tiles,
                                               Decomposition kind)
      : tiles_(tiles_m, tiles_n, batches), k_tiles_(k_tiles > 0 ? k_tiles : 0), kind_(kind) {}

  TILEPIPE_HOST_DEVICE static constexpr int clamp_workers(int workers, long long units) {
    const long long g = workers < units ? workers : units;
    return g > 0 ? static_cast<int>(g) : 1;
  }

  PersistentTileScheduler<Raster> tiles_;
  int k_tiles_ = 0;
  Decomposition kind_ = Decomposition::kDataParallel;
  int workers_ = 1;
  int splits_ = 1;
  StreamKPartition part_{};
};

}  // namespace tilepipe
