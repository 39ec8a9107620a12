// Host tests of the Hopper tier's copies: where CopyWorkspace puts A's and B's copies and the
// GEMM's own part (pitches 16-byte multiples, parts 256-byte aligned and disjoint), how
// PitchedCopyMap's threads cover a matrix of 16-byte chunks (every chunk of every line exactly
// once, a warp's chunks consecutive along a line), and that shift_chunk picks the right 16 bytes
// for every offset.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <tilepipe/layout/copy_workspace.cuh>
#include <tilepipe/layout/pitched_copy_map.cuh>

namespace {

using tilepipe::CopyShape;
using tilepipe::CopyWorkspace;
using tilepipe::PitchedCopyMap;

TEST(CopyWorkspace, PitchesAndOffsets) {
  // A: 131 lines of K = 4099 halves, one copy per batch; B: 67 lines of 4099, shared by batches.
  const CopyWorkspace w = CopyWorkspace::make({131, 4099, true}, {67, 4099, false}, 2, 3);
  EXPECT_EQ(w.a.ld, 4104);  // 4099 rounded up to 8 halves
  EXPECT_EQ(w.a.batch_stride, 131 * 4104);
  EXPECT_EQ(w.a.offset, 0u);
  EXPECT_EQ(w.a.bytes, std::size_t(3) * 131 * 4104 * 2);
  EXPECT_EQ(w.b.ld, 4104);
  EXPECT_EQ(w.b.batch_stride, 0);  // one copy for every batch
  EXPECT_EQ(w.b.bytes, std::size_t(67) * 4104 * 2);
  // B starts on the first 256-byte boundary after A (3 * 131 * 4104 * 2 = 3225744 bytes).
  EXPECT_EQ(w.b.offset, std::size_t(3225856));
  EXPECT_EQ(w.b.offset % CopyWorkspace::kAlign, 0u);
  EXPECT_GE(w.b.offset, w.a.offset + w.a.bytes);
  EXPECT_EQ(w.bytes, w.b.offset + w.b.bytes);  // no GEMM part: nothing after B
  EXPECT_EQ(w.gemm_offset, (w.bytes + 255) / 256 * 256);
  // A GEMM part goes after the copies, on 256 bytes.
  const CopyWorkspace g = w.with_gemm_bytes(1000);
  EXPECT_EQ(g.gemm_offset, w.gemm_offset);
  EXPECT_EQ(g.gemm_offset % CopyWorkspace::kAlign, 0u);
  EXPECT_GE(g.gemm_offset, w.b.offset + w.b.bytes);
  EXPECT_EQ(g.bytes, g.gemm_offset + 1000);
  EXPECT_EQ(g.with_gemm_bytes(0).bytes, w.bytes);
}

TEST(CopyWorkspace, AbsentCopiesTakeNoRoom) {
  // Only B copied: it starts at 0. Floats: pitches in multiples of 4.
  const CopyWorkspace b_only = CopyWorkspace::make({}, {5, 9, true}, 4, 2);
  EXPECT_FALSE(b_only.a.copied());
  EXPECT_TRUE(b_only.b.copied());
  EXPECT_EQ(b_only.b.offset, 0u);
  EXPECT_EQ(b_only.b.ld, 12);
  EXPECT_EQ(b_only.bytes, std::size_t(2) * 5 * 12 * 4);
  // No copy: the GEMM's part alone, from 0.
  const CopyWorkspace none = CopyWorkspace::make({}, {}, 2, 4, 512);
  EXPECT_FALSE(none.copies());
  EXPECT_EQ(none.gemm_offset, 0u);
  EXPECT_EQ(none.bytes, 512u);
  EXPECT_EQ(CopyWorkspace::make({}, {}, 2, 4).bytes, 0u);
  // Empty shapes and no batches copy nothing; one batch is never batched.
  EXPECT_FALSE(CopyWorkspace::make({0, 8, true}, {8, 0, true}, 2, 4).copies());
  EXPECT_FALSE(CopyWorkspace::make({3, 8, true}, {}, 2, 0).copies());
  const CopyWorkspace one = CopyWorkspace::make({3, 8, true}, {}, 2, 1);
  EXPECT_EQ(one.a.batch_stride, 0);
  EXPECT_EQ(one.a.bytes, std::size_t(3) * 8 * 2);
  // A line already a multiple of 16 bytes keeps its length as the pitch.
  EXPECT_EQ(CopyWorkspace::make({3, 64, false}, {}, 2, 1).a.ld, 64);
  EXPECT_EQ(CopyWorkspace::make({3, 1, false}, {}, 2, 1).a.ld, 8);
}

// Every chunk of every line, once: over all tiles and threads, for short and long lines.
TEST(PitchedCopyMap, CoversEveryChunkOnce) {
  const std::int64_t lines_list[] = {1, 3, 64, 129, 1000};
  const std::int64_t chunks_list[] = {1, 2, 3, 5, 8, 17, 32, 33, 513};
  for (std::int64_t lines : lines_list)
    for (std::int64_t chunks : chunks_list) {
      const PitchedCopyMap map = PitchedCopyMap::for_line_chunks(chunks);
      SCOPED_TRACE(testing::Message() << lines << " lines of " << chunks << " chunks");
      ASSERT_GE(map.cols(), 1);
      ASSERT_LE(map.cols(), 32);
      // The fewest columns that hold a line, a warp at most.
      EXPECT_TRUE(map.cols() >= chunks || map.cols() == 32);
      EXPECT_TRUE(map.cols() == 1 || map.cols() / 2 < chunks);
      std::vector<int> hits(static_cast<std::size_t>(lines * chunks), 0);
      for (std::int64_t ty = 0; ty < map.tiles_y(lines); ++ty)
        for (std::int64_t tx = 0; tx < map.tiles_x(chunks); ++tx)
          for (int t = 0; t < PitchedCopyMap::kThreads; ++t)
            for (int u = 0; u < PitchedCopyMap::kLinesPerThread; ++u) {
              const std::int64_t line = map.line(t, u, ty), c = map.chunk(t, tx);
              ASSERT_GE(line, 0);
              ASSERT_GE(c, 0);
              if (line < lines && c < chunks) ++hits[static_cast<std::size_t>(line * chunks + c)];
            }
      for (std::size_t i = 0; i < hits.size(); ++i)
        ASSERT_EQ(hits[i], 1) << "line " << i / chunks << ", chunk " << i % chunks;
    }
}

// A warp's 32 threads, at one step u: consecutive chunks of one line where lines are long;
// whole lines, consecutive, where they are short.
TEST(PitchedCopyMap, WarpsAreCoalesced) {
  for (std::int64_t chunks : {std::int64_t(2), std::int64_t(8), std::int64_t(100)}) {
    const PitchedCopyMap map = PitchedCopyMap::for_line_chunks(chunks);
    for (int warp = 0; warp < PitchedCopyMap::kThreads / 32; ++warp)
      for (int u = 0; u < PitchedCopyMap::kLinesPerThread; ++u) {
        const int t0 = 32 * warp;
        for (int lane = 1; lane < 32; ++lane) {
          const int t = t0 + lane;
          // Flattened position (line * cols + chunk) advances by one from lane to lane.
          const std::int64_t prev =
              map.line(t - 1, u, 5) * map.cols() + map.chunk(t - 1, 7) % map.cols();
          const std::int64_t here = map.line(t, u, 5) * map.cols() + map.chunk(t, 7) % map.cols();
          EXPECT_EQ(here, prev + 1) << "chunks " << chunks << ", lane " << lane;
        }
      }
  }
}

// shift_chunk against a byte-wise copy, for every offset of random 32 bytes.
TEST(ShiftChunk, PicksSixteenBytesAtEveryOffset) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    std::uint32_t w[8];
    for (auto& x : w) x = static_cast<std::uint32_t>(rng());
    unsigned char bytes[32];
    std::memcpy(bytes, w, sizeof(bytes));  // little-endian words, as the GPU loads them
    for (int offset = 0; offset < 16; ++offset) {
      std::uint32_t out[4];
      tilepipe::shift_chunk(w, offset, out);
      EXPECT_EQ(std::memcmp(out, bytes + offset, 16), 0) << "offset " << offset;
    }
  }
}

}  // namespace
