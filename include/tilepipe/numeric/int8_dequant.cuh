#pragma once
//! \file
//! Two int8 to two f16 / bf16 times a scale, in registers, exactly rounded once: the conversion of
//! a mixed-input GEMM's int8 B fragments (warp/fragment_transform.cuh).
//!
//! No `cvt` from an integer: I2F runs at a quarter of the ALU rate. Instead the byte is placed in
//! the mantissa of a float whose exponent makes one mantissa unit worth 1 ("exponent magic"):
//! - f16: `prmt` builds `0x64XX` from byte XX; with the sign bit flipped (`XX = q ^ 0x80 = q + 128`
//!   as unsigned) that is the f16 `1024 + q + 128`, exactly, and subtracting 1152 leaves q (all
//!   of -128 .. 127 are exact in f16's 11 bits). Two values per instruction (f16x2). The product
//!   with the scale is one f16x2 multiply, rounded once.
//! - bf16: its 8 significant bits cannot hold `256 + q`, so the byte goes into an f32 instead
//!   (`m = 0x4B0000XX` = 2^23 + XX, and m - (2^23 + 128) = q), and `q * scale` is one f32 fma,
//!   `m * scale - (2^23 + 128) * scale`: the subtrahend is exact in f32 (8 + 16 significant bits),
//!   and so is the fma's one rounding of `q * scale` (8 by 8 bits). `cvt.rn.bf16x2.f32` rounds it
//!   to bf16 once.
//! Either way the result is `q * scale` rounded to the element type, to nearest even.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "../arch/cvt.cuh"
#include "../arch/prmt.cuh"
#include "../detail/macros.cuh"

namespace tilepipe {

//! The constants of the conversions below, named so that a host test can replay them with a
//! model of `prmt` (test/host/test_int8_dequant.cu).
namespace int8_magic {
//! f16: bytes {0x64, b1, 0x64, b0} of `prmt(biased, kF16Exponent, kF16Selector)`.
inline constexpr std::uint32_t kF16Exponent = 0x64646464u;
inline constexpr std::uint32_t kF16Selector = 0x4140u;
//! Added to the selectors to take bytes 2 and 3 instead of 0 and 1 (kF32: twice for byte i + 2).
inline constexpr std::uint32_t kF16PairStep = 0x0202u;
//! f16x2 {1152, 1152}: 1024 (the exponent's unit) + 128 (the bias of q).
inline constexpr std::uint32_t kF16Offset = 0x64806480u;
//! f32: bytes {0x4B, 0, 0, b_i} of `prmt(biased, kF32Exponent, kF32Selector0 + i)`.
inline constexpr std::uint32_t kF32Exponent = 0x4B000000u;
inline constexpr std::uint32_t kF32Selector0 = 0x7440u;
//! 2^23 (the exponent's unit) + 128 (the bias of q).
inline constexpr float kF32Offset = 8388736.0f;
}  // namespace int8_magic

//! `q0 * scale` and `q1 * scale`, rounded to `Element` (`__half` or `__nv_bfloat16`) and packed
//! as an mma.sync register (q0 low), where q0 and q1 are the int8 in bytes `2 Pair` and
//! `2 Pair + 1` of `raw` (Pair 0: bits 0..15, Pair 1: bits 16..31; the other bytes are ignored).
//! The two pairs of one `raw` share its one bias XOR.
template <class Element, int Pair = 0>
TILEPIPE_DEVICE std::uint32_t dequantize_s8x2(std::uint32_t raw, Element scale) {
  static_assert(std::is_same_v<Element, __half> || std::is_same_v<Element, __nv_bfloat16>,
                "dequantize_s8x2: int8 converts to __half or __nv_bfloat16");
  static_assert(Pair == 0 || Pair == 1,
                "dequantize_s8x2: Pair is 0 (bytes 0, 1) or 1 (bytes 2, 3)");
  const std::uint32_t biased = raw ^ 0x80808080u;  // q + 128 in each byte, as unsigned
  if constexpr (std::is_same_v<Element, __half>) {
    // Bytes 2 Pair and 2 Pair + 1 of `biased` under an exponent byte 0x64 each: {0x64, b1, 0x64,
    // b0}.
    const std::uint32_t magic =
        arch::prmt(biased, int8_magic::kF16Exponent,
                   int8_magic::kF16Selector + Pair * int8_magic::kF16PairStep);
    __half2 q, offset, product;
    std::memcpy(&q, &magic, 4);
    const std::uint32_t offset_bits = int8_magic::kF16Offset;
    std::memcpy(&offset, &offset_bits, 4);
    product = __hmul2(__hsub2(q, offset), __half2half2(scale));
    std::uint32_t r;
    std::memcpy(&r, &product, 4);
    return r;
  } else {
    // Byte 2 Pair + i of `biased` in the low mantissa byte of 2^23: {0x4B, 0, 0, b_i}.
    const float s = __bfloat162float(scale);
    using namespace int8_magic;
    const float offset = -kF32Offset * s;  // exact; one per scale, shared by every call with it
    const float m0 = __uint_as_float(arch::prmt(biased, kF32Exponent, kF32Selector0 + 2 * Pair));
    const float m1 =
        __uint_as_float(arch::prmt(biased, kF32Exponent, kF32Selector0 + 2 * Pair + 1));
    return arch::to_bf16x2(__fmaf_rn(m0, s, offset), __fmaf_rn(m1, s, offset));
  }
}

}  // namespace tilepipe
