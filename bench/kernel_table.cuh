#pragma once
//! \file
//! Turns a tile configuration (template arguments) into a `TilepipeKernel` entry. Included only
//! by the configs_*.cu files, which are the only places that instantiate GemmMultistage.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstddef>
#include <type_traits>
#include <vector>

#include <tilepipe/gemm/gemm_multistage.cuh>

#include "bench_common.cuh"

namespace tilepipe_bench {

// kDefaultConfig (bench_common.cuh) is derived from tilepipe::DefaultGemmPolicy<4> itself.

template <DType D>
using ElementOf = std::conditional_t<D == DType::kF16, __half,
                                     std::conditional_t<D == DType::kBF16, __nv_bfloat16, float>>;

template <LayoutPair L>
inline constexpr tilepipe::Layout kLayoutA =
    L == LayoutPair::kTN ? tilepipe::Layout::kRowMajor : tilepipe::Layout::kColumnMajor;

//! The largest ring the benchmark compiles: the opt-in shared memory per block of the smallest
//! target of the build. Every instantiation is compiled for every target (CI: sm_80 and sm_90),
//! and SmemRingBuffer refuses at compile time a ring that does not fit a target, so a build that
//! includes sm_80 leaves out rings between 163 KB and sm_90's 227 KB; the GPU machine's `native`
//! (sm_90) build has them.
inline constexpr std::size_t kMaxRingBytes = tilepipe::detail::kMinSmemBytesPerBlockOfTargets;

template <DType D, int TM, int TN, int TK, int S>
inline constexpr std::size_t kRingBytes = std::size_t(S) * (TM + TN) * TK * sizeof(ElementOf<D>);

//! GEMM arguments for the benchmark's operands: alpha = 1, beta = 0, D row-major (the defaults).
template <DType D>
tilepipe::GemmArguments<ElementOf<D>, ElementOf<D>> arguments_of(const Operands& op) {
  using T = ElementOf<D>;
  tilepipe::GemmArguments<T, T> args;
  args.m = op.m;
  args.n = op.n;
  args.k = op.k;
  args.a = static_cast<const T*>(op.a);
  args.lda = op.lda;
  args.b = static_cast<const T*>(op.b);
  args.ldb = op.ldb;
  args.d = static_cast<T*>(op.d);
  args.ldd = op.ldd;
  args.workspace = op.workspace;
  args.workspace_bytes = op.workspace_bytes;
  return args;
}

// The benchmark's operands are 16-byte aligned: no narrow kernel (AnyAlignment = false), whose
// compile time every configuration would pay. `Math` is MathDefault except for f32.
template <DType D, LayoutPair L, int TM, int TN, int TK, int WM, int WN, int S, class Math>
using GemmOf = tilepipe::GemmMultistage<ElementOf<D>, ElementOf<D>, kLayoutA<L>,
                                        tilepipe::Layout::kColumnMajor, S, tilepipe::Identity,
                                        tilepipe::TileConfig<TM, TN, TK, WM, WN, Math>,
                                        /*SplitK=*/false, /*AnyAlignment=*/false>;

template <DType D, LayoutPair L, int TM, int TN, int TK, int WM, int WN, int S, class Math>
tilepipe::Status run_gemm(const Operands& op, cudaStream_t stream) {
  return GemmOf<D, L, TM, TN, TK, WM, WN, S, Math>::run(arguments_of<D>(op), stream);
}

template <DType D, LayoutPair L, int TM, int TN, int TK, int WM, int WN, int S, class Math>
tilepipe::Status can_implement(const Operands& op) {
  return GemmOf<D, L, TM, TN, TK, WM, WN, S, Math>::can_implement(arguments_of<D>(op));
}

template <DType D, LayoutPair L, int TM, int TN, int TK, int WM, int WN, int S, class Math>
std::size_t workspace_size(const Operands& op) {
  return GemmOf<D, L, TM, TN, TK, WM, WN, S, Math>::workspace_size(arguments_of<D>(op));
}

template <DType D, LayoutPair L, int TM, int TN, int TK, int WM, int WN, int S, class Math>
KernelResources kernel_resources() {
  using Gemm = GemmOf<D, L, TM, TN, TK, WM, WN, S, Math>;
  // The kernel GemmMultistage::run launches (an implementation detail of gemm_multistage.cuh).
  auto kernel = tilepipe::gemm_kernel<typename Gemm::Kernel>;
  KernelResources r;
  cudaFuncAttributes attributes{};
  if (cudaFuncGetAttributes(&attributes, kernel) == cudaSuccess) r.registers = attributes.numRegs;
  // As run() does: without the opt-in, the calculator reports 0 blocks above 48 KB.
  if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(Gemm::kSharedBytes)) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r.blocks_per_sm, kernel, Gemm::kThreads,
                                                    Gemm::kSharedBytes) != cudaSuccess)
    r.blocks_per_sm = 0;
  return r;
}

//! Appends GemmMultistage<D, L, Policy<TM, TN, TK, WM, WN, S, Math>> if its ring fits
//! kMaxRingBytes; otherwise instantiates nothing (the discarded branch names no GemmMultistage
//! type).
template <DType D, LayoutPair L, int TM, int TN, int TK, int WM, int WN, int S,
          class Math = tilepipe::MathDefault>
void add_kernel(std::vector<TilepipeKernel>& out) {
  if constexpr (kRingBytes<D, TM, TN, TK, S> <= kMaxRingBytes) {
    using Gemm = GemmOf<D, L, TM, TN, TK, WM, WN, S, Math>;
    static_assert(sizeof(typename Gemm::Mainloop::SharedStorage) == kRingBytes<D, TM, TN, TK, S>,
                  "kRingBytes no longer matches the mainloop's shared storage; update it");
    out.push_back(TilepipeKernel{
        TileConfig{TM, TN, TK, WM, WN, S, math_kind_of<Math>()}, D, L, Gemm::kSharedBytes,
        Gemm::kThreads, &run_gemm<D, L, TM, TN, TK, WM, WN, S, Math>,
        &can_implement<D, L, TM, TN, TK, WM, WN, S, Math>,
        &workspace_size<D, L, TM, TN, TK, WM, WN, S, Math>,
        &kernel_resources<D, L, TM, TN, TK, WM, WN, S, Math>, Gemm::kHasHopperTier});
  }
}

//! One tile at every stage count from 2 to 6 that fits.
template <DType D, LayoutPair L, int TM, int TN, int TK, int WM, int WN>
void add_stages_2_to_6(std::vector<TilepipeKernel>& out) {
  add_kernel<D, L, TM, TN, TK, WM, WN, 2>(out);
  add_kernel<D, L, TM, TN, TK, WM, WN, 3>(out);
  add_kernel<D, L, TM, TN, TK, WM, WN, 4>(out);
  add_kernel<D, L, TM, TN, TK, WM, WN, 5>(out);
  add_kernel<D, L, TM, TN, TK, WM, WN, 6>(out);
}

}  // namespace tilepipe_bench
