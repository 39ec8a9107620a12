#pragma once
//! \file
//! GemmArguments, what a user gives the provided GEMMs; the host-side checks of them that need no
//! GPU are in argument_checks.cuh (`GemmMultistage::check_arguments` runs them; `can_implement`
//! adds the device's).

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "../epilogue/output_ops.cuh"
#include "../epilogue/output_store.cuh"
#include "../layout/tile_shape.cuh"
#include "../status.cuh"
#include "argument_checks.cuh"
#include "split_k.cuh"

namespace tilepipe {

//! Problem description for GemmMultistage and GemmAuto:
//! `D = output_op(alpha * A * B + beta * C)`, batched, with f32 accumulation. Sizes and leading
//! dimensions are in elements; a matrix's leading dimension is the distance between its rows
//! (row-major) or columns (column-major). Batch strides are the distances between consecutive
//! problems (0 broadcasts an input).
//!
//! Alignment: GemmMultistage (with its default `AnyAlignment = true`) and GemmAuto take any
//! leading dimension and batch stride, and pointers aligned to their element. Where every pointer,
//! leading dimension and batch stride of A, B, C and D is a multiple of 16 bytes (8 f16/bf16
//! elements, 4 f32) they run their 16-byte kernels; otherwise a narrow kernel that copies each
//! operand as widely as its alignment allows (8, 4 or 2 bytes) and stores C and D element by
//! element, without split-K. The Hopper tier (GemmSm90) needs the 16-byte alignment of A and B
//! only (it reads them with TMA): a D or C without it is written or read element by element, and
//! GemmMultistage copies an A or B without it into `workspace` first (below). A GemmMultistage
//! with `AnyAlignment = false` requires the 16-byte alignment of all four.
//!
//! Split-K (a GemmMultistage with `SplitK = true`): with `split_k > 1`, K is cut into up to
//! `split_k` slices of whole k-tiles (`GemmMultistage::split_k_slices` says how many; none is
//! ever empty), each computed by its own thread blocks into an f32 `workspace`, and a second
//! kernel sums the slices in a fixed order (so the result is deterministic) and writes D. The
//! workspace must hold `GemmMultistage::workspace_size(args)` bytes (0 when the slices come to
//! one, e.g. when K fits in one k-tile: then no workspace is needed and the ordinary kernel runs),
//! be 16-byte aligned and overlap none of A, B, C and D; GEMMs that may run at the same time need
//! workspaces of their own.
//!
//! The Hopper tier's copies use the same `workspace` (`GemmMultistage::workspace_size(args)`
//! bytes, with the same rules): K-major copies of tf32 A column-major or B row-major (float A and
//! B, `DefaultF32TileConfig<MathTF32>`), and copies of f16 or bf16 A or B that are not 16-byte
//! aligned. Without one such a call runs on the Ampere tier.
//!
//! Stream-K (a GemmMultistage with `StreamK = true`, `GemmMultistageStreamK`): with
//! `stream_k > 0`, a persistent grid of `min(stream_k, tiles x k-tiles x batch_count)` blocks
//! shares the GEMM's MAC-iterations evenly (`GemmMultistage::stream_k_blocks` gives the number of
//! blocks that fit on the device at once, the usual choice); blocks that compute only part of a
//! tile leave f32 partial accumulators in `workspace`, and the block that completes a tile sums
//! them in k order (deterministic) and writes the tile. The workspace rules are split-K's, with
//! `workspace_size(args)` bytes (0 when the tiles divide evenly over the blocks). `split_k > 1` and
//! `stream_k > 0` exclude each other. Arguments that are not 16-byte aligned, and K = 0, run
//! without stream-K.
template <class ElementAB, class ElementD, class OutputOp = Identity>
struct GemmArguments {
  int m = 0, n = 0, k = 0;
  const ElementAB* a = nullptr;  //!< M x K
  const ElementAB* b = nullptr;  //!< K x N
  const ElementD* c = nullptr;   //!< M x N, read only when beta != 0
  ElementD* d = nullptr;         //!< M x N
  std::int64_t lda = 0, ldb = 0, ldc = 0, ldd = 0;
  float alpha = 1.0f;
  float beta = 0.0f;
  Layout layout_cd = Layout::kRowMajor;  //!< layout of C and D
  int batch_count = 1;
  std::int64_t batch_stride_a = 0, batch_stride_b = 0, batch_stride_c = 0, batch_stride_d = 0;
  int split_k = 1;   //!< slices of K (1: no split-K)
  int stream_k = 0;  //!< stream-K's persistent blocks (0: no stream-K)
  void* workspace =
      nullptr;  //!< f32 partial products (split-K, stream-K), the Hopper tier's copies
  std::size_t workspace_bytes = 0;  //!< size of `workspace`
  OutputOp output_op{};             //!< applied to every element of D (output_ops.cuh)
};

//! The epilogue's part of a GEMM's arguments (`GemmArguments` or any with the same fields): D,
//! C, their leading dimensions and layout, alpha, beta, M, N and the output operator.
template <class Args>
auto output_params(const Args& a)
    -> EpilogueParams<std::remove_pointer_t<decltype(a.d)>, decltype(a.output_op)> {
  return {a.d, a.c, a.ldd, a.ldc, a.alpha, a.beta, a.layout_cd, a.m, a.n, a.output_op};
}

namespace detail {

//! The widest copy, 16, 8, 4 or 2 bytes but no narrower than a `T`, whose alignment a matrix's
//! pointer, leading dimension and (with more than one batch) batch stride all keep.
template <class T>
int copy_bytes_of(const T* p, std::int64_t ld, std::int64_t batch_stride, int batches) {
  std::uint64_t bits =
      reinterpret_cast<std::uintptr_t>(p) | static_cast<std::uint64_t>(ld) * sizeof(T);
  if (batches > 1) bits |= static_cast<std::uint64_t>(batch_stride) * sizeof(T);
  int bytes = 16;
  while (bytes > static_cast<int>(sizeof(T)) && bits % bytes != 0) bytes /= 2;
  return bytes;
}

}  // namespace detail
}  // namespace tilepipe
