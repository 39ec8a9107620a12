#pragma once
//! \file
//! Transform-on-load: B stored in shared memory as something the tensor cores do not take (int8 or
//! fp8 weights), converted in registers, right after each fragment load, into the f16 / bf16 fragment
//! that `mma.sync.m16n8k16` takes. A mainloop gets one through its element argument,
//! `MixedInput<ElementA, TransformB>` (see MultistageMainloop); `Dequantize` (int8 or fp8 e4m3
//! times per-group scales) is tilepipe's.
//!
//! **The TransformB concept.** A trivially copyable class (it travels in the kernel's
//! parameters, and the mainloop reads it there, by reference) with
//! \code
//! struct MyTransform {
//!   using Stored = std::int8_t;  // B's element in global and shared memory (1 byte)
//!   // b: register j of the mma's B fragment of one n8 tile, two 16-bit elements of A's type,
//!   //    the lower k in the low half. raw: the stored fragment of that tile (RawFragmentB):
//!   //    register j holds the stored elements of B(k + 8j, n) and B(k + 8j + 1, n) in bits 0..7
//!   //    and 8..15. k and n are the GEMM's coordinates: k = this lane's first k of the k16 block,
//!   //    n = this lane's column.
//!   __device__ void operator()(std::uint32_t (&b)[2], const std::uint32_t (&raw)[2], int k,
//!                              int n) const;
//! };
//! \endcode
//! It is called once per n8 tile and k16 block of every warp, by every lane (so it may not
//! synchronize). Tiles on the matrix's edges call it for columns n >= N and k >= K too, whose raw
//! bytes are zeros: it must give zeros there (any finite scale does) and must not read outside
//! its own arrays for them (clamp n and k). Split-K slices see the GEMM's k, not the slice's.
//!
//! A operand: not offered. A's fragments come from `ldmatrix` straight into the mma's registers
//! in its own element type; a hook there would sit at the same place (after FragmentLoader's
//! load), but scaling A's rows is cheaper as a scale of D's rows in the epilogue (output_ops.cuh).

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "../detail/macros.cuh"
#include "../numeric/e4m3_dequant.cuh"
#include "../numeric/int8_dequant.cuh"

namespace tilepipe {

//! The element argument of a mainloop whose A is `ElementA` (`__half` or `__nv_bfloat16`, also
//! the MMA's input type) and whose B is stored as `TransformB::Stored` and converted by
//! `TransformB` (see the concept above).
template <class ElementA, class TransformB>
struct MixedInput {};

//! Element `q` of column `n` and k `k` of B dequantized: `q * scale[k / group][n]`, rounded to
//! `Element` once (numeric/int8_dequant.cuh, numeric/e4m3_dequant.cuh), with scales of `Element`
//! in a `ceil(K / group) x N` row-major array.
//!
//! \tparam Element  A's element type, `__half` or `__nv_bfloat16`, also the scales' type
//! \tparam StoredT  B's stored element: `std::int8_t` or `__nv_fp8_e4m3`
//!
//! `group` is a power of two of at least 16 (64 or 128 through GemmMixedInput), or one scale per
//! column (`group >= K`); `make` takes care of both. A k16 block lies inside one group, so the
//! four elements of a call share a scale: one 2-byte read-only load per call.
template <class Element, class StoredT = std::int8_t>
struct Dequantize {
  static_assert(std::is_same_v<Element, __half> || std::is_same_v<Element, __nv_bfloat16>,
                "Dequantize: the scales and the dequantized B are __half or __nv_bfloat16");
  static_assert(std::is_same_v<StoredT, std::int8_t> || std::is_same_v<StoredT, __nv_fp8_e4m3>,
                "Dequantize: B's stored element is std::int8_t or __nv_fp8_e4m3");
  using Stored = StoredT;

  const Element* scale = nullptr;  //!< ceil(K / group) x N, row-major
  int ld_scale = 0;                //!< elements between consecutive rows of `scale` (N); the
                                   //!< array holds fewer than 2^31 elements
  int n = 0;                       //!< N: columns past it read the last column's scale
  int k_last = 0;                  //!< K - 1: k past it reads the last row's scales
  int group_shift = 31;            //!< log2(group); 31: one scale per column (k >> 31 is 0)

  //! The transform for scales of `group` (a power of two, or >= k for one per column) of an
  //! `k x n` B.
  static Dequantize make(const Element* scale, int ld_scale, int n, int k, int group) {
    Dequantize t;
    t.scale = scale;
    t.ld_scale = ld_scale;
    t.n = n;
    t.k_last = k > 0 ? k - 1 : 0;
    t.group_shift = group >= k ? 31 : group_shift_of(group);
    return t;
  }
  //! log2 of a power of two (31 for anything else, which `make`'s callers have refused).
  static constexpr int group_shift_of(int group) {
    for (int s = 0; s < 31; ++s)
      if (group == (1 << s)) return s;
    return 31;
  }

  //! The row of `scale` for k: `k / group`, clamped to the last row for the k >= K of a
  //! zero-filled residue (whose products are zero anyway).
  TILEPIPE_HOST_DEVICE constexpr int row_of(int k) const { return (k < k_last ? k : k_last) >> group_shift; }

  TILEPIPE_DEVICE void operator()(std::uint32_t (&b)[2], const std::uint32_t (&raw)[2], int k,
                                  int col) const {
    const int c = col < n ? col : n - 1;
    const Element s = __ldg(scale + (row_of(k) * ld_scale + c));  // 32-bit offsets
    TILEPIPE_UNROLL
    for (int j = 0; j < 2; ++j) {
      if constexpr (std::is_same_v<Stored, std::int8_t>)
        b[j] = dequantize_s8x2(raw[j], s);
      else
        b[j] = dequantize_e4m3x2(raw[j], s);
    }
  }
};

//! Weight-only int8 (W8A16) and fp8 e4m3 (W8A16 in fp8) dequantization.
template <class Element>
using DequantizeInt8 = Dequantize<Element, std::int8_t>;
template <class Element>
using DequantizeE4M3 = Dequantize<Element, __nv_fp8_e4m3>;

namespace detail {
//! The transform of a mainloop whose B is stored as A: none.
struct NoTransformB {};

//! The operand types of a mainloop's element argument: `T` for A and B alike, or a MixedInput.
template <class T>
struct OperandTypes {
  using A = T;
  using B = T;
  using TransformB = NoTransformB;
  static constexpr bool kTransformsB = false;
};
template <class ElementA, class Transform>
struct OperandTypes<MixedInput<ElementA, Transform>> {
  using A = ElementA;
  using B = typename Transform::Stored;
  using TransformB = Transform;
  static constexpr bool kTransformsB = true;
};
}  // namespace detail

}  // namespace tilepipe
