#pragma once
//! \file
//! GroupedChecks: the device-free argument checks that the grouped GEMMs of the contiguous and
//! masked forms share (GemmGroupedSm90, GemmGroupedFp8Sm90), each failure a kInvalidArgument
//! whose message names the GEMM and the argument. Their arguments have the same members for the
//! form, the sizes and the operands (gemm_grouped.cuh's table).

#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>

#include "../epilogue/output_ops.cuh"
#include "../status.cuh"
#include "grouped_scheduler.cuh"

namespace tilepipe::detail {

//! \tparam TileM, TileN, ClusterM  the kernel's tile and cluster (tiles counted per group)
//! \tparam MaxGroups               the most groups
template <int TileM, int TileN, int ClusterM, int MaxGroups>
struct GroupedChecks {
  //! The form, G, the extents, the sizes' pointer and the status word's.
  template <class Args>
  static Status sizes(const char* gemm, const Args& a) {
    const bool masked = a.form == GroupedForm::kMasked;
    if (a.form != GroupedForm::kContiguous && !masked)
      return invalid(gemm, "form is neither kContiguous nor kMasked");
    if (a.groups < 1 || a.groups > MaxGroups)
      return invalid(gemm, "groups = " + std::to_string(a.groups) + " is outside [1, " +
                               std::to_string(MaxGroups) + "]");
    constexpr int kMaxExtent = INT_MAX - 4096;
    const char* names[3] = {"m", "n", "k"};
    const int extents[3] = {a.m, a.n, a.k};
    for (int i = 0; i < 3; ++i)
      if (extents[i] < 0 || extents[i] > kMaxExtent)
        return invalid(gemm, std::string(names[i]) + " = " + std::to_string(extents[i]) +
                                 " is outside [0, " + std::to_string(kMaxExtent) + "]");
    const int* sizes = masked ? a.counts : a.offs;
    const char* sizes_name = masked ? "counts" : "offs";
    if (sizes == nullptr) return invalid(gemm, std::string(sizes_name) + " is a null pointer");
    if (reinterpret_cast<std::uintptr_t>(sizes) % alignof(int) != 0)
      return invalid(gemm, std::string(sizes_name) + " is not aligned to 4 bytes (int32)");
    if (reinterpret_cast<std::uintptr_t>(a.status) % alignof(int) != 0)
      return invalid(gemm, "status is not aligned to 4 bytes (int32)");
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
    return Status::error(Status::Code::kInvalidArgument, std::string(gemm) + ": " + msg);
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
