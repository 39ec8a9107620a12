#pragma once
//! \file
//! Two fp8 e4m3 to two f16 / bf16 times a scale, in registers, rounded once: the conversion of a
//! mixed-input GEMM's e4m3 B fragments (warp/fragment_transform.cuh).
//!
//! Every e4m3 value (at most 448 in magnitude, at least 2^-9 apart from zero) is an f16, so the
//! first step is exact: `__nv_cvt_fp8x2_to_halfraw2`, which is the single
//! `cvt.rn.f16x2.e4m3x2` where the instruction exists (sm_89 and later: sm_90a builds) and a few
//! integer operations before that (sm_80). Then f16: one f16x2 multiply by the scale, rounded
//! once. bf16: each f16 widened to f32 (exact), multiplied by the scale in f32 (exact: 4 by 8
//! significant bits) and rounded to bf16 once by `cvt.rn.bf16x2.f32`. e4m3's NaN (S.1111.111)
//! stays NaN.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "../arch/cvt.cuh"
#include "../detail/macros.cuh"

namespace tilepipe {

//! `e0 * scale` and `e1 * scale`, rounded to `Element` (`__half` or `__nv_bfloat16`) and packed
//! as an mma.sync register (e0 low), where e0 and e1 are the e4m3 in bits 0..7 and 8..15 of `raw`
//! (the bits above are ignored).
template <class Element>
TILEPIPE_DEVICE std::uint32_t dequantize_e4m3x2(std::uint32_t raw, Element scale) {
  static_assert(std::is_same_v<Element, __half> || std::is_same_v<Element, __nv_bfloat16>,
                "dequantize_e4m3x2: e4m3 converts to __half or __nv_bfloat16");
  const __half2 h(__nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(raw), __NV_E4M3));
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
