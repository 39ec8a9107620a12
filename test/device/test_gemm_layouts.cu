// GemmMultistage on every combination of A, B and C/D layouts, both input types and Stages 2..5,
// over shapes with partial tiles on every edge, exact against the CPU (small integers), with
// guard bands around D. The kernels are the randomized test's (gemm_dispatch.cuh, compiled once
// in tilepipe_gemm_dispatch), run through the same typed harness as the other GEMM tests.

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

template <class T, int Stages>
void run_layouts(std::uint32_t seed) {
  run_shapes<T, Layout::kRowMajor, Layout::kColumnMajor, Stages>(seed);
  run_shapes<T, Layout::kRowMajor, Layout::kRowMajor, Stages>(seed + 100);
  run_shapes<T, Layout::kColumnMajor, Layout::kColumnMajor, Stages>(seed + 200);
  run_shapes<T, Layout::kColumnMajor, Layout::kRowMajor, Stages>(seed + 300);
}

}  // namespace

TEST(GemmLayouts, HalfStages2) { run_layouts<__half, 2>(1000); }
TEST(GemmLayouts, HalfStages3) { run_layouts<__half, 3>(2000); }
TEST(GemmLayouts, HalfStages4) { run_layouts<__half, 4>(3000); }
TEST(GemmLayouts, HalfStages5) { run_layouts<__half, 5>(4000); }
TEST(GemmLayouts, BFloat16Stages2) { run_layouts<__nv_bfloat16, 2>(5000); }
TEST(GemmLayouts, BFloat16Stages3) { run_layouts<__nv_bfloat16, 3>(6000); }
TEST(GemmLayouts, BFloat16Stages4) { run_layouts<__nv_bfloat16, 4>(7000); }
TEST(GemmLayouts, BFloat16Stages5) { run_layouts<__nv_bfloat16, 5>(8000); }
