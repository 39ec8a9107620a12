// Host tests of PersistentTileScheduler: the work items map one to one onto the tiles of every
// batch, batch after batch, in the raster's order within a batch; the blocks of a persistent grid
// together walk every item exactly once; and the grid is never larger than the work.

#include <gtest/gtest.h>

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
