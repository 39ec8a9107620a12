// GemmMultistage with f32 A and B: MathTF32 (tensor cores on inputs rounded to tf32) and
// MathSimtF32 (f32 FMA on the CUDA cores). Each kernel is checked three ways:
// - exactly, on small integers (the harness of gemm_test_util.cuh: edges, K below the k-tile,
//   batches, beta, both D layouts, guard bands, D poisoned first), which catches any element read
//   from the wrong place or k paired wrongly between A and B;
// - exactly, on inputs whose rounding to tf32 is known (below), which catches inputs truncated
//   instead of rounded to nearest (tf32), or any input bit lost (SIMT, which must keep them all);
// - on values uniform in [-1, 1] against a CPU double reference, within a bound derived below.
// Few kernels on purpose (CI compile time): one stage count, the f32 default tile; for tf32 two
// layouts that between them store both operands in both shared-memory orders, for SIMT all four
// (its loads differ per operand and order: 16-byte, 8-byte), of which only TN compiles the narrow
// kernel, for its unaligned cases. SIMT with A column-major (M-contiguous) also keeps other rows
// in its mainloop and shuffles the accumulators back to mma.sync's layout at the end: NN is also
// checked through split-K's and stream-K's kernels, and with 16 x 16 warp tiles (one m16 tile).
//
// tf32 also has a Hopper tier (GemmSm90 on float: TMA, wgmma m64nNk8 ...tf32), which wgmma
// feeds the f32 bits of shared memory unrounded: its tests (Tf32Hopper*, Tf32NNHopper*,
// Tf32TTHopper) skip on a GPU that is not sm_90 or in a build without 90a, and fail where both
// have the tier but it cannot run (TP_REQUIRE_HOPPER_TIER); the Ampere tier's tests run there
// through run_on. The Hopper tier adds two kernels: GemmMultistage's own (f32 out, tested directly
// as GemmSm90 too) and an f16-out GemmSm90. wgmma reads tf32 only K-major, so for NN (A
// column-major), TT (B row-major) and NT (A column-major, B row-major) the Hopper tier copies
// those operands K-major into the workspace first (k_major_transpose.cuh, tested alone below) and
// runs the same two GemmSm90 kernels: NN and TT add one GEMM kernel each (their Ampere tier's,
// 16-byte only), NT none.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <tilepipe/gemm/gemm_multistage.cuh>

#include "gemm_test_util.cuh"

namespace {

using tilepipe::Layout;
using tptest::GemmCase;
using tptest::Reference;

using Tf32Tile = tilepipe::DefaultF32TileConfig<tilepipe::MathTF32>;
// A row-major, B column-major (both K-contiguous in shared memory), f32 out.
using Tf32TN = tilepipe::GemmMultistage<float, float, Layout::kRowMajor, Layout::kColumnMajor, 3,
                                        tilepipe::Identity, Tf32Tile>;
// A column-major, B row-major (both MN-contiguous), f16 out.
using Tf32NT = tilepipe::GemmMultistage<float, __half, Layout::kColumnMajor, Layout::kRowMajor, 3,
                                        tilepipe::Identity, Tf32Tile>;

// A GEMM forced onto one tier (GemmMultistage::run_on), so that a test knows which instructions
// it checks: TN takes the Hopper tier by itself on an sm_90a device.
template <class Gemm, tilepipe::GemmTier Tier>
struct OnTier : Gemm {
  static tilepipe::Status run(const typename Gemm::Arguments& args, cudaStream_t stream = nullptr) {
    return Gemm::run_on(Tier, args, stream);
  }
};
using Tf32TNAmpere = OnTier<Tf32TN, tilepipe::GemmTier::kAmpere>;
using Tf32TNHopper = OnTier<Tf32TN, tilepipe::GemmTier::kHopper>;
// NT takes the Hopper tier where a workspace is given (the harness gives the one asked for).
using Tf32NTAmpere = OnTier<Tf32NT, tilepipe::GemmTier::kAmpere>;
using Tf32NTHopper = OnTier<Tf32NT, tilepipe::GemmTier::kHopper>;
// A and B column-major (A M-major, B K-major), f32 out, 16-byte aligned arguments only (no
// narrow kernel: one new GEMM kernel, the Ampere tier's; the Hopper tier's is TN's GemmSm90).
using Tf32NN = tilepipe::GemmMultistage<float, float, Layout::kColumnMajor, Layout::kColumnMajor, 3,
                                        tilepipe::Identity, Tf32Tile, /*SplitK=*/false,
                                        /*AnyAlignment=*/false>;
using Tf32NNAmpere = OnTier<Tf32NN, tilepipe::GemmTier::kAmpere>;
using Tf32NNHopper = OnTier<Tf32NN, tilepipe::GemmTier::kHopper>;
// A and B row-major (A K-major, B N-major: the Hopper tier copies B alone), f32 out, 16-byte
// aligned arguments only: like NN, one new GEMM kernel, the Ampere tier's.
using Tf32TT = tilepipe::GemmMultistage<float, float, Layout::kRowMajor, Layout::kRowMajor, 3,
                                        tilepipe::Identity, Tf32Tile, /*SplitK=*/false,
                                        /*AnyAlignment=*/false>;
using Tf32TTAmpere = OnTier<Tf32TT, tilepipe::GemmTier::kAmpere>;
using Tf32TTHopper = OnTier<Tf32TT, tilepipe::GemmTier::kHopper>;
// The Hopper tier's GEMMs themselves: TN's (f32 out, 3 stages: the 128 x 256 tile, 32 k a slot)
// and one with f16 out.
using Sm90Tf32 = Tf32TN::HopperGemm;
static_assert(
    std::is_same_v<Sm90Tf32,
                   tilepipe::GemmSm90<float, float, Layout::kRowMajor, Layout::kColumnMajor, 3>>,
    "GemmMultistage's tf32 TN runs GemmSm90 with its stage count");
using Sm90Tf32ToF16 = tilepipe::GemmSm90<float, __half, Layout::kRowMajor, Layout::kColumnMajor, 3>;
static_assert(std::is_same_v<Tf32NN::HopperGemm, Sm90Tf32> &&
                  std::is_same_v<Tf32TT::HopperGemm, Sm90Tf32> &&
                  std::is_same_v<Tf32NT::HopperGemm, Sm90Tf32ToF16>,
              "tf32 NN, TT and NT run the TN GemmSm90 kernels on K-major copies: no new Hopper "
              "kernel");

// The library's own answer, which TP_REQUIRE_HOPPER_TIER asserts where the GPU and the build have
// the tier (it decides whether to skip without asking the library).
bool hopper_tier_available() { return Sm90Tf32::available(); }

using SimtTile = tilepipe::DefaultF32TileConfig<tilepipe::MathSimtF32>;
// All four layouts; only TN with the narrow kernel (AnyAlignment), the others without it.
template <Layout LA, Layout LB, class ElementD, bool AnyAlignment = false>
using Simt = tilepipe::GemmMultistage<float, ElementD, LA, LB, 3, tilepipe::Identity, SimtTile,
                                      /*SplitK=*/false, AnyAlignment>;
using SimtTN = Simt<Layout::kRowMajor, Layout::kColumnMajor, float, /*AnyAlignment=*/true>;
using SimtNN = Simt<Layout::kColumnMajor, Layout::kColumnMajor, float>;
using SimtNT = Simt<Layout::kColumnMajor, Layout::kRowMajor, __half>;
using SimtTT = Simt<Layout::kRowMajor, Layout::kRowMajor, float>;
// NN with split-K and with stream-K compiled in (their ordinary kernel is SimtNN's), and on a
// small tile whose warps hold one m16 tile each.
using SimtNNSplitK =
    tilepipe::GemmMultistageSplitK<float, float, Layout::kColumnMajor, Layout::kColumnMajor, 3,
                                   tilepipe::Identity, SimtTile, /*AnyAlignment=*/false>;
using SimtNNStreamK =
    tilepipe::GemmMultistageStreamK<float, float, Layout::kColumnMajor, Layout::kColumnMajor, 3,
                                    tilepipe::Identity, SimtTile, /*AnyAlignment=*/false>;
using SimtNNSmallWarps =
    tilepipe::GemmMultistage<float, float, Layout::kColumnMajor, Layout::kColumnMajor, 3,
                             tilepipe::Identity,
                             tilepipe::TileConfig<32, 32, 32, 16, 16, tilepipe::MathSimtF32>,
                             /*SplitK=*/false, /*AnyAlignment=*/false>;

// x rounded to tf32 as cvt.rna.tf32.f32 does: to 11 significant bits, to nearest, ties away from
// zero (adding half of the last kept place to the magnitude, then truncating; finite x only).
float round_tf32(float x) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, 4);
  bits = (bits + 0x1000u) & ~0x1FFFu;
  float r;
  std::memcpy(&r, &bits, 4);
  return r;
}

// Error bound of one output element under MathTF32, from the exact products p_1 .. p_K of its
// row of A and column of B (f32 inputs, exact in double).
//
// Inputs: on the Ampere tier cvt.rna rounds each input to 11 significant bits, so a becomes
// a (1 + e_a) with |e_a| <= u = 2^-11 (half a unit in the last of 11 places), and likewise b.
// On the Hopper tier wgmma reads the f32 bits unrounded as tf32, whose layout the PTX ISA leaves
// to the implementation, promising at least 10 fraction bits: whether the low 13 bits are
// truncated (as tensor cores have been measured to do) or rounded, |e_a| < u = 2^-10 (a whole
// unit in the last of 11 places; the tests pass `input_u`). Either way the rounded value has at
// most 11 significant bits, and the product of two has at most 22, so the tensor cores form it
// exactly:
//     |a^ b^ - a b| <= (2u + u^2) |a b|.
// Accumulation: the Ampere kernel runs one mma.sync per k-block of 8 (in k order, the K residue
// zero-filled, the 8 k of a block in a permuted order, which no bound below depends on); the
// Hopper kernel one wgmma m64nNk8 per k-block of 8, in k order (past K zero-filled by TMA). The PTX
// ISA does not say how the tensor cores add inside one mma, so assume the worst of the usual
// models: the 8 products are added to the accumulator one by one in f32, each addition erring by
// at most one unit in the last place (rounding to nearest, or truncating as tensor cores have
// been measured to do), v = 2^-23 relative, of a partial sum that is at most
// |c_{j-1}| + S^_j, where S^_j = sum over block j of |a^ b^| <= (1 + 2u + u^2) S_j. With s_j the
// exact partial sums of the rounded products and E_j the error bound after block j,
// |c_{j-1}| <= |s_{j-1}| + E_{j-1}, so
//     E_j = E_{j-1} + 8 v (|s_{j-1}| + E_{j-1} + S^_j),   E_0 = 0,
// and |s_j| is at most the exact partial sum plus (2u + u^2) times the sum of |p| so far. The
// element's bound is the input term (2u + u^2) sum |p| plus E_K, plus the rounding of D: r (|s| +
// bound) with r = 2^-24 for f32, 2^-11 for f16 (alpha = 1, beta = 0 here). Underflow (products
// below 2^-126) adds at most 2^-149 per step, far below the rest for these inputs. For uniform
// inputs the input term dominates: about 2^-10 sum |p| on the Ampere tier, an error of about 0.1%
// of sum |p|, and twice that on the Hopper tier.
struct Tf32Bound {
  double d_roundoff;         // unit roundoff of D's type
  double input_u = 0x1p-11;  // relative error of one input: 2^-11 rounded (Ampere), 2^-10 (Hopper)
  double operator()(const std::vector<double>& products) const {
    constexpr double v = 0x1p-23;
    const double u = input_u, input = 2 * u + u * u;
    double s = 0, abs_sum = 0, e = 0;
    for (std::size_t j = 0; j < products.size(); j += 8) {
      double block = 0, block_abs = 0;
      for (std::size_t i = j; i < j + 8 && i < products.size(); ++i) {
        block += products[i];
        block_abs += std::fabs(products[i]);
      }
      e += 8 * v * (std::fabs(s) + input * abs_sum + e + (1 + input) * block_abs);
      s += block;
      abs_sum += block_abs;
    }
    const double bound = input * abs_sum + e;
    return bound + d_roundoff * (std::fabs(s) + bound);
  }
};

// Error bound of one output element under MathSimtF32. Each element is K fused multiply-adds in
// f32, s_j = fl(s_{j-1} + a_j b_j) from s_0 = 0, one rounding each (fma.rn: to nearest, relative
// error at most u = 2^-24), in an order the mainloop fixes (the K residue's k-tile first) that no
// bound below depends on; the zero-filled k past K add exact zeros. Recursive summation with one
// rounding per step errs by at most gamma_K sum |p_j|, gamma_K = K u / (1 - K u) (Higham,
// Accuracy and Stability of Numerical Algorithms, 2nd ed., 3.1 and 4.2, with the products exact
// before their rounding, as an FMA has them). alpha = 1 and beta = 0 leave the sum unchanged; D
// rounds it once more, r (|s| + bound), with r = 0 for f32 D (no conversion), 2^-11 for f16.
// Underflow adds at most 2^-149 per step, and f16's subnormal spacing at most 2^-25 to D, both far
// below gamma_K sum |p| for these inputs. The bound is loose for uniform inputs (errors of
// independent signs grow like sqrt(K) u sum |p|); what it catches is a k read from the wrong place
// or skipped. Inputs rounded to tf32 fail SimtKeepsEveryInputBit instead.
struct SimtBound {
  double d_roundoff;  // unit roundoff of D's type, 0 for f32
  double operator()(const std::vector<double>& products) const {
    constexpr double u = 0x1p-24;
    const double k = double(products.size()), gamma = k * u / (1 - k * u);
    double s = 0, abs_sum = 0;
    for (double p : products) {
      s += p;
      abs_sum += std::fabs(p);
    }
    const double bound = gamma * abs_sum;
    return bound + d_roundoff * (std::fabs(s) + bound);
  }
};

// The exact runs: shapes with partial tiles on every edge, K below the k-tile, both layouts of C
// and D, beta, batches, padded leading dimensions. Small integers (|x| <= 3, exact in tf32) keep
// every product and partial sum an integer below 2^11: exact in f32 and in f16.
template <class Gemm, class ElementD>
void run_exact(std::uint32_t seed) {
  const GemmCase cases[] = {
      {1, 1, 1},
      {127, 257, 131},                                        // partial tiles on every edge
      {128, 128, 64},                                         // whole tiles
      {65, 70, 5},                                            // K below one k-block
      {200, 96, 27},                                          // K below the k-tile, not of 8
      {77, 45, 200, Layout::kColumnMajor, 1.0f, 1.0f, 2, 8},  // beta, batches, padding
      {64, 136, 96, Layout::kRowMajor, 2.0f, -1.0f},          // alpha and a negative beta
  };
  for (const GemmCase& shape : cases)
    for (Layout lcd : {Layout::kRowMajor, Layout::kColumnMajor}) {
      GemmCase gc = shape;
      gc.layout_cd = lcd;
      tptest::run_gemm_case<Gemm, float, ElementD>(gc, Reference::kExactCpu, seed++);
    }
}

// One GEMM, D = A * B (D poisoned first), every element checked against a double reference: the
// inputs are drawn by `draw_a` / `draw_b`; the reference multiplies `ref_input` of each (the
// inputs themselves, or their tf32 rounding), and each element must lie within `bound(products)`
// of it (0: bit for bit).
template <class Gemm, class ElementD, class Bound>
void run_checked(int m, int n, int k, const std::function<float(std::mt19937&)>& draw_a,
                 const std::function<float(std::mt19937&)>& draw_b, float (*ref_input)(float),
                 const Bound& bound, std::uint32_t seed) {
  constexpr Layout LA = Gemm::kLayoutA, LB = Gemm::kLayoutB;
  SCOPED_TRACE(testing::Message() << "f32->" << tptest::type_name<ElementD>() << " A "
                                  << tptest::name_of(LA) << " B " << tptest::name_of(LB) << " " << m
                                  << "x" << n << "x" << k);
  const std::int64_t lda = tptest::round_up(LA == Layout::kRowMajor ? k : m, 4);
  const std::int64_t ldb = tptest::round_up(LB == Layout::kRowMajor ? n : k, 4);
  std::mt19937 rng(seed);
  std::vector<float> a(std::size_t(tptest::span(LA, lda, m, k))),
      b(std::size_t(tptest::span(LB, ldb, k, n)));
  for (auto& x : a) x = draw_a(rng);
  for (auto& x : b) x = draw_b(rng);

  tptest::run_against_double<Gemm, float, ElementD>(m, n, k, a, lda, b, ldb, ref_input, bound);
}

// A's elements are +-2^e (1 + 3 * 2^-12), e in 0..2 (13 significant bits: tf32 rounds them).
float probe(std::mt19937& rng) {
  const float sign = rng() % 2 ? 1.0f : -1.0f;
  return sign * std::ldexp(1.0f + 0x3p-12f, int(rng() % 3));
}
// Integers in [-3, 3], exact in tf32 and f16.
float small_integer(std::mt19937& rng) { return float(int(rng() % 7) - 3); }

float identity(float x) { return x; }
float uniform(std::mt19937& rng) { return std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng); }

}  // namespace

TEST(GemmF32, Tf32ExactOnSmallIntegers) {
  run_exact<Tf32TNAmpere, float>(100);
  run_exact<Tf32NTAmpere, __half>(200);
  run_exact<Tf32NNAmpere, float>(250);
  run_exact<Tf32TTAmpere, float>(260);
}

TEST(GemmF32, Tf32RoundsInputsToNearest) {
  // A's elements are +-2^e (1 + 3 * 2^-12), e in 0..2: the two bits below tf32's last place are
  // 11, so rounding to nearest gives +-2^e (1 + 2^-10) and truncation +-2^e. B's are integers in
  // [-3, 3] (exact in tf32). Every product and partial sum is then an integer times (1 + 2^-10)
  // or an integer, below 2^13 in magnitude for K <= 600: exact in f32, so D must equal the double
  // reference on the tf32-rounded inputs bit for bit, and differs from it by about K / 1024 where
  // inputs were truncated.
  auto exact = [](const std::vector<double>&) { return 0.0; };
  static_assert(0x3p-12f == 3.0f / 4096, "the probe's fraction");
  ASSERT_EQ(round_tf32(1.0f + 0x3p-12f), 1.0f + 0x1p-10f);
  run_checked<Tf32TNAmpere, float>(70, 130, 520, probe, small_integer, round_tf32, exact, 300);
  // The other shared-memory order of A and B, B the probe this time, f16 out: within D's rounding
  // (2^-11 relative), half the relative error truncation leaves (2^-10).
  auto f16_rounding = [](const std::vector<double>& products) {
    double sum = 0;
    for (double p : products) sum += p;
    return 0x1p-11 * std::fabs(sum);
  };
  run_checked<Tf32NTAmpere, __half>(33, 150, 40, small_integer, probe, round_tf32, f16_rounding,
                                    310);
}

TEST(GemmF32, Tf32WithinBoundOnUniformInputs) {
  run_checked<Tf32TNAmpere, float>(131, 257, 300, uniform, uniform, identity, Tf32Bound{0x1p-24},
                                   400);
  run_checked<Tf32NTAmpere, __half>(200, 72, 1000, uniform, uniform, identity, Tf32Bound{0x1p-11},
                                    410);
}

TEST(GemmF32, Tf32TierChoice) {
  // wgmma has no transpose for tf32: TN takes the Hopper tier on an sm_90 GPU in a build for 90a
  // (hopper_tier_expected: the GPU and the build decide, not the library's own answer); NT (both
  // operands copied K-major first) only with a workspace: without one it runs on the Ampere tier,
  // and run_on refuses the Hopper tier naming the workspace.
  static_assert(Tf32TN::kHasHopperTier && Tf32NT::kHasHopperTier && Tf32NT::kCopyA &&
                    Tf32NT::kCopyB && !Tf32TN::kCopyA && !Tf32TN::kCopyB && !Tf32TT::kCopyA &&
                    Tf32TT::kCopyB,
                "tf32 TN runs on the Hopper tier as it is, NT on K-major copies of A and B, TT on "
                "one of B");
  Tf32TN::Arguments args;
  args.m = args.n = args.k = 16;
  tptest::DeviceBuffer<float> a(16 * 16), b(16 * 16), d(16 * 16);
  ASSERT_TRUE(a.ok() && b.ok() && d.ok());
  args.a = a.get();
  args.lda = 16;
  args.b = b.get();
  args.ldb = 16;
  args.d = d.get();
  args.ldd = 16;
  EXPECT_EQ(Tf32TN::tier(args), tptest::hopper_tier_expected() ? tilepipe::GemmTier::kHopper
                                                               : tilepipe::GemmTier::kAmpere);
  Tf32NT::Arguments nt;
  nt.m = nt.n = nt.k = 16;
  tptest::DeviceBuffer<__half> d16(16 * 16);
  ASSERT_TRUE(d16.ok());
  nt.a = a.get();
  nt.lda = 16;
  nt.b = b.get();
  nt.ldb = 16;
  nt.d = d16.get();
  nt.ldd = 16;
  EXPECT_EQ(Tf32NT::tier(nt), tilepipe::GemmTier::kAmpere);
  const tilepipe::Status s = Tf32NT::run_on(tilepipe::GemmTier::kHopper, nt);
  EXPECT_EQ(s.code(), tilepipe::Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("workspace is a null pointer"), std::string::npos) << s.message();
}

TEST(GemmF32, Tf32HopperExactOnSmallIntegers) {
  TP_REQUIRE_HOPPER_TIER(hopper_tier_available());
  // The exact cases (edges in M and N, K below one k8 step, below and not a multiple of the
  // 32-deep slot, beta, batches, padding, both D layouts) on GemmSm90 itself, f32 and f16 out:
  // integers in [-3, 3] have no bits below tf32's, so truncation and rounding agree on them.
  run_exact<Sm90Tf32, float>(1300);
  run_exact<Sm90Tf32ToF16, __half>(1400);
  // Several tiles per persistent block (the ring carries over tiles, clusters of two along M), and
  // K = 0 (D = beta * C, A and B never read).
  tptest::run_gemm_case<Sm90Tf32, float, float>({520, 700, 333, Layout::kRowMajor, 1.0f, 0.5f},
                                                Reference::kExactCpu, 1500);
  tptest::run_gemm_case<Sm90Tf32, float, float>({33, 65, 0, Layout::kRowMajor, 1.0f, 2.0f},
                                                Reference::kExactCpu, 1501);
}

TEST(GemmF32, Tf32GemmMultistageTakesTheHopperTier) {
  TP_REQUIRE_HOPPER_TIER(hopper_tier_available());
  // GemmMultistage's tf32 TN on its own (run, which picks the Hopper tier here) and forced onto it
  // (run_on, which fails rather than fall back): small integers, then uniform inputs within the
  // truncation bound. K = 300 and 1000 are not multiples of the 32-deep slot.
  GemmCase gc{127, 257, 131, Layout::kColumnMajor, 1.0f, 1.0f, /*batch=*/3, /*pad=*/8};
  tptest::run_gemm_case<Tf32TN, float, float>(gc, Reference::kExactCpu, 1600);
  tptest::run_gemm_case<Tf32TNHopper, float, float>(gc, Reference::kExactCpu, 1601);
  run_checked<Tf32TN, float>(131, 257, 300, uniform, uniform, identity, Tf32Bound{0x1p-24, 0x1p-10},
                             1610);
  run_checked<Tf32TNHopper, float>(200, 72, 1000, uniform, uniform, identity,
                                   Tf32Bound{0x1p-24, 0x1p-10}, 1620);
  run_checked<Sm90Tf32ToF16, __half>(129, 300, 517, uniform, uniform, identity,
                                     Tf32Bound{0x1p-11, 0x1p-10}, 1630);
}

TEST(GemmF32, SimtExactOnSmallIntegers) {
  run_exact<SimtTN, float>(500);
  run_exact<SimtNN, float>(600);
  run_exact<SimtNT, __half>(700);
  run_exact<SimtTT, float>(800);
  // Not 16-byte aligned (TN's narrow kernel): pointers one and two floats into their buffers,
  // leading dimensions odd or 2 mod 4, so A and B move in 4- and 8-byte copies.
  const GemmCase unaligned[] = {
      // m, n, k, layout_cd, alpha, beta, batch, pad, broadcast_b, split_k, misalign
      {131, 67, 4099, Layout::kRowMajor, 1.0f, 0.0f, 1, 0, false, 1, 1},
      {257, 129, 65, Layout::kColumnMajor, 1.0f, 0.5f, 2, 0, false, 1, 2},
  };
  std::uint32_t seed = 900;
  for (const GemmCase& gc : unaligned) {
    ASSERT_TRUE(SimtTN::kAnyAlignment);
    tptest::run_gemm_case<SimtTN, float, float>(gc, Reference::kExactCpu, seed++);
  }
}

TEST(GemmF32, SimtMContiguousAOnEveryPath) {
  // A column-major: the accumulators reach the epilogue, split-K's slices in the workspace and
  // stream-K's partials only after the mainloop's finish has put them back in mma.sync's layout;
  // a register left in the mainloop's rows would land two rows off (exact small integers catch
  // any). Edges on every side, K residues, beta, batches, padding, both D layouts.
  static_assert(std::is_same_v<SimtNNSplitK::Kernel, SimtNN::Kernel> &&
                    std::is_same_v<SimtNNStreamK::Kernel, SimtNN::Kernel>,
                "split-K and stream-K add only their own kernels to SimtNN's");
  const GemmCase split_k[] = {
      // m, n, k, layout_cd, alpha, beta, batch, pad, broadcast_b, split_k
      {127, 257, 1031, Layout::kRowMajor, 1.0f, 0.0f, 1, 0, false, 3},
      {65, 70, 300, Layout::kColumnMajor, 1.0f, 0.5f, 2, 8, false, 2},
      {200, 96, 27, Layout::kRowMajor, 2.0f, -1.0f, 1, 0, false,
       4},  // slices shorter than a k-tile
  };
  std::uint32_t seed = 1200;
  for (const GemmCase& gc : split_k)
    tptest::run_gemm_case<SimtNNSplitK, float, float>(gc, Reference::kExactCpu, seed++);
  // Stream-K: whole tiles then shared ones, one tile in many segments, batches.
  const GemmCase stream_k[] = {
      // m, n, k, layout_cd, alpha, beta, batch, pad, broadcast_b, split_k, misalign, stream_k
      {300, 200, 520, Layout::kRowMajor, 1.0f, 0.0f, 1, 0, false, 1, 0, 5},
      {100, 100, 1000, Layout::kColumnMajor, 1.0f, 1.0f, 1, 0, false, 1, 0, 9},
      {257, 129, 333, Layout::kRowMajor, 1.0f, 0.5f, 3, 8, false, 1, 0, 7},
  };
  for (const GemmCase& gc : stream_k)
    tptest::run_gemm_case<SimtNNStreamK, float, float>(gc, Reference::kExactCpu, seed++);
  // 16 x 16 warp tiles: one m16 tile per warp, the smallest the row exchange works on.
  run_exact<SimtNNSmallWarps, float>(1250);
}

TEST(GemmF32, SimtKeepsEveryInputBit) {
  // The probe (13 significant bits, which tf32 would round away) against integers in [-3, 3]:
  // every product is a multiple of 2^-12 below 13 in magnitude, and with K <= 300 every partial
  // sum one below 2^12, so 24 bits hold each exactly: D must equal the double reference on the
  // unrounded inputs bit for bit. A in both shared-memory orders, B in the other operand's.
  auto exact = [](const std::vector<double>&) { return 0.0; };
  run_checked<SimtTN, float>(70, 130, 300, probe, small_integer, identity, exact, 1000);
  run_checked<SimtNN, float>(65, 90, 299, probe, small_integer, identity, exact, 1010);
  run_checked<SimtTT, float>(33, 150, 257, small_integer, probe, identity, exact, 1020);
}

TEST(GemmF32, SimtWithinBoundOnUniformInputs) {
  // Every layout, M, N and K none a multiple of the 128 x 128 x 32 tile.
  run_checked<SimtTN, float>(131, 257, 300, uniform, uniform, identity, SimtBound{0}, 1100);
  run_checked<SimtNN, float>(200, 72, 1000, uniform, uniform, identity, SimtBound{0}, 1110);
  run_checked<SimtNT, __half>(129, 129, 77, uniform, uniform, identity, SimtBound{0x1p-11}, 1120);
  run_checked<SimtTT, float>(255, 130, 517, uniform, uniform, identity, SimtBound{0}, 1130);
  static_assert(!SimtTN::kHasHopperTier && !SimtTT::kHasHopperTier,
                "MathSimtF32 has no Hopper tier");
}

// The K-major copy alone (any GPU): sources of `rows` x K in lines of `ld_src`, edges on both
// extents, batches with padding between them and a shared one (batch stride 0), destinations with
// `ld_dst` above K rounded up to 4, poisoned, between guard bands. Each line of the copy must hold
// the source's column, then zeros up to K rounded up to 4, and nothing else may change.
TEST(GemmF32, Tf32TransposeToKMajor) {
  struct Case {
    int rows, k;
    std::int64_t ld_src;
    int batches;
    std::int64_t batch_stride_src, ld_dst;
  };
  const Case cases[] = {
      {1, 1, 4, 1, 0, 4},
      {70, 37, 72, 3, 72 * 37 + 8, 40},  // partial tiles both ways, K not a multiple of 4
      {33, 64, 36, 1, 0, 72},            // ld_dst beyond K: left as it was
      {128, 96, 128, 2, 128 * 96, 96},   // whole tiles
      {5, 130, 8, 4, 0, 132},            // one source for every batch
      {67, 5, 68, 2, 68 * 5, 8},         // K below one chunk's lines
  };
  constexpr std::size_t kGuard = 64;  // floats on each side of the destination
  std::mt19937 rng(1900);
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << c.rows << " rows x K " << c.k << ", ld_src " << c.ld_src
                                    << ", " << c.batches << " batches, ld_dst " << c.ld_dst);
    const int src_batches = c.batch_stride_src == 0 ? 1 : c.batches;
    const std::int64_t src_span =
        (c.k - 1) * c.ld_src + c.rows + (src_batches - 1) * c.batch_stride_src;
    const std::int64_t dst_stride = c.rows * c.ld_dst;
    const std::int64_t dst_span = c.batches * dst_stride;
    std::vector<float> src(std::size_t(tptest::round_up(src_span, 4)));
    for (auto& x : src) x = uniform(rng);
    tptest::DeviceBuffer<float> d_src(src.size()), d_dst(std::size_t(dst_span) + 2 * kGuard);
    ASSERT_TRUE(d_src.ok() && d_dst.ok());
    TP_CUDA_ASSERT(d_src.upload(src));
    TP_CUDA_ASSERT(d_dst.poison(0xFF));
    const tilepipe::KMajorTransposeParams p{
        d_src.get(), c.ld_src, c.batch_stride_src, d_dst.get() + kGuard, c.ld_dst, dst_stride,
        c.rows,      c.k};
    const tilepipe::Status s = tilepipe::detail::transpose_to_k_major(p, c.batches, nullptr);
    ASSERT_TRUE(s.ok()) << s.message();
    TP_CUDA_ASSERT_LAUNCH();
    std::vector<float> dst;
    TP_CUDA_ASSERT(d_dst.download(dst));
    const std::int64_t k4 = tptest::round_up(c.k, 4);
    long long bad = 0;
    auto poisoned = [](float x) {
      std::uint32_t bits;
      std::memcpy(&bits, &x, 4);
      return bits == 0xFFFFFFFFu;
    };
    for (std::size_t i = 0; i < kGuard; ++i)
      bad += !poisoned(dst[i]) + !poisoned(dst[dst.size() - 1 - i]);
    EXPECT_EQ(bad, 0) << "guard elements written";
    for (int b = 0; b < c.batches; ++b)
      for (int r = 0; r < c.rows; ++r)
        for (std::int64_t kk = 0; kk < c.ld_dst; ++kk) {
          const float got = dst[kGuard + b * dst_stride + r * c.ld_dst + kk];
          const std::int64_t from =
              (c.batch_stride_src == 0 ? 0 : b * c.batch_stride_src) + kk * c.ld_src + r;
          const bool ok = kk < c.k  ? std::memcmp(&got, &src[std::size_t(from)], 4) == 0
                          : kk < k4 ? got == 0.0f
                                    : poisoned(got);
          if (!ok && ++bad <= 8)
            ADD_FAILURE() << "batch " << b << ", row " << r << ", k " << kk << ": " << got;
        }
    EXPECT_EQ(bad, 0);
  }
  // Misaligned leading dimensions are refused before any launch.
  const tilepipe::KMajorTransposeParams bad_ld{nullptr, 70, 0, nullptr, 8, 0, 70, 5};
  EXPECT_EQ(tilepipe::detail::transpose_to_k_major(bad_ld, 1, nullptr).code(),
            tilepipe::Status::Code::kInvalidArgument);
  // So are more batches than the grid's y extent (nothing is dereferenced before the check).
  const tilepipe::KMajorTransposeParams many{nullptr, 8, 0, nullptr, 8, 0, 8, 8};
  EXPECT_EQ(tilepipe::detail::transpose_to_k_major(many, 70000, nullptr).code(),
            tilepipe::Status::Code::kInvalidArgument);
}

TEST(GemmF32, Tf32NNWorkspace) {
  // Without a workspace tf32 NN runs on the Ampere tier (checked exactly), and run_on refuses
  // the Hopper tier naming the workspace; with one it takes the Hopper tier on an sm_90 GPU in a
  // build for 90a (hopper_tier_expected); a workspace too small is refused on every device.
  static_assert(Tf32NN::kHasHopperTier && Tf32NN::kCopyA && !Tf32NN::kCopyB);
  Tf32NN::Arguments args;
  args.m = args.n = args.k = 16;
  tptest::DeviceBuffer<float> a(16 * 16), b(16 * 16), d(16 * 16), ws(16 * 16);
  ASSERT_TRUE(a.ok() && b.ok() && d.ok() && ws.ok());
  args.a = a.get();
  args.lda = 16;
  args.b = b.get();
  args.ldb = 16;
  args.d = d.get();
  args.ldd = 16;
  EXPECT_EQ(Tf32NN::workspace_size(args), std::size_t(16 * 16 * 4));
  EXPECT_EQ(Tf32NN::tier(args), tilepipe::GemmTier::kAmpere);
  tilepipe::Status s = Tf32NN::run_on(tilepipe::GemmTier::kHopper, args);
  EXPECT_EQ(s.code(), tilepipe::Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("workspace is a null pointer"), std::string::npos) << s.message();
  args.workspace = ws.get();
  args.workspace_bytes = ws.bytes();
  EXPECT_EQ(Tf32NN::tier(args), tptest::hopper_tier_expected() ? tilepipe::GemmTier::kHopper
                                                               : tilepipe::GemmTier::kAmpere);
  args.workspace_bytes = ws.bytes() - 4;
  s = Tf32NN::run(args);
  EXPECT_EQ(s.code(), tilepipe::Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("workspace_bytes = 1020 is less than the 1024 bytes"),
            std::string::npos)
      << s.message();
  // The fallback, on every device: the harness gives a GEMM the workspace its workspace_size
  // asks for, so a GEMM that asks for none runs NN with a null workspace, on the Ampere tier.
  struct NoWorkspace : Tf32NN {
    static std::size_t workspace_size(const Arguments&) { return 0; }
  };
  run_exact<NoWorkspace, float>(1850);
}

TEST(GemmF32, Tf32NNHopperExactOnSmallIntegers) {
  TP_REQUIRE_HOPPER_TIER(hopper_tier_available());
  // The exact cases on the Hopper tier through A's K-major copy (NN, f32 out) and through both
  // copies (NT, f16 out): edges, K below the k-block and the slot, beta, batches with padded
  // leading dimensions (lda > M, ldb > N), both D layouts; the workspace between guard bands.
  run_exact<Tf32NNHopper, float>(1700);
  run_exact<Tf32NTHopper, __half>(1710);
  // B shared by every batch (one copy of it for NT), several tiles per persistent block, K = 0.
  tptest::run_gemm_case<Tf32NTHopper, float, __half>(
      {130, 260, 70, Layout::kRowMajor, 1.0f, 0.0f, 3, 8, /*broadcast_b=*/true},
      Reference::kExactCpu, 1720);
  tptest::run_gemm_case<Tf32NNHopper, float, float>({520, 700, 333, Layout::kRowMajor, 1.0f, 0.5f},
                                                    Reference::kExactCpu, 1730);
  tptest::run_gemm_case<Tf32NN, float, float>({33, 65, 0, Layout::kRowMajor, 1.0f, 2.0f},
                                              Reference::kExactCpu, 1740);
}

TEST(GemmF32, Tf32NNHopperWithinBoundOnUniformInputs) {
  TP_REQUIRE_HOPPER_TIER(hopper_tier_available());
  // Uniform inputs within the Hopper tier's bound (inputs not rounded: 2^-10), through run (which
  // takes the Hopper tier here, given the workspace) and run_on; M, N and K none a multiple of
  // the tile or the slot.
  run_checked<Tf32NN, float>(131, 257, 300, uniform, uniform, identity, Tf32Bound{0x1p-24, 0x1p-10},
                             1750);
  run_checked<Tf32NNHopper, float>(200, 72, 1000, uniform, uniform, identity,
                                   Tf32Bound{0x1p-24, 0x1p-10}, 1760);
  run_checked<Tf32NTHopper, __half>(129, 300, 517, uniform, uniform, identity,
                                    Tf32Bound{0x1p-11, 0x1p-10}, 1770);
}

TEST(GemmF32, Tf32TTHopper) {
  TP_REQUIRE_HOPPER_TIER(hopper_tier_available());
  // A and B row-major: the Hopper tier copies B alone K-major (to the workspace's start) and runs
  // TN's GemmSm90 on A as it is. The exact cases (edges, K below the k-block and the slot, beta,
  // batches with padded leading dimensions, both D layouts; the workspace between guard bands),
  // B shared by every batch (one copy of it), then uniform inputs within the Hopper tier's bound
  // through run (which takes the Hopper tier here, given the workspace) and run_on; M, N and K
  // none a multiple of the tile or the slot.
  run_exact<Tf32TTHopper, float>(1800);
  tptest::run_gemm_case<Tf32TTHopper, float, float>(
      {131, 259, 77, Layout::kColumnMajor, 1.0f, 0.5f, 3, 8, /*broadcast_b=*/true},
      Reference::kExactCpu, 1810);
  run_checked<Tf32TT, float>(257, 131, 333, uniform, uniform, identity, Tf32Bound{0x1p-24, 0x1p-10},
                             1820);
  run_checked<Tf32TTHopper, float>(67, 300, 1001, uniform, uniform, identity,
                                   Tf32Bound{0x1p-24, 0x1p-10}, 1830);
}
