#pragma once
//! \file
//! What the two CUTLASS peers (peer_cutlass_sm80.cu, peer_cutlass_sm90.cu) share: the element and
//! layout types of the benchmark's problems, and the host steps of one CUTLASS GEMM. Included only
//! by them, which are compiled with CUTLASS's headers (CutlassPeers.cmake).

#include <cuda_runtime.h>

#include <cutlass/cutlass.h>
#include <cutlass/layout/matrix.h>
#include <cutlass/numeric_types.h>

#include <string>
#include <type_traits>

#include "peers.cuh"

namespace tilepipe_bench {

template <DType D>
using CutlassElement = std::conditional_t<D == DType::kF16, cutlass::half_t, cutlass::bfloat16_t>;

//! CUTLASS's layout tags mean what LayoutPair means: A is M x K (row-major in TN, column-major in
//! NN), B is K x N column-major, D is M x N row-major.
template <LayoutPair L>
using CutlassLayoutA = std::conditional_t<L == LayoutPair::kTN, cutlass::layout::RowMajor,
                                          cutlass::layout::ColumnMajor>;

//! "CUTLASS <step>: <status>".
inline std::string cutlass_failed(cutlass::Status st, const char* step) {
  return std::string("CUTLASS ") + step + ": " + cutlass::cutlassGetStatusString(st);
}

//! "" if CUTLASS's own check takes `args`, else its status (PeerKernel::refuses).
template <class Gemm>
std::string cutlass_refuses(const typename Gemm::Arguments& args) {
  const cutlass::Status st = Gemm::can_implement(args);
  return st == cutlass::Status::kSuccess ? "" : cutlass_failed(st, "can_implement");
}

//! The three host steps of a CUTLASS GEMM, as its examples take them on every call:
//! can_implement, initialize (with the workspace; it also sets the kernel's shared memory), run.
//! Returns "" or the step that failed and CUTLASS's status.
template <class Gemm>
std::string run_cutlass(const typename Gemm::Arguments& args, void* workspace,
                        cudaStream_t stream) {
  if (std::string why = cutlass_refuses<Gemm>(args); !why.empty()) return why;
  Gemm gemm;
  if (cutlass::Status st = gemm.initialize(args, workspace, stream);
      st != cutlass::Status::kSuccess)
    return cutlass_failed(st, "initialize");
  if (cutlass::Status st = gemm.run(stream); st != cutlass::Status::kSuccess)
    return cutlass_failed(st, "run");
  return "";
}

}  // namespace tilepipe_bench
