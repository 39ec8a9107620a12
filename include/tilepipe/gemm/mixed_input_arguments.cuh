#pragma once
//! \file
//! MixedInputArguments, what a user gives GemmMixedInput (f16 / bf16 activations A times int8
//! weights B with scales), and the host-side checks of it that need no GPU.

#include <cstddef>
#include <cstdint>
#include <string>

#include "../epilogue/output_ops.cuh"
#include "../layout/tile_shape.cuh"
#include "../status.cuh"
#include "arguments.cuh"
#include "split_k.cuh"

namespace tilepipe {

//! How GemmMixedInput sums the partial products of split-K's slices (when there are several).
enum class SplitKReduction {
  //! kCluster where the current device can run it (an sm_90 or newer GPU running this program's
  //! code for sm_90 or newer, 2 to 8 slices, and a cluster of that many blocks fits), else
  //! kWorkspace. `workspace_size` is kWorkspace's, so that the call works on every GPU.
  kAuto,
  //! The slices of each output tile run as one thread-block cluster and are summed in its shared
  //! memory, in one kernel; no workspace (`workspace_size` is 0). Fails with a status naming
  //! `split_k_reduction` where the device or the build cannot run it, or with more than 8 slices.
  kCluster,
  //! The slices write f32 partial products to the workspace, and a second kernel sums them.
  kWorkspace,
};

//! The name of `r` as it is written in source ("kAuto"), or its number if it is none of them.
inline std::string to_string(SplitKReduction r) {
  switch (r) {
    case SplitKReduction::kAuto: return "kAuto";
    case SplitKReduction::kCluster: return "kCluster";
    case SplitKReduction::kWorkspace: return "kWorkspace";
  }
  return std::to_string(static_cast<int>(r));
}

//! Problem description for GemmMixedInput: `D = output_op(alpha * A * dequant(B) + beta * C)`
//! with `dequant(B)(k, n) = B(k, n) * scale[k / group][n]` rounded to A's type, f32 accumulation,
//! one problem (no batches). Sizes and leading dimensions are in elements.
//!
//! - A: M x K, row-major (`lda >= K`, a multiple of 8 elements), `ElementA` (f16 or bf16).
//! - B: K x N int8, column-major, i.e. N rows of K contiguous bytes as PyTorch stores a
//!   `Linear.weight` (`ldb >= K`, a multiple of 16).
//! - scale: `ceil(K / group) x N` row-major, `ElementA`; `group` is 64, 128, or K for one scale
//!   per column.
//! - C, D: M x N in `layout_cd`, 16-byte aligned as for GemmMultistage.
//! K needs no particular multiple: its residue is zero-filled on load.
//!
//! Split-K (for decode shapes, where N / TileN output tiles are too few to fill the GPU): as for
//! GemmMultistageSplitK (gemm/arguments.cuh), with `GemmMixedInput::workspace_size(args)` bytes of
//! workspace that overlaps nothing else. `split_k_reduction` chooses how the slices are summed
//! (SplitKReduction); the cluster reduction touches no workspace.
template <class ElementA, class ElementB, class ElementD, class OutputOp = Identity>
struct MixedInputArguments {
  int m = 0, n = 0, k = 0;
  const ElementA* a = nullptr;      //!< M x K, row-major
  const ElementB* b = nullptr;      //!< K x N, column-major (N x K, K contiguous)
  const ElementA* scale = nullptr;  //!< ceil(K / group) x N, row-major
  int group = 128;                  //!< k per scale: 64, 128, or K (one scale per column)
  const ElementD* c = nullptr;      //!< M x N, read only when beta != 0
  ElementD* d = nullptr;            //!< M x N
  std::int64_t lda = 0, ldb = 0, ldc = 0, ldd = 0;
  float alpha = 1.0f;
  float beta = 0.0f;
  Layout layout_cd = Layout::kRowMajor;  //!< layout of C and D
  int split_k = 1;                       //!< slices of K (1: no split-K)
  //! how the slices are summed; both ways add them in the same order and give the same D
  SplitKReduction split_k_reduction = SplitKReduction::kAuto;
  void* workspace = nullptr;        //!< f32 partial products, when split-K runs through it
  std::size_t workspace_bytes = 0;  //!< size of `workspace`
  OutputOp output_op{};             //!< applied to every element of D (output_ops.cuh)
};

namespace detail {

//! The device-free checks of MixedInputArguments: the scales, the group and the split-K
//! reduction here, everything GemmMultistage checks too (sizes, pointers, alignment, aliasing,
//! split-K's workspace) through GemmArgumentChecks, with every message starting
//! "GemmMixedInput: ". `max_cluster_slices`: the most slices the cluster reduction sums.
struct MixedInputArgumentChecks {
  template <class Args>
  static Status check(const Args& a, int tile_m, int tile_n, const SplitKSlices& slices,
                      std::size_t workspace_needed, int max_cluster_slices) {
    const SplitKReduction r = a.split_k_reduction;
    if (r != SplitKReduction::kAuto && r != SplitKReduction::kCluster &&
        r != SplitKReduction::kWorkspace)
      return invalid("split_k_reduction = " + to_string(r) +
                     " is not a SplitKReduction (kAuto, kCluster or kWorkspace)");
    // GemmMultistage's checks on the same fields, for one problem and 16-byte alignment. The
    // cluster reduction needs no workspace: those checks see one slice then (the slice count
    // is checked below).
    const bool cluster = r == SplitKReduction::kCluster;
    const GemmView<Args> view(a);
    Status s = GemmArgumentChecks<Layout::kRowMajor, Layout::kColumnMajor>::check(
        view, tile_m, tile_n, cluster ? SplitKSlices{} : slices, workspace_needed,
        /*split_k_compiled=*/true, /*any_alignment=*/false);
    if (!s) return renamed(s);
    if (a.m == 0 || a.n == 0 || a.k == 0) return Status::success();  // no scale is read
    if (cluster && slices.count > max_cluster_slices)
      return invalid("split_k_reduction = kCluster sums at most " +
                     std::to_string(max_cluster_slices) +
                     " slices (the blocks of one cluster), but " + describe("split_k", a.split_k) +
                     " gives " + std::to_string(slices.count) +
                     " slices of K = " + std::to_string(a.k) + "; use kWorkspace or kAuto");
    if (a.scale == nullptr) return invalid("scale is a null pointer");
    if (reinterpret_cast<std::uintptr_t>(a.scale) % sizeof(*a.scale) != 0)
      return invalid("scale is not aligned to its element size (" +
                     std::to_string(sizeof(*a.scale)) + " bytes)");
    if (a.group != 64 && a.group != 128 && a.group != a.k)
      return invalid(describe("group", a.group) +
                     " must be 64, 128 or K (= " + std::to_string(a.k) + ", one scale per column)");
    const std::int64_t rows = (std::int64_t(a.k) + a.group - 1) / a.group;
    if (rows * a.n > 0x7FFFFFFF)
      return invalid("scale (" + std::to_string(rows) + " x " + std::to_string(a.n) +
                     ") has 2^31 elements or more; use a larger group");
    // The scales are read while D (and the workspace) are written.
    const Range scale = range(a.scale, rows * a.n);
    const std::int64_t d_outer = a.layout_cd == Layout::kRowMajor ? a.m : a.n;
    const std::int64_t d_inner = a.layout_cd == Layout::kRowMajor ? a.n : a.m;
    if (scale.overlaps(range(a.d, (d_outer - 1) * a.ldd + d_inner)))
      return invalid("D overlaps scale in memory; write D to a separate buffer");
    if (slices.count > 1 && !cluster &&
        scale.overlaps(range(static_cast<const unsigned char*>(a.workspace),
                             static_cast<std::int64_t>(workspace_needed))))
      return invalid("the split-K workspace overlaps scale in memory");
    return Status::success();
  }

 private:
  // The fields GemmArgumentChecks reads, for one problem.
  template <class Args>
  struct GemmView {
    explicit GemmView(const Args& x)
        : m(x.m), n(x.n), k(x.k), a(x.a), b(x.b), c(x.c), d(x.d), lda(x.lda), ldb(x.ldb),
          ldc(x.ldc), ldd(x.ldd), alpha(x.alpha), beta(x.beta), layout_cd(x.layout_cd),
          split_k(x.split_k), workspace(x.workspace), workspace_bytes(x.workspace_bytes),
          output_op(x.output_op) {}
    int m, n, k;
    decltype(Args::a) a;
    decltype(Args::b) b;
    decltype(Args::c) c;
    decltype(Args::d) d;
    std::int64_t lda, ldb, ldc, ldd;
    float alpha, beta;
    Layout layout_cd;
    int batch_count = 1;
    std::int64_t batch_stride_a = 0, batch_stride_b = 0, batch_stride_c = 0, batch_stride_d = 0;
    int split_k;
    void* workspace;
    std::size_t workspace_bytes;
    decltype(Args::output_op) output_op;
  };

  struct Range {
    std::uintptr_t first, last;
    bool overlaps(const Range& o) const { return first < o.last && o.first < last; }
  };
  template <class T>
  static Range range(const T* p, std::int64_t elements) {
    const auto first = reinterpret_cast<std::uintptr_t>(p);
    return Range{first, first + static_cast<std::uintptr_t>(elements) * sizeof(T)};
  }

  static Status invalid(const std::string& msg) {
    return Status::error(Status::Code::kInvalidArgument, "GemmMixedInput: " + msg);
  }
  // GemmArgumentChecks' message under this GEMM's name.
  static Status renamed(const Status& s) {
    const std::string prefix = "GemmMultistage: ";
    const std::string& m = s.message();
    return Status::error(
        s.code(), "GemmMixedInput: " +
                      (m.compare(0, prefix.size(), prefix) == 0 ? m.substr(prefix.size()) : m));
  }
};

}  // namespace detail
}  // namespace tilepipe
