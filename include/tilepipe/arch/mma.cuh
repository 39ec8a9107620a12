#pragma once
//! \file
//! `mma.sync.aligned.m16n8k16.row.col` (sm_80+): f16 and bf16 inputs with f32 accumulators, and
//! f16 inputs with f16 accumulators; `mma.sync.aligned.m16n8k8.row.col` with tf32 inputs and f32
//! accumulators.
//!
//! Fragment layouts (PTX ISA, "Matrix Fragments for mma.m16n8k16"), with g = lane / 4 and
//! t = lane % 4, each 32-bit register holding two consecutive-k 16-bit elements:
//!   A (16x16): a[0] = (g, 2t..2t+1)  a[1] = (g+8, 2t..)  a[2] = (g, 2t+8..)  a[3] = (g+8, 2t+8..)
//!   B (16x8):  b[0] = (k 2t..2t+1, n g)  b[1] = (k 2t+8..2t+9, n g)
//!   C/D (16x8, f32): c[0..1] = (g, 2t..2t+1)  c[2..3] = (g+8, 2t..2t+1)
//!   C/D (16x8, f16): c[0] = (g, 2t..2t+1)  c[1] = (g+8, 2t..2t+1), two f16 per 32-bit register
//!
//! m16n8k8 with tf32 inputs ("Matrix Fragments for mma.m16n8k8", .tf32), one element per register:
//!   A (16x8):  a[0] = (g, t)  a[1] = (g+8, t)  a[2] = (g, t+4)  a[3] = (g+8, t+4)
//!   B (8x8):   b[0] = (k t, n g)  b[1] = (k t+4, n g)
//!   C/D (16x8, f32): as for m16n8k16
//! The instruction sums over its 8 k slots: a lane's A and B registers of slot t (or t+4) meet,
//! whatever k of the matrix they hold, so callers may place any permutation of k in the slots as
//! long as A and B use the same one (layout/tf32_fragment_map.cuh does, to avoid bank conflicts).

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "../detail/macros.cuh"

namespace tilepipe::arch {

//! D = A * B + C for one m16n8k16 tile; `Element` is `__half` or `__nv_bfloat16`.
//! `d` and `c` may be the same array (the usual accumulate-in-place).
template <class Element>
TILEPIPE_DEVICE void mma_m16n8k16(float (&d)[4], const std::uint32_t (&a)[4],
                                  const std::uint32_t (&b)[2], const float (&c)[4]) {
  static_assert(std::is_same_v<Element, __half> || std::is_same_v<Element, __nv_bfloat16>,
                "mma_m16n8k16: the input element type must be __half or __nv_bfloat16");
  // (arch/ stays below numeric/: ElementTraits::kMmaAtom names this instruction for f16, bf16.)
  if constexpr (std::is_same_v<Element, __half>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
          "f"(c[2]), "f"(c[3]));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
          "f"(c[2]), "f"(c[3]));
  }
}

//! D = A * B + C for one m16n8k16 tile of f16 inputs with f16 accumulators (each register of `c`
//! and `d` holds two f16, the lower column in the low half). `d` and `c` may be the same array.
TILEPIPE_DEVICE void mma_m16n8k16_f16_accumulate(std::uint32_t (&d)[2], const std::uint32_t (&a)[4],
                                                 const std::uint32_t (&b)[2],
                                                 const std::uint32_t (&c)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 "
      "{%0, %1}, {%2, %3, %4, %5}, {%6, %7}, {%8, %9};\n"
      : "=r"(d[0]), "=r"(d[1])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]));
}

//! D = A * B + C for one m16n8k8 tile of tf32 inputs (each register of `a` and `b` an f32 rounded
//! to tf32, see arch/cvt.cuh) with f32 accumulators. `d` and `c` may be the same array.
TILEPIPE_DEVICE void mma_m16n8k8_tf32(float (&d)[4], const std::uint32_t (&a)[4],
                                      const std::uint32_t (&b)[2], const float (&c)[4]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
        "f"(c[2]), "f"(c[3]));
}

}  // namespace tilepipe::arch
