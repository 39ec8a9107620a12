#pragma once
//! \file
//! Math tags: how the Ampere tier multiplies A by B, which instruction and in what precision it
//! accumulates. A TileConfig carries one as its last argument (`MathDefault` unless given), so
//! that a GEMM's tuning knobs stay in one type. A light header (no CUDA includes): host code
//! names the tags too.

namespace tilepipe {

//! f16 / bf16 inputs: `mma.sync.m16n8k16` with f32 accumulators. The only math of the Hopper tier.
struct MathDefault {};

//! f16 inputs: `mma.sync.m16n8k16` with f16 accumulators (`.f16.f16.f16.f16`). Half the
//! accumulator registers of MathDefault, at f16's precision: each of the K additions of an
//! output element rounds to 11 significant bits, so use it where the products are few or
//! small enough (K of a few hundred, |D| well below 65504) and the result is wanted in f16 anyway.
//! Ampere tier only (there is no f16-accumulating path on the Hopper tier here).
struct MathF16Accumulate {};

//! Whether `T` is one of the math tags above.
template <class T>
inline constexpr bool is_math_v = false;
template <>
inline constexpr bool is_math_v<MathDefault> = true;
template <>
inline constexpr bool is_math_v<MathF16Accumulate> = true;

}  // namespace tilepipe
