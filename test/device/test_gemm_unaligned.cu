// GemmMultistage and GemmAuto on arguments that are not 16-byte aligned: K = 4099 with leading
// dimensions that fit the matrices exactly (odd), pointers one element past their allocation's
// start, both A/B layout pairs that differ in which dimension is contiguous, and 4- and 8-byte
// alignment (so that the narrow kernel's 4- and 8-byte cp.async run, not only its element
// copies). Exact against the CPU (small integers), guard elements around D, C poisoned when
// beta == 0. These run the default GEMMs' narrow kernels (AnyAlignment), on every GPU: the Hopper
// tier refuses such arguments (tier() says Ampere, checked here).

#include <gtest/gtest.h>

#include <tilepipe/gemm/gemm_heuristic.cuh>

#include "gemm_test_util.cuh"

namespace {

using tilepipe::Layout;
using tptest::GemmCase;
using tptest::Reference;

using DefaultTN = tilepipe::GemmMultistage<__half, __half, Layout::kRowMajor, Layout::kColumnMajor>;
using DefaultNT =
    tilepipe::GemmMultistage<__nv_bfloat16, float, Layout::kColumnMajor, Layout::kRowMajor, 3>;

template <class Gemm, class AB, class D>
void run_cases(std::uint32_t seed) {
  const GemmCase cases[] = {
      // m, n, k, layout_cd, alpha, beta, batch, pad, broadcast_b, split_k, misalign
      {131, 67, 4099, Layout::kRowMajor, 1.0f, 0.0f, 1, 0, false, 1, 1},
      {131, 67, 4099, Layout::kColumnMajor, 1.0f, 1.0f, 1, 0, false, 1, 1},
      {300, 200, 1, Layout::kRowMajor, 2.0f, -1.0f, 1, 0, false, 1, 1},
      {257, 129, 65, Layout::kColumnMajor, 1.0f, 0.5f, 2, 0, false, 1, 2},  // 4-byte aligned
      {259, 133, 100, Layout::kRowMajor, 1.0f, 0.0f, 1, 0, false, 1, 4},    // 8-byte aligned
      {64, 64, 37, Layout::kRowMajor, 1.0f, 1.0f, 3, 0, true, 4, 1},        // split_k ignored
  };
  for (const GemmCase& gc : cases)
    tptest::run_gemm_case<Gemm, AB, D>(gc, Reference::kExactCpu, seed++);
}

}  // namespace

TEST(GemmUnaligned, DefaultGemmRowColF16) { run_cases<DefaultTN, __half, __half>(1); }
TEST(GemmUnaligned, DefaultGemmColRowBf16ToF32) { run_cases<DefaultNT, __nv_bfloat16, float>(20); }

// GemmAuto sends every argument set that is not 16-byte aligned to its Medium tile's narrow
// kernel (no split-K), whatever its heuristic would pick for the shape.
TEST(GemmUnaligned, GemmAutoRunsMediumNarrow) {
  using Auto = tilepipe::GemmAuto<__half, __half, Layout::kRowMajor, Layout::kColumnMajor>;
  typename Auto::Arguments a;
  a.m = 16;
  a.n = 4096;
  a.k = 4099;  // the heuristic's Small tile with split-K, were it aligned
  a.a = reinterpret_cast<const __half*>(0x100002);
  a.lda = 4099;
  a.b = reinterpret_cast<const __half*>(0x8000000);
  a.ldb = 4099;
  a.d = reinterpret_cast<__half*>(0x10000000);
  a.ldd = 4096;
  EXPECT_EQ(Auto::select(a, 132).tile, tilepipe::GemmAutoConfig::Tile::kMedium);
  EXPECT_EQ(Auto::select(a, 132).split_k, 1);
  EXPECT_EQ(Auto::tier(a), tilepipe::GemmTier::kAmpere);
  tptest::run_gemm_case<Auto, __half, __half>(
      {16, 300, 4099, Layout::kRowMajor, 1.0f, 0.0f, 1, 0, false, 1, 1}, Reference::kExactCpu, 40);
}

// The Hopper tier needs 16-byte alignment: tier() says Ampere for the rest.
TEST(GemmUnaligned, TierIsAmpere) {
  DefaultTN::Arguments a;
  a.m = 256;
  a.n = 256;
  a.k = 4099;
  a.a = reinterpret_cast<const __half*>(0x100000);
  a.lda = 4099;
  a.b = reinterpret_cast<const __half*>(0x1000000);
  a.ldb = 4104;
  a.d = reinterpret_cast<__half*>(0x2000000);
  a.ldd = 256;
  EXPECT_FALSE(DefaultTN::vector_aligned(a));
  EXPECT_EQ(DefaultTN::tier(a), tilepipe::GemmTier::kAmpere);
}
