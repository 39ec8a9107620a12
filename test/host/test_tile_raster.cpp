// Host tests of GroupedRaster: every tile of the grid gets exactly one block, for grids whose
// row count is and is not a multiple of the group height.

#include <gtest/gtest.h>

#include <vector>

#include <tilepipe/layout/tile_raster.cuh>

namespace {

template <int GroupM>
void check_bijection(int tiles_m, int tiles_n) {
  std::vector<int> hits(tiles_m * tiles_n, 0);
  for (int b = 0; b < tiles_m * tiles_n; ++b) {
    const tilepipe::TileCoord t = tilepipe::GroupedRaster<GroupM>::tile_of(b, tiles_m, tiles_n);
    ASSERT_GE(t.m, 0);
    ASSERT_LT(t.m, tiles_m);
    ASSERT_GE(t.n, 0);
    ASSERT_LT(t.n, tiles_n);
    ++hits[t.m * tiles_n + t.n];
  }
  for (int h : hits) ASSERT_EQ(h, 1) << tiles_m << " x " << tiles_n << " tiles, group " << GroupM;
}

}  // namespace

TEST(GroupedRaster, CoversEveryTileOnce) {
  for (int tm : {1, 2, 7, 8, 9, 16, 33})
    for (int tn : {1, 3, 8, 32}) {
      check_bijection<1>(tm, tn);
      check_bijection<4>(tm, tn);
      check_bijection<8>(tm, tn);
    }
}

TEST(GroupedRaster, ConsecutiveBlocksStayInAGroup) {
  // The first 8 blocks of a 32 x 32 grid walk down one column of a group of 8 tile rows.
  for (int b = 0; b < 8; ++b) {
    const tilepipe::TileCoord t = tilepipe::GroupedRaster<8>::tile_of(b, 32, 32);
    EXPECT_EQ(t.m, b);
    EXPECT_EQ(t.n, 0);
  }
  const tilepipe::TileCoord t = tilepipe::GroupedRaster<8>::tile_of(8, 32, 32);
  EXPECT_EQ(t.m, 0);
  EXPECT_EQ(t.n, 1);
}
