#pragma once
//! \file
//! Fp8ScaleFold: the k-block operator of the FP8 GEMM (GemmFp8Sm90, gemm_fp8.cuh), which
//! GemmKernelSm90 runs through the mainloop's per-k-block seam: it folds each k-tile's fp8
//! product into a consumer warpgroup's f32 accumulators, times the k-tile's scales (block-wise),
//! or adds it and applies the scales once after the last k-tile (tensorwise, row-wise). Also the
//! size of a scale block (kFp8ScaleBlock); the scale modes (Fp8Scaling) are in fp8_schedule.cuh,
//! which needs no CUDA.

#include <cstdint>
#include <type_traits>

#include "../detail/macros.cuh"
#include "fp8_schedule.cuh"

namespace tilepipe {

//! Rows, columns and depth of a scale block (kBlockwise): 128 of K, and 128 rows of B.
inline constexpr int kFp8ScaleBlock = 128;

namespace detail {

//! Where an FP8 GEMM's k-block operator (Fp8ScaleFold) finds the scales of a unit's group.
enum class Fp8ScaleGroups : int {
  kNone,      //!< a dense GEMM: one set of scales
  kStrided,   //!< group g's start `g * group_a` and `g * group_b` floats in (gemm_grouped_fp8.cuh)
  kPointers,  //!< group g's are arrays of their own, `a_of[g]` and `b_of[g]`, for the `rows[g]`
              //!< rows the preparing kernel checked (gemm_grouped_pointer_array_fp8.cuh)
};

//! The k-block operator of an FP8 GEMM (GemmKernelSm90's `KBlockOp`): folds each k-tile's fp8
//! product into the f32 accumulators of one consumer warpgroup, times its scales (`operator()`,
//! then `finish`). `Groups` says where a grouped GEMM's unit finds its group's scales (its `batch`
//! is its group; Fp8ScaleGroups), and there row-wise B's per-column scales are applied in
//! `finish` (the dense GEMM applies them in its epilogue, which does not know a row's group).
template <Fp8Scaling Mode, class Accumulators, Fp8ScaleGroups Groups = Fp8ScaleGroups::kNone>
class Fp8ScaleFold {
  static constexpr bool kPerGroup = Groups != Fp8ScaleGroups::kNone;
  static constexpr int kRegisters = Accumulators::kRegisters;
  //! Columns of the warpgroup's tile (N / 2 registers); 256 spans two blocks of B's scales.
  static constexpr int kN = 2 * kRegisters;
  static constexpr int kBlocksN = kN > kFp8ScaleBlock ? kN / kFp8ScaleBlock : 1;
  //! Whether the fold adds and `finish` scales (operator() says when).
  static constexpr bool kAddsThenScales = Mode != Fp8Scaling::kBlockwise && kBlocksN == 1;
  //! Whether `finish` multiplies each column by its scale_b (grouped row-wise).
  static constexpr bool kColumnScales = kPerGroup && Mode == Fp8Scaling::kRowwise;

 public:
  struct DenseParams {
    const float* a = nullptr;
    const float* b = nullptr;
    std::int64_t ld_a = 0;  //!< kBlockwise
    std::int64_t ld_b = 0;  //!< kBlockwise
    int m = 0;              //!< rows of A: rows past it read row M - 1's scales (never stored)
    int blocks_n = 0;       //!< kBlockwise: B's blocks of 128 rows, ceil(N / 128)
    int k_blocks = 0;       //!< kBlockwise: ceil(K / 128)
  };
  //! kStrided: floats from one group's scale_a and scale_b to the next's, and (row-wise) the
  //! columns of D: columns past it read column N - 1's scale (never stored).
  struct GroupParams : DenseParams {
    std::int64_t group_a = 0, group_b = 0;
    int n = 0;
  };
  //! kPointers: each group's scale arrays (`a` and `b` unused), block-wise its `ld_a`, and its
  //! rows (for `m`: rows past them read the last one's scales); `ld_b` is every group's.
  struct PointerParams : DenseParams {
    const float* const* a_of = nullptr;
    const float* const* b_of = nullptr;
    const std::int64_t* ld_a_of = nullptr;  //!< kBlockwise
    const int* rows = nullptr;
    int n = 0;
  };
  //! The kernel's parameters (the dense GEMM's without the groups' members, so that its kernels'
  //! parameters stay as they were).
  using Params = std::conditional_t<
      Groups == Fp8ScaleGroups::kNone, DenseParams,
      std::conditional_t<Groups == Fp8ScaleGroups::kStrided, GroupParams, PointerParams>>;

  //! For the warpgroup whose rows start at `m0`, columns at `n0`, k-tiles at `k_tile_begin`, of
  //! group `batch` (a grouped GEMM; else batch 0).
  TILEPIPE_DEVICE Fp8ScaleFold(const Params& p, int m0, int n0, int batch, int k_tile_begin) {
    if constexpr (Groups == Fp8ScaleGroups::kPointers) {
      DenseParams q = p;  // the group's own arrays, as a dense GEMM's
      q.a = p.a_of[batch];
      q.b = p.b_of[batch];
      if constexpr (Mode == Fp8Scaling::kBlockwise) q.ld_a = __ldg(p.ld_a_of + batch);
      q.m = __ldg(p.rows + batch);
      if constexpr (kColumnScales) {
        b_ = q.b;
        n0_ = n0;
        n_ = p.n;
      }
      start(q, 0, 0, m0, n0, k_tile_begin);
    } else if constexpr (Groups == Fp8ScaleGroups::kStrided) {
      if constexpr (kColumnScales) {
        b_ = p.b + batch * p.group_b;
        n0_ = n0;
        n_ = p.n;
      }
      start(p, batch * p.group_a, batch * p.group_b, m0, n0, k_tile_begin);
    } else {
      (void)batch;
      start(p, 0, 0, m0, n0, k_tile_begin);
    }
  }

  //! Block-wise: starts loading k-tile `kt`'s scales, which arrive during the wgmmas of the k-tile
  //! before it. Called for kt = 0, 1, ... in order, each before k-tile `kt` is folded and after
  //! `kt - 1` is; past the unit's end it loads the last k-block's again.
  TILEPIPE_DEVICE void prefetch(int /*kt*/) {
    if constexpr (Mode == Fp8Scaling::kBlockwise) load();
  }

  //! Tensorwise and row-wise on a tile up to 128 wide: `acc += partial`, the scales (the same for
  //! every k-tile) applied once in `finish`; an add where a multiply-add was ran 1.01-1.07 x as
  //! fast at M >= 4096 on the H200 (performance log 56). Otherwise `acc += partial * scale`, the
  //! scale of each register's row (and block of columns): block-wise, and the 256-wide tile,
  //! whose tensorwise and row-wise kernels spilled 12 bytes with the add and the final multiply.
  //! A `partial` narrower than `acc` (a 256-wide tile's halves) holds columns `128 * half ..`.
  template <class Partial>
  TILEPIPE_DEVICE void operator()(Accumulators& acc, const Partial& partial, int,
                                  int half = 0) const {
    // Block-wise: the k-tile's scale per row and block of columns.
    const float b00 = la0_ * lb0_, b10 = la1_ * lb0_, b01 = la0_ * lb1_, b11 = la1_ * lb1_;
    constexpr int kPartial = Partial::kRegisters;
    static_assert(kRegisters % kPartial == 0,
                  "Fp8ScaleFold: a partial must hold a whole part of the accumulators' columns");
    TILEPIPE_UNROLL
    for (int j = 0; j < kPartial; ++j) {
      // acc's register: the layout repeats every 8 columns, so a half is a run of registers.
      const int i = j + half * kPartial;
      if constexpr (kAddsThenScales) {
        acc.x[i] += partial.x[j];
      } else {
        const bool second_row = (i / 2) % 2 != 0;
        float s;
        if constexpr (Mode == Fp8Scaling::kBlockwise) {
          const bool second_block = kBlocksN == 2 && i >= kRegisters / 2;  // columns 128..
          s = second_block ? (second_row ? b11 : b01) : (second_row ? b10 : b00);
        } else if constexpr (Mode == Fp8Scaling::kTensorwise) {
          s = s0_;
        } else {
          s = second_row ? s1_ : s0_;
        }
        acc.x[i] = fmaf(partial.x[j], s, acc.x[i]);
      }
    }
  }

  //! After the unit's last fold: where the fold adds, `acc *= scale` (each register's row's);
  //! grouped row-wise, then `acc *= scale_b` of each register's column.
  TILEPIPE_DEVICE void finish(Accumulators& acc) const {
    if constexpr (kAddsThenScales) {
      TILEPIPE_UNROLL
      for (int i = 0; i < kRegisters; ++i)
        acc.x[i] *= Mode == Fp8Scaling::kRowwise && (i / 2) % 2 != 0 ? s1_ : s0_;
    }
    if constexpr (kColumnScales) {
      const int t = static_cast<int>(threadIdx.x % 128);
      TILEPIPE_UNROLL
      for (int i = 0; i < kRegisters; ++i)
        acc.x[i] *= __ldg(b_ + min(n0_ + Accumulators::col_of(t, i), n_ - 1));
    }
  }

 private:
  // The constructor's work, with the unit's group's scales `group_a` and `group_b` floats in.
  TILEPIPE_DEVICE void start(const DenseParams& p, std::int64_t group_a, std::int64_t group_b,
                             int m0, int n0, int k_tile_begin) {
    const int t = static_cast<int>(threadIdx.x % 128);
    // This thread's two rows of the 64 (Accumulators::row_of: i / 2 % 2 picks the second).
    const int r0 = min(m0 + Accumulators::row_of(t, 0), p.m - 1);
    const int r1 = min(m0 + Accumulators::row_of(t, 2), p.m - 1);
    if constexpr (Mode == Fp8Scaling::kTensorwise) {
      s0_ = __ldg(p.a + group_a) * __ldg(p.b + group_b);
    } else if constexpr (Mode == Fp8Scaling::kRowwise) {
      s0_ = __ldg(p.a + group_a + r0);
      s1_ = __ldg(p.a + group_a + r1);
    } else {
      ld_a_ = p.ld_a;
      a_ = p.a + group_a + k_tile_begin * ld_a_ + r0;
      a1_ = r1 - r0;
      // A split-column tile's second half may lie wholly past N: it reads the last block's
      // scales (never stored), as rows past M read row M - 1's.
      const int nb = min(n0 / kFp8ScaleBlock, p.blocks_n - 1);
      b_ = p.b + group_b + static_cast<std::int64_t>(nb) * p.ld_b + k_tile_begin;
      // A 256-wide tile's second block may lie past N: it then reads the first's scales.
      b1_ = nb + 1 < p.blocks_n ? p.ld_b : 0;
      blocks_left_ = p.k_blocks - k_tile_begin;
    }
  }

  // Starts loading the scales of the next k-block: the unit's first, then each one after it up to
  // K's last, which is then loaded again.
  TILEPIPE_DEVICE void load() {
    la0_ = __ldg(a_);
    la1_ = __ldg(a_ + a1_);
    lb0_ = __ldg(b_);
    if constexpr (kBlocksN == 2) lb1_ = __ldg(b_ + b1_);
    if (--blocks_left_ > 0) {
      a_ += ld_a_;
      ++b_;
    }
  }

  float s0_ = 0.0f, s1_ = 0.0f;  // tensorwise: the scale; row-wise: this thread's two rows'
  float la0_ = 0.0f, la1_ = 0.0f, lb0_ = 0.0f, lb1_ = 0.0f;  // block-wise: the k-tile's, loading
  const float* a_ = nullptr;  // scale_a of this thread's first row, the next k-block to load
  int a1_ = 0;                // from it to its second row's
  // scale_b of the tile's first block of columns, the same k-block (grouped row-wise: of the
  // group's first column)
  const float* b_ = nullptr;
  std::int64_t b1_ = 0;  // from it to the second block's (a 256-wide tile)
  std::int64_t ld_a_ = 0;
  int blocks_left_ = 0;  // k-blocks from the next one to load to K's last
  int n0_ = 0, n_ = 0;   // grouped row-wise: the tile's first column, and N
};

}  // namespace detail

}  // namespace tilepipe
