#pragma once
//! \file
//! ElementTraits: what tilepipe needs to know about an element type, in one place. The
//! collectives ask these traits instead of assuming 16-bit elements, so a new type is a new
//! specialization here (plus the instructions it needs in `arch/`), not an edit of every
//! collective.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>

#include "../detail/macros.cuh"

namespace tilepipe {

//! Which warp-level MMA instruction consumes an element type as an A or B operand.
enum class MmaAtom {
  kNone,              //!< not a tensor-core operand in tilepipe (yet)
  kM16N8K16F32Accum,  //!< `mma.sync.m16n8k16` with f32 accumulators (f16, bf16)
  kM16N8K8Tf32,       //!< `mma.sync.m16n8k8` on tf32 with f32 accumulators (f32, under MathTF32)
  kWgmmaK32Fp8,       //!< `wgmma.m64nNk32` with f32 accumulators, K-major (e4m3, e5m2; sm_90a)
};

//! Traits of a supported element type: its width, its 16-byte vector, the MMA atom that takes it
//! as an operand, and its conversions to and from f32. A type without a specialization has
//! `kSupported == false`, and the collectives' `static_assert`s say so in a sentence.
template <class T>
struct ElementTraits {
  static constexpr bool kSupported = false;
};

namespace detail {
//! The members every specialization shares, from the type's storage width.
template <class BitsT>
struct ElementTraitsBase {
  static constexpr bool kSupported = true;
  //! An unsigned integer of the element's width, for bitwise copies (zero padding, say).
  using Bits = BitsT;
  static constexpr int kBytes = static_cast<int>(sizeof(Bits));
  //! Elements in one 16-byte vector: one `cp.async` chunk, one vectorized global access.
  static constexpr int kChunkElements = 16 / kBytes;
};

template <class T>
constexpr bool is_mma_m16n8k16_input() {
  if constexpr (ElementTraits<T>::kSupported) {
    return ElementTraits<T>::kMmaAtom == MmaAtom::kM16N8K16F32Accum;
  } else {
    return false;
  }
}
}  // namespace detail

template <>
struct ElementTraits<__half> : detail::ElementTraitsBase<std::uint16_t> {
  static constexpr MmaAtom kMmaAtom = MmaAtom::kM16N8K16F32Accum;
  static constexpr const char* kName = "f16";
  TILEPIPE_DEVICE static float to_float(__half x) { return __half2float(x); }
  TILEPIPE_DEVICE static __half from_float(float x) { return __float2half_rn(x); }
};

template <>
struct ElementTraits<__nv_bfloat16> : detail::ElementTraitsBase<std::uint16_t> {
  static constexpr MmaAtom kMmaAtom = MmaAtom::kM16N8K16F32Accum;
  static constexpr const char* kName = "bf16";
  TILEPIPE_DEVICE static float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
  TILEPIPE_DEVICE static __nv_bfloat16 from_float(float x) { return __float2bfloat16_rn(x); }
};

//! f32: an output (C, D) and epilogue type, and an A/B operand that the tensor cores take as tf32
//! (MathTF32, numeric/math.cuh).
template <>
struct ElementTraits<float> : detail::ElementTraitsBase<std::uint32_t> {
  static constexpr MmaAtom kMmaAtom = MmaAtom::kM16N8K8Tf32;
  static constexpr const char* kName = "f32";
  TILEPIPE_DEVICE static float to_float(float x) { return x; }
  TILEPIPE_DEVICE static float from_float(float x) { return x; }
};

//! 8-bit signed integers: a B operand stored at its own width and converted to f16 / bf16 in
//! registers on its way to the tensor cores (a mixed-input GEMM, gemm/gemm_mixed_input.cuh); no
//! MMA takes it directly here.
template <>
struct ElementTraits<std::int8_t> : detail::ElementTraitsBase<std::uint8_t> {
  static constexpr MmaAtom kMmaAtom = MmaAtom::kNone;
  static constexpr const char* kName = "s8";
  TILEPIPE_DEVICE static float to_float(std::int8_t x) { return static_cast<float>(x); }
};

//! fp8 e4m3 (4 exponent bits, 3 mantissa bits, no infinities, largest 448): the A and B of the
//! Hopper tier's FP8 GEMM (wgmma k32, gemm/gemm_fp8.cuh), and a B operand that the Ampere tier
//! converts in registers, like int8 (gemm/gemm_mixed_input.cuh).
template <>
struct ElementTraits<__nv_fp8_e4m3> : detail::ElementTraitsBase<std::uint8_t> {
  static constexpr MmaAtom kMmaAtom = MmaAtom::kWgmmaK32Fp8;
  static constexpr const char* kName = "e4m3";
  TILEPIPE_DEVICE static float to_float(__nv_fp8_e4m3 x) { return static_cast<float>(x); }
};

//! fp8 e5m2 (5 exponent bits, 2 mantissa bits, with infinities, largest finite 57344): A and B of
//! the Hopper tier's FP8 GEMM (gemm/gemm_fp8.cuh).
template <>
struct ElementTraits<__nv_fp8_e5m2> : detail::ElementTraitsBase<std::uint8_t> {
  static constexpr MmaAtom kMmaAtom = MmaAtom::kWgmmaK32Fp8;
  static constexpr const char* kName = "e5m2";
  TILEPIPE_DEVICE static float to_float(__nv_fp8_e5m2 x) { return static_cast<float>(x); }
};

//! Whether tilepipe knows element type `T` at all (as C/D, or as A/B when it has an MMA atom).
template <class T>
inline constexpr bool is_supported_element_v = ElementTraits<T>::kSupported;

//! Whether `T` can be an A or B operand of the m16n8k16 warp MMA (f16, bf16).
template <class T>
inline constexpr bool is_mma_m16n8k16_input_v = detail::is_mma_m16n8k16_input<T>();

//! Whether `T` is an fp8 operand of the Hopper tier's wgmma k32 (e4m3, e5m2).
template <class T>
inline constexpr bool is_fp8_element_v =
    ElementTraits<T>::kSupported && ElementTraits<T>::kMmaAtom == MmaAtom::kWgmmaK32Fp8;

//! `x` as f32 / f32 rounded to `T` (round to nearest even).
template <class T>
TILEPIPE_DEVICE float to_float(T x) {
  return ElementTraits<T>::to_float(x);
}
template <class T>
TILEPIPE_DEVICE T from_float(float x) {
  return ElementTraits<T>::from_float(x);
}

}  // namespace tilepipe
