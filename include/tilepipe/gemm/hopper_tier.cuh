#pragma once
//! \file
//! The front door's Hopper tier: GemmSm90 as it is for f16 and bf16 (any layout) and for tf32 with
//! A row-major and B column-major; for tf32 in the other layouts, GemmSm90 of that layout run on
//! K-major copies of A or B that it first makes in the caller's workspace, because wgmma reads
//! tf32 operands from shared memory only K-major (k_major_transpose.cuh).

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <type_traits>

#include "../status.cuh"
#include "arguments.cuh"
#include "gemm_sm90.cuh"
#include "k_major_transpose.cuh"

namespace tilepipe {
namespace detail {

template <class ElementAB, class ElementD, Layout LayoutA, Layout LayoutB, int Stages,
          class OutputOp>
struct HopperTier {
  using Arguments = GemmArguments<ElementAB, ElementD, OutputOp>;
  //! Whether A (column-major float) or B (row-major float) is copied K-major first.
  static constexpr bool kCopyA =
      std::is_same_v<ElementAB, float> && LayoutA == Layout::kColumnMajor;
  static constexpr bool kCopyB = std::is_same_v<ElementAB, float> && LayoutB == Layout::kRowMajor;
  using Gemm = GemmSm90<ElementAB, ElementD, kCopyA ? Layout::kRowMajor : LayoutA,
                        kCopyB ? Layout::kColumnMajor : LayoutB, Stages, OutputOp>;
  using Params = typename Gemm::Params;
  static constexpr const char* kCopyWhat =
      "the K-major copy of tf32 A (column-major) or B (row-major) for the Hopper tier";

  //! Whether `a` has an operand to copy: tf32 A column-major or B row-major, and something to
  //! multiply.
  static bool copies(const Arguments& a) {
    return (kCopyA || kCopyB) && a.m > 0 && a.n > 0 && a.k > 0 && a.batch_count > 0;
  }

  static KMajorWorkspace copy_layout(const Arguments& a) {
    return KMajorWorkspace::make(kCopyA, kCopyB, a.m, a.n, a.k, a.batch_count, a.batch_stride_a,
                                 a.batch_stride_b);
  }

  //! The parameters for `a` (which the Ampere tier's checks accepted, 16-byte aligned, with no
  //! split-K or stream-K), if the Hopper tier takes them: an sm_90a device, a workspace for the
  //! copies where there are any, and tensor maps TMA accepts. Otherwise the reason.
  static Status params(Params& p, const Arguments& a) {
    if (copies(a) && a.workspace == nullptr)
      return Status::error(Status::Code::kInvalidArgument,
                           std::string("GemmMultistage: ") + kCopyWhat + " needs a workspace of " +
                               std::to_string(copy_layout(a).bytes) +
                               " bytes (workspace_size(args)), but workspace is a null pointer; "
                               "without one the call runs on the Ampere tier");
    const Arguments h = on_copies(a);
    Status s = Gemm::can_implement(h);
    return s ? Gemm::make_params(p, h) : s;
  }

  //! The copies where `a` needs them, then GemmSm90, all on `stream`; `p` is `params`' for `a`.
  static Status launch(const Params& p, const Arguments& a, cudaStream_t stream) {
    if constexpr (kCopyA || kCopyB) {  // f16 and bf16 compile no copy kernel
      if (!copies(a)) return Gemm::launch(p, stream);
      const KMajorWorkspace w = copy_layout(a);
      auto* base = static_cast<unsigned char*>(a.workspace);
      Status s;
      if (kCopyA)  // A column-major: K lines of M floats
        s = transpose_to_k_major({reinterpret_cast<const float*>(a.a), a.lda, a.batch_stride_a,
                                  reinterpret_cast<float*>(base), w.ld, w.batch_stride_a, a.m, a.k},
                                 w.batch_stride_a != 0 ? a.batch_count : 1, stream);
      if (s && kCopyB)  // B row-major: K lines of N floats
        s = transpose_to_k_major(
            {reinterpret_cast<const float*>(a.b), a.ldb, a.batch_stride_b,
             reinterpret_cast<float*>(base + w.offset_b), w.ld, w.batch_stride_b, a.n, a.k},
            w.batch_stride_b != 0 ? a.batch_count : 1, stream);
      if (!s) return s;
    }
    return Gemm::launch(p, stream);
  }

 private:
  // The arguments GemmSm90 runs for `a`: A and B replaced by their K-major copies where made.
  static Arguments on_copies(const Arguments& a) {
    if (!copies(a)) return a;
    Arguments h = a;
    const KMajorWorkspace w = copy_layout(a);
    auto* base = static_cast<unsigned char*>(a.workspace);
    if (kCopyA) {
      h.a = reinterpret_cast<const ElementAB*>(base);
      h.lda = w.ld;
      h.batch_stride_a = w.batch_stride_a;
    }
    if (kCopyB) {
      h.b = reinterpret_cast<const ElementAB*>(base + w.offset_b);
      h.ldb = w.ld;
      h.batch_stride_b = w.batch_stride_b;
    }
    h.workspace = nullptr;
    h.workspace_bytes = 0;
    return h;
  }
};

}  // namespace detail
}  // namespace tilepipe
