#pragma once
//! \file
//! StagedEpilogue: D = op(alpha * acc + beta * C), converted to D's type, with the block's tile
//! staged through shared memory so that global loads of C and stores of D are 16-byte vectors
//! along D's contiguous dimension. `op` is an output operator (output_ops.cuh).

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../detail/macros.cuh"
#include "../layout/math.cuh"
#include "../layout/tile_raster.cuh"
#include "../layout/tile_shape.cuh"
#include "../numeric/element_traits.cuh"
#include "output_ops.cuh"
#include "output_store.cuh"
#include "../warp/fragments.cuh"

namespace tilepipe {

//! Block-scope epilogue of a GEMM.
//!
//! \tparam ElementD        type of C and D: `float`, `__half` or `__nv_bfloat16`
//! \tparam Policy          the `GemmPolicy` of the mainloop whose accumulators it consumes
//! \tparam SmemBudgetBytes shared memory the staging buffer may take (e.g. the size of the
//!                         mainloop's ring, which it overlaps); 0: the least it needs
//! \tparam OutputOp        what happens to each `alpha * acc + beta * C` before the conversion
//!                         (output_ops.cuh); `Identity` by default
//! \tparam AnyAlignment    false: C, D and their leading dimensions are 16-byte aligned, and
//!                         lines go out as 16-byte vectors; true: they need only be aligned to
//!                         the element, and every element of C and D is read and written alone
//!
//! C and D share a layout (row- or column-major, chosen at run time) but may have different
//! leading dimensions. C is read only when `beta != 0`, so with `beta == 0` it may be null or
//! hold NaNs. Elements outside the `m x n` problem are never read or written.
//!
//! The tile goes out in slabs of whole warp rows: each pass stages a slab's accumulators in
//! shared memory (the warps of that slab write, then a barrier), and all threads store it. The
//! slab is as tall as `SmemBudgetBytes` allows, so the whole tile goes in one pass when the
//! budget holds it and in one pass per warp row at the least.
template <class ElementD, class Policy, std::size_t SmemBudgetBytes = 0, class OutputOp = Identity,
          bool AnyAlignment = false>
class StagedEpilogue {
  static_assert(is_supported_element_v<ElementD>,
                "StagedEpilogue: D must be float, __half or __nv_bfloat16 (a type "
                "with ElementTraits)");

  using Tile = typename Policy::Tile;
  using Warp = typename Policy::Warp;
  static constexpr int kThreads = Policy::kThreads;
  //! Elements of D in one 16-byte vector.
  static constexpr int kVector = ElementTraits<ElementD>::kChunkElements;
  static constexpr int kWarpsM = Tile::kM / Warp::kM;
  //! Floats of a staging buffer for a slab of `rows` rows, in either layout (see the strides).
  static constexpr std::size_t staged_floats(int rows) {
    const std::size_t row_major = std::size_t(rows) * (Tile::kN + 8);
    const std::size_t col_major = std::size_t(Tile::kN) * (rows + 4);
    return row_major > col_major ? row_major : col_major;
  }
  //! Warp rows per slab: the most (dividing the block's warp rows) whose staging fits the budget.
  static constexpr int slab_warp_rows() {
    for (int w = kWarpsM; w > 1; --w)
      if (kWarpsM % w == 0 && staged_floats(w * Warp::kM) * sizeof(float) <= SmemBudgetBytes)
        return w;
    return 1;
  }

 public:
  //! Rows of D per pass, and passes per tile.
  static constexpr int kPassM = slab_warp_rows() * Warp::kM;
  static constexpr int kPasses = Tile::kM / kPassM;

 private:
  //! Padding of a staging row (floats), chosen so that the accumulator writes of a warp are free
  //! of bank conflicts: row-major, lanes write float2 at (g, 2t) and a stride of 8 banks per row
  //! puts each half-warp on 32 distinct banks; column-major, lanes write floats at (2t, g) and a
  //! stride of 4 banks (with kPassM a multiple of 32) puts the warp on 32 distinct banks. Both
  //! keep rows 16-byte aligned.
  static constexpr int kRowMajorStride = Tile::kN + 8;  // staging [PassM][TileN + 8]
  static constexpr int kColMajorStride = kPassM + 4;    // staging [TileN][PassM + 4]
  static constexpr int kStagedFloats = static_cast<int>(staged_floats(kPassM));
  static_assert(kPassM % kVector == 0 && Tile::kN % kVector == 0,
                "StagedEpilogue: the tile must hold whole 16-byte vectors of D");

 public:
  //! The mainloop's accumulators (f32, or f16 under MathF16Accumulate); staged in f32.
  using Accumulators = AccumulatorsFor<Warp::kM, Warp::kN, typename Policy::Math>;

  struct SharedStorage {
    alignas(16) float staged[kStagedFloats];  // (PassM, TileN + 8) or (TileN, PassM + 4)
  };

  using Params = EpilogueParams<ElementD, OutputOp>;
  using Element = ElementD;  //!< C's and D's

  TILEPIPE_DEVICE StagedEpilogue(SharedStorage& storage, int thread)
      : storage_(storage), thread_(thread) {}

  //! Writes the block's tile at `(block_m0, block_n0)`, but not its first `skip_m` rows and
  //! `skip_n` columns: those of the tile before it, where GemmKernel moved an edge tile back
  //! inside D (tile_origin), multiples of 16 bytes of D along its contiguous dimension. The
  //! calling warp's accumulators cover the warp tile at `(warp_m0, warp_n0)` of the block tile.
  //! All threads of the block call it, after the shared memory the storage overlaps (the
  //! mainloop's) is no longer in use.
  TILEPIPE_DEVICE void operator()(const Accumulators& acc, const Params& p, int block_m0,
                                  int block_n0, int warp_m0, int warp_n0, int skip_m = 0,
                                  int skip_n = 0) {
    // One instantiation per layout and per use of C, so that the store loop's shape, strides and
    // vector count are compile-time constants.
    const TileOrigin at{block_m0, block_n0, skip_m, skip_n};
    if (p.layout == Layout::kRowMajor) {
      if (p.beta != 0.0f) run<true, true>(acc, p, at, warp_m0, warp_n0);
      else run<true, false>(acc, p, at, warp_m0, warp_n0);
    } else {
      if (p.beta != 0.0f) run<false, true>(acc, p, at, warp_m0, warp_n0);
      else run<false, false>(acc, p, at, warp_m0, warp_n0);
    }
  }

 private:
  template <bool kRowMajor, bool kBeta>
  TILEPIPE_DEVICE void run(const Accumulators& acc, const Params& p, const TileOrigin& at,
                           int warp_m0, int warp_n0) {
    TILEPIPE_UNROLL
    for (int pass = 0; pass < kPasses; ++pass) {
      const int slab_m0 = pass * kPassM;  // first row of the slab within the block tile
      if (pass > 0) __syncthreads();      // the previous slab has been stored
      if (warp_m0 / kPassM == pass) stage<kRowMajor>(acc, p.alpha, warp_m0 - slab_m0, warp_n0);
      __syncthreads();
      store_slab<kRowMajor, kBeta>(p, at.m0 + slab_m0, at.n0, at.skip_m - slab_m0, at.skip_n);
    }
  }

  // alpha * acc of this warp (rows row0 .. row0 + Warp::kM of the slab) into the staging buffer,
  // in D's orientation.
  template <bool kRowMajor>
  TILEPIPE_DEVICE void stage(const Accumulators& acc, float alpha, int row0, int warp_n0) {
    const int lane = thread_ % 32;
    float* s = storage_.staged;
    TILEPIPE_UNROLL
    for (int mi = 0; mi < Accumulators::kTilesM; ++mi) {
      TILEPIPE_UNROLL
      for (int ni = 0; ni < Accumulators::kTilesN; ++ni) {
        TILEPIPE_UNROLL
        for (int half = 0; half < 2; ++half) {  // registers {0,1} and {2,3}: two adjacent columns
          const int r = row0 + Accumulators::row_of(lane, mi, 2 * half);
          const int c = warp_n0 + Accumulators::col_of(lane, ni, 2 * half);
          const float x0 = alpha * acc.get(mi, ni, 2 * half);
          const float x1 = alpha * acc.get(mi, ni, 2 * half + 1);
          if constexpr (kRowMajor) {
            *reinterpret_cast<float2*>(s + r * kRowMajorStride + c) = make_float2(x0, x1);
          } else {
            s[c * kColMajorStride + r] = x0;
            s[(c + 1) * kColMajorStride + r] = x1;
          }
        }
      }
    }
  }

  // The staged slab (rows slab_m0 .. + PassM of D, columns block_n0 .. + TileN) to global memory
  // in 16-byte vectors along D's contiguous dimension, adding beta * C, but not its first
  // `skip_rows` rows and `skip_cols` columns (none where negative). "Lines" run along D's
  // contiguous dimension (rows of a row-major D, columns of a column-major one).
  template <bool kRowMajor, bool kBeta>
  TILEPIPE_DEVICE void store_slab(const Params& p, int slab_m0, int block_n0, int skip_rows,
                                  int skip_cols) {
    constexpr int kInner = kRowMajor ? Tile::kN : kPassM;  // elements per line
    constexpr int kLines = kRowMajor ? kPassM : Tile::kN;
    constexpr int kStride = kRowMajor ? kRowMajorStride : kColMajorStride;
    constexpr int kVectorsPerLine = kInner / kVector;
    constexpr int kVectors = kLines * kVectorsPerLine;
    const int inner_limit = kRowMajor ? p.n - block_n0 : p.m - slab_m0;
    const int line_limit = kRowMajor ? p.m - slab_m0 : p.n - block_n0;
    const int inner_begin = kRowMajor ? skip_cols : skip_rows;
    const int line_begin = kRowMajor ? skip_rows : skip_cols;
    const std::int64_t first = kRowMajor ? slab_m0 * p.ldd + block_n0 : block_n0 * p.ldd + slab_m0;
    const std::int64_t first_c =
        kBeta ? (kRowMajor ? slab_m0 * p.ldc + block_n0 : block_n0 * p.ldc + slab_m0) : 0;

    // Whole slab inside D, and every thread stores the same number of vectors at a fixed offset
    // in its line: unrolled, unchecked, with pointers advanced by a fixed number of lines.
    constexpr bool kRegular =
        !AnyAlignment && kThreads % kVectorsPerLine == 0 && kVectors % kThreads == 0;
    if constexpr (kRegular) {
      if (inner_limit >= kInner && line_limit >= kLines && inner_begin <= 0 && line_begin <= 0) {
        constexpr int kLinesPerStep = kThreads / kVectorsPerLine;
        const int line = thread_ / kVectorsPerLine;
        const int inner = thread_ % kVectorsPerLine * kVector;
        const float* src = storage_.staged + line * kStride + inner;
        ElementD* dst = p.d + first + line * p.ldd + inner;
        const ElementD* c = kBeta ? p.c + first_c + line * p.ldc + inner : nullptr;
        const std::int64_t dst_step = kLinesPerStep * p.ldd;
        const std::int64_t c_step = kBeta ? kLinesPerStep * p.ldc : 0;
        TILEPIPE_UNROLL
        for (int i = 0; i < kVectors / kThreads; ++i) {
          const int l = line + i * kLinesPerStep;
          store_vector<kRowMajor, kBeta>(src + i * kLinesPerStep * kStride, dst, c, p,
                                         row_of<kRowMajor>(slab_m0, block_n0, l, inner),
                                         col_of<kRowMajor>(slab_m0, block_n0, l, inner));
          dst += dst_step;
          if constexpr (kBeta) c += c_step;
        }
        return;
      }
    }
    // Edge slabs (and shapes without a regular assignment, and the AnyAlignment epilogue): every
    // vector is checked. A skip along the lines is a whole number of vectors.
    for (int v = thread_; v < kVectors; v += kThreads) {
      const int line = v / kVectorsPerLine;
      const int inner = v % kVectorsPerLine * kVector;
      if (line >= line_limit || inner >= inner_limit || line < line_begin || inner < inner_begin)
        continue;
      const float* src = storage_.staged + line * kStride + inner;
      ElementD* dst = p.d + first + line * p.ldd + inner;
      const ElementD* c = kBeta ? p.c + first_c + line * p.ldc + inner : nullptr;
      const int row = row_of<kRowMajor>(slab_m0, block_n0, line, inner);
      const int col = col_of<kRowMajor>(slab_m0, block_n0, line, inner);
      if (!AnyAlignment && inner + kVector <= inner_limit) {
        store_vector<kRowMajor, kBeta>(src, dst, c, p, row, col);
      } else {
        // The rest of the line, or (AnyAlignment) a whole vector's elements where it fits.
        const int left = inner_limit - inner;
        const int count = AnyAlignment && left > kVector ? kVector : left;
        detail::store_output_elements<ElementD, kRowMajor, kBeta>(src, count, dst, c, p.beta, p.op,
                                                                  row, col);
      }
    }
  }

  // Row and column in D of element `inner` of staged line `line` of the slab at (slab_m0,
  // block_n0): lines are D's rows when it is row-major, its columns otherwise.
  template <bool kRowMajor>
  TILEPIPE_DEVICE static int row_of(int slab_m0, int block_n0, int line, int inner) {
    (void)block_n0;
    return slab_m0 + (kRowMajor ? line : inner);
  }
  template <bool kRowMajor>
  TILEPIPE_DEVICE static int col_of(int slab_m0, int block_n0, int line, int inner) {
    (void)slab_m0;
    return block_n0 + (kRowMajor ? inner : line);
  }

  // One 16-byte vector of D whose first element is (row, col): kVector staged floats, then
  // beta * C and the output operator (store_output_vector).
  template <bool kRowMajor, bool kBeta>
  TILEPIPE_DEVICE void store_vector(const float* src, ElementD* dst, const ElementD* c,
                                    const Params& p, int row, int col) const {
    float x[kVector];
    // With 16-bit D a vector is 8 floats, read as two float4 32 bytes apart per thread: eight
    // consecutive threads (one phase of a 16-byte load) would span 256 bytes and meet twice on
    // each bank. Threads 4..7 of each eight read their halves in the other order, so each phase
    // covers all 32 banks once.
    // (Selects, not a run-time index into x, which would move x to local memory.)
    if constexpr (kVector == 8) {
      const bool swap = (thread_ >> 2) & 1;
      const float4 first = *reinterpret_cast<const float4*>(src + (swap ? 4 : 0));
      const float4 second = *reinterpret_cast<const float4*>(src + (swap ? 0 : 4));
      const float4 lo = swap ? second : first, hi = swap ? first : second;
      x[0] = lo.x;
      x[1] = lo.y;
      x[2] = lo.z;
      x[3] = lo.w;
      x[4] = hi.x;
      x[5] = hi.y;
      x[6] = hi.z;
      x[7] = hi.w;
    } else {
      const float4 f = *reinterpret_cast<const float4*>(src);
      x[0] = f.x;
      x[1] = f.y;
      x[2] = f.z;
      x[3] = f.w;
    }
    detail::store_output_vector<ElementD, kRowMajor, kBeta>(x, dst, c, p.beta, p.op, row, col);
  }

  SharedStorage& storage_;
  int thread_;
};

}  // namespace tilepipe
