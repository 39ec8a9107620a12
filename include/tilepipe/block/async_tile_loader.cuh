#pragma once
//! \file
//! AsyncTileLoader: all threads of a block copy one tile from global to shared memory with
//! 16-byte asynchronous copies on a `cuda::pipeline<cuda::thread_scope_thread>`.

#include <cuda/pipeline>

#include <cstdint>

#include "../arch/cp_async.cuh"
#include "../layout/matrix_view.cuh"
#include "../layout/thread_map.cuh"
#include "../numeric/element_traits.cuh"
#include "smem_tile.cuh"

namespace tilepipe {

//! Block-scope loader of `Rows x Cols` tiles of a row-major-stored matrix.
//!
//! \tparam Element  any type with ElementTraits (`__half`, `__nv_bfloat16`, `float`)
//! \tparam Rows     tile rows (the strided dimension)
//! \tparam Cols     tile columns (the contiguous dimension), a multiple of 8
//! \tparam Threads  threads of the block that take part; all of them must call `load`
//!
//! Each thread copies its chunks (see `TileThreadMap`) with
//! `cuda::memcpy_async(dst, src, cuda::aligned_size_t<16>(16), pipe)`, which compiles to
//! `cp.async.cg.shared.global` of 16 bytes. A chunk wholly outside the matrix is zero-filled by
//! `cp.async` with src-size 0, which reads nothing; a chunk that the matrix's row ends inside
//! reads only its in-bounds elements and is zero-padded. So a tile on the edge of the matrix
//! arrives zero-padded, and no byte outside the matrix is read.
//!
//! A mainloop that keeps one block tile for many k-tiles can decide once per block tile which of
//! a thread's chunks lie inside the matrix (`mask_rows` / `mask_cols`, an `EdgeMask`) and then
//! issue each whole k-tile with `load_masked`: unpredicated whole-chunk copies, `cp.async` with
//! src-size 0 for the chunks outside, and no per-chunk bounds arithmetic.
//!
//! Requirements (`GemmMultistage::can_implement` checks them for its operands): `src.data` and
//! `src.ld * sizeof(Element)` are multiples of 16 bytes; tile coordinates are non-negative.
//! `load_narrow` needs them to be multiples of its `copy_bytes` only (16, 8, 4 or 2).
//!
//! \code
//! using Loader = tilepipe::AsyncTileLoader<__half, 128, 32, 128>;
//! Loader loader(tilepipe::MatrixView<const __half>{a, m, k, lda}, threadIdx.x);
//! loader.load(ring.write_stage().a, block_m0, k_tile * 32, ring.pipeline());
//! ring.producer_commit();
//! \endcode
template <class Element, int Rows, int Cols, int Threads>
class AsyncTileLoader {
  static_assert(is_supported_element_v<Element>,
                "AsyncTileLoader: the element type has no ElementTraits specialization "
                "(numeric/element_traits.cuh)");
  using Traits = ElementTraits<Element>;

 public:
  using Tile = SmemTile<Element, Rows, Cols>;
  using Layout = typename Tile::Layout;
  using ThreadMap = TileThreadMap<Rows, Cols, Threads, Traits::kBytes>;
  //! Elements per 16-byte copy.
  static constexpr int kElementsPerChunk = Traits::kChunkElements;
  //! 16-byte copies per thread per tile.
  static constexpr int kIterations = ThreadMap::kIterations;

  //! `thread` is this thread's index among the `Threads` participants.
  TILEPIPE_DEVICE AsyncTileLoader(MatrixView<const Element> src, int thread)
      : src_(src), thread_(thread) {}

  //! Issues the copies of the tile whose first element is `(row0, col0)` of the matrix into
  //! `dst`. Completion: the caller commits and waits on `pipe` (see `SmemRingBuffer`).
  template <class Pipeline>
  TILEPIPE_DEVICE void load(Tile& dst, int row0, int col0, Pipeline& pipe) const {
    // A tile wholly inside the matrix (the common case) needs no per-chunk predicate.
    const bool tile_inside = contains(row0, col0);
    if constexpr (kStrided) {
      if (tile_inside) {
        load_interior(dst, row0, col0, pipe);
        return;
      }
    }
    TILEPIPE_UNROLL
    for (int it = 0; it < ThreadMap::kIterations; ++it) {
      if (!ThreadMap::valid(thread_, it)) break;
      const int row = row0 + ThreadMap::row(thread_, it);
      const int col = col0 + ThreadMap::col(thread_, it);
      Element* chunk_dst =
          dst.data + Layout::chunk_offset(ThreadMap::linear_chunk(thread_, it)) * kElementsPerChunk;
      if (tile_inside || (row < src_.rows && col + kElementsPerChunk <= src_.cols)) {
        cuda::memcpy_async(chunk_dst, src_.ptr(row, col), cuda::aligned_size_t<16>(16), pipe);
      } else {
        copy_edge_chunk(chunk_dst, row, col);
      }
    }
  }

  //! Which of this thread's chunks of a tile lie inside the matrix, for tiles that are whole along
  //! one dimension (a full k-tile is whole along K): the chunks of iterations `it < rows` are in
  //! rows inside the matrix, and each has its first `cols` elements (0 .. kElementsPerChunk) in
  //! columns inside it. Fixed for all the k-tiles of a block tile.
  struct EdgeMask {
    int rows;
    int cols;
  };
  //! The mask of tiles whose first row is `row0` and whose columns all lie inside the matrix.
  TILEPIPE_DEVICE EdgeMask mask_rows(int row0) const {
    if constexpr (kStrided) {
      const int left =
          src_.rows - row0 - ThreadMap::row(thread_, 0);  // rows from this thread's first
      const int rows =
          left <= 0 ? 0 : (left + ThreadMap::kRowsPerIteration - 1) / ThreadMap::kRowsPerIteration;
      return {rows < kIterations ? rows : kIterations, kElementsPerChunk};
    } else {
      (void)row0;
      return {kIterations, kElementsPerChunk};  // unused: load_masked takes the general path
    }
  }
  //! The mask of tiles whose first column is `col0` and whose rows all lie inside the matrix.
  TILEPIPE_DEVICE EdgeMask mask_cols(int col0) const {
    if constexpr (kStrided) {
      const int left = src_.cols - col0 - ThreadMap::col(thread_, 0);  // this thread's chunk column
      return {kIterations, left <= 0 ? 0 : left < kElementsPerChunk ? left : kElementsPerChunk};
    } else {
      (void)col0;
      return {kIterations, kElementsPerChunk};
    }
  }

  //! Issues share `share` of `shares` (as in `load_interior`) of this thread's copies of the tile
  //! at `(row0, col0)`, whose chunks inside the matrix `mask` gives (`mask_rows` / `mask_cols` of
  //! the same block tile). Whole chunks are one 16-byte `cp.async`, chunks outside one with
  //! src-size 0 (nothing read), and a chunk the matrix's row ends inside is copied element by
  //! element. Loader shapes whose chunks are not a fixed number of rows apart take `load`'s
  //! per-chunk checks instead (share 0 issues the whole tile).
  template <class Pipeline>
  TILEPIPE_DEVICE void load_masked(Tile& dst, int row0, int col0, EdgeMask mask, Pipeline& pipe,
                                   int share = 0, int shares = 1) const {
    if constexpr (kStrided) {
      const Element* src =
          src_.ptr(row0 + ThreadMap::row(thread_, 0), col0 + ThreadMap::col(thread_, 0));
      const std::int64_t src_step = ThreadMap::kRowsPerIteration * src_.ld;
      Element* chunk0 =
          dst.data + Layout::chunk_offset(ThreadMap::linear_chunk(thread_, 0)) * kElementsPerChunk;
      TILEPIPE_UNROLL
      for (int it = 0; it < kIterations; ++it) {
        if (it * shares / kIterations != share) continue;
        const int valid = it < mask.rows ? mask.cols : 0;  // elements of the chunk inside
        Element* chunk_dst = chunk0 + it * Threads * kElementsPerChunk;
        if (valid == kElementsPerChunk || valid == 0) {
          arch::cp_async_zfill_16(chunk_dst, valid != 0 ? src + it * src_step : src_.data,
                                  valid != 0 ? 16 : 0);
        } else {
          copy_partial_chunk(chunk_dst, src + it * src_step, valid);
        }
      }
    } else {
      (void)mask;
      (void)shares;
      if (share == 0) load(dst, row0, col0, pipe);
    }
  }

  //! `load` for a matrix whose data pointer and leading dimension are only `copy_bytes`-aligned
  //! (16, 8, 4, or 2 = the element size; a value uniform over the block, chosen at run time). A
  //! chunk moves as 16 / copy_bytes `cp.async` of copy_bytes bytes (16: `.cg`, 8 and 4: `.ca`).
  //! There is no 2-byte `cp.async`, so at 2 bytes, and for a chunk the matrix's row ends inside
  //! (the copy granule would reach past the row), the chunk is loaded element by element with
  //! ordinary loads and stored zero-padded with one 16-byte shared store: synchronous, ordered
  //! before the readers by the same barrier as the async copies. Nothing outside the matrix is
  //! read.
  template <class Pipeline>
  TILEPIPE_DEVICE void load_narrow(Tile& dst, int row0, int col0, Pipeline& pipe,
                                   int copy_bytes) const {
    (void)pipe;  // cp.async joins the thread's current group, as memcpy_async on `pipe` does
    TILEPIPE_UNROLL
    for (int it = 0; it < ThreadMap::kIterations; ++it) {
      if (!ThreadMap::valid(thread_, it)) break;
      const int row = row0 + ThreadMap::row(thread_, it);
      const int col = col0 + ThreadMap::col(thread_, it);
      Element* chunk_dst =
          dst.data + Layout::chunk_offset(ThreadMap::linear_chunk(thread_, it)) * kElementsPerChunk;
      const int left = src_.cols - col;
      const int inside = row >= src_.rows || left <= 0 ? 0
                         : left < kElementsPerChunk    ? left
                                                       : kElementsPerChunk;
      const Element* chunk_src = src_.ptr(row, col);
      if (copy_bytes == 16 && inside == kElementsPerChunk) {
        arch::cp_async_zfill_16(chunk_dst, chunk_src, 16);
      } else if (copy_bytes == 8 && inside % (8 / Traits::kBytes) == 0) {
        copy_pieces<8>(chunk_dst, chunk_src, inside);
      } else if (copy_bytes == 4 && inside % (4 / Traits::kBytes) == 0) {
        copy_pieces<4>(chunk_dst, chunk_src, inside);
      } else {
        copy_partial_chunk(chunk_dst, chunk_src, inside);
      }
    }
  }

  //! Whether the tile whose first element is `(row0, col0)` lies wholly inside the matrix.
  TILEPIPE_DEVICE bool contains(int row0, int col0) const {
    return row0 + Rows <= src_.rows && col0 + Cols <= src_.cols;
  }

  //! Issues share `share` of `shares` of this thread's copies of a tile that lies wholly inside
  //! the matrix (`contains(row0, col0)`; not checked): copy `it` belongs to share
  //! `it * shares / kIterations`. A mainloop can spread one tile's copies over its k-blocks this
  //! way; with `share` and `shares` known at compile time (an unrolled loop) the selection folds
  //! away, leaving unpredicated, branch-free copies that the compiler interleaves with the mma.
  template <class Pipeline>
  TILEPIPE_DEVICE void load_interior(Tile& dst, int row0, int col0, Pipeline& pipe, int share = 0,
                                     int shares = 1) const {
    if constexpr (kStrided) {
      // One source pointer, advanced by a fixed number of rows per chunk, and one destination
      // offset plus a constant per chunk: a handful of instructions per 16-byte copy.
      const Element* src =
          src_.ptr(row0 + ThreadMap::row(thread_, 0), col0 + ThreadMap::col(thread_, 0));
      const std::int64_t src_step = ThreadMap::kRowsPerIteration * src_.ld;
      Element* chunk0 =
          dst.data + Layout::chunk_offset(ThreadMap::linear_chunk(thread_, 0)) * kElementsPerChunk;
      TILEPIPE_UNROLL
      for (int it = 0; it < kIterations; ++it) {
        if (it * shares / kIterations != share) continue;
        cuda::memcpy_async(chunk0 + it * Threads * kElementsPerChunk, src + it * src_step,
                           cuda::aligned_size_t<16>(16), pipe);
      }
    } else {
      TILEPIPE_UNROLL
      for (int it = 0; it < kIterations; ++it) {
        if (it * shares / kIterations != share || !ThreadMap::valid(thread_, it)) continue;
        Element* chunk_dst = dst.data + Layout::chunk_offset(ThreadMap::linear_chunk(thread_, it)) *
                                            kElementsPerChunk;
        cuda::memcpy_async(
            chunk_dst,
            src_.ptr(row0 + ThreadMap::row(thread_, it), col0 + ThreadMap::col(thread_, it)),
            cuda::aligned_size_t<16>(16), pipe);
      }
    }
  }

 private:
  // Whether the threads' chunks of consecutive iterations are a fixed number of rows apart in
  // global memory and a fixed number of chunks apart in the swizzled tile (see
  // TileThreadMap::kRowStrided and SwizzledTileLayout::is_translation).
  static constexpr bool kStrided = ThreadMap::kRowStrided && Layout::is_translation(Threads);

  // A chunk that is partly or wholly outside the matrix. Wholly outside: the zero-fill form of
  // cp.async with src-size 0 reads nothing (its address is clamped into the matrix anyway).
  // Partly inside (the matrix's row ends inside the chunk): cp.async with a partial src-size is
  // a 16-byte read in hardware (compute-sanitizer reports it as one), which at the end of an
  // allocation reads past it. So load the valid elements one by one and store the chunk,
  // zero-padded, with an ordinary 16-byte shared store; the barrier in the consumer's wait
  // orders it like the async copies.
  TILEPIPE_DEVICE void copy_edge_chunk(Element* chunk_dst, int row, int col) const {
    if (row >= src_.rows || col >= src_.cols) {
      arch::cp_async_zfill_16(chunk_dst, src_.data, 0);
      return;
    }
    // Less than a chunk: a full chunk took the fast path.
    copy_partial_chunk(chunk_dst, src_.ptr(row, col), src_.cols - col);
  }

  // A chunk as 16 / Bytes copies of Bytes bytes, of which the first `inside` elements (a whole
  // number of copies) are read; the copies past them read nothing (src-size 0, at the matrix's
  // first element, which is Bytes-aligned) and write zeros.
  template <int Bytes>
  TILEPIPE_DEVICE void copy_pieces(Element* chunk_dst, const Element* chunk_src, int inside) const {
    constexpr int kPieceElements = Bytes / Traits::kBytes;
    TILEPIPE_UNROLL
    for (int p = 0; p < 16 / Bytes; ++p) {
      const bool read = p * kPieceElements < inside;
      arch::cp_async_ca_zfill<Bytes>(chunk_dst + p * kPieceElements,
                                     read ? chunk_src + p * kPieceElements : src_.data,
                                     read ? Bytes : 0);
    }
  }

  // The first `valid` (0 .. kElementsPerChunk) elements at `chunk_src`, zero-padded, stored to
  // the chunk at `chunk_dst` with one 16-byte shared store.
  TILEPIPE_DEVICE static void copy_partial_chunk(Element* chunk_dst, const Element* chunk_src,
                                                 int valid) {
    using Bits = typename Traits::Bits;
    alignas(16) Bits bits[kElementsPerChunk];
    TILEPIPE_UNROLL
    for (int e = 0; e < kElementsPerChunk; ++e) {
      bits[e] = e < valid ? reinterpret_cast<const Bits*>(chunk_src)[e] : Bits{0};
    }
    *reinterpret_cast<uint4*>(chunk_dst) = *reinterpret_cast<const uint4*>(bits);
  }

  MatrixView<const Element> src_;
  int thread_;
};

}  // namespace tilepipe
