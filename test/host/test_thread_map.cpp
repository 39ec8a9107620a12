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
  SCOPED_TRACE(testing::Message() << "tile " << Rows << " x " << Cols << ", " << Threads
                                  << " threads");
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
      EXPECT_EQ(static_cast<int>(groups.size()), active)
          << "iteration " << it << ", threads " << t0;
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

namespace {

// TransposeThreadMap: every element of a Rows x Cols f32 source tile is copied exactly once; a
// warp's copy reads whole 32-byte sectors (8 consecutive columns of 4 rows) and writes 32
// different banks of the transposed swizzled tile (Cols x Rows); and each copy lands a fixed
// distance from the thread's first, the same for every thread (TransposingTileLoader keeps one
// offset where this holds).
template <int Rows, int Cols, int Threads>
void check_transpose_map(bool expect_translation) {
  using Map = tilepipe::TransposeThreadMap<Rows, Cols, Threads>;
  using L = tilepipe::SwizzledTileLayout<Cols, Rows, 4>;  // the transposed shared tile
  SCOPED_TRACE(testing::Message() << "source tile " << Rows << " x " << Cols << ", " << Threads
                                  << " threads");
  std::vector<int> hits(Rows * Cols, 0);
  for (int t = 0; t < Threads; ++t)
    for (int it = 0; it < Map::kIterations; ++it) {
      const int r = Map::row(t, it), c = Map::col(t, it);
      ASSERT_GE(r, 0);
      ASSERT_LT(r, Rows);
      ASSERT_GE(c, 0);
      ASSERT_LT(c, Cols);
      ++hits[r * Cols + c];
    }
  for (int h : hits) ASSERT_EQ(h, 1);

  bool translates = true;
  for (int it = 0; it < Map::kIterations; ++it)
    for (int w = 0; w < Threads / 32; ++w) {
      std::set<int> banks, sectors;
      for (int lane = 0; lane < 32; ++lane) {
        const int t = 32 * w + lane, r = Map::row(t, it), c = Map::col(t, it);
        banks.insert(L::offset(c, r) % 32);
        sectors.insert((r * Cols + c) / 8);  // 32-byte pieces of the source tile
        const int d = L::offset(c, r) - L::offset(Map::col(t, 0), Map::row(t, 0));
        if (d !=
            L::offset(Map::col(0, it), Map::row(0, it)) - L::offset(Map::col(0, 0), Map::row(0, 0)))
          translates = false;
      }
      EXPECT_EQ(banks.size(), 32u) << "iteration " << it << ", warp " << w;
      EXPECT_EQ(sectors.size(), 4u) << "iteration " << it << ", warp " << w;
    }
  EXPECT_EQ(translates, expect_translation);
}

}  // namespace

TEST(TransposeThreadMap, SimtTiles) {
  check_transpose_map<128, 32, 256>(true);  // the f32 default tile's A and B: 8 warps
  check_transpose_map<64, 32, 256>(true);   // bands of 32 rows: 8 whole chunks of the shared row
  check_transpose_map<128, 16, 256>(true);
  check_transpose_map<64, 32, 128>(false);   // 4 warps: bands of 16 rows, half a swizzle group,
  check_transpose_map<128, 64, 128>(false);  // whose XOR changes from band to band
  static_assert(tilepipe::TransposeThreadMap<128, 32, 256>::kIterations == 16,
                "16 copies a thread");
}
