// Host tests of TransposeTile: the layout is a bijection that keeps 16-byte chunks whole, and
// both of the copy's shared-memory phases are free of bank conflicts: a warp's column writes
// (thread t writes element (4 (t % 8) + j, 4 w + t / 8) for j = 0..3) hit 32 distinct banks, and
// a quarter warp's 16-byte row reads (8 threads, chunks 0..7 of one row) 8 distinct chunks.

#include <gtest/gtest.h>

#include <set>
#include <vector>

#include <tilepipe/layout/transpose_tile.cuh>

namespace {

using tilepipe::TransposeTile;
constexpr int kN = TransposeTile::kExtent;

TEST(TransposeTile, IsABijectionKeepingChunksWhole) {
  std::vector<int> hits(TransposeTile::kElements, 0);
  for (int row = 0; row < kN; ++row)
    for (int k = 0; k < kN; ++k) {
      const int o = TransposeTile::offset(row, k);
      ASSERT_GE(o, 0);
      ASSERT_LT(o, TransposeTile::kElements);
      ++hits[o];
      // A chunk's four floats are consecutive, from a 16-byte boundary, within the row.
      const int first = TransposeTile::offset(row, k / 4 * 4);
      EXPECT_EQ(first % 4, 0);
      EXPECT_EQ(o, first + k % 4);
      EXPECT_EQ(o / kN, row);
    }
  for (int h : hits) EXPECT_EQ(h, 1);
}

TEST(TransposeTile, ColumnWritesOfAWarpHitEveryBank) {
  for (int warp = 0; warp < kN / 4; ++warp)
    for (int j = 0; j < 4; ++j) {
      std::set<int> banks;
      for (int t = 0; t < 32; ++t)
        banks.insert(TransposeTile::offset(4 * (t % 8) + j, 4 * warp + t / 8) % 32);
      EXPECT_EQ(banks.size(), 32u) << "warp " << warp << ", scalar " << j;
    }
}

TEST(TransposeTile, RowReadsOfAQuarterWarpHitDistinctChunks) {
  for (int row = 0; row < kN; ++row) {
    std::set<int> chunks;
    for (int q = 0; q < 8; ++q) chunks.insert(TransposeTile::offset(row, 4 * q) / 4 % 8);
    EXPECT_EQ(chunks.size(), 8u) << "row " << row;
  }
}

}  // namespace
