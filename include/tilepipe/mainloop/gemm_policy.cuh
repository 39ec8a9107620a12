#pragma once
//! \file
//! GemmPolicy: the tuning knobs of a multistage GEMM in one place.

#include "../layout/tile_shape.cuh"

namespace tilepipe {

//! Block tile, warp tile and stage count of a multistage mainloop.
//!
//! \tparam TileM, TileN, TileK  the block's tile of D (TileM x TileN) and its k-tile depth
//! \tparam WarpM, WarpN         each warp's tile of D; the block has
//!                              (TileM / WarpM) x (TileN / WarpN) warps
//! \tparam Stages               shared-memory stages in the ring (2..6 is the useful range)
template <int TileM, int TileN, int TileK, int WarpM, int WarpN, int Stages>
struct GemmPolicy {
  static_assert(TileK % 16 == 0, "GemmPolicy: TileK must be a multiple of 16 for m16n8k16");
  static_assert(WarpM % 16 == 0 && WarpN % 16 == 0,
                "GemmPolicy: the warp tile must be a multiple of 16 in M and in N");
  static_assert(TileM % WarpM == 0 && TileN % WarpN == 0,
                "GemmPolicy: the warp tile must divide the block tile");
  static_assert(Stages >= 2, "GemmPolicy: a multistage pipeline needs at least 2 stages");

  using Tile = GemmShape<TileM, TileN, TileK>;
  using Warp = GemmShape<WarpM, WarpN, TileK>;
  static constexpr int kStages = Stages;
  static constexpr int kWarpsM = TileM / WarpM;
  static constexpr int kWarpsN = TileN / WarpN;
  static constexpr int kThreads = 32 * kWarpsM * kWarpsN;
};

}  // namespace tilepipe
