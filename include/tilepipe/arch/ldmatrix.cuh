#pragma once
//! \file
//! `ldmatrix.sync.aligned` (sm_75+): a warp loads four 8x8 matrices of 16-bit
//! elements from shared memory into registers.
//!
//! Lane `i` supplies the address of row `i % 8` of matrix `i / 8` (lanes beyond the matrix
//! count are ignored but must hold a valid shared address). Each row is 16 contiguous bytes,
//! 16-byte aligned. After the load, register `j` of lane `l` holds elements
//! `(l / 4, 2 * (l % 4))` and `(l / 4, 2 * (l % 4) + 1)` of matrix `j`; with `Trans` the matrix
//! is transposed on the way, i.e. the lane holds `(2 * (l % 4), l / 4)` and
//! `(2 * (l % 4) + 1, l / 4)` of the matrix as stored.

#include <cstdint>

#include "../detail/macros.cuh"

namespace tilepipe::arch {

//! Shared-memory address of a generic pointer, as ldmatrix and cp.async take it.
TILEPIPE_DEVICE std::uint32_t smem_address(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

//! Four 8x8 matrices into `r[0..3]` (all 32 lanes give row addresses).
template <bool Trans = false>
TILEPIPE_DEVICE void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t smem_row_addr) {
  if constexpr (Trans) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_row_addr));
  } else {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_row_addr));
  }
}

}  // namespace tilepipe::arch
