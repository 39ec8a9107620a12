#pragma once
//! \file
//! The order in which thread blocks walk the output tiles, and where each tile sits.
//!
//! Blocks with consecutive indices run at about the same time. Walking tiles row by row, a wave
//! of blocks would read one row of A tiles and every column of B tiles; walking them in groups
//! of `GroupM` tile rows, column by column inside a group, a wave touches a roughly square patch
//! of D, so the A and B tiles it reads are shared through L2.
//!
//! Where each tile sits (tile_origin): a tile on D's last row or column of tiles moves back to
//! end on D's edge where it can, so that its loads need no masks.

#include "../detail/macros.cuh"

namespace tilepipe {

//! Tile coordinates of D.
struct TileCoord {
  int m;  //!< tile row
  int n;  //!< tile column
};

//! Where a block tile of D sits: its first element `(m0, n0)`, and its first `skip_m` rows and
//! `skip_n` columns that it computes but must not store.
struct TileOrigin {
  int m0, n0;
  int skip_m, skip_n;
};

//! How far tile_origin moves a tile that starts at `start` of `extent` back (0: not at all).
TILEPIPE_HOST_DEVICE constexpr int moved_back(int start, int tile, int extent, int granule) {
  const int over = start + tile - extent;
  return granule > 0 && over > 0 && extent >= tile && over % granule == 0 ? over : 0;
}

//! The origin of tile `t` of a `TileM x TileN` tiling of an `m x n` D. A tile that reaches past
//! D's last row (column) moves back to end on it, where D has a whole tile's rows (columns) and
//! the move is a multiple of `Granule` elements (0: no tile moves). Its loads then all lie inside
//! the operands, so a mainloop issues them unmasked, as for any inner tile; the rows (columns)
//! it moved over, the tile before it's, it computes again but skips (`skip_m`, `skip_n`). A
//! `Granule` of 16 bytes' worth of the operands' and D's smallest element keeps every 16-byte
//! access aligned. Every element of D is stored by exactly one tile (host-tested).
template <int TileM, int TileN, int Granule>
TILEPIPE_HOST_DEVICE constexpr TileOrigin tile_origin(TileCoord t, int m, int n) {
  const int m0 = t.m * TileM, n0 = t.n * TileN;
  const int move_m = moved_back(m0, TileM, m, Granule), move_n = moved_back(n0, TileN, n, Granule);
  return TileOrigin{m0 - move_m, n0 - move_n, move_m, move_n};
}

//! The rows (columns) before it that a tile at `origin` skips, tile_origin's `skip_m` (`skip_n`),
//! from its origin alone: only a moved tile's origin is not a multiple of the tile. (A kernel
//! computes it after the mainloop rather than keep it in a register through it.)
TILEPIPE_HOST_DEVICE constexpr int skipped_before(int origin, int tile) {
  return (tile - origin % tile) % tile;
}

//! tile_origin's `Granule` for operands and D of these types: 16 bytes of the smallest.
template <class ElementA, class ElementB, class ElementD>
TILEPIPE_HOST_DEVICE constexpr int move_granule() {
  constexpr int a = sizeof(ElementA), b = sizeof(ElementB), d = sizeof(ElementD);
  constexpr int ab = a < b ? a : b;
  return 16 / (ab < d ? ab : d);
}

//! Maps a linear block index to a tile of a `tiles_m x tiles_n` grid, `GroupM` tile rows at a
//! time. A bijection from `[0, tiles_m * tiles_n)` onto the grid (host-tested).
template <int GroupM>
struct GroupedRaster {
  static_assert(GroupM >= 1, "GroupedRaster: GroupM must be at least 1");

  TILEPIPE_HOST_DEVICE static constexpr TileCoord tile_of(int block, int tiles_m, int tiles_n) {
    const int blocks_per_group = GroupM * tiles_n;
    const int group = block / blocks_per_group;
    const int first_m = group * GroupM;
    // The last group may have fewer than GroupM rows.
    const int rows = tiles_m - first_m < GroupM ? tiles_m - first_m : GroupM;
    const int in_group = block - group * blocks_per_group;
    return TileCoord{first_m + in_group % rows, in_group / rows};
  }
};

}  // namespace tilepipe
