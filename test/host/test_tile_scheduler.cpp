// Host tests of PersistentTileScheduler: the work items map one to one onto the tiles of every
// batch, batch after batch, in the raster's order within a batch; the blocks of a persistent grid
// together walk every item exactly once; and the grid is never larger than the work.

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include <tilepipe/layout/tile_raster.cuh>
#include <tilepipe/layout/tile_scheduler.cuh>

namespace {

// Grid shapes that stress the grouped raster: 1s, primes, multiples of the group heights, and
// counts just off them (a short last group).
const int kTileCounts[] = {1, 2, 3, 7, 8, 9, 13, 16, 17, 31, 33};
const int kBatchCounts[] = {1, 2, 3, 5};
constexpr int kH100Sms = 132;

template <int GroupM>
void check_bijection_and_batch_order(int tiles_m, int tiles_n, int batches) {
  using Raster = tilepipe::GroupedRaster<GroupM>;
  const tilepipe::PersistentTileScheduler<Raster> sched(tiles_m, tiles_n, batches);
  SCOPED_TRACE(testing::Message() << tiles_m << " x " << tiles_n << " tiles, " << batches
                                  << " batches, group " << GroupM);
  const long long per_batch = static_cast<long long>(tiles_m) * tiles_n;
  ASSERT_EQ(sched.items(), per_batch * batches);

  std::vector<int> hits(static_cast<std::size_t>(sched.items()), 0);
  int last_batch = 0;
  for (long long item = 0; item < sched.items(); ++item) {
    const tilepipe::WorkTile t = sched.tile_of(item);
    ASSERT_GE(t.m, 0);
    ASSERT_LT(t.m, tiles_m);
    ASSERT_GE(t.n, 0);
    ASSERT_LT(t.n, tiles_n);
    ASSERT_GE(t.batch, 0);
    ASSERT_LT(t.batch, batches);
    // A block moves to the next batch's operands only when the last one is done with, so the
    // blocks running together share one batch's A and B in L2; batches never interleave.
    ASSERT_GE(t.batch, last_batch) << "item " << item;
    last_batch = t.batch;
    ASSERT_EQ(t.batch, item / per_batch) << "item " << item;
    // Inside a batch the order is the raster's, so the L2 grouping of the non-persistent kernel
    // carries over.
    const tilepipe::TileCoord r =
        Raster::tile_of(static_cast<int>(item - t.batch * per_batch), tiles_m, tiles_n);
    ASSERT_EQ(t.m, r.m) << "item " << item;
    ASSERT_EQ(t.n, r.n) << "item " << item;
    ++hits[static_cast<std::size_t>((t.batch * per_batch) + t.m * tiles_n + t.n)];
  }
  for (std::size_t i = 0; i < hits.size(); ++i) ASSERT_EQ(hits[i], 1) << "tile " << i;
}

// The persistent walk: block b of G takes items b, b + G, ... Every (tile, batch) must be computed
// by exactly one block, or an output tile is lost or written twice.
template <int GroupM>
void check_persistent_walk(int tiles_m, int tiles_n, int batches, int sms, int blocks_per_sm) {
  const tilepipe::PersistentTileScheduler<tilepipe::GroupedRaster<GroupM>> sched(tiles_m, tiles_n,
                                                                                 batches);
  SCOPED_TRACE(testing::Message() << tiles_m << " x " << tiles_n << " tiles, " << batches
                                  << " batches, group " << GroupM << ", " << sms << " SMs x "
                                  << blocks_per_sm);
  const int grid = sched.grid_size(sms, blocks_per_sm);
  ASSERT_GE(grid, 1);
  ASSERT_LE(grid, sched.items());  // an idle block would still pay for its prologue
  ASSERT_LE(grid, sms * blocks_per_sm);
  // Equality with the smaller bound: a smaller grid would leave SMs idle.
  ASSERT_EQ(grid, sched.items() < sms * blocks_per_sm ? sched.items() : sms * blocks_per_sm);

  std::vector<int> hits(static_cast<std::size_t>(sched.items()), 0);
  long long fewest = sched.items(), most = 0;
  for (int block = 0; block < grid; ++block) {
    long long walked = 0;
    for (long long item = block; item < sched.items(); item += grid, ++walked) {
      const tilepipe::WorkTile t = sched.tile_of(item);
      ++hits[static_cast<std::size_t>(static_cast<long long>(t.batch) * tiles_m * tiles_n +
                                      t.m * tiles_n + t.n)];
    }
    fewest = walked < fewest ? walked : fewest;
    most = walked > most ? walked : most;
  }
  for (std::size_t i = 0; i < hits.size(); ++i) ASSERT_EQ(hits[i], 1) << "tile " << i;
  // The round-robin split is as even as it can be: the last wave is the only ragged one.
  EXPECT_LE(most - fewest, 1);
  EXPECT_GE(fewest, 1);
}

}  // namespace

TEST(PersistentTileScheduler, ItemsMapOntoTilesAndBatchesOnce) {
  for (int tm : kTileCounts)
    for (int tn : kTileCounts)
      for (int b : kBatchCounts) {
        check_bijection_and_batch_order<1>(tm, tn, b);
        check_bijection_and_batch_order<8>(tm, tn, b);
        check_bijection_and_batch_order<16>(tm, tn, b);
      }
}

TEST(PersistentTileScheduler, PersistentBlocksCoverEveryItemOnce) {
  for (int tm : kTileCounts)
    for (int tn : kTileCounts)
      for (int b : kBatchCounts) {
        check_persistent_walk<1>(tm, tn, b, kH100Sms, 1);
        check_persistent_walk<8>(tm, tn, b, kH100Sms, 1);
        check_persistent_walk<16>(tm, tn, b, kH100Sms, 1);
      }
  // Two blocks per SM, and an SM count (the H100 PCIe's 114) that divides nothing here.
  check_persistent_walk<8>(33, 31, 5, kH100Sms, 2);
  check_persistent_walk<8>(17, 13, 3, 114, 1);
  check_persistent_walk<16>(9, 9, 2, 114, 2);
}

TEST(PersistentTileScheduler, GridSizeIsBoundedByTheWork) {
  using Sched = tilepipe::PersistentTileScheduler<tilepipe::GroupedRaster<8>>;
  EXPECT_EQ(Sched(1, 1, 1).grid_size(kH100Sms), 1);
  EXPECT_EQ(Sched(11, 12, 1).grid_size(kH100Sms), 132);  // exactly one wave
  EXPECT_EQ(Sched(7, 19, 1).grid_size(kH100Sms), 132);   // 133 items: one SM gets two
  EXPECT_EQ(Sched(8, 8, 2).grid_size(kH100Sms), 128);    // fewer items than SMs
  EXPECT_EQ(Sched(8, 8, 2).grid_size(kH100Sms, 2), 128);
  EXPECT_EQ(Sched(16, 16, 1).grid_size(kH100Sms, 2), 256);
  // No work still launches one block (a zero-sized grid is a launch error); its walk is empty.
  EXPECT_EQ(Sched(4, 4, 0).items(), 0);
  EXPECT_EQ(Sched(4, 4, 0).grid_size(kH100Sms), 1);
}

TEST(PersistentTileScheduler, ItemCountsBeyondInt) {
  // 2048 x 2048 tiles x 1024 batches = 2^32 items: an item index in int would wrap to 0 and send
  // the last blocks back to the first batch.
  using Raster = tilepipe::GroupedRaster<8>;
  const tilepipe::PersistentTileScheduler<Raster> sched(2048, 2048, 1024);
  ASSERT_EQ(sched.items(), 1LL << 32);
  EXPECT_EQ(sched.grid_size(kH100Sms), kH100Sms);
  const long long per_batch = 2048LL * 2048;
  for (long long item : {per_batch - 1, per_batch, (1LL << 31) + 5, (1LL << 32) - 1}) {
    const tilepipe::WorkTile t = sched.tile_of(item);
    EXPECT_EQ(t.batch, item / per_batch) << item;
    const tilepipe::TileCoord r = Raster::tile_of(static_cast<int>(item % per_batch), 2048, 2048);
    EXPECT_EQ(t.m, r.m) << item;
    EXPECT_EQ(t.n, r.n) << item;
  }
  const tilepipe::WorkTile last = sched.tile_of(sched.items() - 1);
  EXPECT_EQ(last.batch, 1023);
}

TEST(PersistentTileScheduler, IsConstexpr) {
  using Sched = tilepipe::PersistentTileScheduler<tilepipe::GroupedRaster<8>>;
  static_assert(Sched(3, 5, 2).items() == 30, "tiles x batches");
  static_assert(Sched(3, 5, 2).tile_of(15).batch == 1, "item 15 starts the second batch");
  static_assert(Sched(3, 5, 2).tile_of(16).m == 1, "then walks down the first column");
  static_assert(Sched(3, 5, 2).grid_size(132) == 30, "no more blocks than items");
  SUCCEED();
}

// ---- WorkScheduler: the units of data-parallel, split-K and stream-K walks --------------------

namespace {

using Work = tilepipe::WorkScheduler<tilepipe::GroupedRaster<8>>;

// Every k-tile of every item is computed by exactly one unit; a partial item's units are its
// pieces 0 .. pieces - 1 in k order, each with the slot `piece_slot(first_slot, piece)`, and no two
// partial units share a slot; a whole unit spans its item's K.
void check_units(const Work& w, int tiles_m, int tiles_n, int batches) {
  SCOPED_TRACE(testing::Message() << tiles_m << " x " << tiles_n << " tiles, " << batches
                                  << " batches, " << w.k_tiles() << " k-tiles, kind "
                                  << static_cast<int>(w.kind()) << ", " << w.workers()
                                  << " workers, " << w.splits() << " splits");
  const long long items = w.items();
  const int kt = w.k_tiles();
  ASSERT_EQ(items, 1LL * tiles_m * tiles_n * batches);
  std::vector<int> hits(static_cast<std::size_t>(items * (kt > 0 ? kt : 1)), 0);
  std::vector<std::vector<tilepipe::WorkUnit>> of_item(static_cast<std::size_t>(items));
  std::vector<int> slot_used(static_cast<std::size_t>(w.slots()), 0);
  long long total = 0;
  for (int worker = 0; worker < w.workers(); ++worker) {
    ASSERT_GE(w.units(worker), w.kind() == tilepipe::Decomposition::kStreamK ? 0 : 1)
        << "worker " << worker << " is idle";
    for (int j = 0; j < w.units(worker); ++j) {
      const tilepipe::WorkUnit u = w.unit(worker, j);
      ++total;
      ASSERT_GE(u.item, 0);
      ASSERT_LT(u.item, items);
      const tilepipe::WorkTile t = u.tile;
      ASSERT_EQ(t.batch, u.item / (1LL * tiles_m * tiles_n));
      ASSERT_LE(0, u.k_begin);
      ASSERT_LE(u.k_begin, u.k_end);
      ASSERT_LE(u.k_end, kt);
      ASSERT_TRUE(kt == 0 || u.k_begin < u.k_end) << "an empty unit";
      for (int k = u.k_begin; k < u.k_end; ++k) ++hits[static_cast<std::size_t>(u.item * kt + k)];
      if (kt == 0) ++hits[static_cast<std::size_t>(u.item)];
      of_item[static_cast<std::size_t>(u.item)].push_back(u);
      if (u.pieces > 1) {
        ASSERT_GE(u.slot, 0);
        ASSERT_LT(u.slot, w.slots());
        ASSERT_EQ(slot_used[static_cast<std::size_t>(u.slot)]++, 0) << "slot " << u.slot;
        ASSERT_EQ(w.piece_slot(u.first_slot, u.piece), u.slot);
        ASSERT_GE(w.counter_of(u.item), 0);
        ASSERT_LT(w.counter_of(u.item), w.counters());
      } else {
        ASSERT_EQ(u.k_begin, 0);
        ASSERT_EQ(u.k_end, kt);
      }
    }
  }
  for (std::size_t i = 0; i < hits.size(); ++i) ASSERT_EQ(hits[i], 1) << "k-tile " << i;
  for (auto& units : of_item) {
    std::sort(
        units.begin(), units.end(),
        [](const tilepipe::WorkUnit& a, const tilepipe::WorkUnit& b) { return a.piece < b.piece; });
    for (std::size_t p = 0; p < units.size(); ++p) {
      ASSERT_EQ(units[p].pieces, static_cast<int>(units.size()));
      ASSERT_EQ(units[p].piece, static_cast<int>(p));
      ASSERT_EQ(units[p].first_slot, units[0].first_slot);
      if (p > 0) {
        ASSERT_EQ(units[p].k_begin, units[p - 1].k_end);
      }
    }
  }
  // Split-K deals out slices item after item: the slices of one item run on neighbouring workers.
  if (w.kind() == tilepipe::Decomposition::kSplitK) {
    for (int worker = 1; worker < w.workers() && worker < w.splits(); ++worker)
      ASSERT_EQ(w.unit(worker, 0).item, w.unit(0, 0).item);
  }
  EXPECT_GE(total, items);
}

const int kWorkTiles[] = {1, 2, 3, 7, 12};
const int kKTiles[] = {0, 1, 2, 5, 64, 513};

}  // namespace

TEST(WorkScheduler, DataParallelCoversEveryKTileOnce) {
  for (int tm : kWorkTiles)
    for (int tn : kWorkTiles)
      for (int kt : kKTiles)
        for (int g : {1, 7, 66, 132}) {
          const Work w = Work::data_parallel(tm, tn, 2, kt, g);
          EXPECT_EQ(w.kind(), tilepipe::Decomposition::kDataParallel);
          EXPECT_EQ(w.slots(), 0);
          check_units(w, tm, tn, 2);
        }
}

TEST(WorkScheduler, SplitKCoversEveryKTileOnce) {
  for (int tm : kWorkTiles)
    for (int tn : kWorkTiles)
      for (int kt : kKTiles)
        for (int s : {1, 2, 3, 4, 16})
          for (int g : {1, 7, 66, 132}) {
            const Work w = Work::split_k(tm, tn, 1, kt, s, g);
            const int expect = s < kt ? s : (kt > 0 ? kt : 1);
            EXPECT_EQ(w.splits(), expect);
            EXPECT_EQ(w.kind(), expect > 1 ? tilepipe::Decomposition::kSplitK
                                           : tilepipe::Decomposition::kDataParallel);
            EXPECT_LE(w.workers(), w.items() * w.splits());
            check_units(w, tm, tn, 1);
          }
}

// GemmKernelSm90's split-K in clusters (reduce_in_clusters) launches one worker per unit, a
// tile's slices a cluster of `splits` consecutive blocks, and finds a slice's slot without the
// scheduler's divisions: the first slice's slot is the block's index less its rank in the
// cluster (the index modulo `splits`), and slice r's is that plus r.
TEST(WorkScheduler, SplitKOneUnitPerWorkerSlotsFollowTheBlockIndex) {
  for (int tm : kWorkTiles)
    for (int tn : kWorkTiles)
      for (int s : {2, 3, 4, 8}) {
        const int kt = 16;
        const long long units = 1LL * tm * tn * s;
        const Work w = Work::split_k(tm, tn, 1, kt, s, static_cast<int>(units));
        ASSERT_EQ(w.workers(), units);
        for (int worker = 0; worker < w.workers(); ++worker) {
          ASSERT_EQ(w.units(worker), 1);
          const tilepipe::WorkUnit u = w.unit(worker, 0);
          const int rank = worker % s;
          ASSERT_EQ(u.piece, rank) << "worker " << worker;
          ASSERT_EQ(u.first_slot, worker - rank) << "worker " << worker;
          for (int r = 0; r < s; ++r)
            ASSERT_EQ(w.piece_slot(worker - rank, r), w.unit(worker - rank + r, 0).slot);
        }
      }
}

TEST(WorkScheduler, StreamKCoversEveryKTileOnce) {
  for (int tm : kWorkTiles)
    for (int tn : kWorkTiles)
      for (int kt : kKTiles)
        for (int g : {1, 5, 66, 132})
          for (int chunks : {0, 2})
            check_units(Work::stream_k(tm, tn, 3, kt, g, chunks), tm, tn, 3);
  // Few tiles, long K: 36 cluster items of 512 k-tiles on 66 workers are all shared.
  const Work w = Work::stream_k(6, 6, 1, 512, 66);
  EXPECT_EQ(w.kind(), tilepipe::Decomposition::kStreamK);
  EXPECT_EQ(w.workers(), 66);
  EXPECT_EQ(w.counters(), 36);
  EXPECT_EQ(w.slots(), 2 * 66);
  // Whole waves stay whole: 132 tiles on 66 workers need no slot.
  EXPECT_EQ(Work::stream_k(12, 11, 1, 64, 66).kind(), tilepipe::Decomposition::kDataParallel);
}
