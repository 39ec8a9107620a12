#pragma once
//! \file
//! `cvt.rna.tf32.f32` (sm_80+): an f32 rounded to tf32 for the tensor cores; `cvt.rn.bf16x2.f32`
//! (sm_80+): two f32 rounded to bf16 and packed in one register.

#include <cstdint>

#include "../detail/macros.cuh"

namespace tilepipe::arch {

//! `x` rounded to tf32 (11 significant bits; to nearest, ties away from zero), as the 32-bit
//! pattern `mma.sync...tf32` takes: an f32 whose low 13 mantissa bits are zero.
TILEPIPE_DEVICE std::uint32_t to_tf32(float x) {
  std::uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
}

//! `lo` and `hi` rounded to bf16 (to nearest even), packed as `mma.sync` takes a pair of elements:
//! `lo` in the low 16 bits.
TILEPIPE_DEVICE std::uint32_t to_bf16x2(float lo, float hi) {
  std::uint32_t r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

}  // namespace tilepipe::arch
