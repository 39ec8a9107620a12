#pragma once
//! \file
//! `cvt.rna.tf32.f32` (sm_80+): an f32 rounded to tf32 for the tensor cores.

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

}  // namespace tilepipe::arch
