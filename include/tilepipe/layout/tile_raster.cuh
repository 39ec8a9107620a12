#pragma once
//! \file
//! The order in which thread blocks walk the output tiles.
//!
//! Blocks with consecutive indices run at about the same time. Walking tiles row by row, a wave
//! of blocks would read one row of A tiles and every column of B tiles; walking them in groups
//! of `GroupM` tile rows, column by column inside a group, a wave touches a roughly square patch
//! of D, so the A and B tiles it reads are shared through L2.

#include "../detail/macros.cuh"

namespace tilepipe {

//! Tile coordinates of D.
struct TileCoord {
  int m;  //!< tile row
  int n;  //!< tile column
};

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
