// Host tests of GroupedRaster: every tile of the grid gets exactly one block, for grids whose
// row count is and is not a multiple of the group height; and of tile_origin: edge tiles move
// back inside D only where allowed, and every element of D is stored by exactly one tile.

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

namespace {

// Along one dimension of `extent` elements in tiles of `Tile`: each element is stored (lies in
// [origin + skip, origin + Tile) and inside the extent) by exactly one tile, every tile's origin
// is a multiple of the granule, and a tile reaches past the extent only where it may not move.
template <int Tile, int Granule>
void check_origins(int extent) {
  const int tiles = (extent + Tile - 1) / Tile;
  std::vector<int> stores(extent, 0);
  for (int t = 0; t < tiles; ++t) {
    const tilepipe::TileOrigin o =
        tilepipe::tile_origin<Tile, 64, Granule>(tilepipe::TileCoord{t, 0}, extent, 64);
    ASSERT_GE(o.m0, 0);
    ASSERT_GE(o.skip_m, 0);
    ASSERT_EQ(o.m0 + o.skip_m, t * Tile) << "extent " << extent << ", tile " << t;
    if (Granule > 0) ASSERT_EQ(o.m0 % Granule, 0);
    const int over = t * Tile + Tile - extent;
    const bool movable = Granule > 0 && over > 0 && extent >= Tile && over % Granule == 0;
    ASSERT_EQ(o.skip_m, movable ? over : 0) << "extent " << extent << ", tile " << t;
    ASSERT_EQ(o.skip_m, tilepipe::skipped_before(o.m0, Tile))
        << "extent " << extent << ", tile " << t;
    for (int i = o.m0 + o.skip_m; i < o.m0 + Tile && i < extent; ++i) ++stores[i];
  }
  for (int i = 0; i < extent; ++i)
    ASSERT_EQ(stores[i], 1) << "extent " << extent << ", element " << i;
}

}  // namespace

TEST(TileOrigin, EachElementStoredOnce) {
  for (int extent = 1; extent <= 700; ++extent) {
    check_origins<64, 8>(extent);
    check_origins<128, 8>(extent);
    check_origins<256, 16>(extent);
    check_origins<128, 0>(extent);
  }
}

TEST(TileOrigin, MovesOnlyTheEdgeTile) {
  // 1000 x 3000 in 128 x 256 tiles (16-bit, granule 8): the last tile row moves back by 24 rows,
  // the last tile column by 72 columns; the others stay.
  using tilepipe::TileCoord;
  constexpr auto origin = tilepipe::tile_origin<128, 256, 8>;
  const tilepipe::TileOrigin last = origin(TileCoord{7, 11}, 1000, 3000);
  EXPECT_EQ(last.m0, 1000 - 128);
  EXPECT_EQ(last.skip_m, 24);
  EXPECT_EQ(last.n0, 3000 - 256);
  EXPECT_EQ(last.skip_n, 72);
  const tilepipe::TileOrigin inner = origin(TileCoord{6, 10}, 1000, 3000);
  EXPECT_EQ(inner.m0, 768);
  EXPECT_EQ(inner.n0, 2560);
  EXPECT_EQ(inner.skip_m + inner.skip_n, 0);
  // 1001 rows: a move of 23 is not a multiple of 8, so the tile stays and is masked.
  EXPECT_EQ(origin(TileCoord{7, 0}, 1001, 3000).skip_m, 0);
  // Fewer rows than a tile: nothing to move back to.
  EXPECT_EQ(origin(TileCoord{0, 0}, 120, 3000).skip_m, 0);
  // Granule 0: never.
  EXPECT_EQ((tilepipe::tile_origin<128, 256, 0>(TileCoord{7, 11}, 1000, 3000).skip_n), 0);
  EXPECT_EQ((tilepipe::move_granule<signed char, signed char, float>()), 16);
  EXPECT_EQ((tilepipe::move_granule<short, short, float>()), 8);
  EXPECT_EQ((tilepipe::move_granule<float, float, float>()), 4);
}
