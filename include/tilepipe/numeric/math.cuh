#pragma once
//! \file
//! Math tags: how the Ampere tier multiplies A by B, which instruction and in what precision it
//! accumulates (and, for MathDefault and MathTF32 with GemmMultistage's tiles, which wgmma the
//! Hopper tier runs instead). A TileConfig carries one as its last argument (`MathDefault` unless given), so
//! that a GEMM's tuning knobs stay in one type. A light header (no CUDA includes): host code
//! names the tags too. Each tag's `kKBlock` is the k depth of one step of its warp-level product:
//! a TileConfig's TileK must be a multiple of it.

namespace tilepipe {

//! f16 / bf16 inputs: `mma.sync.m16n8k16` with f32 accumulators (on the Hopper tier, wgmma
//! m64nNk16).
struct MathDefault {
  static constexpr int kKBlock = 16;
};

//! f16 inputs: `mma.sync.m16n8k16` with f16 accumulators (`.f16.f16.f16.f16`). Half the
//! accumulator registers of MathDefault, at f16's precision: each of the K additions of an
//! output element rounds to 11 significant bits, so use it where the products are few or
//! small enough (K of a few hundred, |D| well below 65504) and the result is wanted in f16 anyway.
//! Ampere tier only (there is no f16-accumulating path on the Hopper tier here).
struct MathF16Accumulate {
  static constexpr int kKBlock = 16;
};

//! f32 inputs on the tensor cores: `mma.sync.m16n8k8...tf32.tf32.f32` with f32 accumulators. Each
//! element of A and B is rounded to tf32 (`cvt.rna.tf32.f32`: to nearest, ties away from zero)
//! as it leaves shared memory, keeping 11 of f32's 24 significant bits (relative error at most
//! 2^-11 per input); products and sums are then f32. An A100's tensor cores run tf32 at 8 times
//! its f32 FMA peak: for problems that tolerate inputs at about 3 decimal digits. With
//! `DefaultF32TileConfig<MathTF32>`, A row-major and B column-major, GemmMultistage runs it on the
//! Hopper tier where it can (wgmma m64nNk8 ...tf32, which reads only K-major operands): there the
//! inputs are not rounded first; wgmma reads the f32 bits as tf32, using at least 10 fraction bits
//! and truncating or rounding the low 13, a relative error below 2^-10 per input.
struct MathTF32 {
  static constexpr int kKBlock = 8;
};

//! f32 inputs on the CUDA cores: `fma.rn.f32`, one FFMA per product, with f32 accumulators laid
//! out as MathTF32's (and MathDefault's) m16n8 tiles, so every epilogue takes them unchanged. Full
//! f32 precision: each output element is K fused multiply-adds in f32, error at most about K 2^-24
//! times the sum of |a b|. About an eighth of MathTF32's peak on an A100: for results that need
//! f32's 7 decimal digits, or a reference. A k-block is 4 deep, one 16-byte shared load of
//! K-contiguous data. Ampere tier only.
struct MathSimtF32 {
  static constexpr int kKBlock = 4;
};

//! Whether `T` is one of the math tags above.
template <class T>
inline constexpr bool is_math_v = false;
template <>
inline constexpr bool is_math_v<MathDefault> = true;
template <>
inline constexpr bool is_math_v<MathF16Accumulate> = true;
template <>
inline constexpr bool is_math_v<MathTF32> = true;
template <>
inline constexpr bool is_math_v<MathSimtF32> = true;

}  // namespace tilepipe
