#pragma once
//! \file
//! GemmArgumentChecks: the host-side checks of a GEMM's arguments that need no GPU (extents,
//! pointers, leading dimensions, alignment, batches, aliasing, split-K, stream-K and workspaces),
//! each failure a Status whose message names the argument.

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "../epilogue/output_ops.cuh"
#include "../layout/tile_shape.cuh"
#include "../status.cuh"
#include "split_k.cuh"

namespace tilepipe {
namespace detail {

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

  //! A and B 16-byte aligned where they are read (pointers, leading dimensions and batch
  //! strides), for a GEMM that reads them with TMA but takes C and D aligned to their elements.
  //! After `check`, which checked the rest.
  template <class Args>
  static Status check_ab_vector_aligned(const Args& a) {
    if (a.m == 0 || a.n == 0 || a.k == 0 || a.batch_count == 0) return Status::success();
    Status s = check_matrix("A", a.a, "lda", a.lda, LayoutA, a.m, a.k, false);
    if (s) s = check_matrix("B", a.b, "ldb", a.ldb, LayoutB, a.k, a.n, false);
    constexpr std::int64_t kAlign = 16 / sizeof(*a.a);
    const auto stride = [](const char* name, std::int64_t value) {
      if (value % kAlign == 0) return Status::success();
      return invalid(describe(name, value) + " is not a multiple of 16 bytes (" +
                     std::to_string(kAlign) + " elements; this GEMM needs 16-byte alignment)");
    };
    if (s && a.batch_count > 1) s = stride("batch_stride_a", a.batch_stride_a);
    if (s && a.batch_count > 1) s = stride("batch_stride_b", a.batch_stride_b);
    return s;
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
