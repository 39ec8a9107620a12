#pragma once
//! \file
//! PersistentTileScheduler: which output tiles a persistent block computes, and in what order.
//!
//! A persistent kernel launches about one block per SM; block `b` of `G` takes work items
//! `b, b + G, b + 2G, ...` of the `tiles_m * tiles_n * batches` items. Items run batch by batch,
//! and within a batch in the order of `Raster` (a grouped order, so that the blocks running at
//! the same time share A and B tiles through L2). Every role of a block (the producer warp and
//! the consumer warpgroups) walks the same sequence, so they agree without talking.

#include "../detail/macros.cuh"
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

}  // namespace tilepipe
