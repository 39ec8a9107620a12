#pragma once
//! \file
//! StreamKPartition: how a persistent grid of `blocks` thread blocks shares a GEMM's
//! MAC-iterations (work tiles x k-tiles) so that every block gets the same amount of work,
//! whatever the number of tiles.
//!
//! A work tile is one output tile of one batch, of `k_tiles` k-tiles. Its k-tiles are cut into
//! `k_chunks` chunks of consecutive k-tiles (chunk `c` begins at k-tile `c * k_tiles / k_chunks`),
//! and the chunks are the iterations the partition counts: a segment begins and ends only where a
//! chunk does. With `k_chunks == k_tiles` every k-tile is a chunk and the shares are the most even;
//! fewer chunks keep the blocks that run together at fewer distinct k offsets, so the panels of A
//! and B they read are more often in L2 together, and give each block fewer pieces of tiles. With
//! `T` work tiles and `G` blocks:
//!
//! - When `G` divides `T`, every block computes `T / G` whole tiles (block `b` takes tiles `b`,
//!   `b + G`, ...): the waves are already even, so nothing is split.
//! - Otherwise the tiles of all full waves but the last are computed whole that way
//!   (data-parallel, `dp_tiles` of them), and the rest, `G + T % G` tiles (all `T` of them when
//!   `T < G`), form the stream-K region: its chunks, tile after tile, are cut into `G` contiguous
//!   ranges of equal length (the first `longer` ranges have one chunk more). A block's range
//!   covers the tail of one tile, zero or more whole tiles and the head of another. Keeping whole
//!   waves data-parallel keeps the blocks that run together on neighbouring tiles (the raster's
//!   L2 reuse); only the last one or two tiles' worth of each block is shared.
//!
//! The piece of a tile that one block computes is a segment; a tile's segments are in k order,
//! segment `s` belonging to block `first_block(tile) + s`. A block whose segment is not the whole
//! tile stores its partial accumulators in a workspace slot of its own: a block has at most two
//! such segments (its first, the tail of a tile, and its last, the head of one), so slot
//! `2 * block` holds its first and `2 * block + 1` its last. The block that completes a tile sums
//! the tile's slots in segment order, so the sum does not depend on which block finished last.
//!
//! Plain host/device C++: host-tested (test/host/test_stream_k_partition.cpp).

#include "../detail/macros.cuh"

namespace tilepipe {

//! The k-tiles `[k_tile_begin, k_tile_end)` of work tile `tile` that one block computes.
struct StreamKSegment {
  long long tile = 0;
  int k_tile_begin = 0;
  int k_tile_end = 0;
};

//! See the file comment. Build it with `stream_k_partition`.
struct StreamKPartition {
  long long tiles = 0;     //!< work tiles: output tiles x batches, in the scheduler's order
  int k_tiles = 0;         //!< k-tiles of one work tile
  int k_chunks = 0;        //!< iterations (chunks of k-tiles) of one work tile, 1..k_tiles
  int blocks = 1;          //!< the persistent grid
  long long dp_tiles = 0;  //!< leading tiles computed whole: tile `w * blocks + b` by block `b`
  long long sk_iters = 0;  //!< chunks of the stream-K region (tiles `dp_tiles` onwards)
  long long share = 0;     //!< stream-K chunks of every block, one more for the first `longer`
  long long longer = 0;

  //! Data-parallel tiles of every block (before its stream-K range).
  TILEPIPE_HOST_DEVICE constexpr long long dp_waves() const { return dp_tiles / blocks; }

  //! First k-tile of chunk `c` (in `[0, k_chunks]`) of a work tile.
  TILEPIPE_HOST_DEVICE constexpr int chunk_begin(long long c) const {
    return static_cast<int>(c * k_tiles / k_chunks);
  }

  //! First stream-K iteration (chunk) of block `b` (counted from the region's start);
  //! `sk_begin(blocks)` is the region's end.
  TILEPIPE_HOST_DEVICE constexpr long long sk_begin(int b) const {
    return b * share + (b < longer ? b : longer);
  }
  TILEPIPE_HOST_DEVICE constexpr long long sk_end(int b) const { return sk_begin(b + 1); }

  //! The block whose stream-K range holds iteration `iter` of the region.
  TILEPIPE_HOST_DEVICE constexpr int block_of(long long iter) const {
    const long long split = longer * (share + 1);
    return static_cast<int>(iter < split ? iter / (share + 1) : longer + (iter - split) / share);
  }

  //! First iteration of stream-K tile `tile` (a tile index >= dp_tiles), counted from the region's
  //! start.
  TILEPIPE_HOST_DEVICE constexpr long long first_iter(long long tile) const {
    return (tile - dp_tiles) * k_chunks;
  }

  //! The block that computes the first segment of `tile`.
  TILEPIPE_HOST_DEVICE constexpr int first_block(long long tile) const {
    return tile < dp_tiles ? static_cast<int>(tile % blocks) : block_of(first_iter(tile));
  }

  //! Segments of `tile`: 1 for a tile computed whole.
  TILEPIPE_HOST_DEVICE constexpr int segments(long long tile) const {
    if (tile < dp_tiles) return 1;
    return block_of(first_iter(tile) + k_chunks - 1) - first_block(tile) + 1;
  }

  //! The segment of block `b` that begins at its stream-K iteration `iter` (in `[sk_begin(b),
  //! sk_end(b))`); its end is where the block's next segment begins.
  TILEPIPE_HOST_DEVICE constexpr StreamKSegment segment_at(int b, long long iter) const {
    const long long in_region = iter / k_chunks;
    const long long first = in_region * k_chunks;
    const long long end = sk_end(b) - first;
    StreamKSegment s;
    s.tile = dp_tiles + in_region;
    s.k_tile_begin = chunk_begin(iter - first);
    s.k_tile_end = chunk_begin(end < k_chunks ? end : k_chunks);
    return s;
  }

  //! Stream-K segments of block `b` (0 for an empty range).
  TILEPIPE_HOST_DEVICE constexpr int block_segments(int b) const {
    if (sk_end(b) <= sk_begin(b)) return 0;
    return static_cast<int>((sk_end(b) - 1) / k_chunks - sk_begin(b) / k_chunks + 1);
  }

  //! Stream-K segment `j` (in `[0, block_segments(b))`) of block `b`: the first begins at
  //! `sk_begin(b)`, every later one at the start of a tile. A function of `(b, j)` alone, so a
  //! kernel need keep only `j` across its mainloop.
  TILEPIPE_HOST_DEVICE constexpr StreamKSegment block_segment(int b, int j) const {
    return segment_at(b, j == 0 ? sk_begin(b) : (sk_begin(b) / k_chunks + j) * k_chunks);
  }

  //! Segment `s` (in k order) of stream-K tile `tile`.
  TILEPIPE_HOST_DEVICE constexpr StreamKSegment segment(long long tile, int s) const {
    const int b = first_block(tile) + s;
    const long long first = first_iter(tile);
    const long long begin = sk_begin(b) > first ? sk_begin(b) : first;
    return segment_at(b, begin);
  }

  //! Whether segment `s` covers its whole tile (no workspace, no fix-up).
  TILEPIPE_HOST_DEVICE constexpr bool whole(const StreamKSegment& s) const {
    return s.k_tile_begin == 0 && s.k_tile_end == k_tiles;
  }

  //! Workspace slot of block `b`'s partial segment of stream-K tile `tile`: `2 * b` when the tile
  //! holds the block's first iteration, `2 * b + 1` when the block began in an earlier tile.
  TILEPIPE_HOST_DEVICE constexpr long long slot(int b, long long tile) const {
    return 2LL * b + (sk_begin(b) < first_iter(tile) ? 1 : 0);
  }

  //! Workspace slot of segment `s` of a stream-K tile whose first segment's slot is `first_slot`
  //! (`slot(first_block(tile), tile)`): every later segment begins its block's range, so its slot
  //! is `2 * (first_block(tile) + s)`. Equal to `slot(first_block(tile) + s, tile)`.
  TILEPIPE_HOST_DEVICE static constexpr long long segment_slot(long long first_slot, int s) {
    return s == 0 ? first_slot : 2 * ((first_slot >> 1) + s);
  }

  //! Workspace slots of partial accumulators (0 without a stream-K region).
  TILEPIPE_HOST_DEVICE constexpr long long slots() const { return sk_iters > 0 ? 2LL * blocks : 0; }

  //! Tiles of the stream-K region, each with an arrival counter in the workspace.
  TILEPIPE_HOST_DEVICE constexpr long long sk_tiles() const { return tiles - dp_tiles; }
};

//! The partition of `tiles` work tiles of `k_tiles` k-tiles each, in `k_chunks` chunks per tile
//! (clamped to `[1, k_tiles]`; 0 or less, the default, means `k_tiles`: one chunk per k-tile), over
//! a grid of at most `blocks` blocks: `min(blocks, tiles x k_chunks)` blocks (at least 1), so none
//! is idle. Without work (no tile or no k-tile) everything is "data-parallel" and the region is
//! empty.
TILEPIPE_HOST_DEVICE constexpr StreamKPartition stream_k_partition(long long tiles, int k_tiles,
                                                                   int blocks, int k_chunks = 0) {
  StreamKPartition p;
  p.tiles = tiles > 0 ? tiles : 0;
  p.k_tiles = k_tiles > 0 ? k_tiles : 0;
  p.k_chunks = k_chunks <= 0 || k_chunks > p.k_tiles ? p.k_tiles : k_chunks;
  const long long work = p.tiles * p.k_chunks;
  long long g = blocks > 0 ? blocks : 1;
  if (g > work) g = work > 0 ? work : 1;
  p.blocks = static_cast<int>(g);
  if (work == 0) {
    p.dp_tiles = p.tiles;
    return p;
  }
  const long long waves = p.tiles / g;
  const long long rest = p.tiles % g;
  p.dp_tiles = rest == 0 ? p.tiles : waves >= 1 ? (waves - 1) * g : 0;
  p.sk_iters = (p.tiles - p.dp_tiles) * p.k_chunks;
  p.share = p.sk_iters / g;
  p.longer = p.sk_iters % g;
  return p;
}

}  // namespace tilepipe
