#pragma once
//! \file
//! Fp8ScaleFold: the k-block operator of the FP8 GEMM (GemmFp8Sm90, gemm_fp8.cuh), which
//! GemmKernelSm90 runs through the mainloop's per-k-block seam: it folds each k-tile's fp8
//! product into a consumer warpgroup's f32 accumulators, times the k-tile's scales. Also the scale
//! modes (Fp8Scaling), whose layouts gemm_fp8.cuh's table gives.

#include <cstdint>

#include "../detail/macros.cuh"

namespace tilepipe {

//! How the f32 scales of an FP8 GEMM are laid out (gemm_fp8.cuh's table).
enum class Fp8Scaling {
  kTensorwise,  //!< one scale for A, one for B
  kRowwise,     //!< one per row of A, one per column of D
  kBlockwise,   //!< A: per row per 128 of K; B: per 128 x 128 block (DeepSeek-V3)
};

//! Rows, columns and depth of a scale block (kBlockwise): 128 of K, and 128 rows of B.
inline constexpr int kFp8ScaleBlock = 128;

namespace detail {

//! The k-block operator of an FP8 GEMM (GemmKernelSm90's `KBlockOp`): folds each k-tile's fp8
//! product into the f32 accumulators of one consumer warpgroup, times its scales.
template <Fp8Scaling Mode, class Accumulators>
class Fp8ScaleFold {
  static constexpr int kRegisters = Accumulators::kRegisters;
  //! Columns of the warpgroup's tile (N / 2 registers); 256 spans two blocks of B's scales.
  static constexpr int kN = 2 * kRegisters;
  static constexpr int kBlocksN = kN > kFp8ScaleBlock ? kN / kFp8ScaleBlock : 1;

 public:
  struct Params {
    const float* a = nullptr;
    const float* b = nullptr;
    std::int64_t ld_a = 0;  //!< kBlockwise
    std::int64_t ld_b = 0;  //!< kBlockwise
    int m = 0;              //!< rows of A: rows past it read row M - 1's scales (never stored)
    int blocks_n = 0;       //!< kBlockwise: B's blocks of 128 rows, ceil(N / 128)
    int k_blocks = 0;       //!< kBlockwise: ceil(K / 128)
  };

  //! For the warpgroup whose rows start at `m0`, columns at `n0`, k-tiles at `k_tile_begin`.
  TILEPIPE_DEVICE Fp8ScaleFold(const Params& p, int m0, int n0, int /*batch*/, int k_tile_begin) {
    const int t = static_cast<int>(threadIdx.x % 128);
    // This thread's two rows of the 64 (Accumulators::row_of: i / 2 % 2 picks the second).
    const int r0 = min(m0 + Accumulators::row_of(t, 0), p.m - 1);
    const int r1 = min(m0 + Accumulators::row_of(t, 2), p.m - 1);
    if constexpr (Mode == Fp8Scaling::kTensorwise) {
      s0_ = __ldg(p.a) * __ldg(p.b);
    } else if constexpr (Mode == Fp8Scaling::kRowwise) {
      s0_ = __ldg(p.a + r0);
      s1_ = __ldg(p.a + r1);
    } else {
      a0_ = p.a + r0;
      a1_ = p.a + r1;
      ld_a_ = p.ld_a;
      const int nb = n0 / kFp8ScaleBlock;
      b0_ = p.b + static_cast<std::int64_t>(nb) * p.ld_b;
      // A 256-wide tile's second block may lie past N: it then reads the first's scales.
      b1_ = nb + 1 < p.blocks_n ? b0_ + p.ld_b : b0_;
      k_block_ = k_tile_begin;
      last_k_block_ = p.k_blocks - 1;
      load(k_block_);
    }
  }

  //! Block-wise: takes k-tile `kt`'s scales, loaded one k-tile earlier, and starts loading the
  //! next one's, which then arrive during this k-tile's wait, wgmmas and fold. Called before the
  //! consumer waits for k-tile `kt` (kt = 0, 1, ... in order).
  TILEPIPE_DEVICE void prefetch(int /*kt*/) {
    if constexpr (Mode == Fp8Scaling::kBlockwise) {
      s0_ = la0_ * lb0_;
      s1_ = la1_ * lb0_;
      if constexpr (kBlocksN == 2) {
        s2_ = la0_ * lb1_;
        s3_ = la1_ * lb1_;
      }
      k_block_ = min(k_block_ + 1, last_k_block_);
      load(k_block_);
    }
  }

  //! `acc += partial * scale`, the scale of each register's row (and block of columns).
  TILEPIPE_DEVICE void operator()(Accumulators& acc, const Accumulators& partial, int) const {
    TILEPIPE_UNROLL
    for (int i = 0; i < kRegisters; ++i) {
      const bool second_row = (i / 2) % 2 != 0;
      float s;
      if constexpr (Mode == Fp8Scaling::kTensorwise) {
        s = s0_;
      } else if constexpr (kBlocksN == 2) {
        const bool second_block = i >= kRegisters / 2;  // columns 128.. (col_of: 8 * (i / 4))
        s = second_block ? (second_row ? s3_ : s2_) : (second_row ? s1_ : s0_);
      } else {
        s = second_row ? s1_ : s0_;
      }
      acc.x[i] = fmaf(partial.x[i], s, acc.x[i]);
    }
  }

 private:
  // Starts loading the scales of k-block `kb` (block-wise).
  TILEPIPE_DEVICE void load(int kb) {
    const std::int64_t ka = static_cast<std::int64_t>(kb) * ld_a_;
    la0_ = __ldg(a0_ + ka);
    la1_ = __ldg(a1_ + ka);
    lb0_ = __ldg(b0_ + kb);
    if constexpr (kBlocksN == 2) lb1_ = __ldg(b1_ + kb);
  }

  float s0_ = 0.0f, s1_ = 0.0f, s2_ = 0.0f, s3_ = 0.0f;      // this k-tile's, per row and block
  float la0_ = 0.0f, la1_ = 0.0f, lb0_ = 0.0f, lb1_ = 0.0f;  // the next one's, as loaded
  const float* a0_ = nullptr;  // scale_a of this thread's two rows, k-block 0
  const float* a1_ = nullptr;
  const float* b0_ = nullptr;  // scale_b of the tile's (two) blocks of columns, k-block 0
  const float* b1_ = nullptr;
  std::int64_t ld_a_ = 0;
  int k_block_ = 0, last_k_block_ = 0;
};

}  // namespace detail

}  // namespace tilepipe
