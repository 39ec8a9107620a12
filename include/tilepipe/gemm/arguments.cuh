#pragma once
//! \file
//! GemmArguments, what a user gives the provided GEMMs, and the host-side checks of it that need
//! no GPU (`GemmMultistage::check_arguments` runs them; `can_implement` adds the device's).

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "../epilogue/output_ops.cuh"
#include "../epilogue/output_store.cuh"
#include "../layout/tile_shape.cuh"
#include "../status.cuh"
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
//! element, without split-K. A GemmMultistage with `AnyAlignment = false`, and the Hopper tier,
//! require the 16-byte alignment.
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
//! tf32 (float A and B, `DefaultF32TileConfig<MathTF32>`) with A column-major or B row-major uses
//! the same `workspace` for the K-major copies of those operands that the Hopper tier multiplies
//! (`GemmMultistage::workspace_size(args)` bytes, with the same rules); without one it runs on the
//! Ampere tier.
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
  int split_k = 1;            //!< slices of K (1: no split-K)
  int stream_k = 0;           //!< stream-K's persistent blocks (0: no stream-K)
  void* workspace = nullptr;  //!< f32 partial products (split-K, stream-K) or tf32's K-major copies
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

inline std::string describe(const char* name, std::int64_t value) {
  return std::string(name) + " = " + std::to_string(value);
}

//! The device-free checks of GemmArguments for a GEMM whose tile is `tile_m x tile_n`, whose
//! layouts are `LayoutA` / `LayoutB`, and that can (`split_k_compiled`) or cannot split K.
//! `who` starts every message ("GemmMultistage").
template <Layout LayoutA, Layout LayoutB>
struct GemmArgumentChecks {
  //! Largest M, N or K: tile coordinates are `int`, element offsets 64-bit, so a matrix may hold
  //! more than 2^31 elements but no extent may come within a few tiles of 2^31.
  static constexpr int kMaxExtent = 0x7FFFFFFF - 4096;

  //! `any_alignment`: pointers need only be aligned to their element (a GEMM with a narrow
  //! kernel); otherwise pointers, leading dimensions and batch strides to 16 bytes.
  template <class Args>
  static Status check(const Args& a, int tile_m, int tile_n, const SplitKSlices& slices,
                      std::size_t workspace_needed, bool split_k_compiled, bool any_alignment) {
    if (a.m < 0) return invalid(describe("m", a.m) + " is negative");
    if (a.n < 0) return invalid(describe("n", a.n) + " is negative");
    if (a.k < 0) return invalid(describe("k", a.k) + " is negative");
    if (a.batch_count < 0) return invalid(describe("batch_count", a.batch_count) + " is negative");
    if (a.split_k < 1)
      return invalid(describe("split_k", a.split_k) + " is less than 1 (1 runs without split-K)");
    // Tile coordinates are 32-bit (element offsets are 64-bit): keep `extent + tile` in range.
    const char* names[3] = {"m", "n", "k"};
    const int extents[3] = {a.m, a.n, a.k};
    for (int i = 0; i < 3; ++i)
      if (extents[i] > kMaxExtent)
        return invalid(describe(names[i], extents[i]) + " exceeds " + std::to_string(kMaxExtent) +
                       ", the largest extent GemmMultistage supports");
    if (a.batch_count > 65535)
      return invalid(describe("batch_count", a.batch_count) + " exceeds 65535, the grid's z limit");
    const std::int64_t tiles =
        std::int64_t((a.m + tile_m - 1) / tile_m) * ((a.n + tile_n - 1) / tile_n);
    if (tiles > 0x7FFFFFFF) return invalid("m x n needs more thread blocks than a grid holds");
    if (a.m == 0 || a.n == 0 || a.batch_count == 0) return Status::success();  // nothing to do

    const bool reads_ab = a.k > 0;
    const bool reads_c = a.beta != 0.0f;
    // With K == 0, A and B are never read (D = op(beta * C)): their arguments don't matter.
    Status s;
    const bool any = any_alignment;
    if (reads_ab) s = check_matrix("A", a.a, "lda", a.lda, LayoutA, a.m, a.k, any);
    if (s && reads_ab) s = check_matrix("B", a.b, "ldb", a.ldb, LayoutB, a.k, a.n, any);
    if (s) s = check_matrix("D", a.d, "ldd", a.ldd, a.layout_cd, a.m, a.n, any);
    if (s && reads_c) s = check_matrix("C", a.c, "ldc", a.ldc, a.layout_cd, a.m, a.n, any);
    if (s) s = check_output_op(a.output_op, a.m, a.n);
    if (s) s = check_batches(a, reads_ab, reads_c, any);
    if (s) s = check_aliasing(a, reads_ab, reads_c);
    if (s) s = check_split_k(a, slices, workspace_needed, split_k_compiled);
    return s;
  }

  static Status invalid(const std::string& msg) {
    return Status::error(Status::Code::kInvalidArgument, "GemmMultistage: " + msg);
  }

 private:
  // Rows (outer extent) and columns (contiguous extent) of an r x c matrix in a layout.
  static std::int64_t outer(Layout l, int rows, int cols) {
    return l == Layout::kRowMajor ? rows : cols;
  }
  static std::int64_t inner(Layout l, int rows, int cols) {
    return l == Layout::kRowMajor ? cols : rows;
  }

  // One matrix: pointer, alignment, leading dimension; `name` is its name.
  template <class T>
  static Status check_matrix(const char* name, const T* ptr, const char* ld_name, std::int64_t ld,
                             Layout l, int rows, int cols, bool any_alignment) {
    constexpr std::int64_t kAlignElems = 16 / sizeof(T);
    const std::string where = std::string(name) + " (" + std::to_string(rows) + " x " +
                              std::to_string(cols) + ", " +
                              (l == Layout::kRowMajor ? "row-major" : "column-major") + ")";
    if (ptr == nullptr) return invalid(std::string(name) + " is a null pointer");
    if (reinterpret_cast<std::uintptr_t>(ptr) % sizeof(T) != 0)
      return invalid(std::string(name) + " is not aligned to its element size (" +
                     std::to_string(sizeof(T)) + " bytes)");
    if (!any_alignment && reinterpret_cast<std::uintptr_t>(ptr) % 16 != 0)
      return invalid(std::string(name) +
                     " is not 16-byte aligned (this GEMM needs 16-byte "
                     "alignment)");
    const std::int64_t min_ld = inner(l, rows, cols);
    if (ld < (min_ld > 1 ? min_ld : 1))
      return invalid(describe(ld_name, ld) + " is smaller than the " +
                     (l == Layout::kRowMajor ? "row length" : "column length") + " of " + where);
    if (!any_alignment && ld % kAlignElems != 0)
      return invalid(describe(ld_name, ld) + " is not a multiple of 16 bytes (" +
                     std::to_string(kAlignElems) + " elements) for " + where +
                     " (this GEMM needs 16-byte alignment)");
    return Status::success();
  }

  // Batch strides keep every problem's first element 16-byte aligned (unless `any_alignment`),
  // and D's problems apart.
  template <class Args>
  static Status check_batches(const Args& a, bool reads_ab, bool reads_c, bool any_alignment) {
    if (a.batch_count <= 1) return Status::success();
    using AB = std::remove_cv_t<std::remove_pointer_t<decltype(a.a)>>;
    using D = std::remove_pointer_t<decltype(a.d)>;
    struct Stride {
      const char* name;
      std::int64_t value;
      std::int64_t align;
      bool used;
    };
    const Stride strides[] = {
        {"batch_stride_a", a.batch_stride_a, 16 / std::int64_t(sizeof(AB)), reads_ab},
        {"batch_stride_b", a.batch_stride_b, 16 / std::int64_t(sizeof(AB)), reads_ab},
        {"batch_stride_c", a.batch_stride_c, 16 / std::int64_t(sizeof(D)), reads_c},
        {"batch_stride_d", a.batch_stride_d, 16 / std::int64_t(sizeof(D)), true}};
    for (const Stride& st : strides) {
      if (!st.used) continue;
      if (st.value < 0) return invalid(describe(st.name, st.value) + " is negative");
      if (!any_alignment && st.value % st.align != 0)
        return invalid(describe(st.name, st.value) + " is not a multiple of 16 bytes (" +
                       std::to_string(st.align) + " elements; this GEMM needs 16-byte alignment)");
    }
    // Each batch's D spans (outer - 1) * ldd + inner elements.
    const std::int64_t span =
        (outer(a.layout_cd, a.m, a.n) - 1) * a.ldd + inner(a.layout_cd, a.m, a.n);
    if (a.batch_stride_d < span)
      return invalid(describe("batch_stride_d", a.batch_stride_d) +
                     " makes the D matrices of consecutive batches overlap (each spans " +
                     std::to_string(span) + " elements)");
    return Status::success();
  }

  // Byte range [first, last) that a matrix covers over all batches.
  struct Range {
    std::uintptr_t first, last;
    bool overlaps(const Range& o) const { return first < o.last && o.first < last; }
  };
  template <class T>
  static Range range_of(const T* p, Layout l, std::int64_t ld, int rows, int cols, int batches,
                        std::int64_t stride) {
    const std::int64_t elems =
        (outer(l, rows, cols) - 1) * ld + inner(l, rows, cols) + std::int64_t(batches - 1) * stride;
    const auto first = reinterpret_cast<std::uintptr_t>(p);
    return Range{first, first + static_cast<std::uintptr_t>(elems) * sizeof(T)};
  }
  template <class Args>
  static Range range_a(const Args& a) {
    return range_of(a.a, LayoutA, a.lda, a.m, a.k, a.batch_count, a.batch_stride_a);
  }
  template <class Args>
  static Range range_b(const Args& a) {
    return range_of(a.b, LayoutB, a.ldb, a.k, a.n, a.batch_count, a.batch_stride_b);
  }
  template <class Args>
  static Range range_c(const Args& a) {
    return range_of(a.c, a.layout_cd, a.ldc, a.m, a.n, a.batch_count, a.batch_stride_c);
  }
  template <class Args>
  static Range range_d(const Args& a) {
    return range_of(a.d, a.layout_cd, a.ldd, a.m, a.n, a.batch_count, a.batch_stride_d);
  }

  // D is written while A, B and C are read by other blocks: it must not share memory with A or
  // B. C may be D itself (an in-place update), element for element, but may not overlap it
  // otherwise.
  template <class Args>
  static Status check_aliasing(const Args& a, bool reads_ab, bool reads_c) {
    const Range d = range_d(a);
    if (reads_ab) {
      if (d.overlaps(range_a(a)))
        return invalid("D overlaps A in memory; write D to a separate buffer");
      if (d.overlaps(range_b(a)))
        return invalid("D overlaps B in memory; write D to a separate buffer");
    }
    if (reads_c) {
      const bool same = static_cast<const void*>(a.c) == static_cast<const void*>(a.d) &&
                        a.ldc == a.ldd &&
                        (a.batch_count <= 1 || a.batch_stride_c == a.batch_stride_d);
      if (!same && d.overlaps(range_c(a)))
        return invalid(
            "C overlaps D without being the same matrix (same pointer, ldc == ldd, same "
            "batch stride); in-place updates must be exact");
    }
    return Status::success();
  }

  // With more than one effective slice: the grid, and the workspace's size, alignment and
  // separateness from every matrix.
  template <class Args>
  static Status check_split_k(const Args& a, const SplitKSlices& slices, std::size_t needed,
                              bool split_k_compiled) {
    if (slices.count <= 1) return Status::success();
    const std::string what = describe("split_k", a.split_k) + " (" + std::to_string(slices.count) +
                             " slices of K = " + std::to_string(a.k) + ")";
    if (!split_k_compiled)
      return invalid(what +
                     " needs split-K, which this GemmMultistage is compiled without; use "
                     "GemmMultistageSplitK");
    if (slices.count > 65535)
      return invalid(what + " needs more slices than the grid's y limit of 65535");
    return check_given_workspace(a, what, needed, "the split-K workspace");
  }

 public:
  //! What stream-K asks, checked before anything else: `stream_k` is not negative and not
  //! combined with split-K.
  template <class Args>
  static Status check_stream_k_request(const Args& a) {
    if (a.stream_k < 0)
      return invalid(describe("stream_k", a.stream_k) + " is negative (0 runs without stream-K)");
    if (a.stream_k > 0 && a.split_k > 1)
      return invalid(describe("split_k", a.split_k) + " and " + describe("stream_k", a.stream_k) +
                     " exclude each other; set one of them");
    return Status::success();
  }

  //! Stream-K's checks after the others, for a GEMM that can (`compiled`) or cannot run it: where
  //! stream-K runs (`runs`), its support and the workspace of `needed` bytes, as split-K's.
  template <class Args>
  static Status check_stream_k(const Args& a, bool runs, std::size_t needed, bool compiled) {
    if (!runs) return Status::success();
    const std::string what = describe("stream_k", a.stream_k) + " (stream-K blocks)";
    if (!compiled)
      return invalid(what +
                     " needs stream-K, which this GemmMultistage is compiled without; use "
                     "GemmMultistageStreamK");
    if (needed == 0) return Status::success();
    return check_given_workspace(a, what, needed, "the stream-K workspace");
  }

 private:
  // The workspace of `needed` bytes that `what` (split_k = ..., stream_k = ...) needs: given, then
  // check_workspace. `purpose` names it in messages ("the split-K workspace").
  template <class Args>
  static Status check_given_workspace(const Args& a, const std::string& what, std::size_t needed,
                                      const std::string& purpose) {
    if (a.workspace == nullptr)
      return invalid(what + " needs a workspace of " + std::to_string(needed) +
                     " bytes (workspace_size(args)), but workspace is a null pointer");
    return check_workspace(a, needed, what, purpose);
  }

 public:
  //! A workspace that `what` needs `needed` bytes of (`purpose` names it in messages, "the
  //! split-K workspace"): at least that large, 16-byte aligned, and overlapping none of the
  //! matrices the GEMM reads or writes. The caller has checked that it is not null.
  template <class Args>
  static Status check_workspace(const Args& a, std::size_t needed, const std::string& what,
                                const std::string& purpose) {
    const bool reads_ab = a.k > 0;
    const bool reads_c = a.beta != 0.0f;
    if (a.workspace_bytes < needed)
      return invalid("workspace_bytes = " + std::to_string(a.workspace_bytes) +
                     " is less than the " + std::to_string(needed) + " bytes that " + what +
                     " needs (workspace_size(args))");
    if (reinterpret_cast<std::uintptr_t>(a.workspace) % 16 != 0)
      return invalid("workspace is not 16-byte aligned");
    const auto first = reinterpret_cast<std::uintptr_t>(a.workspace);
    const Range w{first, first + needed};
    if (w.overlaps(range_d(a))) return invalid(purpose + " overlaps D in memory");
    if (reads_c && w.overlaps(range_c(a))) return invalid(purpose + " overlaps C in memory");
    if (reads_ab && w.overlaps(range_a(a))) return invalid(purpose + " overlaps A in memory");
    if (reads_ab && w.overlaps(range_b(a))) return invalid(purpose + " overlaps B in memory");
    return Status::success();
  }
};

}  // namespace detail
}  // namespace tilepipe
