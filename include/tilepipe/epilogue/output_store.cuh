#pragma once
//! \file
//! The last step of every epilogue: f32 values of one 16-byte vector of D, plus `beta * C`,
//! through the output operator, converted and stored. The staged GEMM epilogue and the split-K
//! reduction both write D through these two functions, so they cannot drift apart.

#include <cstdint>

#include "../detail/macros.cuh"
#include "../layout/tile_shape.cuh"
#include "../numeric/element_traits.cuh"

namespace tilepipe {

//! What every GEMM epilogue of tilepipe's is told (StagedEpilogue, WarpgroupEpilogue): D and C,
//! alpha and beta, their layout, the problem's m and n (nothing outside is read or written), and
//! the output operator.
template <class ElementD, class OutputOp>
struct EpilogueParams {
  ElementD* d = nullptr;
  const ElementD* c = nullptr;
  std::int64_t ldd = 0;
  std::int64_t ldc = 0;
  float alpha = 1.0f;
  float beta = 0.0f;
  Layout layout = Layout::kRowMajor;  //!< layout of C and D
  int m = 0;
  int n = 0;
  OutputOp op{};
};

}  // namespace tilepipe

namespace tilepipe::detail {

//! Elements of D in one 16-byte vector.
template <class ElementD>
inline constexpr int kOutputVector = ElementTraits<ElementD>::kChunkElements;

//! `x` holds `alpha * acc` for the vector of D at `dst` (16-byte aligned), whose first element
//! is `(row, col)` of D and whose elements run along D's contiguous dimension (columns when
//! `kRowMajor`, rows otherwise). Adds `beta * C` (one 16-byte load at `c`) when `kBeta`, applies
//! `op`, converts, and stores 16 bytes.
template <class ElementD, bool kRowMajor, bool kBeta, class Op>
TILEPIPE_DEVICE void store_output_vector(float (&x)[kOutputVector<ElementD>], ElementD* dst,
                                         const ElementD* c, float beta, const Op& op, int row,
                                         int col) {
  constexpr int kVector = kOutputVector<ElementD>;
  if constexpr (kBeta) {
    const uint4 raw = *reinterpret_cast<const uint4*>(c);
    const ElementD* cv = reinterpret_cast<const ElementD*>(&raw);
    TILEPIPE_UNROLL
    for (int i = 0; i < kVector; ++i) x[i] += beta * to_float(cv[i]);
  } else {
    (void)c;
    (void)beta;
  }
  uint4 out;
  ElementD* ov = reinterpret_cast<ElementD*>(&out);
  TILEPIPE_UNROLL
  for (int i = 0; i < kVector; ++i)
    ov[i] = from_float<ElementD>(op(x[i], kRowMajor ? row : row + i, kRowMajor ? col + i : col));
  *reinterpret_cast<uint4*>(dst) = out;
}

//! The same for the first `count` (at most one vector) elements, one by one, with no alignment
//! beyond the element's: the end of a line, or a D that is not 16-byte aligned. Neither C nor D
//! is touched past them.
template <class ElementD, bool kRowMajor, bool kBeta, class Op>
TILEPIPE_DEVICE void store_output_elements(const float* x, int count, ElementD* dst,
                                           const ElementD* c, float beta, const Op& op, int row,
                                           int col) {
  for (int i = 0; i < count; ++i) {
    float v = x[i];
    if constexpr (kBeta) v += beta * to_float(c[i]);
    dst[i] = from_float<ElementD>(op(v, kRowMajor ? row : row + i, kRowMajor ? col + i : col));
  }
}

}  // namespace tilepipe::detail
