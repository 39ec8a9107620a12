// GemmMultistage features: output types, alpha/beta (beta = 0 never reads C), K = 0, batched
// problems (with a broadcast operand), Stages 6 where it fits, and large problems against cuBLAS.
// The GEMMs are the randomized test's table (gemm_dispatch.cuh), compiled once for all the
// tests; only the two cross-type outputs (f16 -> bf16, bf16 -> f16), which the table lacks, are
// instantiated here. Each runs on the tier GemmMultistage picks for the device.

#include <gtest/gtest.h>

#include "gemm_dispatch.cuh"
#include "gemm_test_util.cuh"

namespace {

using tilepipe::Layout;
using tptest::GemmCase;
using tptest::Reference;

template <class AB, class D, Layout LA = Layout::kRowMajor, Layout LB = Layout::kColumnMajor,
          int Stages = 4>
using Gemm = tptest::DispatchedGemm<AB, D, LA, LB, Stages>;

}  // namespace

TEST(GemmFeatures, OutputTypes) {
  // f32 and the other 16-bit type out of each input type, both C/D layouts.
  for (Layout l : {Layout::kRowMajor, Layout::kColumnMajor}) {
    GemmCase gc{127, 257, 131, l, 1.0f, 1.0f};
    using F16ToBf16 =
        tilepipe::GemmMultistage<__half, __nv_bfloat16, Layout::kRowMajor, Layout::kColumnMajor, 4>;
    using Bf16ToF16 =
        tilepipe::GemmMultistage<__nv_bfloat16, __half, Layout::kRowMajor, Layout::kColumnMajor, 4>;
    using F16ToF32 =
        Gemm<__half, float, Layout::kRowMajor, Layout::kColumnMajor, 2>;  // a table entry
    tptest::run_gemm_case<F16ToF32, __half, float>(gc, Reference::kExactCpu, 11);
    using Bf16ToF32 =
        Gemm<__nv_bfloat16, float, Layout::kRowMajor, Layout::kColumnMajor, 3>;  // a table entry
    tptest::run_gemm_case<Bf16ToF32, __nv_bfloat16, float>(gc, Reference::kExactCpu, 12);
    tptest::run_gemm_case<F16ToBf16, __half, __nv_bfloat16>(gc, Reference::kExactCpu, 13);
    tptest::run_gemm_case<Bf16ToF16, __nv_bfloat16, __half>(gc, Reference::kExactCpu, 14);
  }
  using GemmF32NN = Gemm<__half, float, Layout::kColumnMajor, Layout::kRowMajor, 5>;
  tptest::run_gemm_case<GemmF32NN, __half, float>({200, 72, 300, Layout::kColumnMajor, 1.0f, 0.0f},
                                                  Reference::kExactCpu, 15);
}

TEST(GemmFeatures, AlphaBeta) {
  using G = Gemm<__half, __half>;
  const float pairs[][2] = {{1, 0}, {2, 0}, {1, 1}, {2, -1}, {0.5f, 0.25f}, {0, 1}, {-1, 3}};
  std::uint32_t seed = 100;
  for (const auto& ab : pairs)
    for (Layout l : {Layout::kRowMajor, Layout::kColumnMajor}) {
      // beta == 0 runs with C full of NaN (the harness poisons it): C must not be read.
      tptest::run_gemm_case<G, __half, __half>({131, 67, 45, l, ab[0], ab[1]}, Reference::kExactCpu,
                                               seed++);
    }
}

TEST(GemmFeatures, KZeroGivesBetaC) {
  using G = Gemm<__half, float, Layout::kRowMajor, Layout::kColumnMajor, 2>;
  tptest::run_gemm_case<G, __half, float>({33, 65, 0, Layout::kRowMajor, 1.0f, 2.0f},
                                          Reference::kExactCpu, 200);
  tptest::run_gemm_case<G, __half, float>({33, 65, 0, Layout::kColumnMajor, 1.0f, 0.0f},
                                          Reference::kExactCpu, 201);
}

TEST(GemmFeatures, Batched) {
  using TN = Gemm<__half, __half>;
  using NT = Gemm<__nv_bfloat16, float, Layout::kColumnMajor, Layout::kRowMajor, 6>;
  GemmCase gc{77, 130, 90, Layout::kRowMajor, 1.0f, 1.0f, /*batch=*/4, /*pad=*/8};
  tptest::run_gemm_case<TN, __half, __half>(gc, Reference::kExactCpu, 300);
  gc.layout_cd = Layout::kColumnMajor;
  tptest::run_gemm_case<NT, __nv_bfloat16, float>(gc, Reference::kExactCpu, 301);
  gc.broadcast_b = true;  // one B shared by every problem
  tptest::run_gemm_case<TN, __half, __half>(gc, Reference::kExactCpu, 302);
  tptest::run_gemm_case<TN, __half, __half>({1, 1, 1, Layout::kRowMajor, 1, 0, 7},
                                            Reference::kExactCpu, 303);
}

TEST(GemmFeatures, SixStages) {
  using G6 = Gemm<__half, __half, Layout::kRowMajor, Layout::kColumnMajor, 6>;
  tptest::run_gemm_case<G6, __half, __half>({257, 129, 555, Layout::kRowMajor, 1, 1},
                                            Reference::kExactCpu, 400);
}

TEST(GemmFeatures, Large2048AgainstCublas) {
  tptest::run_gemm_case<Gemm<__half, __half>, __half, __half>({2048, 2048, 2048},
                                                              Reference::kCublas, 500);
  using NN = Gemm<__nv_bfloat16, __nv_bfloat16, Layout::kColumnMajor, Layout::kColumnMajor, 3>;
  tptest::run_gemm_case<NN, __nv_bfloat16, __nv_bfloat16>(
      {2048, 2048, 2048, Layout::kColumnMajor, 1.0f, 0.5f}, Reference::kCublas, 501);
  using TT = Gemm<__half, float, Layout::kRowMajor, Layout::kRowMajor, 3>;
  tptest::run_gemm_case<TT, __half, float>({1000, 1500, 2000}, Reference::kCublas, 502);
}
