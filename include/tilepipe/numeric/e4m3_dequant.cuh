#pragma once
//! \file
//! Two fp8 e4m3 to two f16 / bf16 times a scale, in registers, rounded once: the conversion of a
//! mixed-input GEMM's e4m3 B fragments (warp/fragment_transform.cuh).
//!
//! Every e4m3 value (at most 448 in magnitude, at least 2^-9 apart from zero) is an f16, so the
//! first step, e4m3 to f16, is exact:
//! - sm_89 and later (sm_90a builds): `cvt.rn.f16x2.e4m3x2`, one instruction for two values
//!   (through `__nv_cvt_fp8x2_to_halfraw2`). e4m3's NaN (S.1111.111) stays NaN.
//! - sm_80 (no such instruction): `prmt` puts each byte in the high byte of its half; a shift and
//!   a mask move e4m3's 4 exponent and 3 mantissa bits under f16's exponent field, keeping the
//!   sign bit, which is the f16 of the e4m3 value / 2^8 (the biases differ by 15 - 7 = 8), e4m3's
//!   subnormals included; one exact f16x2 multiply by 256 restores it. (NaN becomes 480 here;
//!   weights hold none.)
//! Then f16: one f16x2 multiply by the scale, rounded once. bf16: each f16 widened to f32 (exact),
//! multiplied by the scale in f32 (exact: 4 by 8 significant bits) and rounded to bf16 once by
//! `cvt.rn.bf16x2.f32`.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "../arch/cvt.cuh"
#include "../arch/prmt.cuh"
#include "../detail/macros.cuh"

namespace tilepipe {

//! The constants of the sm_80 conversion, named so that a host test can replay them with a model
//! of `prmt` (test/host/test_int8_dequant.cu).
namespace e4m3_magic {
//! `prmt(raw, 0, kSpread)` = bytes {b1, 0, b0, 0}: each e4m3 in the high byte of its half.
inline constexpr std::uint32_t kSpread = 0x1404u;
//! Added to kSpread to take bytes 2 and 3 instead: {b3, 0, b2, 0}.
inline constexpr std::uint32_t kSpreadPairStep = 0x2020u;
//! The sign bits (kept in place) and, after a shift right by one, exponent and mantissa.
inline constexpr std::uint32_t kSignBits = 0x80008000u;
inline constexpr std::uint32_t kMagnitudeBits = 0x3F803F80u;
//! f16x2 {256, 256}: 2^(15 - 7), the ratio of the two exponent biases.
inline constexpr std::uint32_t kBiasRatio = 0x5C005C00u;
}  // namespace e4m3_magic

//! The e4m3 in bytes `2 Pair` and `2 Pair + 1` of `raw` as f16, exactly (lower one in the low
//! half).
template <int Pair = 0>
TILEPIPE_DEVICE __half2 e4m3x2_to_half2(std::uint32_t raw) {
  static_assert(Pair == 0 || Pair == 1,
                "e4m3x2_to_half2: Pair is 0 (bytes 0, 1) or 1 (bytes 2, 3)");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  return __half2(
      __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(raw >> (16 * Pair)), __NV_E4M3));
#else
  using namespace e4m3_magic;
  const std::uint32_t spread = arch::prmt(raw, 0u, kSpread + Pair * kSpreadPairStep);
  const std::uint32_t bits = (spread & kSignBits) | ((spread >> 1) & kMagnitudeBits);
  const std::uint32_t ratio_bits = kBiasRatio;
  __half2 scaled_down, ratio;
  std::memcpy(&scaled_down, &bits, 4);
  std::memcpy(&ratio, &ratio_bits, 4);
  return __hmul2(scaled_down, ratio);
#endif
}

//! `e0 * scale` and `e1 * scale`, rounded to `Element` (`__half` or `__nv_bfloat16`) and packed
//! as an mma.sync register (e0 low), where e0 and e1 are the e4m3 in bytes `2 Pair` and
//! `2 Pair + 1` of `raw` (the other bytes are ignored).
template <class Element, int Pair = 0>
TILEPIPE_DEVICE std::uint32_t dequantize_e4m3x2(std::uint32_t raw, Element scale) {
  static_assert(std::is_same_v<Element, __half> || std::is_same_v<Element, __nv_bfloat16>,
                "dequantize_e4m3x2: e4m3 converts to __half or __nv_bfloat16");
  const __half2 h = e4m3x2_to_half2<Pair>(raw);
  if constexpr (std::is_same_v<Element, __half>) {
    const __half2 product = __hmul2(h, __half2half2(scale));
    std::uint32_t r;
    std::memcpy(&r, &product, 4);
    return r;
  } else {
    const float2 f = __half22float2(h);
    const float s = __bfloat162float(scale);
    return arch::to_bf16x2(f.x * s, f.y * s);
  }
}

}  // namespace tilepipe
