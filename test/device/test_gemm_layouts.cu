// GemmMultistage on every combination of A, B and C/D layouts, both input types and the stage
// counts of each layout pair in gemm_dispatch.cuh (same_type_stages: all of 2..6 for f16 TN, and
// between the two input types every stage count for each layout pair), over shapes with partial
// tiles on every edge, exact against the CPU (small integers), with guard bands around D. The
// kernels are the randomized test's (gemm_dispatch.cuh, compiled once in tilepipe_gemm_dispatch),
// run through the same typed harness as the other GEMM tests.

#include <gtest/gtest.h>

#include "gemm_dispatch.cuh"
#include "gemm_test_util.cuh"

namespace {

using tilepipe::Layout;
using tptest::GemmCase;
using tptest::Reference;

const GemmCase kShapes[] = {
    {1, 1, 1},        // one element
    {127, 257, 131},  // primes: partial tiles on every edge, K not a multiple of 8
    {128, 256, 64},   // exact tile multiples
    {40, 24, 1000},   // K much larger than M and N
};

template <class T, Layout LA, Layout LB, int Stages>
void run_shapes(std::uint32_t seed) {
  using Gemm = tptest::DispatchedGemm<T, T, LA, LB, Stages>;
  ASSERT_GE(tptest::find_config(tptest::dtype_of<T>(), tptest::dtype_of<T>(), LA, LB, Stages), 0)
      << "gemm_dispatch.cuh has no such configuration";
  for (const GemmCase& shape : kShapes)
    for (Layout lcd : {Layout::kRowMajor, Layout::kColumnMajor}) {
      GemmCase gc = shape;
      gc.layout_cd = lcd;
      gc.pad = 8;  // leading dimensions wider than the matrices
      tptest::run_gemm_case<Gemm, T, T>(gc, Reference::kExactCpu, seed++);
    }
}

template <class T, Layout LA, Layout LB, int... Stages>
void run_stage_list(std::uint32_t seed, tptest::StageList<Stages...>) {
  (run_shapes<T, LA, LB, Stages>(seed + 100 * Stages), ...);
}

template <class T, Layout LA, Layout LB>
void run_layout(std::uint32_t seed) {
  run_stage_list<T, LA, LB>(seed, tptest::same_type_stages<T, LA, LB>());
}

}  // namespace

// A's layout, then B's: t row-major ("transposed" in BLAS terms), n column-major.
TEST(GemmLayouts, HalfTN) { run_layout<__half, Layout::kRowMajor, Layout::kColumnMajor>(1000); }
TEST(GemmLayouts, HalfTT) { run_layout<__half, Layout::kRowMajor, Layout::kRowMajor>(2000); }
TEST(GemmLayouts, HalfNN) { run_layout<__half, Layout::kColumnMajor, Layout::kColumnMajor>(3000); }
TEST(GemmLayouts, HalfNT) { run_layout<__half, Layout::kColumnMajor, Layout::kRowMajor>(4000); }
TEST(GemmLayouts, BFloat16TN) {
  run_layout<__nv_bfloat16, Layout::kRowMajor, Layout::kColumnMajor>(5000);
}
TEST(GemmLayouts, BFloat16TT) {
  run_layout<__nv_bfloat16, Layout::kRowMajor, Layout::kRowMajor>(6000);
}
TEST(GemmLayouts, BFloat16NN) {
  run_layout<__nv_bfloat16, Layout::kColumnMajor, Layout::kColumnMajor>(7000);
}
TEST(GemmLayouts, BFloat16NT) {
  run_layout<__nv_bfloat16, Layout::kColumnMajor, Layout::kRowMajor>(8000);
}
