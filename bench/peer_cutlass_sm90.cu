// The peer `cutlass-sm90` (peers.cuh): CUTLASS 3.x's TMA warp-specialized GEMMs for Hopper, built
// from its public collective builders the way its own examples and profiler build them: the
// mainloop from cutlass::gemm::collective::CollectiveBuilder (TMA loads, an mbarrier pipeline,
// wgmma; as many stages as fit next to the epilogue), the epilogue from
// cutlass::epilogue::collective::CollectiveBuilder (through shared memory to TMA stores), and
// cutlass::gemm::kernel::GemmUniversal with its default persistent tile scheduler. Two kernel
// schedules: cooperative (two consumer warpgroups share one tile) and ping-pong (each consumer
// warpgroup has its own tile, and their epilogues alternate with the other's MMAs).
//
// D (row-major, the input type) = A * B with f32 accumulation, alpha = 1, beta = 0 and no C (void
// C: the epilogue reads nothing), as every column of the benchmark.
//
// Compiled for sm_90a only (bench/CutlassPeers.cmake), with -DNDEBUG: without it CUTLASS's device
// asserts are calls that make ptxas serialize every wgmma (C7510), and the build fails when ptxas
// says so (check_wgmma_serialization.sh). CMake compiles this file once per data type and layout
// (TILEPIPE_BENCH_CUTLASS_PART, peers.cuh) with every configuration (TILEPIPE_BENCH_CUTLASS_FULL),
// or, as CI does, only for f16 TN and one configuration of each schedule.

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/device/gemm_universal_adapter.h>
#include <cutlass/gemm/dispatch_policy.hpp>
#include <cutlass/gemm/kernel/gemm_universal.hpp>
#include <cutlass/kernel_hardware_info.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "peer_cutlass.cuh"

#ifndef TILEPIPE_BENCH_CUTLASS_PART
#define TILEPIPE_BENCH_CUTLASS_PART 0  // f16 TN
#endif

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error \
    "peer_cutlass_sm90.cu is for sm_90a only: CutlassPeers.cmake sets its CUDA_ARCHITECTURES to 90a"
#endif

namespace tilepipe_bench {
namespace {

enum class Schedule { kCooperative, kPingpong };

//! One CUTLASS SM90 GEMM: a TileM x TileN x 64 tile, a ClusterM x ClusterN x 1 cluster.
template <DType D, LayoutPair L, Schedule S, int TileM, int TileN, int ClusterM, int ClusterN>
struct Sm90Gemm {
  using Element = CutlassElement<D>;
  using LayoutA = CutlassLayoutA<L>;
  using LayoutB = cutlass::layout::ColumnMajor;
  using LayoutD = cutlass::layout::RowMajor;
  static constexpr int kAlignment = 8;  // elements: 16-byte accesses, as tilepipe's
  using TileShape = cute::Shape<cute::Int<TileM>, cute::Int<TileN>, cute::_64>;
  using ClusterShape = cute::Shape<cute::Int<ClusterM>, cute::Int<ClusterN>, cute::_1>;
  using KernelSchedule = std::conditional_t<S == Schedule::kCooperative,
                                            cutlass::gemm::KernelTmaWarpSpecializedCooperative,
                                            cutlass::gemm::KernelTmaWarpSpecializedPingpong>;
  using EpilogueSchedule = std::conditional_t<S == Schedule::kCooperative,
                                              cutlass::epilogue::TmaWarpSpecializedCooperative,
                                              cutlass::epilogue::TmaWarpSpecialized>;

  using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
      cutlass::epilogue::collective::EpilogueTileAuto, /*accumulator*/ float, /*compute*/ float,
      /*C*/ void, LayoutD, kAlignment, /*D*/ Element, LayoutD, kAlignment,
      EpilogueSchedule>::CollectiveOp;
  using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Element, LayoutA, kAlignment, Element,
      LayoutB, kAlignment, /*accumulator*/ float, TileShape, ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(
          sizeof(typename Epilogue::SharedStorage))>,
      KernelSchedule>::CollectiveOp;
  using Kernel =
      cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>, Mainloop, Epilogue>;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;

  static std::string name() {
    return std::string(S == Schedule::kCooperative ? "coop" : "pingpong") + "/" +
           std::to_string(TileM) + "x" + std::to_string(TileN) + "x64/c" +
           std::to_string(ClusterM) + "x" + std::to_string(ClusterN) + "x1/s" +
           std::to_string(Mainloop::DispatchPolicy::Stages);
  }
};

//! A packed (M|N, K, batch) or (M, N, batch) stride of CUTLASS 3 with leading dimension `ld`: the
//! contiguous mode is the static 1, the other one is `ld`; one batch.
template <class Stride>
Stride stride_of(std::int64_t ld) {
  Stride s{};
  if constexpr (cute::is_static<std::remove_reference_t<decltype(cute::get<0>(s))>>::value)
    cute::get<1>(s) = ld;
  else cute::get<0>(s) = ld;
  cute::get<2>(s) = 0;
  return s;
}

// The device and its SM count, queried once (the persistent scheduler sizes its grid with them).
cutlass::KernelHardwareInfo hardware_info() {
  static const cutlass::KernelHardwareInfo info = [] {
    cutlass::KernelHardwareInfo i;
    cudaGetDevice(&i.device_id);
    i.sm_count = cutlass::KernelHardwareInfo::query_device_multiprocessor_count(i.device_id);
    return i;
  }();
  return info;
}

template <class Config>
typename Config::Gemm::Arguments arguments_of(const Operands& op) {
  using Kernel = typename Config::Kernel;
  using Element = typename Config::Element;
  typename Config::Gemm::Arguments args{};
  args.mode = cutlass::gemm::GemmUniversalMode::kGemm;
  args.problem_shape = {op.m, op.n, op.k, 1};
  args.mainloop.ptr_A = static_cast<const Element*>(op.a);
  args.mainloop.dA = stride_of<typename Kernel::StrideA>(op.lda);
  args.mainloop.ptr_B = static_cast<const Element*>(op.b);
  args.mainloop.dB = stride_of<typename Kernel::StrideB>(op.ldb);
  args.epilogue.thread.alpha = 1.0f;
  args.epilogue.thread.beta = 0.0f;
  args.epilogue.ptr_C = nullptr;
  args.epilogue.dC = stride_of<typename Kernel::StrideC>(op.ldd);
  args.epilogue.ptr_D = static_cast<Element*>(op.d);
  args.epilogue.dD = stride_of<typename Kernel::StrideD>(op.ldd);
  args.hw_info = hardware_info();
  return args;
}

template <class Config>
std::size_t workspace_size(const Operands& op) {
  return Config::Gemm::get_workspace_size(arguments_of<Config>(op));
}

template <class Config>
std::string refuses(const Operands& op) {
  return cutlass_refuses<typename Config::Gemm>(arguments_of<Config>(op));
}

template <class Config>
std::string run(const Operands& op, cudaStream_t stream) {
  return run_cutlass<typename Config::Gemm>(arguments_of<Config>(op), op.workspace, stream);
}

// sm_90a code runs on sm_90 devices only.
bool runs_on_sm90(const cudaDeviceProp& prop) { return prop.major == 9 && prop.minor == 0; }

template <DType D, LayoutPair L, Schedule S, int TileM, int TileN, int ClusterM, int ClusterN>
void add(std::vector<PeerKernel>& out) {
  using Config = Sm90Gemm<D, L, S, TileM, TileN, ClusterM, ClusterN>;
  out.push_back(PeerKernel{"cutlass-sm90", Config::name(), D, L, &runs_on_sm90,
                           &workspace_size<Config>, &refuses<Config>, &run<Config>});
}

template <DType D, LayoutPair L>
void add_configurations(std::vector<PeerKernel>& out) {
  //        schedule               tile: M    N  cluster: M  N
  add<D, L, Schedule::kCooperative, 128, 256, 2, 1>(out);
  add<D, L, Schedule::kPingpong, 128, 128, 1, 2>(out);
#if TILEPIPE_BENCH_CUTLASS_FULL
  add<D, L, Schedule::kCooperative, 256, 128, 1, 2>(out);
  add<D, L, Schedule::kPingpong, 128, 128, 2, 1>(out);
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
