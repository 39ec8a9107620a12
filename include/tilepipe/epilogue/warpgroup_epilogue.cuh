#pragma once
//! \file
//! WarpgroupEpilogue: D = op(alpha * acc + beta * C) straight from a warpgroup's wgmma
//! accumulators to global memory, one warpgroup at a time and without shared memory (the Hopper
//! tier's ring keeps all of it, and the producer is already filling it for the next tile).
//! Row-major D gets two adjacent elements per store; column-major D one. `op` is an output
//! operator (output_ops.cuh), the same as the Ampere tier's StagedEpilogue takes, with the same
//! `Params` (EpilogueParams).

#include <cstdint>

#include "../detail/macros.cuh"
#include "../layout/tile_shape.cuh"
#include "../numeric/element_traits.cuh"
#include "output_ops.cuh"
#include "output_store.cuh"

namespace tilepipe {

//! \tparam ElementD      `float`, `__half` or `__nv_bfloat16` (C and D)
//! \tparam Accumulators  a `WarpgroupMma::Accumulators` (a 64 x N tile over 128 threads)
//! \tparam OutputOp      applied to each `alpha * acc + beta * C` before the conversion
template <class ElementD, class Accumulators, class OutputOp = Identity>
class WarpgroupEpilogue {
  static_assert(is_supported_element_v<ElementD>,
                "WarpgroupEpilogue: D must be float, __half or __nv_bfloat16");
  static constexpr int kRegisters = Accumulators::kRegisters;
  static constexpr int kN = kRegisters * 2;  // columns of the warpgroup's 64 x N tile

 public:
  using Params = EpilogueParams<ElementD, OutputOp>;

  //! Writes the 64 x N tile whose first element is `(m0, n0)` of D (this batch's D and C at
  //! `p.d`, `p.c`). `thread` is the thread's index in its warpgroup. Elements outside the
  //! `m x n` problem are neither read nor written.
  TILEPIPE_DEVICE static void store(const Accumulators& acc, const Params& p, int m0, int n0, int thread) {
    const bool full = m0 + 64 <= p.m && n0 + kN <= p.n;
    if (p.layout == Layout::kRowMajor) {
      if (p.beta != 0.0f) run<true, true>(acc, p, m0, n0, thread, full);
      else run<true, false>(acc, p, m0, n0, thread, full);
    } else {
      if (p.beta != 0.0f) run<false, true>(acc, p, m0, n0, thread, full);
      else run<false, false>(acc, p, m0, n0, thread, full);
    }
  }

 private:
  struct alignas(2 * sizeof(ElementD)) Pair {
    ElementD v[2];
  };

  template <bool kRowMajor, bool kBeta>
  TILEPIPE_DEVICE static void run(const Accumulators& acc, const Params& p, int m0, int n0,
                                  int thread, bool full) {
    // Registers {4j, 4j+1} are columns (c, c+1) of row r, {4j+2, 4j+3} the same of row r + 8.
    TILEPIPE_UNROLL
    for (int i = 0; i < kRegisters; i += 2) {
      const int row = m0 + Accumulators::row_of(thread, i);
      const int col = n0 + Accumulators::col_of(thread, i);
      float v0 = p.alpha * acc.x[i];
      float v1 = p.alpha * acc.x[i + 1];
      const bool row_ok = full || row < p.m;
      if constexpr (kRowMajor) {
        // D's rows are 16-byte aligned (ldd and d are), and col is even: a pair is aligned.
        const std::int64_t at = row * p.ldd + col;
        if (row_ok && (full || col + 1 < p.n)) {
          if constexpr (kBeta) {
            const Pair c = *reinterpret_cast<const Pair*>(p.c + (row * p.ldc + col));
            v0 += p.beta * to_float(c.v[0]);
            v1 += p.beta * to_float(c.v[1]);
          }
          Pair out;
          out.v[0] = from_float<ElementD>(p.op(v0, row, col));
          out.v[1] = from_float<ElementD>(p.op(v1, row, col + 1));
          *reinterpret_cast<Pair*>(p.d + at) = out;
        } else if (row_ok && col < p.n) {
          if constexpr (kBeta) v0 += p.beta * to_float(p.c[row * p.ldc + col]);
          p.d[at] = from_float<ElementD>(p.op(v0, row, col));
        }
      } else {
        TILEPIPE_UNROLL
        for (int j = 0; j < 2; ++j) {
          const int cj = col + j;
          if (!row_ok || !(full || cj < p.n)) continue;
          float v = j == 0 ? v0 : v1;
          if constexpr (kBeta) v += p.beta * to_float(p.c[cj * p.ldc + row]);
          p.d[cj * p.ldd + row] = from_float<ElementD>(p.op(v, row, cj));
        }
      }
    }
  }
};

}  // namespace tilepipe
