#pragma once
// A type-erased table of GemmMultistage instantiations, so that a test can pick the layouts,
// input and output types, the stage count and the tier of each problem at run time. For each
// type pair and layout pair, one stage count is compiled with split-K (GemmMultistageSplitK): 16
// of the 37 entries, whose partial-product kernels are shared by the two output types of an
// input type. They are compiled without the narrow kernel (AnyAlignment = false), which would add
// a kernel to each; test_gemm_random.cu has a table of its own for arguments that need it.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <tilepipe/gemm/gemm_multistage.cuh>

#include "device_fill.cuh"

namespace tptest {

// GemmMultistage's arguments without their element types.
struct ErasedArgs {
  int m = 0, n = 0, k = 0;
  const void* a = nullptr;
  const void* b = nullptr;
  const void* c = nullptr;
  void* d = nullptr;
  std::int64_t lda = 0, ldb = 0, ldc = 0, ldd = 0;
  float alpha = 1.0f, beta = 0.0f;
  tilepipe::Layout layout_cd = tilepipe::Layout::kRowMajor;
  int batch_count = 1;
  std::int64_t batch_stride_a = 0, batch_stride_b = 0, batch_stride_c = 0, batch_stride_d = 0;
  int split_k = 1;
  int stream_k = 0;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  // The fused configurations' output operator (FusedOp): M scales, N biases.
  const float* scale_row = nullptr;
  const float* bias_col = nullptr;
  // The tier to run on (GemmMultistage::run_on); without one, the GEMM picks (run).
  std::optional<tilepipe::GemmTier> tier;
};

// The output operator of the fused configurations: relu(scale[row] * v + bias[col]).
using FusedOp =
    tilepipe::Chain<tilepipe::ScalePerRow<float>, tilepipe::BiasPerCol<float>, tilepipe::Relu>;

struct GemmConfig {
  DType ab, d;
  tilepipe::Layout la, lb;
  int stages;
  bool split_k;  // compiled with split-K (GemmMultistageSplitK)
  bool fused;    // with FusedOp as its output operator (else Identity)
  tilepipe::Status (*run)(const ErasedArgs&, cudaStream_t);
  std::size_t (*workspace_size)(const ErasedArgs&);  // GemmMultistage::workspace_size
  tilepipe::GemmTier (*tier)(const ErasedArgs&);     // GemmMultistage::tier
  std::string name() const {
    return std::string(name_of(ab)) + "->" + name_of(d) + " A " +
           (la == tilepipe::Layout::kRowMajor ? "row" : "col") + " B " +
           (lb == tilepipe::Layout::kRowMajor ? "row" : "col") + " stages " +
           std::to_string(stages) + (split_k ? " (split-K)" : "") +
           (fused ? " (scale, bias, relu)" : "");
  }
};

template <class Gemm, class AB, class D>
typename Gemm::Arguments typed_args(const ErasedArgs& e) {
  typename Gemm::Arguments a;
  a.m = e.m;
  a.n = e.n;
  a.k = e.k;
  a.a = static_cast<const AB*>(e.a);
  a.b = static_cast<const AB*>(e.b);
  a.c = static_cast<const D*>(e.c);
  a.d = static_cast<D*>(e.d);
  a.lda = e.lda;
  a.ldb = e.ldb;
  a.ldc = e.ldc;
  a.ldd = e.ldd;
  a.alpha = e.alpha;
  a.beta = e.beta;
  a.layout_cd = e.layout_cd;
  a.batch_count = e.batch_count;
  a.batch_stride_a = e.batch_stride_a;
  a.batch_stride_b = e.batch_stride_b;
  a.batch_stride_c = e.batch_stride_c;
  a.batch_stride_d = e.batch_stride_d;
  a.split_k = e.split_k;
  a.stream_k = e.stream_k;
  a.workspace = e.workspace;
  a.workspace_bytes = e.workspace_bytes;
  if constexpr (std::is_same_v<decltype(a.output_op), FusedOp>) {
    a.output_op.template get<0>().scale = e.scale_row;
    a.output_op.template get<1>().bias = e.bias_col;
  }
  return a;
}

template <class AB, class D, tilepipe::Layout LA, tilepipe::Layout LB, int Stages, bool SplitK,
          class Op = tilepipe::Identity>
using ErasedGemm =
    tilepipe::GemmMultistage<AB, D, LA, LB, Stages, Op, tilepipe::DefaultTileConfig<Stages>, SplitK,
                             /*AnyAlignment=*/false>;

// Whether `e` asks the Hopper tier for split-K or stream-K, which the front door runs on the
// Ampere tier: then the Hopper tier's GEMM (GemmSm90, the same kernel GemmMultistage runs there)
// is called directly. f16 and bf16 only (tf32's Hopper GEMM reads K-major copies).
template <class Gemm, class AB>
bool hopper_schedule(const ErasedArgs& e) {
  if constexpr (Gemm::kHasHopperTier && !std::is_same_v<AB, float>)
    return e.tier == tilepipe::GemmTier::kHopper && (e.split_k > 1 || e.stream_k > 0);
  return false;
}

template <class AB, class D, tilepipe::Layout LA, tilepipe::Layout LB, int Stages, bool SplitK,
          class Op = tilepipe::Identity>
tilepipe::Status run_erased(const ErasedArgs& e, cudaStream_t stream) {
  using Gemm = ErasedGemm<AB, D, LA, LB, Stages, SplitK, Op>;
  const auto args = typed_args<Gemm, AB, D>(e);
  if (hopper_schedule<Gemm, AB>(e)) return Gemm::HopperGemm::run(args, stream);
  return e.tier ? Gemm::run_on(*e.tier, args, stream) : Gemm::run(args, stream);
}

template <class AB, class D, tilepipe::Layout LA, tilepipe::Layout LB, int Stages, bool SplitK,
          class Op = tilepipe::Identity>
std::size_t workspace_erased(const ErasedArgs& e) {
  using Gemm = ErasedGemm<AB, D, LA, LB, Stages, SplitK, Op>;
  if (hopper_schedule<Gemm, AB>(e))
    return Gemm::HopperGemm::workspace_size(typed_args<Gemm, AB, D>(e));
  return Gemm::workspace_size(typed_args<Gemm, AB, D>(e));
}

template <class AB, class D, tilepipe::Layout LA, tilepipe::Layout LB, int Stages, bool SplitK,
          class Op = tilepipe::Identity>
tilepipe::GemmTier tier_erased(const ErasedArgs& e) {
  using Gemm = ErasedGemm<AB, D, LA, LB, Stages, SplitK, Op>;
  return Gemm::tier(typed_args<Gemm, AB, D>(e));
}

template <class T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<__half>() { return DType::kF16; }
template <> constexpr DType dtype_of<__nv_bfloat16>() { return DType::kBF16; }
template <> constexpr DType dtype_of<float>() { return DType::kF32; }

template <class AB, class D, tilepipe::Layout LA, tilepipe::Layout LB, int Stages, int SplitKStages>
void add_config(std::vector<GemmConfig>& out) {
  constexpr bool kSplitK = Stages == SplitKStages;
  out.push_back({dtype_of<AB>(), dtype_of<D>(), LA, LB, Stages, kSplitK, false,
                 &run_erased<AB, D, LA, LB, Stages, kSplitK>,
                 &workspace_erased<AB, D, LA, LB, Stages, kSplitK>,
                 &tier_erased<AB, D, LA, LB, Stages, kSplitK>});
}

// One configuration with FusedOp. With SplitK, pick a layout and stage count that add_layouts
// also compiles with split-K, so that the partial-product kernel is shared.
template <class AB, class D, tilepipe::Layout LA, tilepipe::Layout LB, int Stages, bool SplitK>
void add_fused_config(std::vector<GemmConfig>& out) {
  out.push_back({dtype_of<AB>(), dtype_of<D>(), LA, LB, Stages, SplitK, true,
                 &run_erased<AB, D, LA, LB, Stages, SplitK, FusedOp>,
                 &workspace_erased<AB, D, LA, LB, Stages, SplitK, FusedOp>,
                 &tier_erased<AB, D, LA, LB, Stages, SplitK, FusedOp>});
}

template <int... Stages>
struct StageList {
  static constexpr bool contains(int s) { return ((s == Stages) || ...); }
};

// The stage counts compiled for AB -> AB with layouts LA, LB: all of 2..6 for f16 with row-major
// A and column-major B (TN, most GEMMs' layout); otherwise the split-K stage count (add_layouts),
// at least one of each Hopper tile (2-4 run 128 x 256, 5 and 6 128 x 128), and those the typed
// tests name (test_gemm_edges, test_gemm_features, test_gemm_sm90), so that each layout pair
// meets every stage count in one input type or the other. The whole cross product, twice, took
// CI's build past its 30 minutes (it was a third of the build's compile time).
template <class AB, tilepipe::Layout LA, tilepipe::Layout LB>
constexpr auto same_type_stages() {
  using tilepipe::Layout;
  constexpr bool kF16 = std::is_same_v<AB, __half>;
  constexpr bool kRowA = LA == Layout::kRowMajor, kRowB = LB == Layout::kRowMajor;
  if constexpr (kRowA && !kRowB) {
    if constexpr (kF16) return StageList<2, 3, 4, 5, 6>{};
    else return StageList<3, 4, 6>{};
  } else if constexpr (kRowA && kRowB) {
    if constexpr (kF16) return StageList<3, 4, 6>{};
    else return StageList<2, 4, 5>{};
  } else if constexpr (!kRowB) {
    if constexpr (kF16) return StageList<2, 4, 6>{};
    else return StageList<3, 4, 5>{};
  } else {
    if constexpr (kF16) return StageList<3, 4, 5>{};
    else return StageList<2, 6>{};
  }
}

// The stage counts of `list` (AB -> AB), else only SplitKStages (AB -> f32); the one equal to
// SplitKStages is compiled with split-K.
template <class AB, class D, tilepipe::Layout LA, tilepipe::Layout LB, int SplitKStages,
          int... Stages>
void add_stage_list(std::vector<GemmConfig>& out, StageList<Stages...>) {
  if constexpr (std::is_same_v<AB, D>) {
    static_assert(StageList<Stages...>::contains(SplitKStages),
                  "same_type_stages must hold the split-K stages");
    (add_config<AB, D, LA, LB, Stages, SplitKStages>(out), ...);
  } else {
    add_config<AB, D, LA, LB, SplitKStages, SplitKStages>(out);
  }
}
template <class AB, class D, tilepipe::Layout LA, tilepipe::Layout LB, int SplitKStages>
void add_stages(std::vector<GemmConfig>& out) {
  add_stage_list<AB, D, LA, LB, SplitKStages>(out, same_type_stages<AB, LA, LB>());
}

// The split-K stage count moves with the layouts and the input type, so that split-K meets
// every stage count somewhere (f16: 2, 3, 4, 5; bf16: 3, 4, 5, 6). The stage count is the
// mainloop's business and D's type the epilogue's, so an f32 D gets only the split-K stage count
// of each layout pair (together four of the five), which keeps the table, compiled for two
// tiers, quick to build: f16 -> f32 has RC 2, RR 3, CC 4, CR 5; bf16 -> f32 RC 3, RR 4, CC 5, CR 6
// (A's layout, then B's; R row-major, C column-major).
template <class AB, class D>
void add_layouts(std::vector<GemmConfig>& out) {
  using tilepipe::Layout;
  constexpr int s0 = std::is_same_v<AB, __half> ? 2 : 3;
  add_stages<AB, D, Layout::kRowMajor, Layout::kColumnMajor, s0>(out);
  add_stages<AB, D, Layout::kRowMajor, Layout::kRowMajor, s0 + 1>(out);
  add_stages<AB, D, Layout::kColumnMajor, Layout::kColumnMajor, s0 + 2>(out);
  add_stages<AB, D, Layout::kColumnMajor, Layout::kRowMajor, s0 + 3>(out);
}

// The configurations of each input type (both of its output types, which share split-K's partial
// kernels), each compiled in a translation unit of its own (gemm_dispatch_*.cu, the library
// tilepipe_gemm_dispatch) so that the build runs them in parallel.
void add_configs_f16(std::vector<GemmConfig>& out);   // f16 -> f16, f16 -> f32, then fused
void add_configs_bf16(std::vector<GemmConfig>& out);  // bf16 -> bf16, bf16 -> f32, then fused

// Every layout pair x its same_type_stages for f16 -> f16 (14) and bf16 -> bf16 (11), and x one
// stage count for f16 -> f32 and bf16 -> f32 (8): 33 GEMMs, 16 of them with split-K (8 more
// partial-product kernels);
// then, per input type, two with FusedOp (one of them with split-K, so that its reduction kernel
// applies the operator). The order is fixed: a problem's
// configuration is its index in this table.
inline const std::vector<GemmConfig>& all_configs() {
  static const std::vector<GemmConfig> configs = [] {
    std::vector<GemmConfig> v;
    add_configs_f16(v);
    add_configs_bf16(v);
    return v;
  }();
  return configs;
}

//! The index in all_configs() of the Identity configuration of `ab` -> `d`, layouts `la` and
//! `lb`, `stages` stages; -1 if there is none.
inline int find_config(DType ab, DType d, tilepipe::Layout la, tilepipe::Layout lb, int stages) {
  const auto& configs = all_configs();
  for (std::size_t i = 0; i < configs.size(); ++i) {
    const GemmConfig& c = configs[i];
    if (c.ab == ab && c.d == d && c.la == la && c.lb == lb && c.stages == stages && !c.fused)
      return static_cast<int>(i);
  }
  return -1;
}

//! A configuration of the table behind GemmMultistage's interface (Arguments, run,
//! workspace_size, tier, the layouts), so that a typed test harness can run it without
//! instantiating the kernel again. With `Tier`, `run` runs that tier (GemmMultistage::run_on);
//! without, the GEMM picks.
struct AnyTier {};
using HopperTier = std::integral_constant<tilepipe::GemmTier, tilepipe::GemmTier::kHopper>;
template <class AB, class D, tilepipe::Layout LA, tilepipe::Layout LB, int Stages,
          class Tier = AnyTier>
struct DispatchedGemm {
  using Arguments = tilepipe::GemmArguments<AB, D>;
  struct Policy {
    static constexpr int kStages = Stages;
  };
  static constexpr tilepipe::Layout kLayoutA = LA;
  static constexpr tilepipe::Layout kLayoutB = LB;
  static constexpr bool kSplitK = false;

  static const GemmConfig& config() {
    static const int index = find_config(dtype_of<AB>(), dtype_of<D>(), LA, LB, Stages);
    return all_configs().at(static_cast<std::size_t>(index));
  }
  static ErasedArgs erase(const Arguments& a) {
    ErasedArgs e;
    e.m = a.m;
    e.n = a.n;
    e.k = a.k;
    e.a = a.a;
    e.b = a.b;
    e.c = a.c;
    e.d = a.d;
    e.lda = a.lda;
    e.ldb = a.ldb;
    e.ldc = a.ldc;
    e.ldd = a.ldd;
    e.alpha = a.alpha;
    e.beta = a.beta;
    e.layout_cd = a.layout_cd;
    e.batch_count = a.batch_count;
    e.batch_stride_a = a.batch_stride_a;
    e.batch_stride_b = a.batch_stride_b;
    e.batch_stride_c = a.batch_stride_c;
    e.batch_stride_d = a.batch_stride_d;
    e.split_k = a.split_k;
    e.workspace = a.workspace;
    e.workspace_bytes = a.workspace_bytes;
    return e;
  }
  static tilepipe::Status run(const Arguments& a, cudaStream_t stream = nullptr) {
    ErasedArgs e = erase(a);
    if constexpr (!std::is_same_v<Tier, AnyTier>) e.tier = Tier::value;
    return config().run(e, stream);
  }
  static std::size_t workspace_size(const Arguments& a) {
    return config().workspace_size(erase(a));
  }
  static tilepipe::GemmTier tier(const Arguments& a) { return config().tier(erase(a)); }
};

}  // namespace tptest
