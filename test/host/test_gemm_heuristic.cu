// Host tests of split-K's slicing and of GemmAuto's configuration rule (GemmAutoHeuristic): the
// choices on the benchmark's shapes, monotonicity, and that no choice leaves a K slice empty.
// No GPU is needed: select() is a pure function of the shape and the SM count.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <tilepipe/gemm/fp8_schedule.cuh>
#include <tilepipe/gemm/gemm_heuristic.cuh>

using tilepipe::GemmAutoConfig;
using tilepipe::GemmAutoHeuristic;
using tilepipe::Layout;
using Tile = GemmAutoConfig::Tile;

namespace {

constexpr int kH200Sms = 132;
constexpr int kSmallTileK = tilepipe::GemmAutoSmallPolicy::Tile::kK;

GemmAutoConfig select(std::int64_t m, std::int64_t n, std::int64_t k, int sms = kH200Sms,
                      std::int64_t batch = 1) {
  return GemmAutoHeuristic::select(m, n, k, batch, sms);
}

}  // namespace

TEST(SplitKSlices, EvenNeverEmptyCoveringK) {
  for (int k = 0; k <= 3000; ++k)
    for (int split = -1; split <= 40; ++split)
      for (int tile_k : {32, 64}) {
        const tilepipe::SplitKSlices s = tilepipe::split_k_slices(k, split, tile_k);
        const int k_tiles = (k + tile_k - 1) / tile_k;
        const int want = split <= 1 || k_tiles <= 1 ? 1 : std::min(split, k_tiles);
        ASSERT_EQ(s.count, want) << k << " / " << split;
        int next = 0, shortest = 1 << 30, longest = 0;
        for (int i = 0; i < s.count; ++i) {
          ASSERT_EQ(s.begin(i), next) << "slices follow each other";
          ASSERT_EQ(s.begin(i) % tile_k, 0) << "slices start on a k-tile";
          const int e = s.extent(i);
          if (k > 0)
            ASSERT_GT(e, 0) << "slice " << i << " of " << k << " / " << split << " is empty";
          if (i + 1 < s.count) {
            ASSERT_EQ(e % tile_k, 0) << "only the last slice ends inside a k-tile";
            shortest = std::min(shortest, e);
            longest = std::max(longest, e);
          }
          next += e;
        }
        ASSERT_EQ(next, k) << "the slices cover K";
        if (s.count > 2) ASSERT_LE(longest - shortest, tile_k) << "as even as whole k-tiles allow";
      }
}

TEST(SplitKSlices, Examples) {
  const tilepipe::SplitKSlices a = tilepipe::split_k_slices(4096, 8, 64);
  EXPECT_EQ(a.count, 8);
  EXPECT_EQ(a.begin(7), 7 * 512);
  EXPECT_EQ(a.extent(7), 512);
  // 10 k-tiles in 4 slices: 3 + 3 + 2 + 2, the last ending at K = 600.
  const tilepipe::SplitKSlices b = tilepipe::split_k_slices(600, 4, 64);
  EXPECT_EQ(b.count, 4);
  EXPECT_EQ(b.extent(0), 192);
  EXPECT_EQ(b.extent(1), 192);
  EXPECT_EQ(b.extent(2), 128);
  EXPECT_EQ(b.begin(3), 512);
  EXPECT_EQ(b.extent(3), 88);
  EXPECT_EQ(tilepipe::split_k_slices(3 * 64, 16, 64).count, 3);  // at most one slice a k-tile
  EXPECT_EQ(tilepipe::split_k_slices(64, 4, 64).count, 1);       // one k-tile cannot be split
  EXPECT_EQ(tilepipe::split_k_slices(0, 4, 64).count, 1);        // K = 0: D = beta * C
  EXPECT_EQ(tilepipe::split_k_slices(0, 4, 64).extent(0), 0);
  EXPECT_EQ(tilepipe::split_k_slices(1, 4, 64).count, 1);
  EXPECT_EQ(tilepipe::split_k_slices(1000, 1, 64).extent(0), 1000);
}

// The benchmark's shapes on an H200 (132 SMs). Large problems keep the default tile; the small
// and skinny ones get the Small tile with split-K where K is long enough.
TEST(GemmAutoHeuristic, BenchmarkShapesOnH200) {
  struct Case {
    int m, n, k;
    GemmAutoConfig want;
  };
  const Case cases[] = {
      {512, 512, 512, {Tile::kSmall, 1}},     // 64 Small tiles, 8 k-tiles: too short to split
      {1024, 1024, 1024, {Tile::kSmall, 1}},  // 256 Small tiles; 16 k-tiles: too short to split
      {2048, 2048, 2048, {Tile::kLarge, 1}},  // 128 Large tiles: one wave
      {4096, 4096, 4096, {Tile::kLarge, 1}},
      {8192, 8192, 8192, {Tile::kLarge, 1}},
      {16384, 16384, 16384, {Tile::kLarge, 1}},
      {16, 4096, 4096, {Tile::kSmall, 4}},   // 64 Small tiles x 4 (64 k-tiles: 16 a slice)
      {128, 4096, 4096, {Tile::kSmall, 4}},  // 128 x 4
      {1024, 4096, 4096, {Tile::kLarge, 1}},
      {8192, 4096, 4096, {Tile::kLarge, 1}},
      {16, 14336, 4096, {Tile::kSmall, 4}},     // 224 x 4
      {128, 14336, 4096, {Tile::kMedium, 1}},   // 112 Medium tiles: 0.85 of a wave
      {1024, 14336, 4096, {Tile::kMedium, 1}},  // 448 Large tiles = 3.39 waves: Medium
      {8192, 14336, 4096, {Tile::kLarge, 1}},
      {16, 4096, 14336, {Tile::kSmall, 8}},
      {128, 4096, 14336, {Tile::kSmall, 4}},
      {1024, 4096, 14336, {Tile::kLarge, 1}},
      {8192, 4096, 14336, {Tile::kLarge, 1}},
  };
  for (const Case& c : cases) {
    const GemmAutoConfig got = select(c.m, c.n, c.k);
    EXPECT_EQ(got, c.want) << c.m << "x" << c.n << "x" << c.k << ": got " << got.name() << ", want "
                           << c.want.name();
  }
  // Names, as the benchmark prints them.
  EXPECT_EQ(select(16, 4096, 4096).name(), "64x64x64/w32x32/s3,splitK=4");
  EXPECT_EQ(select(4096, 4096, 4096).name(), "128x256x64/w64x64/s3");
  EXPECT_EQ((GemmAutoConfig{Tile::kMedium, 1}.name()), "128x128x32/w64x64/s4");
}

TEST(GemmAutoHeuristic, MediumBetweenLargeAndSmall) {
  // 512 x 4096: 64 Large tiles (half a wave) but 128 Medium ones.
  EXPECT_EQ(select(512, 4096, 4096), (GemmAutoConfig{Tile::kMedium, 1}));
  // A smaller GPU (46 SMs): 1024^3 is 32 Large tiles, 64 Medium tiles.
  EXPECT_EQ(select(1024, 1024, 1024, 46), (GemmAutoConfig{Tile::kMedium, 1}));
}

// Where the Large configuration runs on the Hopper tier (persistent, clusters of 2) it keeps
// the problems whose last wave is short, and runs them as stream-K over every SM:
// 1024 x 14336 x 4096 is 224 cluster items of 2 Large tiles on 66 clusters, 3.39 waves.
TEST(GemmAutoHeuristic, HopperLargeKeepsShortLastWaves) {
  using tilepipe::GemmTier;
  EXPECT_EQ(select(1024, 14336, 4096), (GemmAutoConfig{Tile::kMedium, 1}));
  EXPECT_EQ(GemmAutoHeuristic::select(1024, 14336, 4096, 1, kH200Sms, GemmTier::kHopper),
            (GemmAutoConfig{Tile::kLarge, 1, kH200Sms}));
}

// On the Hopper tier (an H100's or H200's 132 SMs), the benchmark's shapes too small for a wave
// of 128 x 256 tiles, or with M <= 128, take the Hopper tier's 64 x 128 tile (M <= 64 always) or
// 64 x 64 tile, with split-K while the slices fit one wave; ragged waves of the Large tile run
// stream-K where a wave stays whole or K is long.
TEST(GemmAutoHeuristic, HopperTilesForSmallProblems) {
  struct Case {
    int m, n, k;
    GemmAutoConfig want;
  };
  constexpr int kSk = kH200Sms;  // stream-K over every SM
  const Case cases[] = {
      {1, 8192, 8192, {Tile::kHopper64x128, 2}},     // 64 tiles: 2 slices fill a wave
      {16, 4096, 4096, {Tile::kHopper64x128, 4}},    // 32 tiles of 64 x 128: 4 slices
      {16, 14336, 4096, {Tile::kHopper64x128, 1}},   // 112 tiles: 0.85 of the SMs
      {16, 4096, 14336, {Tile::kHopper64x128, 4}},   // 32 tiles, long K
      {64, 4096, 14336, {Tile::kHopper64x128, 4}},   // M <= 64: 64 x 128
      {128, 4096, 4096, {Tile::kHopper64x64, 1}},    // 128 tiles of 64 x 64: a wave
      {128, 14336, 4096, {Tile::kHopper64x128, 1}},  // M = 128: no Large (its cluster's 2nd tile)
      {128, 28672, 4096, {Tile::kHopper64x128, 1}},
      {256, 4096, 4096, {Tile::kHopper64x128, 1}},  // 32 Large tiles, 128 of 64 x 128
      {256, 14336, 4096, {Tile::kLarge, 1, 0}},     // 56 cluster items on 66: short K, whole
      {1000, 3000, 4104, {Tile::kLarge, 1, 0}},     // 48 items on 66, short K: whole
      {1536, 1536, 32768, {Tile::kLarge, 1, kSk}},  // 36 items on 66, 512 k-tiles: stream-K
      {1024, 14336, 4096, {Tile::kLarge, 1, kSk}},  // 224 items: 3.4 waves, stream-K
      {64, 57344, 4096, {Tile::kHopper64x128, 1}},  // M <= 64 never takes the Large tile
      {1024, 1024, 1024, {Tile::kHopper64x128, 1}},
      {512, 512, 512, {Tile::kHopper64x64, 1}},  // 64 tiles of 8 k-tiles: too short to split
      {2048, 2048, 2048, {Tile::kLarge, 1, 0}},
      {1024, 4096, 4096, {Tile::kLarge, 1, 0}},
      {4096, 4096, 4096, {Tile::kLarge, 1, 0}},  // 256 items on 66: 0.97 of 4 waves
      {8192, 8192, 8192, {Tile::kLarge, 1, 0}},
  };
  for (const Case& c : cases) {
    const GemmAutoConfig got =
        GemmAutoHeuristic::select(c.m, c.n, c.k, 1, kH200Sms, tilepipe::GemmTier::kHopper);
    EXPECT_EQ(got, c.want) << c.m << "x" << c.n << "x" << c.k << ": got " << got.name() << ", want "
                           << c.want.name();
    EXPECT_EQ(got.hopper_only(), got.tile == Tile::kHopper64x128 || got.tile == Tile::kHopper64x64);
  }
  EXPECT_EQ((GemmAutoConfig{Tile::kHopper64x128, 1}.name()), "64x128x64/s6,hopper");
  EXPECT_EQ((GemmAutoConfig{Tile::kHopper64x64, 1}.name()), "64x64x64/s8,hopper");
  EXPECT_EQ((GemmAutoConfig{Tile::kHopper64x128, 1, 132}.name()),
            "64x128x64/s6,hopper,streamK=132");
  // Batches count as tiles here too; empty outputs stay on the Small tile.
  EXPECT_EQ(GemmAutoHeuristic::select(128, 1024, 4096, 8, kH200Sms, tilepipe::GemmTier::kHopper),
            (GemmAutoConfig{Tile::kHopper64x128, 1}));  // 128 tiles of 64 x 128
  EXPECT_EQ(GemmAutoHeuristic::select(0, 4096, 4096, 1, kH200Sms, tilepipe::GemmTier::kHopper),
            (GemmAutoConfig{Tile::kSmall, 1}));
}

TEST(GemmAutoHeuristic, EdgeShapes) {
  EXPECT_EQ(select(1, 1, 1), (GemmAutoConfig{Tile::kSmall, 1}));
  EXPECT_EQ(select(1, 4096, 4096), (GemmAutoConfig{Tile::kSmall, 4}));
  EXPECT_EQ(select(16, 4096, 1), (GemmAutoConfig{Tile::kSmall, 1}));
  EXPECT_EQ(select(16, 4096, 0), (GemmAutoConfig{Tile::kSmall, 1}));    // K = 0: nothing to split
  EXPECT_EQ(select(0, 4096, 4096), (GemmAutoConfig{Tile::kSmall, 1}));  // empty output
  EXPECT_EQ(select(64, 64, 1 << 20), (GemmAutoConfig{Tile::kSmall, GemmAutoHeuristic::kMaxSplitK}));
  // Batches count as tiles: 512 x 512 is 4 Large, 16 Medium and 64 Small tiles a batch.
  EXPECT_EQ(select(512, 512, 4096, kH200Sms, 4), (GemmAutoConfig{Tile::kSmall, 2}));
  EXPECT_EQ(select(512, 512, 4096, kH200Sms, 8), (GemmAutoConfig{Tile::kMedium, 1}));
  EXPECT_EQ(select(512, 512, 4096, kH200Sms, 64), (GemmAutoConfig{Tile::kLarge, 1}));
  // A device count of 0 (unknown) is treated as one SM.
  EXPECT_EQ(select(256, 128, 4096, 0), (GemmAutoConfig{Tile::kLarge, 1}));
}

// Over a grid of shapes and SM counts: slices are never empty and every slice keeps its minimum
// of k-tiles; only the Small tile splits; more output tiles never mean a smaller tile or more
// slices, and a longer K never means fewer slices.
TEST(GemmAutoHeuristic, InvariantsAndMonotonicity) {
  const std::vector<int> ms = {1,   7,   16,   64,   100,  128,  200, 256,
                               384, 512, 1000, 1024, 2048, 4096, 8192};
  const std::vector<int> ns = {1, 64, 128, 500, 1024, 4096, 14336};
  const std::vector<int> ks = {0, 1, 63, 64, 65, 500, 512, 1024, 1100, 4096, 14336, 65536, 1 << 20};
  for (int sms : {1, 46, 108, 132, 170}) {
    for (int n : ns)
      for (int k : ks) {
        GemmAutoConfig previous{Tile::kSmall, 1 << 30};
        bool first = true;
        for (int m : ms) {
          const GemmAutoConfig c = select(m, n, k, sms);
          SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
                       " on " + std::to_string(sms) + " SMs: " + c.name());
          ASSERT_GE(c.split_k, 1);
          ASSERT_LE(c.split_k, GemmAutoHeuristic::kMaxSplitK);
          if (c.tile != Tile::kSmall) ASSERT_EQ(c.split_k, 1);
          const tilepipe::SplitKSlices s = tilepipe::split_k_slices(k, c.split_k, kSmallTileK);
          ASSERT_EQ(s.count, c.split_k) << "the split factor is the number of slices that run";
          for (int i = 0; i < s.count && c.split_k > 1; ++i) {
            ASSERT_GT(s.extent(i), 0) << "slice " << i << " is empty";
            ASSERT_GE(s.extent(i), (GemmAutoHeuristic::kMinKTilesPerSlice - 1) * kSmallTileK)
                << "slice " << i << " is shorter than the minimum";
          }
          if (!first) {
            // Large and Medium may alternate (the wave-tail rule), but once a problem is big
            // enough for either, a larger one never falls back to the Small tile.
            if (previous.tile != Tile::kSmall)
              ASSERT_NE(c.tile, Tile::kSmall) << "a larger M got the Small tile";
            if (c.tile == previous.tile)
              ASSERT_LE(c.split_k, previous.split_k) << "a larger M got more slices";
          }
          previous = c;
          first = false;
        }
      }
    for (int m : ms)
      for (int n : ns) {
        int previous = 0;
        for (int k : ks) {
          const GemmAutoConfig c = select(m, n, k, sms);
          ASSERT_GE(c.split_k, previous)
              << m << "x" << n << "x" << k << ": a longer K got fewer slices";
          previous = c.split_k;
        }
      }
  }
}

TEST(GemmAuto, SelectAndWorkspaceFromArguments) {
  using Auto = tilepipe::GemmAuto<__half, __half, Layout::kRowMajor, Layout::kColumnMajor>;
  Auto::Arguments a;
  a.m = 16;
  a.n = 4096;
  a.k = 4096;
  a.split_k = 3;  // ignored: the heuristic decides
  const GemmAutoConfig c = Auto::select(a, kH200Sms);
  EXPECT_EQ(c, (GemmAutoConfig{Tile::kSmall, 4}));
  // 4 slices x 16 rows x 4096 columns of f32.
  EXPECT_EQ(Auto::workspace_size(a, kH200Sms), std::size_t(4) * 16 * 4096 * 4);
  EXPECT_EQ(Auto::workspace_size(a, c), Auto::workspace_size(a, kH200Sms));
  a.m = 4096;
  EXPECT_EQ(Auto::select(a, kH200Sms).tile, Tile::kLarge);
  EXPECT_EQ(Auto::workspace_size(a, kH200Sms), 0u);
  static_assert(Auto::Small::kSplitK && !Auto::Large::kSplitK && !Auto::Medium::kSplitK,
                "only the Small configuration is compiled with split-K");
}

// GemmFp8Sm90's schedule rule (Fp8ScheduleHeuristic) on the shapes it was measured on (H200,
// performance logs 43, 50, 51, 53 and 55: the tile and split it picks were the faster, or within
// 3%, on all of these but 128 x 4096 x 7168 block-wise, below), and that no split leaves a slice
// short or its clusters more than fit.
TEST(Fp8ScheduleHeuristic, MeasuredShapes) {
  using tilepipe::Fp8ScheduleHeuristic;
  using tilepipe::GemmFp8Schedule;
  const auto select = [](std::int64_t m, std::int64_t n, std::int64_t k,
                         tilepipe::Fp8Scaling scaling = tilepipe::Fp8Scaling::kTensorwise) {
    return Fp8ScheduleHeuristic::select(m, n, k, kH200Sms, scaling);
  };
  constexpr auto kNarrow = tilepipe::Fp8Tile::k128x128, kWide = tilepipe::Fp8Tile::k128x256,
                 kDecode = tilepipe::Fp8Tile::k64x128, k192 = tilepipe::Fp8Tile::k128x192,
                 kDecode192 = tilepipe::Fp8Tile::k64x192, kDecode64 = tilepipe::Fp8Tile::k64x64,
                 kDecode64KI = tilepipe::Fp8Tile::k64x64Interleaved,
                 kDecodeSplit = tilepipe::Fp8Tile::k64x256Split;
  constexpr auto kRowwise = tilepipe::Fp8Scaling::kRowwise;
  // Decode, tensorwise and row-wise, up to 128 rows: 64 x 64 tiles where they fit one wave, in the
  // most slices whose clusters fit (2: 66, 3: 39, 4: 29); unsplit with k-interleaved consumers
  // from 65 rows with K >= 2048, at 64 rows with K of 2048 to 4096.
  EXPECT_EQ(select(64, 2112, 7168), (GemmFp8Schedule{3, 0, kDecode64}));     // 33 tiles
  EXPECT_EQ(select(64, 4096, 7168), (GemmFp8Schedule{2, 0, kDecode64}));     // 64 tiles
  EXPECT_EQ(select(128, 2112, 7168), (GemmFp8Schedule{2, 0, kDecode64}));    // 66 tiles
  EXPECT_EQ(select(128, 4096, 7168), (GemmFp8Schedule{1, 0, kDecode64KI}));  // 128 tiles
  EXPECT_EQ(select(64, 7168, 16384), (GemmFp8Schedule{1, 0, kDecode64}));    // 112 tiles, long K
  EXPECT_EQ(select(64, 7168, 4096), (GemmFp8Schedule{1, 0, kDecode64KI}));
  EXPECT_EQ(select(64, 7168, 4224), (GemmFp8Schedule{1, 0, kDecode64}));  // 33 k-tiles
  EXPECT_EQ(select(96, 7168, 16384), (GemmFp8Schedule{1, 0, kDecode}));   // 224 64 x 64 tiles
  EXPECT_EQ(select(100, 4096, 16384), (GemmFp8Schedule{1, 0, kDecode64KI}));
  EXPECT_EQ(select(64, 1024, 7168), (GemmFp8Schedule{4, 0, kDecode64}));    // 14 k-tiles a slice
  EXPECT_EQ(select(64, 7168, 2048), (GemmFp8Schedule{1, 0, kDecode64KI}));  // 16 k-tiles
  EXPECT_EQ(select(64, 4096, 2048), (GemmFp8Schedule{1, 0, kDecode64KI}));
  EXPECT_EQ(select(32, 7168, 2048), (GemmFp8Schedule{1, 0, kDecode64}));
  EXPECT_EQ(select(64, 7168, 1920), (GemmFp8Schedule{1, 0, kDecode64}));  // 15 k-tiles
  EXPECT_EQ(select(100, 4096, 2048), (GemmFp8Schedule{1, 0, kDecode64KI}));
  EXPECT_EQ(select(128, 4096, 7168, kRowwise), (GemmFp8Schedule{1, 0, kDecode64KI}));
  EXPECT_EQ(select(64, 4096, 7168, kRowwise), (GemmFp8Schedule{2, 0, kDecode64}));
  // More 64 x 64 tiles than SMs: the 64 x 128 tile, by the same rule.
  EXPECT_EQ(select(128, 7168, 16384), (GemmFp8Schedule{1, 0, kDecode}));  // 112: not stream-K
  EXPECT_EQ(select(256, 7168, 16384), (GemmFp8Schedule{1, 0, kDecode}));  // 224 tiles
  EXPECT_EQ(select(128, 7168, 2048), (GemmFp8Schedule{1, 0, kDecode}));
  EXPECT_EQ(select(192, 2112, 7168), (GemmFp8Schedule{2, 0, kDecode}));  // 64 x 64 up to 128 rows
  // At most 64 rows, every mode: where 64 x 128 tiles take two waves and 64 x 256 ones one, the
  // split-column tile (96 and 128 tiles); otherwise 128 tiles of 192 columns in one wave.
  EXPECT_EQ(select(64, 24576, 1536), (GemmFp8Schedule{1, 0, kDecodeSplit}));
  EXPECT_EQ(select(64, 24576, 1536, kRowwise), (GemmFp8Schedule{1, 0, kDecodeSplit}));
  EXPECT_EQ(select(64, 32768, 512), (GemmFp8Schedule{1, 0, kDecodeSplit}));
  EXPECT_EQ(select(32, 32768, 512, kRowwise), (GemmFp8Schedule{1, 0, kDecodeSplit}));
  EXPECT_EQ(select(64, 16384, 2048), (GemmFp8Schedule{1, 0, kDecode}));     // 128 tiles: one wave
  EXPECT_EQ(select(64, 70000, 1536), (GemmFp8Schedule{1, 0, kDecode192}));  // 3 waves against 5
  // Block-wise: the 64-row tile only where it is split (its one consumer folds alone), where
  // the 128 x 128 tiles would leave SMs idle with K too short to split (56 tiles of 16 k-tiles),
  // or at most 64 rows with short K (128-row tiles half empty).
  constexpr auto kBlockwise = tilepipe::Fp8Scaling::kBlockwise;
  EXPECT_EQ(select(64, 2112, 7168, kBlockwise), (GemmFp8Schedule{4, 0, kDecode}));
  EXPECT_EQ(select(64, 4096, 7168, kBlockwise), (GemmFp8Schedule{3, 0, kDecode}));
  EXPECT_EQ(select(128, 2112, 7168, kBlockwise), (GemmFp8Schedule{3, 0, kDecode}));
  EXPECT_EQ(select(64, 7168, 16384, kBlockwise), (GemmFp8Schedule{2, 0, kDecode}));
  EXPECT_EQ(select(32, 7168, 16384, kBlockwise), (GemmFp8Schedule{2, 0, kDecode}));
  EXPECT_EQ(select(128, 7168, 16384, kBlockwise), (GemmFp8Schedule{2, 0, kNarrow}));
  // (0.89 x the 128-row tile in 3 slices, the best measured; 0.96 x it in 4, the former pick.)
  EXPECT_EQ(select(128, 4096, 7168, kBlockwise), (GemmFp8Schedule{2, 0, kDecode}));
  EXPECT_EQ(select(64, 24576, 1536, kBlockwise), (GemmFp8Schedule{1, 0, kDecodeSplit}));
  EXPECT_EQ(select(64, 32768, 512, kBlockwise), (GemmFp8Schedule{1, 0, kDecodeSplit}));
  EXPECT_EQ(select(64, 24576, 7168, kBlockwise), (GemmFp8Schedule{1, 0, kDecodeSplit}));
  EXPECT_EQ(select(64, 16384, 1536, kBlockwise), (GemmFp8Schedule{1, 0, kDecode}));
  EXPECT_EQ(select(64, 16384, 7168, kBlockwise), (GemmFp8Schedule{1, 0, kNarrow}));  // long K
  EXPECT_EQ(select(64, 7168, 2048, kBlockwise), (GemmFp8Schedule{1, 0, kDecode}));
  EXPECT_EQ(select(128, 7168, 2048, kBlockwise), (GemmFp8Schedule{1, 0, kDecode}));
  EXPECT_EQ(select(128, 24576, 1536, kBlockwise), (GemmFp8Schedule{1, 0, kWide}));  // 192 tiles
  EXPECT_EQ(select(4096, 7168, 16384, kBlockwise), (GemmFp8Schedule{1, 0, kWide}));
  // Short K from 96 rows, and from 384 rows any K: the 128-row tiles.
  // Up to 128 rows (tensorwise and row-wise) the 128 x 192 tile where one wave of it does what
  // 96 wide tiles (0.73 of the SMs) or 192 narrow ones (two waves) would.
  EXPECT_EQ(select(128, 24576, 1536), (GemmFp8Schedule{1, 0, k192}));
  EXPECT_EQ(select(100, 24576, 1536, kRowwise), (GemmFp8Schedule{1, 0, k192}));
  EXPECT_EQ(select(128, 32768, 512), (GemmFp8Schedule{1, 0, kWide}));  // 128 wide tiles
  EXPECT_EQ(select(192, 24576, 1536), (GemmFp8Schedule{1, 0, k192}));  // 2 waves against 3
  EXPECT_EQ(select(384, 4096, 7168), (GemmFp8Schedule{1, 0, kNarrow}));
  EXPECT_EQ(select(384, 7168, 16384), (GemmFp8Schedule{1, 132, kNarrow}));
  // M >= 4096, tensorwise and row-wise (performance log 59): the narrow tile where K is long, the
  // wide one where it is short, 352 whole 128 x 192 tiles on N = 2112 (narrow: 4.1 waves).
  for (auto scaling : {tilepipe::Fp8Scaling::kTensorwise, kRowwise}) {
    EXPECT_EQ(select(4096, 2112, 7168, scaling), (GemmFp8Schedule{1, 0, k192}));
    EXPECT_EQ(select(4096, 4096, 4096, scaling), (GemmFp8Schedule{1, 0, kNarrow}));
    EXPECT_EQ(select(4096, 4096, 7168, scaling), (GemmFp8Schedule{1, 0, kNarrow}));
    EXPECT_EQ(select(4096, 7168, 16384, scaling), (GemmFp8Schedule{1, 0, kNarrow}));
    EXPECT_EQ(select(8192, 8192, 8192, scaling), (GemmFp8Schedule{1, 0, kNarrow}));
    EXPECT_EQ(select(4096, 7168, 2048, scaling), (GemmFp8Schedule{1, 0, kWide}));
    EXPECT_EQ(select(4096, 24576, 1536, scaling), (GemmFp8Schedule{1, 0, kWide}));
    EXPECT_EQ(select(4096, 32768, 512, scaling), (GemmFp8Schedule{1, 0, kWide}));
  }
  // Block-wise keeps performance log 50's choice: the wide tile, stream-K on N = 2112.
  EXPECT_EQ(select(4096, 2112, 7168, kBlockwise), (GemmFp8Schedule{1, 132, kNarrow}));
  EXPECT_EQ(select(8192, 8192, 8192, kBlockwise), (GemmFp8Schedule{1, 0, kWide}));
  EXPECT_EQ(select(0, 4096, 4096), (GemmFp8Schedule{1, 0, kNarrow}));
  EXPECT_EQ(select(64, 4096, 0), (GemmFp8Schedule{1, 0, kNarrow}));
}

TEST(Fp8ScheduleHeuristic, SlicesLongAndWithinAWave) {
  using H = tilepipe::Fp8ScheduleHeuristic;
  for (auto scaling : {tilepipe::Fp8Scaling::kTensorwise, tilepipe::Fp8Scaling::kBlockwise})
    for (int sms : {1, 78, 114, 132})
      for (std::int64_t m : {1, 64, 65, 129, 256, 257, 1000, 4096})
        for (std::int64_t n : {1, 128, 2112, 7168, 24576})
          for (std::int64_t k : {16, 512, 1536, 2048, 4096, 7168, 16384}) {
            const tilepipe::GemmFp8Schedule s = H::select(m, n, k, sms, scaling);
            const bool decode = s.tile == tilepipe::Fp8Tile::k64x128 ||
                                s.tile == tilepipe::Fp8Tile::k64x192 ||
                                s.tile == tilepipe::Fp8Tile::k64x64 ||
                                s.tile == tilepipe::Fp8Tile::k64x64Interleaved ||
                                s.tile == tilepipe::Fp8Tile::k64x256Split;
            const bool split_columns = s.tile == tilepipe::Fp8Tile::k64x256Split;
            const bool square64 = s.tile == tilepipe::Fp8Tile::k64x64 ||
                                  s.tile == tilepipe::Fp8Tile::k64x64Interleaved;
            const bool wide192 =
                s.tile == tilepipe::Fp8Tile::k128x192 || s.tile == tilepipe::Fp8Tile::k64x192;
            const std::int64_t tile_m = decode ? H::kDecodeTileM : H::kTileM;
            const std::int64_t tile_n = s.tile == tilepipe::Fp8Tile::k128x256 || split_columns
                                            ? H::kWideTileN
                                        : wide192  ? H::kTile192N
                                        : square64 ? H::kDecode64TileN
                                                   : H::kTileN;
            // The 64 x 64 tile: up to 128 rows, never block-wise, its tiles within one wave.
            if (square64) {
              ASSERT_NE(scaling, tilepipe::Fp8Scaling::kBlockwise) << m << "x" << n << "x" << k;
              ASSERT_LE(m, H::kTileM) << m << "x" << n << "x" << k;
              ASSERT_LE((m + 63) / 64 * ((n + H::kDecode64TileN - 1) / H::kDecode64TileN), sms)
                  << m << "x" << n << "x" << k;
              // k-interleaved consumers exactly where it runs unsplit with K >= 16 k-tiles, from
              // 65 rows, or at 64 rows up to 32 k-tiles.
              const std::int64_t kt = (k + 127) / 128;
              ASSERT_EQ(s.tile == tilepipe::Fp8Tile::k64x64Interleaved,
                        s.split_k == 1 && kt >= H::kDecodeMinKTiles &&
                            (m > 64 || (m == 64 && kt <= H::kInterleaved64MaxKTiles)))
                  << m << "x" << n << "x" << k;
            }
            // The split-column tile: at most 64 rows, whole tiles in one wave, exactly where
            // 64 x 128 ones would take more.
            if (m <= 64 && s.split_k == 1 && (n + 127) / 128 > sms && (n + 255) / 256 <= sms)
              ASSERT_TRUE(split_columns) << m << "x" << n << "x" << k;
            if (split_columns) {
              ASSERT_LE(m, H::kDecodeTileM) << m << "x" << n << "x" << k;
              ASSERT_EQ(s.split_k, 1);
              ASSERT_EQ(s.stream_k, 0);
              ASSERT_LE((n + 255) / 256, sms) << m << "x" << n << "x" << k;
              ASSERT_GT((n + 127) / 128, sms) << m << "x" << n << "x" << k;
            }
            // The 192-wide tiles: whole tiles, at most 64 rows on the decode one, never
            // block-wise (they straddle B's scale blocks).
            if (wide192) {
              ASSERT_NE(scaling, tilepipe::Fp8Scaling::kBlockwise) << m << "x" << n << "x" << k;
              if (decode) ASSERT_LE(m, H::kDecodeTileM) << m << "x" << n << "x" << k;
              ASSERT_EQ(s.split_k, 1);
              ASSERT_EQ(s.stream_k, 0);
            }
            const std::int64_t tiles = (m + tile_m - 1) / tile_m * ((n + tile_n - 1) / tile_n);
            // The decode tile exactly where the rule says (block-wise: where split, where the
            // 128 x 128 tiles fill under 80% of the SMs and cannot be split in two, at most 64
            // rows with short K, or the split-column tile).
            const std::int64_t k_tiles = (k + 127) / 128;
            const bool decode_shape = m <= 64 || (m <= H::kDecodeMaxM && k_tiles >= 16);
            const std::int64_t narrow = (m + 127) / 128 * ((n + 127) / 128);
            const bool underfilled =
                narrow < 0.8 * sms && !(narrow * 2 <= sms && k_tiles / 2 >= H::kMinKTilesPerSlice);
            if (scaling == tilepipe::Fp8Scaling::kBlockwise) {
              const bool short_k = m <= 64 && k_tiles < 16;
              ASSERT_TRUE(!decode || (decode_shape &&
                                      (s.split_k > 1 || underfilled || short_k || split_columns)))
                  << m << "x" << n << "x" << k;
              ASSERT_TRUE(decode || !(decode_shape && (underfilled || short_k)))
                  << m << "x" << n << "x" << k;
            } else {
              ASSERT_EQ(decode, decode_shape) << m << "x" << n << "x" << k;
            }
            ASSERT_GE(s.split_k, 1);
            ASSERT_LE(s.split_k, H::kMaxSplitK);
            ASSERT_TRUE(s.split_k == 1 || s.stream_k == 0);
            if (s.split_k > 1) {
              ASSERT_LE(decode ? tiles : tiles * s.split_k,
                        decode ? H::cluster_slots(s.split_k, sms) : sms)
                  << m << "x" << n << "x" << k;
              ASSERT_GE((k + 127) / 128 / s.split_k, H::kMinKTilesPerSlice);
            }
            ASSERT_TRUE(s.stream_k == 0 || (s.stream_k == sms && !decode));
          }
}
