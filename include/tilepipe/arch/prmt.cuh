#pragma once
//! \file
//! `prmt.b32` (any sm): picks four bytes out of two 32-bit registers.

#include <cstdint>

#include "../detail/macros.cuh"

namespace tilepipe::arch {

//! The bytes of `{b, a}` (bytes 0..3 of `a`, then 4..7 of `b`) that the four nibbles of
//! `selector` name: byte `i` of the result is byte `(selector >> 4 i) & 7`. (The sign-replicating
//! mode, nibble bit 3, is not used here.)
TILEPIPE_DEVICE std::uint32_t prmt(std::uint32_t a, std::uint32_t b, std::uint32_t selector) {
  std::uint32_t d;
  asm("prmt.b32 %0, %1, %2, %3;\n" : "=r"(d) : "r"(a), "r"(b), "r"(selector));
  return d;
}

}  // namespace tilepipe::arch
