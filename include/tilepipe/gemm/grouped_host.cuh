#pragma once
//! \file
//! GroupedHost: the host side that the grouped GEMMs of the contiguous and masked forms share
//! (GemmGroupedSm90, GemmGroupedFp8Sm90): the device-free argument checks, each failure a
//! kInvalidArgument whose message names the GEMM and the argument; the scheduler's, the
//! epilogue's and the loader's parameters; and the launch. Their arguments have the same members
//! for the form, the sizes and the operands (gemm_grouped.cuh's table).

#include <cuda_runtime.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>

#include "../epilogue/output_ops.cuh"
#include "../layout/tile_shape.cuh"
#include "../status.cuh"
#include "grouped_scheduler.cuh"
#include "launch.cuh"

namespace tilepipe::detail {

//! A grouped GEMM's kInvalidArgument: `gemm`'s name, then `msg`.
inline Status grouped_invalid(const char* gemm, const std::string& msg) {
  return Status::error(Status::Code::kInvalidArgument, std::string(gemm) + ": " + msg);
}

//! G in `[1, max_groups]` and the extents m, n, k in `[0, INT_MAX - 4096]`, each failure naming
//! the argument (every grouped GEMM's first checks).
inline Status check_groups_and_extents(const char* gemm, int groups, int max_groups, int m, int n,
                                       int k) {
  if (groups < 1 || groups > max_groups)
    return grouped_invalid(gemm, "groups = " + std::to_string(groups) + " is outside [1, " +
                                     std::to_string(max_groups) + "]");
  constexpr int kMaxExtent = INT_MAX - 4096;
  const char* names[3] = {"m", "n", "k"};
  const int extents[3] = {m, n, k};
  for (int i = 0; i < 3; ++i)
    if (extents[i] < 0 || extents[i] > kMaxExtent)
      return grouped_invalid(gemm, std::string(names[i]) + " = " + std::to_string(extents[i]) +
                                       " is outside [0, " + std::to_string(kMaxExtent) + "]");
  return Status::success();
}

//! \tparam TileM, TileN, ClusterM  the kernel's tile and cluster (tiles counted per group)
//! \tparam MaxGroups               the most groups
template <int TileM, int TileN, int ClusterM, int MaxGroups>
struct GroupedHost {
  //! The form, G, the extents, the sizes' pointer and the status word's.
  template <class Args>
  static Status sizes(const char* gemm, const Args& a) {
    const bool masked = a.form == GroupedForm::kMasked;
    if (a.form != GroupedForm::kContiguous && !masked)
      return invalid(gemm, "form is neither kContiguous nor kMasked");
    const Status s = check_groups_and_extents(gemm, a.groups, MaxGroups, a.m, a.n, a.k);
    if (!s) return s;
    const int* sizes = masked ? a.counts : a.offs;
    const char* sizes_name = masked ? "counts" : "offs";
    if (sizes == nullptr) return invalid(gemm, std::string(sizes_name) + " is a null pointer");
    if (reinterpret_cast<std::uintptr_t>(sizes) % alignof(int) != 0)
      return invalid(gemm, std::string(sizes_name) + " is not aligned to 4 bytes (int32)");
    if (reinterpret_cast<std::uintptr_t>(a.status) % alignof(int) != 0)
      return invalid(gemm, "status is not aligned to 4 bytes (int32)");
    return Status::success();
  }

  //! The optional workspace for claiming tiles on demand (`workspace_bytes` of `workspace`): an
  //! int32 counter, which `launch` zeroes.
  template <class Args>
  static Status claims(const char* gemm, const Args& a) {
    if (a.workspace != nullptr && a.workspace_bytes < sizeof(unsigned))
      return invalid(gemm, "workspace_bytes = " + std::to_string(a.workspace_bytes) +
                               " is less than " + std::to_string(sizeof(unsigned)) +
                               " (workspace_size(args))");
    if (reinterpret_cast<std::uintptr_t>(a.workspace) % alignof(unsigned) != 0)
      return invalid(gemm, "workspace is not aligned to 4 bytes (an int32 counter)");
    return Status::success();
  }

  //! Whether the tiles fit an int, every group counted with all `m` rows (bad sizes are clamped,
  //! not refused).
  template <class Args>
  static Status tiles(const char* gemm, const Args& a) {
    const long long items = static_cast<long long>(a.groups) *
                            ((a.m + TileM - 1) / TileM + ClusterM - 1) / ClusterM *
                            ((a.n + TileN - 1) / TileN);
    if (items > INT_MAX) return invalid(gemm, "groups x m x n has more tiles than an int counts");
    return Status::success();
  }

  //! The output operator, A, B and D, and the strides between groups, where D has elements:
  //! A and B (of `ab_bytes` each, B `[G, N, K]` where `b_k_contiguous`, else `[G, K, N]`) need
  //! TMA's 16-byte alignment, D (`d_bytes`) its element's.
  template <class Args>
  static Status operands(const char* gemm, const Args& a, std::size_t ab_bytes, std::size_t d_bytes,
                         bool b_k_contiguous) {
    const bool masked = a.form == GroupedForm::kMasked;
    Status s = check_output_op(a.output_op, a.m, a.n);
    if (s && a.k > 0) s = operand(gemm, "A", a.a, ab_bytes, "lda", a.lda, a.k, 16);
    if (s && a.k > 0)
      s = operand(gemm, "B", a.b, ab_bytes, "ldb", a.ldb, b_k_contiguous ? a.k : a.n, 16);
    if (s) s = operand(gemm, "D", a.d, d_bytes, "ldd", a.ldd, a.n, d_bytes);
    if (s && a.k > 0 && a.groups > 1)
      s = stride(gemm, "batch_stride_b", a.batch_stride_b, ab_bytes, 0, true);
    if (s && a.k > 0 && masked && a.groups > 1)
      s = stride(gemm, "batch_stride_a", a.batch_stride_a, ab_bytes, 0, true);
    if (s && masked && a.groups > 1)  // each group's D spans (m - 1) * ldd + n elements
      s = stride(gemm, "batch_stride_d", a.batch_stride_d, d_bytes, (a.m - 1) * a.ldd + a.n, false);
    return s;
  }

  static Status invalid(const char* gemm, const std::string& msg) {
    return grouped_invalid(gemm, msg);
  }

  //! `p.k` and the scheduler's parameters (`p.work`) for `a`, but the workers and the claims;
  //! `k_tiles`: the kernel's k-tiles of K.
  template <class Params, class Args>
  static void schedule(Params& p, const Args& a, int k_tiles) {
    const bool masked = a.form == GroupedForm::kMasked;
    p.k = a.k;
    p.work.form = a.form;
    p.work.sizes = masked ? a.counts : a.offs;
    p.work.groups = a.groups;
    p.work.rows = a.m;
    p.work.items_n = (a.n + TileN - 1) / TileN;
    p.work.k_tiles = k_tiles;
    p.work.status = a.status;
  }

  //! The workers (`p.work.workers`: every resident cluster of `Kernel`), D's epilogue parameters
  //! (`alpha`, the output operator) and, with K > 0, A's and B's tensor maps (`Loader`), for
  //! arguments with an element of D.
  template <class Kernel, class Epilogue, class Loader, class Params, class Args>
  static Status operand_params(const char* gemm, Params& p, const Args& a, float alpha) {
    const bool masked = a.form == GroupedForm::kMasked;
    int workers = 0;
    Status s = KernelLauncher<Kernel>::resident_clusters(dim3(ClusterM, 1, 1), &workers, gemm);
    if (s && workers <= 0)
      s = Status::error(
          Status::Code::kUnsupportedDevice,
          std::string(gemm) + ": no cluster of this kernel fits on the current device");
    if (!s) return s;
    p.work.workers = workers;
    s = Epilogue::make_params(
        p.epilogue, {a.d, nullptr, a.ldd, 0, alpha, 0.0f, Layout::kRowMajor, a.m, a.n, a.output_op},
        0, masked ? a.batch_stride_d : 0, masked ? a.groups : 1);
    if (s && a.k > 0)  // with K = 0, D = output_op(0) and A, B are not read
      s = Loader::make_params(p.load, a.a, a.lda, masked ? a.batch_stride_a : 0, a.b, a.ldb,
                              a.batch_stride_b, a.m, a.n, a.k, a.groups);
    return s ? s : Status::error(s.code(), std::string(gemm) + ": " + s.message());
  }

  //! Launches `Kernel` for `p` on `stream` (every resident cluster: the work is known only on
  //! the device) where D has elements, the claims' counter zeroed first; otherwise only the
  //! sizes' check, where `p.work.status` asks for it.
  template <class Kernel, class Params>
  static Status launch(const char* gemm, const Params& p, bool elements, cudaStream_t stream) {
    if (elements && p.work.claims != nullptr) {
      const cudaError_t e = cudaMemsetAsync(p.work.claims, 0, sizeof(unsigned), stream);
      if (e != cudaSuccess) return cuda_error(gemm, "zeroing the workspace", e);
    }
    if (elements)
      return KernelLauncher<Kernel>::launch(
          p, {dim3(p.work.workers * ClusterM), dim3(ClusterM, 1, 1)}, stream, gemm);
    if (p.work.status == nullptr) return Status::success();
    grouped_sizes_kernel<<<1, 32, 0, stream>>>(p.work);
    const cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? Status::success() : cuda_error(gemm, "the sizes' check", e);
  }

 private:
  // A matrix of `row_length` elements (of `bytes` each) per line, `ld` apart, at `ptr` aligned to
  // `align` bytes (TMA's 16 for A and B, the element's for D, which the epilogue writes as it may).
  static Status operand(const char* gemm, const char* name, const void* ptr, std::size_t bytes,
                        const char* ld_name, std::int64_t ld, std::int64_t row_length,
                        std::size_t align) {
    if (ptr == nullptr) return invalid(gemm, std::string(name) + " is a null pointer");
    if (reinterpret_cast<std::uintptr_t>(ptr) % align != 0)
      return invalid(gemm, std::string(name) + " is not aligned to " + std::to_string(align) +
                               " bytes" + (align == 16 ? " (TMA reads it)" : ""));
    if (ld < (row_length > 1 ? row_length : 1))
      return invalid(gemm, std::string(ld_name) + " = " + std::to_string(ld) +
                               " is smaller than a line of " + name + " (" +
                               std::to_string(row_length) + " elements)");
    if (align == 16 && (ld * static_cast<std::int64_t>(bytes)) % 16 != 0)
      return invalid(gemm, std::string(ld_name) + " = " + std::to_string(ld) +
                               " is not a multiple of 16 bytes (TMA reads " + name + ")");
    return Status::success();
  }

  // A batch stride of at least `least` elements (of `bytes` each); of A and B (`tma`) a multiple
  // of 16 bytes.
  static Status stride(const char* gemm, const char* name, std::int64_t value, std::size_t bytes,
                       std::int64_t least, bool tma) {
    if (value < least)
      return invalid(gemm, std::string(name) + " = " + std::to_string(value) + " is less than " +
                               std::to_string(least) +
                               (least > 0 ? " (the groups' D would overlap)" : " (negative)"));
    if (tma && (value * static_cast<std::int64_t>(bytes)) % 16 != 0)
      return invalid(gemm, std::string(name) + " = " + std::to_string(value) +
                               " is not a multiple of 16 bytes (TMA reads it)");
    return Status::success();
  }
};

}  // namespace tilepipe::detail
