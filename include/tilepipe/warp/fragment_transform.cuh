#pragma once
//! \file
//! Transform-on-load: B stored in shared memory as something the tensor cores do not take (int8 or
//! fp8 weights), converted in registers, right after the fragment loads, into the f16 / bf16
//! fragment that `mma.sync.m16n8k16` takes. A mainloop gets one through its element argument,
//! `MixedInput<ElementA, TransformB>` (see MultistageMainloop); `Dequantize` (int8 or fp8 e4m3
//! times per-group scales) is tilepipe's.
//!
//! **The TransformB concept.** A trivially copyable class (it travels in the kernel's
//! parameters, and the mainloop reads it there, by reference) with
//! \code
//! struct MyTransform {
//!   using Stored = std::int8_t;  // B's element in global and shared memory (1 byte)
//!   // What one k-tile of TileN columns and TileK k needs besides B (say, its scales): a
//!   // trivially copyable struct that the mainloop keeps in every stage of its ring, next to the
//!   // B tile.
//!   template <int TileN, int TileK> struct Staged { ... };
//!   using Param = ...;           // what one column's conversion takes from Staged
//!   // Copies what the k-tile of GEMM k [k0, k0 + TileK) and columns [n0, n0 + TileN) needs into
//!   // `dst`: called by every thread of the block (`thread` in 0 .. Threads - 1) when the
//!   // mainloop issues the k-tile's copies. cp.async joins the k-tile's group; plain stores are
//!   // ordered by the barrier before the k-tile is read.
//!   template <int TileN, int TileK, int Threads>
//!   __device__ void stage(Staged<TileN, TileK>& dst, int k0, int n0, int thread) const;
//!   // Column `col` (of the block tile) of a staged k-tile for the k of its 64-deep half `half`
//!   // (ByteKOrder::half_of: a lane's k lie in one half), read once per k-tile.
//!   template <int TileN, int TileK>
//!   __device__ Param param(const Staged<TileN, TileK>& staged, int col, int half) const;
//!   // b: registers 0 and 1 of the mma's B fragment of one n8 tile and k16 block, two 16-bit
//!   //    elements of A's type each, the lower k in the low half. raw: that block's four stored
//!   //    elements of the lane's column (RawFragmentB): bytes 0, 1 go to b[0], bytes 2, 3 to b[1].
//!   __device__ void operator()(std::uint32_t (&b)[2], std::uint32_t raw, Param p) const;
//! };
//! \endcode
//! The conversion is called once per n8 tile and k16 block of every warp, by every lane (so it
//! may not synchronize). Tiles on the matrix's edges stage columns n >= N and convert their raw
//! bytes, which are zeros: it must give zeros there (any finite scale does) and must not read
//! outside its own arrays for them (clamp n). k0 is always inside K; split-K slices see the GEMM's
//! k, not the slice's. Within a k-tile the mma takes k in ByteKOrder
//! (layout/byte_fragment_map.cuh), not k16 block by k16 block, so what a conversion takes is per
//! 64-deep half of a k-tile and column: a Dequantize's groups are whole multiples of 64.
//!
//! A operand: not offered. A's fragments come from shared memory straight into the mma's registers
//! in its own element type; a hook there would sit at the same place (after the fragment loads),
//! but scaling A's rows is cheaper as a scale of D's rows in the epilogue (output_ops.cuh).

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "../arch/cp_async.cuh"
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
//! `group` is a power of two of 64 or more (64 or 128 through GemmMixedInput), or one scale per
//! column (`group >= K`); `make` takes care of both. Each 64-deep half of a k-tile then lies
//! inside one group: its scales are one row of `scale`, TileN elements, which `stage` copies into
//! the stage with the k-tile (one 16-byte chunk per thread of the first TileK / 64 x TileN / 8: a
//! cp.async when the row is 16-byte aligned and whole, else eight plain loads and stores, which
//! the ring's barrier orders) and each lane reads once per k-tile, for its half. Where a group
//! holds the whole k-tile, its halves stage the same row twice: 256 bytes a k-tile of 128
//! columns, against 16 KB of B.
template <class Element, class StoredT = std::int8_t>
struct Dequantize {
  static_assert(std::is_same_v<Element, __half> || std::is_same_v<Element, __nv_bfloat16>,
                "Dequantize: the scales and the dequantized B are __half or __nv_bfloat16");
  static_assert(std::is_same_v<StoredT, std::int8_t> || std::is_same_v<StoredT, __nv_fp8_e4m3>,
                "Dequantize: B's stored element is std::int8_t or __nv_fp8_e4m3");
  using Stored = StoredT;
  //! The scales of one k-tile's TileN columns, a row for each 64-deep half of the k-tile.
  template <int TileN, int TileK>
  struct Staged {
    static_assert(TileN % 8 == 0,
                  "Dequantize::Staged: TileN must be a multiple of 8 (16-byte copies)");
    static_assert(TileK % 64 == 0, "Dequantize::Staged: TileK must be a multiple of 64");
    static constexpr int kHalves = TileK / 64;
    alignas(16) Element scale[kHalves][TileN];  // (TileK / 64, TileN)
  };
  using Param = Element;

  const Element* scale = nullptr;  //!< ceil(K / group) x N, row-major
  int ld_scale = 0;                //!< elements between consecutive rows of `scale` (N); the
                                   //!< array holds fewer than 2^31 elements
  int n = 0;                       //!< N: columns past it read the last column's scale
  int k_last = 0;                  //!< K - 1: k past it reads the last row's scales
  int group_shift = 31;            //!< log2(group); 31: one scale per column (k >> 31 is 0)
  bool rows_aligned = false;       //!< every row of `scale` starts 16-byte aligned

  //! The transform for scales of `group` (a power of two, or >= k for one per column) of an
  //! `k x n` B.
  static Dequantize make(const Element* scale, int ld_scale, int n, int k, int group) {
    Dequantize t;
    t.scale = scale;
    t.ld_scale = ld_scale;
    t.n = n;
    t.k_last = k > 0 ? k - 1 : 0;
    t.group_shift = group >= k ? 31 : group_shift_of(group);
    t.rows_aligned = reinterpret_cast<std::uintptr_t>(scale) % 16 == 0 &&
                     ld_scale % (16 / int(sizeof(Element))) == 0;
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
  TILEPIPE_HOST_DEVICE constexpr int row_of(int k) const {
    return (k < k_last ? k : k_last) >> group_shift;
  }

  //! Copies the scales of the k-tile at GEMM k `k0`, columns `n0 .. n0 + TileN - 1` (clamped to
  //! the last column), into `dst`. `n0` is a multiple of 8; `thread` is in 0 .. Threads - 1.
  template <int TileN, int TileK, int Threads>
  TILEPIPE_DEVICE void stage(Staged<TileN, TileK>& dst, int k0, int n0, int thread) const {
    constexpr int kPerChunk = 16 / int(sizeof(Element));
    constexpr int kRowChunks = TileN / kPerChunk;
    constexpr int kChunks = Staged<TileN, TileK>::kHalves * kRowChunks;
    const bool whole = rows_aligned && n0 + TileN <= n;
    TILEPIPE_UNROLL
    for (int i = 0; i < (kChunks + Threads - 1) / Threads; ++i) {
      const int c = thread + i * Threads;  // this thread's 16-byte chunk: half c / kRowChunks
      if (kChunks % Threads == 0 || c < kChunks) {
        const int half = c / kRowChunks, chunk = c % kRowChunks;
        const Element* row = scale + row_of(k0 + 64 * half) * ld_scale;  // 32-bit offsets
        Element* dst_chunk = dst.scale[half] + chunk * kPerChunk;
        if (whole) {
          arch::cp_async_zfill_16(dst_chunk, row + n0 + chunk * kPerChunk, 16);
        } else {
          TILEPIPE_UNROLL
          for (int e = 0; e < kPerChunk; ++e) {
            const int col = n0 + chunk * kPerChunk + e;
            dst_chunk[e] = row[col < n ? col : n - 1];
          }
        }
      }
    }
  }

  //! The scale of column `col` of the block tile for the k of the k-tile's half `half`.
  template <int TileN, int TileK>
  TILEPIPE_DEVICE Param param(const Staged<TileN, TileK>& staged, int col, int half) const {
    return staged.scale[half][col];
  }

  TILEPIPE_DEVICE void operator()(std::uint32_t (&b)[2], std::uint32_t raw, Param s) const {
    if constexpr (std::is_same_v<Stored, std::int8_t>) {
      b[0] = dequantize_s8x2<Element, 0>(raw, s);
      b[1] = dequantize_s8x2<Element, 1>(raw, s);
    } else {
      b[0] = dequantize_e4m3x2<Element, 0>(raw, s);
      b[1] = dequantize_e4m3x2<Element, 1>(raw, s);
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

}  // namespace detail

}  // namespace tilepipe
