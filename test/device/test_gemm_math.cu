// GemmMultistage under the maths other than MathDefault (numeric/math.cuh): f16 accumulation.
// Each GEMM is checked twice, through one kernel:
// - exactly, on small integers (the harness of gemm_test_util.cuh: edges, batches, beta, both D
//   layouts, guard bands), which catches any element read from the wrong place;
// - on values uniform in [-1, 1] against a CPU double reference, within a bound derived for the
//   math's arithmetic (below), which catches arithmetic less precise than the math promises.
// Few kernels on purpose (CI compile time): one stage count, a 128 x 128 x 32 tile.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <tilepipe/gemm/gemm_multistage.cuh>

#include "gemm_test_util.cuh"

namespace {

using tilepipe::Layout;
using tptest::GemmCase;
using tptest::Reference;

template <class Math>
using MathTile = tilepipe::TileConfig<128, 128, 32, 64, 64, Math>;

// f16 accumulation (A row-major, B column-major), f16 and f32 out. It changes only the mma and the
// accumulators, not the fragment loads, so one layout of A and B covers it.
using F16AccTN =
    tilepipe::GemmMultistage<__half, __half, Layout::kRowMajor, Layout::kColumnMajor, 3,
                             tilepipe::Identity, MathTile<tilepipe::MathF16Accumulate>>;
using F16AccTNToF32 =
    tilepipe::GemmMultistage<__half, float, Layout::kRowMajor, Layout::kColumnMajor, 3,
                             tilepipe::Identity, MathTile<tilepipe::MathF16Accumulate>>;

// Error bound of one output element under f16 accumulation (MathF16Accumulate), from the exact
// products p_1 .. p_K of its row of A and column of B (both f16, so the reference's inputs are
// exactly the kernel's).
//
// The kernel runs one mma.sync per k-block of 16 (in k order, the K residue zero-filled): the
// accumulator c_j after block j is c_{j-1} plus the block's 16 products, rounded to f16. The PTX
// ISA does not say in what order or precision the tensor cores add inside one mma, so assume the
// worst of the usual models: the products are exact (an f16 x f16 product has 22 significant bits)
// and the 16 additions are made one by one in f16, each rounding (to nearest, or toward zero, as
// tensor cores have been measured to do) by at most one unit in the last place, 2^-10 relative of
// a partial sum that is at most |c_{j-1}| + sum_i |p_i|. So with u = 2^-10, P_j = sum of block j
// and S_j = sum of |p_i|,
//     |c_j - (c_{j-1} + P_j)| <= 16 u (|c_{j-1}| + S_j),
// and near zero each rounding may also err by half the smallest f16 subnormal, 2^-25, absolutely:
// 16 * 2^-25 more per block. With s_j the exact partial sums and E_j the error bound after block j,
// |c_{j-1}| <= |s_{j-1}| + E_{j-1}, so
//     E_j = E_{j-1} + 16 u (|s_{j-1}| + E_{j-1} + S_j) + 16 * 2^-25,   E_0 = 0,
// and the element's bound is E_K, plus the rounding of D: 2^-11 (|s| + E_K) for an f16 D (2^-24
// for f32), alpha being 1 and beta 0 here. This bound grows like 16 u sum |p|, about K / 256 for
// uniform inputs: f16 accumulation is coarse, which is why the exact integer runs come first.
struct F16AccumulationBound {
  double d_roundoff;  // unit roundoff of D's type
  double operator()(const std::vector<double>& products) const {
    constexpr double u = 0x1p-10, kSubnormal = 16 * 0x1p-25;
    double s = 0, e = 0;
    for (std::size_t j = 0; j < products.size(); j += 16) {
      double block = 0, block_abs = 0;
      for (std::size_t i = j; i < j + 16 && i < products.size(); ++i) {
        block += products[i];
        block_abs += std::fabs(products[i]);
      }
      e += 16 * u * (std::fabs(s) + e + block_abs) + kSubnormal;
      s += block;
    }
    return e + d_roundoff * (std::fabs(s) + e);
  }
};

// The exact runs: shapes with partial tiles on every edge, both layouts of C and D, beta, batches.
// Small integers keep every partial sum an integer below 2^11, exact in f16 (|p| <= 9, K <= 200).
template <class Gemm, class ElementAB, class ElementD>
void run_exact(std::uint32_t seed) {
  const GemmCase cases[] = {
      {1, 1, 1},
      {127, 257, 131},                                        // partial tiles on every edge
      {128, 128, 64},                                         // whole tiles
      {77, 45, 200, Layout::kColumnMajor, 1.0f, 1.0f, 2, 8},  // beta, batches, padding
  };
  for (const GemmCase& shape : cases)
    for (Layout lcd : {Layout::kRowMajor, Layout::kColumnMajor}) {
      GemmCase gc = shape;
      gc.layout_cd = lcd;
      tptest::run_gemm_case<Gemm, ElementAB, ElementD>(gc, Reference::kExactCpu, seed++);
    }
}

// The precision runs: A and B uniform in [-1, 1] (rounded to their type), D = A * B (poisoned
// first), every element within `bound(products)` of the double reference.
template <class Gemm, class ElementAB, class ElementD, class Bound>
void run_precision(int m, int n, int k, const Bound& bound, std::uint32_t seed) {
  constexpr Layout LA = Gemm::kLayoutA, LB = Gemm::kLayoutB;
  SCOPED_TRACE(testing::Message() << tptest::type_name<ElementAB>() << "->"
                                  << tptest::type_name<ElementD>() << " A " << tptest::name_of(LA)
                                  << " B " << tptest::name_of(LB) << " " << m << "x" << n << "x"
                                  << k);
  const std::int64_t lda = tptest::round_up(LA == Layout::kRowMajor ? k : m, 8);
  const std::int64_t ldb = tptest::round_up(LB == Layout::kRowMajor ? n : k, 8);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  std::vector<ElementAB> a(std::size_t(tptest::span(LA, lda, m, k))),
      b(std::size_t(tptest::span(LB, ldb, k, n)));
  for (auto& x : a) x = tptest::from_float_host<ElementAB>(uni(rng));
  for (auto& x : b) x = tptest::from_float_host<ElementAB>(uni(rng));

  tptest::run_against_double<Gemm, ElementAB, ElementD>(
      m, n, k, a, lda, b, ldb, [](ElementAB x) { return tptest::to_float_host(x); }, bound);
}

}  // namespace

TEST(GemmMath, F16AccumulateExact) {
  run_exact<F16AccTN, __half, __half>(100);
  run_exact<F16AccTNToF32, __half, float>(200);
}

TEST(GemmMath, F16AccumulatePrecision) {
  run_precision<F16AccTN, __half, __half>(131, 257, 300, F16AccumulationBound{0x1p-11}, 300);
  run_precision<F16AccTNToF32, __half, float>(200, 72, 1000, F16AccumulationBound{0x1p-24}, 400);
}

TEST(GemmMath, F16AccumulateTakesTheAmpereTier) {
  // No Hopper tier for f16 accumulation: tier() says so on any device, and run_on refuses it.
  static_assert(!F16AccTN::kHasHopperTier, "f16 accumulation has no Hopper tier");
  using DefaultF16Acc = tilepipe::GemmMultistage<
      __half, __half, Layout::kRowMajor, Layout::kColumnMajor, 4, tilepipe::Identity,
      tilepipe::DefaultTileConfig<4>::WithMath<tilepipe::MathF16Accumulate>>;
  static_assert(!DefaultF16Acc::kHasHopperTier,
                "f16 accumulation has no Hopper tier, default tile or not");
  F16AccTN::Arguments args;
  args.m = args.n = args.k = 16;
  EXPECT_EQ(F16AccTN::tier(args), tilepipe::GemmTier::kAmpere);
}
