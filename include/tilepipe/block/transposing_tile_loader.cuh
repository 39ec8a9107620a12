#pragma once
//! \file
//! TransposingTileLoader: all threads of a block copy one f32 tile from global to shared memory
//! transposed, with 4-byte asynchronous copies: a tile stored K-contiguous in global memory lands
//! MN-contiguous in shared memory, where the SIMT product's fragments load as 8-byte vectors of
//! adjacent rows or columns, which stall the product's FFMAs less than 16-byte loads along K.

#include <cstdint>

#include "../arch/cp_async.cuh"
#include "../detail/macros.cuh"
#include "../layout/matrix_view.cuh"
#include "../layout/thread_map.cuh"
#include "smem_tile.cuh"

namespace tilepipe {

//! Block-scope loader of `Rows x Cols` tiles of a row-major-stored f32 matrix (the operand's
//! storage view, e.g. an M x K A stored row-major) into `Cols x Rows` shared tiles: element
//! `(r, c)` of the source tile is element `(c, r)` of the shared one.
//!
//! The same interface as AsyncTileLoader, so MultistageMainloop can take either: `load` (bounds
//! checked per element), `mask_rows` / `mask_cols` and `load_masked` (an edge block's copies
//! with masks decided once per block tile), `load_interior` (unpredicated), and `load_narrow`
//! (`load`: a 4-byte copy needs no more than a float's own alignment). Each copy is
//! `cp.async.ca.shared.global` of 4 bytes; an element outside the matrix is one with src-size 0,
//! which reads nothing and writes a zero. So a tile on the matrix's edge arrives zero-padded,
//! and no byte outside the matrix is read.
//!
//! Four times the copy instructions of 16-byte copies, for fragments that stall the FFMAs less.
template <int Rows, int Cols, int Threads>
class TransposingTileLoader {
 public:
  using ThreadMap = TransposeThreadMap<Rows, Cols, Threads>;
  using Tile = SmemTile<float, Cols, Rows>;  // transposed
  using Layout = typename Tile::Layout;
  static constexpr int kIterations = ThreadMap::kIterations;

  //! `thread` is this thread's index among the `Threads` participants.
  TILEPIPE_DEVICE TransposingTileLoader(MatrixView<const float> src, int thread)
      : src_(src), thread_(thread), dst0_(dst_offset(thread, 0)) {}

  //! Issues the copies of the tile whose first element is `(row0, col0)` of the matrix, each
  //! checked against the matrix's bounds. Completion: the caller commits and waits on `pipe`.
  template <class Pipeline>
  TILEPIPE_DEVICE void load(Tile& dst, int row0, int col0, Pipeline& pipe) const {
    (void)pipe;  // cp.async joins the thread's current group, as memcpy_async on `pipe` does
    TILEPIPE_UNROLL
    for (int it = 0; it < kIterations; ++it) {
      const int row = row0 + ThreadMap::row(thread_, it), col = col0 + ThreadMap::col(thread_, it);
      const bool inside = row < src_.rows && col < src_.cols;
      arch::cp_async_ca_zfill<4>(dst.data + element(it), inside ? src_.ptr(row, col) : src_.data,
                                 inside ? 4 : 0);
    }
  }

  //! Which of this thread's copies of a tile lie inside the matrix, for tiles whole along one
  //! dimension: copy `it` does when its band is below `rows` and its column block below `cols`.
  //! Fixed for all the k-tiles of a block tile.
  struct EdgeMask {
    int rows;
    int cols;
  };
  //! The mask of tiles whose first row is `row0` and whose columns all lie inside the matrix.
  TILEPIPE_DEVICE EdgeMask mask_rows(int row0) const {
    const int left = src_.rows - row0 - ThreadMap::row(thread_, 0);
    const int bands = left <= 0 ? 0 : (left + ThreadMap::kBandRows - 1) / ThreadMap::kBandRows;
    return {bands < ThreadMap::kBands ? bands : ThreadMap::kBands, ThreadMap::kColumnBlocks};
  }
  //! The mask of tiles whose first column is `col0` and whose rows all lie inside the matrix.
  TILEPIPE_DEVICE EdgeMask mask_cols(int col0) const {
    const int left = src_.cols - col0 - ThreadMap::col(thread_, 0);
    const int blocks = left <= 0 ? 0 : (left + 7) / 8;
    return {ThreadMap::kBands,
            blocks < ThreadMap::kColumnBlocks ? blocks : ThreadMap::kColumnBlocks};
  }

  //! Issues share `share` of `shares` (as in `load_interior`) of this thread's copies of the tile
  //! at `(row0, col0)`, whose copies inside the matrix `mask` gives; the others read nothing and
  //! write zeros.
  template <class Pipeline>
  TILEPIPE_DEVICE void load_masked(Tile& dst, int row0, int col0, EdgeMask mask, Pipeline& pipe,
                                   int share = 0, int shares = 1) const {
    (void)pipe;
    const float* src = first_source(row0, col0);
    const std::int64_t band_step = std::int64_t(ThreadMap::kBandRows) * src_.ld;
    TILEPIPE_UNROLL
    for (int it = 0; it < kIterations; ++it) {
      if (it * shares / kIterations != share) continue;
      const bool inside =
          ThreadMap::band(it) < mask.rows && ThreadMap::column_block(it) < mask.cols;
      const float* p = src + ThreadMap::band(it) * band_step + ThreadMap::column_block(it) * 8;
      arch::cp_async_ca_zfill<4>(dst.data + element(it), inside ? p : src_.data, inside ? 4 : 0);
    }
  }

  //! Issues share `share` of `shares` of this thread's copies of a tile that lies wholly inside
  //! the matrix (`contains(row0, col0)`; not checked): copy `it` belongs to share
  //! `it * shares / kIterations`, as in AsyncTileLoader. `load_masked` with a mask of every copy,
  //! whose checks fold away.
  template <class Pipeline>
  TILEPIPE_DEVICE void load_interior(Tile& dst, int row0, int col0, Pipeline& pipe, int share = 0,
                                     int shares = 1) const {
    load_masked(dst, row0, col0, EdgeMask{ThreadMap::kBands, ThreadMap::kColumnBlocks}, pipe, share,
                shares);
  }

  //! `load`: every copy is 4 bytes, which any float's address allows.
  template <class Pipeline>
  TILEPIPE_DEVICE void load_narrow(Tile& dst, int row0, int col0, Pipeline& pipe,
                                   int copy_bytes) const {
    (void)copy_bytes;
    load(dst, row0, col0, pipe);
  }

  //! Whether the tile whose first element is `(row0, col0)` lies wholly inside the matrix.
  TILEPIPE_DEVICE bool contains(int row0, int col0) const {
    return row0 + Rows <= src_.rows && col0 + Cols <= src_.cols;
  }

  //! Element offset in the shared tile of thread `thread`'s copy `it` (the general formula).
  TILEPIPE_HOST_DEVICE static constexpr int dst_offset(int thread, int it) {
    return Layout::offset(ThreadMap::col(thread, it), ThreadMap::row(thread, it));
  }
  //! Whether every thread's copy `it` lands a fixed distance (thread 0's) from its copy 0: then
  //! a thread keeps one offset and adds constants (checked for every thread at compile time).
  TILEPIPE_HOST_DEVICE static constexpr bool translates() {
    for (int t = 0; t < Threads; ++t)
      for (int it = 0; it < kIterations; ++it)
        if (dst_offset(t, it) - dst_offset(t, 0) != dst_offset(0, it) - dst_offset(0, 0))
          return false;
    return true;
  }
  static constexpr bool kTranslates = translates();

 private:
  // This thread's copy `it`'s element offset in the shared tile.
  TILEPIPE_DEVICE int element(int it) const {
    if constexpr (kTranslates) return dst0_ + (dst_offset(0, it) - dst_offset(0, 0));
    else return dst_offset(thread_, it);
  }
  // The source of this thread's copy 0 of the tile at `(row0, col0)`.
  TILEPIPE_DEVICE const float* first_source(int row0, int col0) const {
    return src_.ptr(row0 + ThreadMap::row(thread_, 0), col0 + ThreadMap::col(thread_, 0));
  }

  MatrixView<const float> src_;
  int thread_;
  int dst0_;  // dst_offset(thread_, 0)
};

}  // namespace tilepipe
