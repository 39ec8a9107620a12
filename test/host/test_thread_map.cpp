// Host tests of TileThreadMap: every chunk of a tile is copied exactly once, and each 8-thread
// phase of a warp writes one whole 128-byte line of the swizzled tile (no bank conflicts).

#include <gtest/gtest.h>

#include <set>
#include <vector>

#include <tilepipe/layout/swizzled_tile.cuh>
#include <tilepipe/layout/thread_map.cuh>

namespace {

template <int Rows, int Cols, int Threads>
void check_map() {
  using Map = tilepipe::TileThreadMap<Rows, Cols, Threads>;
  using L = tilepipe::SwizzledTileLayout<Rows, Cols>;
  SCOPED_TRACE(testing::Message() << "tile " << Rows << " x " << Cols << ", " << Threads << " threads");
  std::vector<int> hits(Rows * Cols, 0);
  int chunks = 0;
  for (int t = 0; t < Threads; ++t)
    for (int it = 0; it < Map::kIterations; ++it) {
      if (!Map::valid(t, it)) continue;
      const int r = Map::row(t, it), c = Map::col(t, it);
      ASSERT_GE(r, 0);
      ASSERT_LT(r, Rows);
      ASSERT_EQ(c % 8, 0);
      ASSERT_LT(c, Cols);
      for (int e = 0; e < 8; ++e) ++hits[r * Cols + c + e];
      ++chunks;
    }
  EXPECT_EQ(chunks, Rows * Cols / 8);
  for (int h : hits) ASSERT_EQ(h, 1);

  // In each iteration, lanes 8p..8p+7 of a warp issue one phase of 16-byte shared stores.
  for (int it = 0; it < Map::kIterations; ++it)
    for (int t0 = 0; t0 < Threads; t0 += 8) {
      std::set<int> groups;
      int active = 0;
      for (int t = t0; t < t0 + 8; ++t) {
        if (!Map::valid(t, it)) continue;
        ++active;
        groups.insert(L::chunk_offset(Map::row(t, it), Map::col(t, it) / 8) & 7);
      }
      EXPECT_EQ(static_cast<int>(groups.size()), active) << "iteration " << it << ", threads " << t0;
    }

  // kRowStrided: each iteration moves a thread by kRowsPerIteration rows in the same column, and
  // (with a whole swizzle period per iteration) by exactly Threads chunks in shared memory, which
  // is what AsyncTileLoader's fast path assumes.
  if (Map::kRowStrided) {
    for (int t = 0; t < Threads; ++t)
      for (int it = 0; it < Map::kIterations; ++it) {
        ASSERT_EQ(Map::row(t, it), Map::row(t, 0) + it * Map::kRowsPerIteration);
        ASSERT_EQ(Map::col(t, it), Map::col(t, 0));
        if (L::is_translation(Threads)) {
          ASSERT_EQ(L::chunk_offset(Map::linear_chunk(t, it)),
                    L::chunk_offset(Map::linear_chunk(t, 0)) + it * Threads);
        }
      }
  }

  // Consecutive threads read consecutive 16-byte pieces of a row (coalesced global reads).
  for (int t = 0; t + 1 < Threads; ++t)
    if (Map::valid(t + 1, 0) && Map::row(t, 0) == Map::row(t + 1, 0)) {
      EXPECT_EQ(Map::col(t + 1, 0), Map::col(t, 0) + 8);
    }
}

}  // namespace

TEST(TileThreadMap, EvenlyDividedTiles) {
  check_map<128, 32, 128>();
  check_map<128, 32, 256>();
  check_map<256, 32, 256>();
  check_map<64, 64, 128>();
  check_map<32, 128, 128>();
  check_map<32, 256, 256>();
  check_map<16, 64, 128>();
  static_assert(tilepipe::TileThreadMap<256, 32, 256>::kRowStrided, "64 rows per iteration");
  static_assert(!tilepipe::TileThreadMap<16, 16, 128>::kRowStrided, "partial iteration");
}

TEST(TileThreadMap, MoreThreadsThanChunks) {
  check_map<16, 16, 128>();  // 32 chunks, 128 threads: most threads idle
  check_map<32, 32, 256>();
  static_assert(!tilepipe::TileThreadMap<16, 16, 128>::kEvenlyDivided, "partial iteration");
}

TEST(TileThreadMap, UnevenIterations) {
  check_map<48, 32, 128>();  // 192 chunks over 128 threads: 2 iterations, the second half full
  static_assert(tilepipe::TileThreadMap<48, 32, 128>::kIterations == 2, "two iterations");
}
