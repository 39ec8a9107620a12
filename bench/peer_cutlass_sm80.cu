// The peer `cutlass-sm80` (peers.cuh): CUTLASS 2.x's multistage GEMM, cutlass::gemm::device::Gemm
// with the Sm80 tensor-core path (cp.async into a ring of shared-memory stages, ldmatrix,
// mma.sync.m16n8k16 with f32 accumulation), in the tile and stage configurations that CUTLASS's
// profiler lists among its fastest f16 kernels on sm_80: the counterpart of tilepipe's Ampere tier.
//
// D (row-major, the input type) = A * B, alpha = 1, beta = 0 (the epilogue then reads no C), as
// every column of the benchmark. Compiled for every target of the build with -DNDEBUG, as CUTLASS
// builds itself. CMake compiles this file once per data type and layout
// (TILEPIPE_BENCH_CUTLASS_PART, peers.cuh) with every configuration (TILEPIPE_BENCH_CUTLASS_FULL),
// or, as CI does, only for f16 TN and one configuration.

#include <cutlass/cutlass.h>
#include <cutlass/epilogue/thread/linear_combination.h>
#include <cutlass/gemm/device/gemm.h>
#include <cutlass/gemm/threadblock/threadblock_swizzle.h>

#include <string>
#include <type_traits>

#include "peer_cutlass.cuh"

#ifndef TILEPIPE_BENCH_CUTLASS_PART
#define TILEPIPE_BENCH_CUTLASS_PART 0  // f16 TN
#endif

namespace tilepipe_bench {
namespace {

//! One CUTLASS SM80 GEMM: a TileM x TileN x TileK block tile of WarpM x WarpN x TileK warp tiles,
//! `Stages` shared-memory stages.
template <DType D, LayoutPair L, int TileM, int TileN, int TileK, int WarpM, int WarpN, int Stages>
struct Sm80Gemm {
  using Element = CutlassElement<D>;
  static constexpr int kAlignment = 8;  // elements: 16-byte accesses, as tilepipe's
  using Gemm = cutlass::gemm::device::Gemm<
      Element, CutlassLayoutA<L>, Element, cutlass::layout::ColumnMajor, Element,
      cutlass::layout::RowMajor, /*accumulator*/ float, cutlass::arch::OpClassTensorOp,
      cutlass::arch::Sm80, cutlass::gemm::GemmShape<TileM, TileN, TileK>,
      cutlass::gemm::GemmShape<WarpM, WarpN, TileK>, cutlass::gemm::GemmShape<16, 8, 16>,
      cutlass::epilogue::thread::LinearCombination<Element, kAlignment, float, float>,
      // The profiler's swizzle for these kernels: tiles visited in groups of 8 along N.
      cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<8>, Stages, kAlignment,
      kAlignment>;

  static std::string name() {
    return std::to_string(TileM) + "x" + std::to_string(TileN) + "x" + std::to_string(TileK) +
           "/w" + std::to_string(WarpM) + "x" + std::to_string(WarpN) + "/s" +
           std::to_string(Stages);
  }

  static typename Gemm::Arguments arguments_of(const Operands& op) {
    auto* d = static_cast<Element*>(op.d);
    return typename Gemm::Arguments({op.m, op.n, op.k}, {static_cast<const Element*>(op.a), op.lda},
                                    {static_cast<const Element*>(op.b), op.ldb}, {d, op.ldd},
                                    {d, op.ldd}, {1.0f, 0.0f});
  }
};

template <class Config>
std::size_t workspace_size(const Operands& op) {
  return Config::Gemm::get_workspace_size(Config::arguments_of(op));
}

template <class Config>
std::string refuses(const Operands& op) {
  return cutlass_refuses<typename Config::Gemm>(Config::arguments_of(op));
}

template <class Config>
std::string run(const Operands& op, cudaStream_t stream) {
  return run_cutlass<typename Config::Gemm>(Config::arguments_of(op), op.workspace, stream);
}

// Every device the benchmark runs on (sm_80 and newer) runs these kernels if its shared memory
// holds the ring: sm_86 and sm_89 (99 KB a block) do not hold the 128 and 144 KB ones, and
// initialize says so (the result is then an error, not a time).
bool runs_on_any(const cudaDeviceProp&) { return true; }

template <DType D, LayoutPair L, int TileM, int TileN, int TileK, int WarpM, int WarpN, int Stages>
void add(std::vector<PeerKernel>& out) {
  using Config = Sm80Gemm<D, L, TileM, TileN, TileK, WarpM, WarpN, Stages>;
  out.push_back(PeerKernel{"cutlass-sm80", Config::name(), D, L, &runs_on_any,
                           &workspace_size<Config>, &refuses<Config>, &run<Config>});
}

template <DType D, LayoutPair L>
void add_configurations(std::vector<PeerKernel>& out) {
  //        tile: M    N    K   warp: M   N  stages
  add<D, L, 128, 256, 64, 64, 64, 3>(out);  // 144 KB of stages
#if TILEPIPE_BENCH_CUTLASS_FULL
  add<D, L, 256, 128, 64, 64, 64, 3>(out);  // 144 KB
  add<D, L, 128, 128, 64, 64, 64, 4>(out);  // 128 KB
  add<D, L, 128, 128, 32, 64, 64, 5>(out);  // 80 KB: also fits sm_86 / sm_89
#endif
}

// This translation unit's part: one data type and layout (peers.cuh).
void add_part(std::vector<PeerKernel>& out) {
  constexpr int kPart = TILEPIPE_BENCH_CUTLASS_PART;
  add_configurations<dtype_of_part(kPart), layout_of_part(kPart)>(out);
}

const PeerRegistrar registrar(&add_part);

}  // namespace

}  // namespace tilepipe_bench
