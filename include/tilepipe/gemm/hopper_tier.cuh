#pragma once
//! \file
//! The front door's Hopper tier: GemmSm90, run on copies of A or B that it first makes in the
//! caller's workspace where wgmma or TMA cannot read them as given:
//! - tf32 with A column-major or B row-major: a K-major copy (k_major_transpose.cuh), because
//!   wgmma reads tf32 operands from shared memory only K-major;
//! - f16 and bf16 operands whose pointer, leading dimension or batch stride is not a multiple of
//!   16 bytes (TMA's rule): a copy in the same layout with lines 16 bytes apart (pitched_copy.cuh).
//! The copies lie at the workspace's start and GemmSm90's own part after them (CopyWorkspace).
//! C and D are never copied: GemmSm90 writes a D that TMA cannot address from its registers.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "../layout/copy_workspace.cuh"
#include "../status.cuh"
#include "arguments.cuh"
#include "gemm_sm90.cuh"
#include "k_major_transpose.cuh"
#include "pitched_copy.cuh"

namespace tilepipe {
namespace detail {

template <class ElementAB, class ElementD, Layout LayoutA, Layout LayoutB, int Stages,
          class OutputOp>
struct HopperTier {
  using Arguments = GemmArguments<ElementAB, ElementD, OutputOp>;
  static constexpr bool kTf32 = std::is_same_v<ElementAB, float>;
  //! Whether A (column-major float) or B (row-major float) is always copied K-major first.
  static constexpr bool kCopyA = kTf32 && LayoutA == Layout::kColumnMajor;
  static constexpr bool kCopyB = kTf32 && LayoutB == Layout::kRowMajor;
  using Gemm = GemmSm90<ElementAB, ElementD, kCopyA ? Layout::kRowMajor : LayoutA,
                        kCopyB ? Layout::kColumnMajor : LayoutB, Stages, OutputOp>;
  using Params = typename Gemm::Params;
  static constexpr const char* kCopyWhat =
      kTf32 ? "the K-major copy of tf32 A (column-major) or B (row-major) for the Hopper tier"
            : "the Hopper tier's copy of A or B (not 16-byte aligned)";
  //! The workspace's name in messages about its place.
  static constexpr const char* kCopyPurpose =
      kTf32 ? "the tf32 copy workspace" : "the copy workspace";

  //! Where the copies that `a` needs lie in the workspace, and GemmSm90's own part after them.
  //! None where nothing is multiplied or where this tier does not take `a` (tf32 A or B that is
  //! not 16-byte aligned).
  static CopyWorkspace workspace_layout(const Arguments& a) {
    CopyShape sa, sb;
    if (multiplies(a) && (!kTf32 || operands_aligned(a))) {
      // A K-major copy of A has M lines of K, a pitched one A's own lines; likewise for B.
      const bool a_m_lines = kCopyA || LayoutA == Layout::kRowMajor;
      const bool b_n_lines = kCopyB || LayoutB == Layout::kColumnMajor;
      if (kCopyA || (!kTf32 && !aligned(a.a, a.lda, a.batch_stride_a, a.batch_count)))
        sa = {a_m_lines ? a.m : a.k, a_m_lines ? a.k : a.m, a.batch_stride_a != 0};
      if (kCopyB || (!kTf32 && !aligned(a.b, a.ldb, a.batch_stride_b, a.batch_count)))
        sb = {b_n_lines ? a.n : a.k, b_n_lines ? a.k : a.n, a.batch_stride_b != 0};
    }
    const CopyWorkspace w =
        CopyWorkspace::make(sa, sb, static_cast<int>(sizeof(ElementAB)), a.batch_count);
    return w.with_gemm_bytes(Gemm::workspace_size(on_copies(a, w)));
  }

  //! Whether `a` runs on copies of A or B.
  static bool copies(const Arguments& a) { return workspace_layout(a).copies(); }

  //! The parameters for `a` (which the Ampere tier's checks accepted, with no split-K or
  //! stream-K), if this tier takes them: an sm_90a device, a workspace for the copies where there
  //! are any, and operands that GemmSm90 accepts. Otherwise the reason.
  static Status params(Params& p, const Arguments& a) {
    const auto refuse = [](const std::string& why) {
      return Status::error(Status::Code::kInvalidArgument, "GemmMultistage: " + why);
    };
    if (kTf32 && multiplies(a) && !operands_aligned(a))
      return refuse(
          "tf32 A and B take the Hopper tier only when 16-byte aligned (the narrow kernel "
          "runs the others)");
    const CopyWorkspace w = workspace_layout(a);
    if (w.copies() && a.workspace == nullptr)
      return refuse(std::string(kCopyWhat) + " needs a workspace of " + std::to_string(w.bytes) +
                    " bytes (workspace_size(args)), but workspace is a null pointer; without "
                    "one the call runs on the Ampere tier");
    if (w.copies() && a.workspace_bytes < w.bytes)
      return refuse("workspace_bytes = " + std::to_string(a.workspace_bytes) +
                    " is less than the " + std::to_string(w.bytes) + " bytes that " + kCopyWhat +
                    " needs (workspace_size(args))");
    const Arguments h = on_copies(a, w);
    Status s = Gemm::can_implement(h);
    return s ? Gemm::make_params(p, h) : s;
  }

  //! The copies where `a` needs them, then GemmSm90, all on `stream`; `p` is `params`' for `a`.
  static Status launch(const Params& p, const Arguments& a, cudaStream_t stream) {
    const CopyWorkspace w = workspace_layout(a);
    Status s;
    if (w.a.copied())  // A: M lines of K (row-major, or K-major tf32) or K lines of M
      s = copy(a.a, a.lda, a.batch_stride_a, a.workspace, w.a,
               kCopyA || LayoutA == Layout::kRowMajor, a.m, a.k, a.batch_count, stream);
    if (s && w.b.copied())  // B: N lines of K (column-major, or K-major tf32) or K lines of N
      s = copy(a.b, a.ldb, a.batch_stride_b, a.workspace, w.b,
               kCopyB || LayoutB == Layout::kColumnMajor, a.n, a.k, a.batch_count, stream);
    return s ? Gemm::launch(p, stream) : s;
  }

 private:
  static bool multiplies(const Arguments& a) {
    return a.m > 0 && a.n > 0 && a.k > 0 && a.batch_count > 0;
  }
  static bool aligned(const ElementAB* p, std::int64_t ld, std::int64_t stride, int batches) {
    return copy_bytes_of(p, ld, stride, batches) == 16;
  }
  static bool operands_aligned(const Arguments& a) {
    return aligned(a.a, a.lda, a.batch_stride_a, a.batch_count) &&
           aligned(a.b, a.ldb, a.batch_stride_b, a.batch_count);
  }

  // The arguments GemmSm90 runs for `a`: A and B replaced by their copies where made, and the
  // workspace by its own part of it.
  static Arguments on_copies(const Arguments& a, const CopyWorkspace& w) {
    if (!w.copies()) return a;
    Arguments h = a;
    const auto base = reinterpret_cast<std::uintptr_t>(a.workspace);
    if (w.a.copied()) {
      h.a = reinterpret_cast<const ElementAB*>(base + w.a.offset);
      h.lda = w.a.ld;
      h.batch_stride_a = w.a.batch_stride;
    }
    if (w.b.copied()) {
      h.b = reinterpret_cast<const ElementAB*>(base + w.b.offset);
      h.ldb = w.b.ld;
      h.batch_stride_b = w.b.batch_stride;
    }
    const bool own = w.bytes > w.gemm_offset;
    h.workspace = own ? reinterpret_cast<void*>(base + w.gemm_offset) : nullptr;
    h.workspace_bytes = own ? w.bytes - w.gemm_offset : 0;
    return h;
  }

  // Copies an operand (`src`, `ld`, `stride`) to `at` in `workspace`: as `mn` lines (M or N) of
  // K where `mn_lines` (tf32's K-major copies always), else as K lines of `mn`.
  static Status copy(const ElementAB* src, std::int64_t ld, std::int64_t stride, void* workspace,
                     const CopyPlacement& at, bool mn_lines, int mn, int k, int batch_count,
                     cudaStream_t stream) {
    const int batches = at.batch_stride != 0 ? batch_count : 1;
    auto* dst = reinterpret_cast<ElementAB*>(static_cast<unsigned char*>(workspace) + at.offset);
    if constexpr (kTf32) {
      return transpose_to_k_major({src, ld, stride, dst, at.ld, at.batch_stride, mn, k}, batches,
                                  stream);
    } else {
      return copy_pitched({reinterpret_cast<const std::uint16_t*>(src), ld, stride,
                           reinterpret_cast<std::uint16_t*>(dst), at.ld, at.batch_stride,
                           mn_lines ? mn : k, mn_lines ? k : mn},
                          batches, stream);
    }
  }
};

}  // namespace detail
}  // namespace tilepipe
