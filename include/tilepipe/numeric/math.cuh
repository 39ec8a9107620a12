#pragma once
//! \file
//! Math tags: how the Ampere tier multiplies A by B, which instruction and in what precision it
//! accumulates (and, for MathDefault and MathTF32 with GemmMultistage's tiles, which wgmma the
//! Hopper tier runs instead). A TileConfig carries one as its last argument (`MathDefault` unless
//! given), so that a GEMM's tuning knobs stay in one type. No CUDA includes: host code names the
//! tags too. `kKBlock` is the k depth of one step of the warp's product (TileK's divisor).

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

//! f32 inputs on the tensor cores: `mma.sync.m16n8k8...tf32` with f32 accumulators. A and B are
//! rounded to tf32 (`cvt.rna`: 11 significant bits, relative error at most 2^-11 per input) as
//! they leave shared memory; products and sums are f32. For problems that tolerate inputs at about
//! 3 decimal digits, at several times the f32 FMA rate. The Hopper tier's wgmma (taken for
//! `DefaultF32TileConfig<MathTF32>`, TN) reads the f32 bits unrounded: below 2^-10 per input.
struct MathTF32 {
  static constexpr int kKBlock = 8;
};

//! f32 inputs on the CUDA cores: one `fma.rn.f32` per product, into MathTF32's accumulator
//! layout (every epilogue takes them). Full f32 precision (error about K 2^-24 times the sum of
//! |a b|) at a fraction of MathTF32's rate: for results that need it, or a reference. Ampere tier
//! only.
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
