// Host tests of StreamKPartition: walked block by block as the kernel walks it, the partition
// covers every (tile, k-tile) exactly once; segments begin and end where chunks do, and the
// blocks' shares differ by at most one chunk; the segments of every tile, listed in k order, are
// the ones the blocks compute, each partial one with a workspace slot no other partial segment
// uses (segment_slot gives the same); whole waves stay data-parallel. A deliberately broken
// partition (one block's range shifted) is caught by the same checker.

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include <tilepipe/layout/stream_k_partition.cuh>

namespace {

using tilepipe::StreamKPartition;
using tilepipe::StreamKSegment;

// What the kernel does with a partition: each block's data-parallel tiles, then its stream-K
// segments, in order (block_segment). Returns an empty string when the partition is sound, else
// what is wrong.
std::string check_partition(const StreamKPartition& p) {
  const long long tiles = p.tiles;
  const int k_tiles = p.k_tiles;
  std::vector<int> hits(static_cast<std::size_t>(tiles * k_tiles), 0);
  std::vector<long long> work(static_cast<std::size_t>(p.blocks), 0);  // in chunks
  // chunk_at[k]: the chunk that begins at k-tile k (k_chunks at k_tiles), -1 inside a chunk.
  std::vector<int> chunk_at(static_cast<std::size_t>(k_tiles) + 1, -1);
  for (int c = 0; c <= p.k_chunks; ++c) {
    const int k = p.chunk_begin(c);
    if (k < 0 || k > k_tiles || (c > 0 && k <= p.chunk_begin(c - 1)))
      return "chunks that are not increasing";
    chunk_at[static_cast<std::size_t>(k)] = c;
  }
  if (p.chunk_begin(0) != 0 || p.chunk_begin(p.k_chunks) != k_tiles)
    return "chunks that do not cover K";
  // (tile, segment index) -> the segment the blocks computed, to compare with segment(tile, s).
  std::vector<std::vector<StreamKSegment>> computed(static_cast<std::size_t>(tiles));
  for (int b = 0; b < p.blocks; ++b) {
    for (long long w = 0; w < p.dp_waves(); ++w) {
      const long long t = w * p.blocks + b;
      if (t >= p.dp_tiles) return "a data-parallel tile past dp_tiles";
      if (p.first_block(t) != b || p.segments(t) != 1)
        return "a data-parallel tile with a wrong owner";
      for (int k = 0; k < k_tiles; ++k) ++hits[static_cast<std::size_t>(t * k_tiles + k)];
      work[static_cast<std::size_t>(b)] += p.k_chunks;
      computed[static_cast<std::size_t>(t)].push_back({t, 0, k_tiles});
    }
    // The kernel's walk: segment j of the block, from (b, j) alone; it must agree with walking
    // from iteration to iteration.
    long long it = p.sk_begin(b);
    for (int j = 0; j < p.block_segments(b); ++j) {
      const StreamKSegment s = p.block_segment(b, j);
      const StreamKSegment walked = p.segment_at(b, it);
      if (walked.tile != s.tile || walked.k_tile_begin != s.k_tile_begin ||
          walked.k_tile_end != s.k_tile_end)
        return "block_segment(b, j) is not the block's j-th segment";
      if (s.tile < p.dp_tiles || s.tile >= tiles) return "a segment outside the stream-K region";
      if (s.k_tile_begin >= s.k_tile_end) return "an empty segment";
      const int c0 = chunk_at[static_cast<std::size_t>(s.k_tile_begin)];
      const int c1 = chunk_at[static_cast<std::size_t>(s.k_tile_end)];
      if (c0 < 0 || c1 < 0) return "a segment that does not begin and end where chunks do";
      for (int k = s.k_tile_begin; k < s.k_tile_end; ++k)
        ++hits[static_cast<std::size_t>(s.tile * k_tiles + k)];
      work[static_cast<std::size_t>(b)] += c1 - c0;
      computed[static_cast<std::size_t>(s.tile)].push_back(s);
      it = p.first_iter(s.tile) + c1;
    }
    if (it != p.sk_end(b)) return "block_segments(b) does not reach the end of the block's range";
  }
  for (const int h : hits)
    if (h != 1) return "a (tile, k-tile) computed " + std::to_string(h) + " times";
  // Only the stream-K share varies, and by one chunk at most.
  long long lo = work[0], hi = work[0];
  for (const long long w : work) {
    lo = w < lo ? w : lo;
    hi = w > hi ? w : hi;
  }
  if (hi - lo > 1) return "block shares differ by " + std::to_string(hi - lo) + " chunks";
  // Per tile: the segments in k order are what the blocks computed (blocks walk in k order
  // within a tile, and in block order across its segments), and partial ones have distinct slots.
  std::set<long long> slots;
  for (long long t = 0; t < tiles; ++t) {
    const auto& segs = computed[static_cast<std::size_t>(t)];
    const int n = p.segments(t);
    if (static_cast<int>(segs.size()) != n) return "segments(" + std::to_string(t) + ") is wrong";
    if (t < p.dp_tiles) continue;
    int k = 0;
    for (int s = 0; s < n; ++s) {
      const StreamKSegment listed = p.segment(t, s);
      if (listed.tile != t || listed.k_tile_begin != k) return "segments out of k order";
      if (listed.k_tile_begin != segs[s].k_tile_begin || listed.k_tile_end != segs[s].k_tile_end)
        return "segment(tile, s) is not what block first_block + s computes";
      k = listed.k_tile_end;
      if (p.whole(listed) != (n == 1)) return "a tile of one segment that is not whole";
      if (n > 1) {
        const long long slot = p.slot(p.first_block(t) + s, t);
        if (slot < 0 || slot >= p.slots()) return "a slot outside the workspace";
        if (!slots.insert(slot).second) return "two partial segments share a slot";
        const long long first_slot = p.slot(p.first_block(t), t);
        if (StreamKPartition::segment_slot(first_slot, s) != slot)
          return "segment_slot is not the slot of the segment's block";
      }
    }
    if (k != k_tiles) return "a tile's segments do not end at its last k-tile";
  }
  return "";
}

TEST(StreamKPartition, CoversEveryIterationOnceOverManyShapes) {
  const long long tile_counts[] = {1,  2,   3,   5,   7,   16,  95,  96,
                                   97, 131, 132, 133, 263, 264, 512, 1000};
  const int k_tile_counts[] = {1, 2, 3, 8, 33, 129};
  const int grids[] = {1, 2, 3, 7, 64, 132, 264, 1000};
  for (const long long t : tile_counts)
    for (const int k : k_tile_counts)
      for (const int g : grids) {
        const StreamKPartition p = tilepipe::stream_k_partition(t, k, g);
        ASSERT_EQ(check_partition(p), "")
            << t << " tiles x " << k << " k-tiles on " << g << " blocks";
      }
}

TEST(StreamKPartition, ChunksCoverEveryIterationOnceOverManyShapes) {
  const long long tile_counts[] = {1, 2, 3, 7, 95, 96, 97, 131, 133, 264, 512};
  const int k_tile_counts[] = {1, 2, 3, 8, 33, 65, 129};
  const int chunk_counts[] = {1, 2, 3, 4, 7, 11, 16};
  const int grids[] = {1, 3, 64, 132, 1000};
  for (const long long t : tile_counts)
    for (const int k : k_tile_counts)
      for (const int c : chunk_counts)
        for (const int g : grids) {
          const StreamKPartition p = tilepipe::stream_k_partition(t, k, g, c);
          EXPECT_EQ(p.k_chunks, c < k ? c : k);
          ASSERT_EQ(check_partition(p), "")
              << t << " tiles x " << k << " k-tiles in " << c << " chunks on " << g << " blocks";
        }
}

// The edge shape in 64-deep k-tiles (65, the last 8 deep) in 4 chunks of 16 or 17: 384 chunks on
// 132 blocks, 120 blocks of 3 and 12 of 2; a segment begins only at k-tile 0, 16, 32 or 48.
TEST(StreamKPartition, ChunksPutSegmentsOnChunkBoundaries) {
  const StreamKPartition p = tilepipe::stream_k_partition(96, 65, 132, 4);
  EXPECT_EQ(p.k_chunks, 4);
  EXPECT_EQ(p.chunk_begin(1), 16);
  EXPECT_EQ(p.chunk_begin(2), 32);
  EXPECT_EQ(p.chunk_begin(3), 48);
  EXPECT_EQ(p.sk_iters, 384);
  EXPECT_EQ(p.share, 2);
  EXPECT_EQ(p.longer, 120);
  for (int b = 0; b < p.blocks; ++b)
    for (int j = 0; j < p.block_segments(b); ++j) {
      const int k = p.block_segment(b, j).k_tile_begin;
      EXPECT_TRUE(k == 0 || k == 16 || k == 32 || k == 48) << k;
    }
  EXPECT_EQ(check_partition(p), "");
  // Without chunks (the default) every k-tile is one.
  EXPECT_EQ(tilepipe::stream_k_partition(96, 65, 132).k_chunks, 65);
  EXPECT_EQ(tilepipe::stream_k_partition(96, 65, 132, 100).k_chunks, 65);
}

// The H100 edge shape's default tile: 1000 x 3000 in 128 x 256 tiles is 8 x 12 = 96 tiles,
// K = 4104 in 32-deep k-tiles is 129 (the last one 8 deep), on 132 blocks: all stream-K, every
// block 93 or 94 k-tiles, every tile in two segments (a block's range is 0.73 of a tile).
TEST(StreamKPartition, EdgeShapeIsAllStreamK) {
  const StreamKPartition p = tilepipe::stream_k_partition(96, 129, 132);
  EXPECT_EQ(p.blocks, 132);
  EXPECT_EQ(p.dp_tiles, 0);
  EXPECT_EQ(p.sk_iters, 96 * 129);
  EXPECT_EQ(p.share, 93);
  EXPECT_EQ(p.longer, 96 * 129 - 93 * 132);
  for (long long t = 0; t < p.tiles; ++t) {
    EXPECT_GE(p.segments(t), 2);
    EXPECT_LE(p.segments(t), 3);
  }
  EXPECT_EQ(check_partition(p), "");
}

// 4096^3 in the same tile: 32 x 16 = 512 tiles on 132 blocks: 3 full waves and 116 tiles more.
// The first two waves run whole; the last 248 tiles are shared, 1.88 tiles per block.
TEST(StreamKPartition, WholeWavesStayDataParallel) {
  const StreamKPartition p = tilepipe::stream_k_partition(512, 128, 132);
  EXPECT_EQ(p.dp_tiles, 2 * 132);
  EXPECT_EQ(p.dp_waves(), 2);
  EXPECT_EQ(p.sk_tiles(), 248);
  EXPECT_EQ(p.sk_iters, 248 * 128);
  EXPECT_EQ(p.slots(), 264);
  EXPECT_EQ(check_partition(p), "");
  // Tiles that divide evenly into waves are not split at all.
  const StreamKPartition even = tilepipe::stream_k_partition(264, 128, 132);
  EXPECT_EQ(even.dp_tiles, 264);
  EXPECT_EQ(even.sk_iters, 0);
  EXPECT_EQ(even.slots(), 0);
  EXPECT_EQ(even.sk_tiles(), 0);
  EXPECT_EQ(check_partition(even), "");
}

TEST(StreamKPartition, EdgeCases) {
  // One tile shared by all blocks: one segment each, in block order.
  const StreamKPartition one = tilepipe::stream_k_partition(1, 10, 4);
  EXPECT_EQ(one.segments(0), 4);
  EXPECT_EQ(one.segment(0, 0).k_tile_end, 3);  // 10 = 3 + 3 + 2 + 2
  EXPECT_EQ(one.segment(0, 1).k_tile_end, 6);
  EXPECT_EQ(one.segment(0, 3).k_tile_begin, 8);
  EXPECT_EQ(check_partition(one), "");
  // Fewer iterations than blocks: the grid shrinks to one block per iteration.
  const StreamKPartition tiny = tilepipe::stream_k_partition(2, 3, 132);
  EXPECT_EQ(tiny.blocks, 6);
  EXPECT_EQ(tiny.segments(0), 3);
  EXPECT_EQ(check_partition(tiny), "");
  // One block does everything: whole tiles, no slot needed but none shared either.
  const StreamKPartition single = tilepipe::stream_k_partition(5, 7, 1);
  EXPECT_EQ(single.blocks, 1);
  EXPECT_EQ(single.dp_tiles, 5);
  EXPECT_EQ(check_partition(single), "");
  // No work: no region, one block, nothing to check but that it says so.
  const StreamKPartition none = tilepipe::stream_k_partition(4, 0, 132);
  EXPECT_EQ(none.sk_iters, 0);
  EXPECT_EQ(none.slots(), 0);
  EXPECT_EQ(none.blocks, 1);
  // Batches are more work tiles: 3 batches of 5 tiles on 4 blocks.
  const StreamKPartition batched = tilepipe::stream_k_partition(3 * 5, 9, 4);
  EXPECT_EQ(batched.dp_tiles, 8);  // 3 full waves and 3 tiles: waves 0 and 1 whole
  EXPECT_EQ(check_partition(batched), "");
}

// The checker can fail: a partition whose ranges overlap (every range one k-tile longer), or
// leave a gap (one shorter), or whose slot rule gives two blocks one slot, is refused.
TEST(StreamKPartition, BrokenPartitionsAreCaught) {
  StreamKPartition overlap = tilepipe::stream_k_partition(7, 10, 3);
  ASSERT_EQ(check_partition(overlap), "");
  overlap.longer += 1;  // block `longer` now starts one k-tile later than block `longer - 1` ends
  EXPECT_NE(check_partition(overlap), "");
  StreamKPartition gap = tilepipe::stream_k_partition(7, 10, 3);
  gap.share -= 1;
  EXPECT_NE(check_partition(gap), "");
  StreamKPartition moved = tilepipe::stream_k_partition(96, 129, 132);
  moved.dp_tiles = 1;  // a data-parallel tile that is also in the stream-K region
  EXPECT_NE(check_partition(moved), "");
}

}  // namespace
