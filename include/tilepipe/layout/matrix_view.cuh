#pragma once
//! \file
//! A non-owning view of a matrix stored row by row in global memory.

#include <cstdint>

#include "../detail/macros.cuh"

namespace tilepipe {

//! `rows x cols` elements, element `(r, c)` at `data[r * ld + c]`, with `ld >= cols`.
//! A column-major matrix is viewed as its transpose (rows and columns swapped). Offsets are
//! 64-bit, so a view may span more than 2^31 elements; each extent must fit an `int`.
template <class T>
struct MatrixView {
  T* data = nullptr;
  int rows = 0;
  int cols = 0;
  std::int64_t ld = 0;  //!< leading dimension, in elements

  TILEPIPE_HOST_DEVICE T* ptr(int r, int c) const {
    return data + static_cast<std::int64_t>(r) * ld + c;
  }
};

}  // namespace tilepipe
