// GemmAuto (gemm_heuristic.cuh) on the device: the configuration it chooses for small, skinny,
// degenerate and large shapes computes the right D (every element, guard bands around D and the
// split-K workspace), and on a GPU like the benchmark's the choices split K where expected.

#include <gtest/gtest.h>

#include <tilepipe/gemm/gemm_heuristic.cuh>

#include "gemm_test_util.cuh"

namespace {

using tilepipe::GemmAutoConfig;
using tilepipe::Layout;
using tptest::GemmCase;
using tptest::Reference;

using AutoTN = tilepipe::GemmAuto<__half, __half, Layout::kRowMajor, Layout::kColumnMajor>;
using AutoNT = tilepipe::GemmAuto<__nv_bfloat16, float, Layout::kColumnMajor, Layout::kRowMajor>;

int device_sms() {
  int sms = 0;
  EXPECT_TRUE(AutoTN::current_sm_count(&sms).ok());
  return sms;
}

template <class Auto, class AB, class D>
void run_case(const GemmCase& gc, Reference ref, std::uint32_t seed) {
  typename Auto::Arguments args;
  args.m = gc.m;
  args.n = gc.n;
  args.k = gc.k;
  args.batch_count = gc.batch;
  const GemmAutoConfig chosen = Auto::select(args, device_sms());
  SCOPED_TRACE("GemmAuto chose " + chosen.name() +
               (chosen.tile == GemmAutoConfig::Tile::kLarge && Auto::Hopper::available()
                    ? " (on the Hopper tier)"
                    : ""));
  tptest::run_gemm_case<Auto, AB, D>(gc, ref, seed);
}

}  // namespace

// Named *Large* so that gpu_check's sanitizer runs skip it (as the other cuBLAS-checked tests):
// for these shapes cuBLAS itself picks kernels (nvjet, cublasLt's splitKreduce) that racecheck
// and initcheck report. GemmAuto's own kernels, split-K included, run under the sanitizers in
// ExactSmallIntegers and in the randomized test.
TEST(GemmAuto, LargeSkinnyShapesAgainstCublas) {
  const GemmCase cases[] = {
      {16, 4096, 4096},   {128, 4096, 4096}, {512, 512, 512},   {1024, 1024, 1024},
      {1, 4096, 4096},    {16, 14336, 4096}, {2048, 2048, 512},  // the Large tile
      {1000, 3000, 4104},  // the Large tile, edge tiles on both sides, K's residue of 8
  };
  std::uint32_t seed = 100;
  for (const GemmCase& gc : cases) run_case<AutoTN, __half, __half>(gc, Reference::kCublas, seed++);
}

TEST(GemmAuto, ExactSmallIntegers) {
  // alpha, beta, column-major D, batches and padding through whichever configuration is chosen.
  GemmCase cases[] = {
      {1, 1, 1},
      {16, 64, 1},                                          // K = 1
      {37, 300, 0, Layout::kRowMajor, 2.0f, 0.5f},          // K = 0: D = beta * C
      {100, 200, 3000, Layout::kColumnMajor, 0.5f, -1.0f},  // split-K with beta, column-major D
      {64, 96, 2000, Layout::kRowMajor, 1.0f, 1.0f, 3},     // batched split-K
      {300, 260, 1500, Layout::kColumnMajor, 1.0f, 0.0f, 1, 8},
  };
  std::uint32_t seed = 200;
  for (const GemmCase& gc : cases)
    run_case<AutoTN, __half, __half>(gc, Reference::kExactCpu, seed++);
  for (const GemmCase& gc : cases)
    run_case<AutoNT, __nv_bfloat16, float>(gc, Reference::kExactCpu, seed++);
}

// What run() does on this device: the benchmark's skinny shapes take the Hopper tier's 64 x 128
// tile with split-K on an sm_90 GPU, and split K on the Ampere tier elsewhere;
// either needs a workspace, and one that is missing or too small is refused, naming what is
// needed; large ones take the Large tile (the rule itself is host-tested in
// test/host/test_gemm_heuristic.cu).
TEST(GemmAuto, ChoicesOnThisDevice) {
  // By the GPU and the build (not the library's own answer), so that a Hopper tier that should
  // run and does not fails the expectations below.
  const bool hopper = tptest::hopper_tier_expected();
  EXPECT_EQ(hopper, AutoTN::Hopper::available());
  AutoTN::Arguments a;
  tptest::DeviceBuffer<__half> A(16 * 14336), B(4096 * 14336), D(16 * 4096);
  ASSERT_TRUE(A.ok() && B.ok() && D.ok());
  a.m = 16;
  a.n = 4096;
  a.k = 14336;
  a.a = A.get();
  a.lda = 14336;
  a.b = B.get();
  a.ldb = 14336;
  a.d = D.get();
  a.ldd = 4096;
  const GemmAutoConfig skinny = AutoTN::select(a, device_sms());
  if (hopper) {
    EXPECT_EQ(skinny.tile, GemmAutoConfig::Tile::kHopper64x128) << skinny.name();
    EXPECT_GT(skinny.split_k, 1) << skinny.name();
    EXPECT_EQ(AutoTN::tier(a), tilepipe::GemmTier::kHopper);
  } else {
    EXPECT_EQ(skinny.tile, GemmAutoConfig::Tile::kSmall);
    EXPECT_GT(skinny.split_k, 1) << skinny.name();
    EXPECT_EQ(AutoTN::workspace_size(a), std::size_t(skinny.split_k) * 16 * 4096 * 4);
    EXPECT_EQ(AutoTN::tier(a), tilepipe::GemmTier::kAmpere);
  }
  EXPECT_GT(AutoTN::workspace_size(a), 0u);
  for (std::size_t bytes : {std::size_t(0), AutoTN::workspace_size(a) - 16}) {
    tptest::DeviceBuffer<unsigned char> ws(bytes > 0 ? bytes : 1);
    a.workspace = bytes > 0 ? ws.get() : nullptr;
    a.workspace_bytes = bytes;
    const tilepipe::Status s = AutoTN::run(a);
    EXPECT_EQ(s.code(), tilepipe::Status::Code::kInvalidArgument) << bytes;
    EXPECT_NE(s.message().find(std::to_string(AutoTN::workspace_size(a))), std::string::npos)
        << s.message();
  }
  a.workspace = nullptr;
  a.workspace_bytes = 0;
  // A large problem takes the Large tile, on the Hopper tier where the device runs it.
  constexpr std::size_t kLarge = 8192;
  tptest::DeviceBuffer<__half> A2(kLarge * kLarge), B2(kLarge * kLarge), D2(kLarge * kLarge);
  ASSERT_TRUE(A2.ok() && B2.ok() && D2.ok());
  a.m = a.n = a.k = int(kLarge);
  a.a = A2.get();
  a.lda = kLarge;
  a.b = B2.get();
  a.ldb = kLarge;
  a.d = D2.get();
  a.ldd = kLarge;
  EXPECT_EQ(AutoTN::select(a, device_sms()).tile, GemmAutoConfig::Tile::kLarge);
  EXPECT_EQ(AutoTN::workspace_size(a), 0u);
  EXPECT_EQ(AutoTN::tier(a), hopper ? tilepipe::GemmTier::kHopper : tilepipe::GemmTier::kAmpere);
}
