// Device tests of GemmMixedInput (W8A16): f16 / bf16 A times int8 (or fp8 e4m3) B with per-group
// scales. Every element of D is checked against a CPU reference in double of A * (q * scale),
// within a bound derived from the arithmetic: the dequantized b rounds once to A's type (f16x2 /
// bf16 multiply), the products of two 16-bit values are exact in f32, and the tensor cores and
// split-K sum them in f32. D sits between poisoned guard bands, with poisoned gaps between its
// rows, and split-K's workspace between guard bands of its own: nothing outside D (and the
// workspace) may be written, and the cluster reduction writes no byte of the workspace either.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <tilepipe/gemm/gemm_mixed_input.cuh>

#include "device_test_util.cuh"

namespace {

using tilepipe::Layout;
using tilepipe::SplitKReduction;

struct W8A16Case {
  int m, n, k;
  int group;        // 64, 128, or k (one scale per column)
  int split_k = 1;  // 0: GemmMixedInput::split_k_for's choice for this GPU
  Layout layout_cd = Layout::kRowMajor;
  float alpha = 1.0f, beta = 0.0f;
  int pad = 0;  // extra elements in every leading dimension (lda and ldd: a multiple of 8)
  SplitKReduction reduction = SplitKReduction::kAuto;
};

std::string describe(const W8A16Case& c) {
  return std::to_string(c.m) + " x " + std::to_string(c.n) + " x " + std::to_string(c.k) +
         ", group " + std::to_string(c.group) + ", split_k " + std::to_string(c.split_k) + ", D " +
         (c.layout_cd == Layout::kRowMajor ? "row" : "col") + "-major, alpha " +
         std::to_string(c.alpha) + ", beta " + std::to_string(c.beta) + ", pad " +
         std::to_string(c.pad) + ", " + tilepipe::to_string(c.reduction);
}

// Writes the architecture of the code this program runs on the current GPU (__CUDA_ARCH__ / 10:
// 90 for sm_90 and sm_90a code, 80 for sm_80 code or PTX, whatever the GPU is).
__global__ void code_arch_kernel(int* arch) {
#if defined(__CUDA_ARCH__)
  *arch = __CUDA_ARCH__ / 10;
#endif
}

// Why the cluster reduction need not run here, or "" where it must: an sm_90 or newer GPU that runs
// this program's code for sm_90 or newer (the code of a kernel of its own, not the library's own
// query, so that a library that wrongly finds no cluster code fails the tests instead of skipping
// them). Fails the current test where the GPU cannot be queried or that kernel cannot run.
void why_no_clusters(std::string* why) {
  const int cc = tptest::gpu_compute_capability();
  ASSERT_GT(cc, 0) << "the current GPU's compute capability could not be read";
  if (cc < 90) {
    *why = "thread-block clusters need an sm_90 or newer GPU; this is sm_" + std::to_string(cc);
    return;
  }
  tptest::DeviceBuffer<int> arch(1);
  ASSERT_TRUE(arch.ok());
  TP_CUDA_ASSERT(arch.poison(0));
  code_arch_kernel<<<1, 1>>>(arch.get());
  TP_CUDA_ASSERT_LAUNCH();
  std::vector<int> ran;
  TP_CUDA_ASSERT(arch.download(ran));
  *why = ran[0] >= 90 ? ""
                      : "this sm_" + std::to_string(cc) + " GPU runs this program's sm_" +
                            std::to_string(ran[0]) +
                            " code: the build has no code for sm_90 or newer that it runs "
                            "(CMAKE_CUDA_ARCHITECTURES)";
}

// Skips the current test where the cluster reduction need not run (why_no_clusters); where it must,
// the test fails if it cannot.
#define REQUIRE_CLUSTERS()                                                       \
  do {                                                                           \
    std::string why_;                                                            \
    ASSERT_NO_FATAL_FAILURE(why_no_clusters(&why_));                             \
    if (!why_.empty()) GTEST_SKIP() << "split_k_reduction = kCluster: " << why_; \
  } while (0)

template <class T>
double to_double(T x) {
  if constexpr (std::is_same_v<T, float>) return x;
  else if constexpr (std::is_same_v<T, __half>) return __half2float(x);
  else return __bfloat162float(x);
}
template <class T>
T from_double(double x) {
  if constexpr (std::is_same_v<T, float>) return static_cast<float>(x);
  else if constexpr (std::is_same_v<T, __half>) return __float2half_rn(static_cast<float>(x));
  else return __float2bfloat16_rn(static_cast<float>(x));
}
// Half the spacing of a type's subnormals (0 for the types whose dequantized b cannot be one).
template <class T>
double subnormal_roundoff() {
  return std::is_same_v<T, __half> ? std::ldexp(1.0, -25) : 0.0;
}

// The value of a stored element of B, and a random one: int8 over its whole range, e4m3 over
// every bit pattern but its two NaNs.
double value_of(std::int8_t q) { return q; }
double value_of(__nv_fp8_e4m3 q) { return static_cast<float>(q); }
template <class ElementB>
ElementB random_b(std::mt19937& rng) {
  if constexpr (std::is_same_v<ElementB, std::int8_t>) {
    return static_cast<std::int8_t>(std::uniform_int_distribution<int>(-128, 127)(rng));
  } else {
    ElementB e;
    do e.__x = static_cast<__nv_fp8_storage_t>(rng() & 0xFF);
    while ((e.__x & 0x7F) == 0x7F);
    return e;
  }
}
template <class ElementB>
ElementB b_from_bits(unsigned char bits) {
  ElementB e;
  std::memcpy(&e, &bits, 1);
  return e;
}

// Unit roundoff of a type: half the distance from 1 to the next value.
template <class T>
double unit_roundoff() {
  if constexpr (std::is_same_v<T, float>) return std::ldexp(1.0, -24);
  else if constexpr (std::is_same_v<T, __half>) return std::ldexp(1.0, -11);
  else return std::ldexp(1.0, -8);
}

// Runs case `c` on random inputs drawn from `seed` and checks every element of D, the guard bands
// and the workspace. `d_out`, if given, receives the D buffer (guard bands included).
template <class Gemm, class ElementA, class ElementD, class ElementB = std::int8_t>
void run_case(const W8A16Case& c, std::uint32_t seed, std::vector<ElementD>* d_out = nullptr) {
  SCOPED_TRACE(describe(c));
  const int m = c.m, n = c.n, k = c.k;
  const std::int64_t lda = (k + 7) / 8 * 8 + c.pad;
  const std::int64_t ldb = (k + 15) / 16 * 16;
  const bool row_d = c.layout_cd == Layout::kRowMajor;
  const std::int64_t ldd = (row_d ? (n + 7) / 8 * 8 : (m + 7) / 8 * 8) + c.pad;
  const std::int64_t span_d = ((row_d ? m : n) - 1) * ldd + (row_d ? n : m);
  const int groups = (k + c.group - 1) / c.group;

  // Random inputs: A in [-1, 1] (one element forced to 1, so never all zero), B over the whole
  // int8 range with -128 and 127 both present (e4m3: every value, -448 and 448 present), scales of
  // either sign with magnitudes in [2^-8, 2^-5] (for int8, q * scale is then a normal number of
  // A's type for every q != 0).
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::vector<ElementA> a(static_cast<std::size_t>(m) * lda, from_double<ElementA>(0.0));
  for (int i = 0; i < m; ++i)
    for (int kk = 0; kk < k; ++kk) a[i * lda + kk] = from_double<ElementA>(unit(rng));
  a[0] = from_double<ElementA>(1.0);
  std::vector<ElementB> b(static_cast<std::size_t>(n) * ldb, b_from_bits<ElementB>(0));
  for (int j = 0; j < n; ++j)
    for (int kk = 0; kk < k; ++kk) b[j * ldb + kk] = random_b<ElementB>(rng);
  // The extremes: int8 -128 and 127; e4m3 -448 and 448.
  const bool int8 = std::is_same_v<ElementB, std::int8_t>;
  b[0] = b_from_bits<ElementB>(int8 ? 0x80 : 0xFE);
  b[static_cast<std::size_t>(n - 1) * ldb + k - 1] = b_from_bits<ElementB>(int8 ? 0x7F : 0x7E);
  std::vector<ElementA> scale(static_cast<std::size_t>(groups) * n);
  for (auto& s : scale)
    s = from_double<ElementA>(
        std::ldexp(1.0 + std::fabs(unit(rng)), -8 + static_cast<int>(rng() % 3)) *
        (rng() % 2 ? 1 : -1));
  std::vector<ElementD> cm(static_cast<std::size_t>(span_d), from_double<ElementD>(0.0));
  for (auto& x : cm) x = from_double<ElementD>(unit(rng));

  // D between guard bands, all poisoned (0xFF bytes: NaN in every float type).
  constexpr std::int64_t kGuard = 64;  // elements, so that D stays 16-byte aligned
  tptest::DeviceBuffer<ElementA> d_a(a.size()), d_scale(scale.size());
  tptest::DeviceBuffer<ElementB> d_b(b.size());
  tptest::DeviceBuffer<ElementD> d_c(cm.size()), d_d(static_cast<std::size_t>(span_d + 2 * kGuard));
  ASSERT_TRUE(d_a.ok() && d_b.ok() && d_scale.ok() && d_c.ok() && d_d.ok());
  TP_CUDA_ASSERT(d_a.upload(a));
  TP_CUDA_ASSERT(d_b.upload(b));
  TP_CUDA_ASSERT(d_scale.upload(scale));
  TP_CUDA_ASSERT(d_c.upload(cm));
  TP_CUDA_ASSERT(d_d.poison(0xFF));

  typename Gemm::Arguments args;
  args.m = m;
  args.n = n;
  args.k = k;
  args.a = d_a.get();
  args.lda = lda;
  args.b = d_b.get();
  args.ldb = ldb;
  args.scale = d_scale.get();
  args.group = c.group;
  args.c = c.beta != 0.0f ? d_c.get() : nullptr;
  args.ldc = ldd;
  args.d = d_d.get() + kGuard;
  args.ldd = ldd;
  args.alpha = c.alpha;
  args.beta = c.beta;
  args.layout_cd = c.layout_cd;
  args.split_k = c.split_k;
  args.split_k_reduction = c.reduction;
  if (c.split_k == 0) {
    int device = 0, sm_count = 0;
    TP_CUDA_ASSERT(cudaGetDevice(&device));
    TP_CUDA_ASSERT(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
    args.split_k = Gemm::split_k_for(args, sm_count);
  }
  const std::size_t ws_bytes = Gemm::workspace_size(args);
  constexpr std::size_t kWsGuard = 256;  // bytes on either side of the workspace
  tptest::DeviceBuffer<unsigned char> d_ws(ws_bytes + 2 * kWsGuard);
  ASSERT_TRUE(d_ws.ok());
  TP_CUDA_ASSERT(d_ws.poison(0xFF));
  if (ws_bytes > 0) {
    args.workspace = d_ws.get() + kWsGuard;
    args.workspace_bytes = ws_bytes;
  }
  EXPECT_EQ(Gemm::split_k_slices(args).count > 1 && c.reduction != SplitKReduction::kCluster,
            ws_bytes > 0);
  // The reduction run takes: kAuto resolved, kAuto itself with one slice.
  SplitKReduction taken = SplitKReduction::kAuto;
  const tilepipe::Status chosen = Gemm::split_k_reduction(args, &taken);
  ASSERT_TRUE(chosen.ok()) << chosen.what();
  if (c.reduction != SplitKReduction::kAuto && Gemm::split_k_slices(args).count > 1)
    EXPECT_EQ(taken, c.reduction);

  const tilepipe::Status s = Gemm::run(args);
  ASSERT_TRUE(s.ok()) << s.what();
  TP_CUDA_ASSERT_LAUNCH();

  std::vector<ElementD> d;
  TP_CUDA_ASSERT(d_d.download(d));
  std::vector<unsigned char> ws;
  TP_CUDA_ASSERT(d_ws.download(ws));

  // The bound: |alpha| * sum |a q s| * (u_A for the dequantized b + f32 summation of K products
  // and the slices, with a factor 2 of slack for the tensor cores' accumulation), + the f32
  // epilogue, + the rounding of D.
  const double u_a = unit_roundoff<ElementA>(), u_d = unit_roundoff<ElementD>();
  const int slices = Gemm::split_k_slices(args).count;
  const double sum_rel = u_a + 2.0 * (k + slices + 2) * std::ldexp(1.0, -24);
  const double u_sub = subnormal_roundoff<ElementA>();  // a dequantized b below A's normal range
  int bad = 0;
  std::vector<bool> inside(d.size(), false);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double ref = 0.0, mag = 0.0, mag_a = 0.0;
      for (int kk = 0; kk < k; ++kk) {
        const double bq = value_of(b[j * ldb + kk]) * to_double(scale[(kk / c.group) * n + j]);
        const double p = to_double(a[i * lda + kk]) * bq;
        ref += p;
        mag += std::fabs(p);
        mag_a += std::fabs(to_double(a[i * lda + kk]));
      }
      const std::int64_t off = row_d ? i * ldd + j : j * ldd + i;
      const double cij = c.beta != 0.0f ? to_double(cm[off]) : 0.0;
      const double want = c.alpha * ref + c.beta * cij;
      const double tol = std::fabs(c.alpha) * (mag * sum_rel + mag_a * u_sub) +
                         std::fabs(c.beta * cij) * std::ldexp(1.0, -22) + u_d * std::fabs(want) +
                         1e-30;
      const double got = to_double(d[kGuard + off]);
      inside[kGuard + off] = true;
      if (!(std::fabs(got - want) <= tol) && ++bad <= 8)
        ADD_FAILURE() << "D(" << i << ", " << j << ") = " << got << ", expected " << want << " +- "
                      << tol;
    }
  }
  EXPECT_EQ(bad, 0) << bad << " elements of D out of bounds";

  // Guard bands and the gaps between D's rows (or columns) keep their poison.
  int clobbered = 0;
  for (std::size_t i = 0; i < d.size(); ++i) {
    if (inside[i]) continue;
    unsigned char bytes[sizeof(ElementD)];
    std::memcpy(bytes, &d[i], sizeof(ElementD));
    for (unsigned char x : bytes)
      if (x != 0xFF && ++clobbered <= 8)
        ADD_FAILURE() << "element " << i << " of the D buffer outside D was written";
  }
  for (std::size_t i = 0; i < kWsGuard; ++i)
    if ((ws[i] != 0xFF || ws[kWsGuard + ws_bytes + i] != 0xFF) && ++clobbered <= 8)
      ADD_FAILURE() << "byte " << i << " of a guard band around the split-K workspace was written";
  // The cluster reduction (kAuto may take it with a workspace given) touches no workspace.
  if (taken == SplitKReduction::kCluster)
    for (std::size_t i = 0; i < ws_bytes; ++i)
      if (ws[kWsGuard + i] != 0xFF && ++clobbered <= 8)
        ADD_FAILURE() << "byte " << i << " of the workspace was written by the cluster reduction";
  EXPECT_EQ(clobbered, 0);
  if (d_out != nullptr) *d_out = std::move(d);
}

using GemmF16 = tilepipe::GemmMixedInput<__half, std::int8_t, __half>;
using GemmBF16 = tilepipe::GemmMixedInput<__nv_bfloat16, std::int8_t, __nv_bfloat16>;
// f32 D, and the 64-deep k-tile (the default's is 128: layout/byte_fragment_map.cuh's two k
// orders).
using GemmF16F32 =
    tilepipe::GemmMixedInput<__half, std::int8_t, float, Layout::kRowMajor, Layout::kColumnMajor, 6,
                             tilepipe::Identity, tilepipe::TileConfig<16, 128, 64, 16, 32>>;

// Decode shapes (M of 1 to 128 against N, K up to 4096), with and without split-K, each group.
TEST(GemmW8A16, DecodeShapesF16) {
  const W8A16Case cases[] = {
      {1, 4096, 4096, 128, 8},   {16, 4096, 4096, 128, 4},  {16, 1024, 4096, 64, 16},
      {128, 512, 4096, 4096, 1}, {128, 1024, 1024, 128, 2}, {1, 384, 512, 512, 1},
      {16, 256, 384, 64, 3},     {16, 4096, 4096, 128, 0},
  };
  std::uint32_t seed = 1;
  for (const W8A16Case& c : cases) run_case<GemmF16, __half, __half>(c, seed++);
}

TEST(GemmW8A16, DecodeShapesBF16) {
  const W8A16Case cases[] = {
      {1, 4096, 4096, 64, 8},
      {16, 4096, 2048, 128, 4},
      {128, 512, 1024, 1024, 1},
      {16, 384, 640, 128, 5},
  };
  std::uint32_t seed = 100;
  for (const W8A16Case& c : cases) run_case<GemmBF16, __nv_bfloat16, __nv_bfloat16>(c, seed++);
}

// Edges: M, N and K that fill no tile (K's residue zero-filled, with and without split-K), a
// one-column N8, K below one k16 block, K = group not a power of two, gaps in lda and ldd.
TEST(GemmW8A16, EdgeSizes) {
  const W8A16Case cases[] = {
      {17, 200, 1000, 1000, 1}, {17, 200, 1000, 64, 4},
      {3, 136, 72, 72, 1},      {5, 8, 16, 16, 1},
      {2, 24, 8, 8, 1},         {33, 130, 130, 130, 2},
      {127, 129, 257, 128, 3},  {16, 256, 320, 64, 1, Layout::kRowMajor, 1.0f, 0.0f, 8},
  };
  std::uint32_t seed = 200;
  for (const W8A16Case& c : cases) run_case<GemmF16, __half, __half>(c, seed++);
  run_case<GemmBF16, __nv_bfloat16, __nv_bfloat16>({19, 72, 200, 200, 2}, seed++);
}

// The epilogue's features: alpha, beta with C, column-major D, f32 D, with and without split-K.
TEST(GemmW8A16, EpilogueF32AndColumnMajor) {
  const W8A16Case cases[] = {
      {16, 512, 1024, 128, 1, Layout::kRowMajor, 0.5f, 1.0f},
      {16, 512, 1024, 128, 4, Layout::kColumnMajor, -2.0f, 0.25f},
      {40, 200, 300, 64, 1, Layout::kColumnMajor, 1.0f, 0.0f, 8},
  };
  std::uint32_t seed = 300;
  for (const W8A16Case& c : cases) run_case<GemmF16F32, __half, float>(c, seed++);
  run_case<GemmF16, __half, __half>({16, 512, 1024, 64, 2, Layout::kColumnMajor, 1.5f, -1.0f},
                                    seed++);
}

// fp8 e4m3 weights: the same GEMM with cvt.rn.f16x2.e4m3x2 (sm_89 and later) or integer
// operations (sm_80) in place of int8's conversion.
TEST(GemmW8A16, Fp8E4M3Weights) {
  using GemmE4M3 = tilepipe::GemmMixedInput<__half, __nv_fp8_e4m3, __half>;
  const W8A16Case cases[] = {
      {16, 4096, 4096, 128, 4},
      {1, 512, 1024, 1024, 1},
      {17, 200, 1000, 64, 3},
  };
  std::uint32_t seed = 400;
  for (const W8A16Case& c : cases) run_case<GemmE4M3, __half, __half, __nv_fp8_e4m3>(c, seed++);
}

// Split-K's two reductions, each asked for by name, at split-K shapes: M = 1, 16 and 19 (an edge
// row tile); N = 4096, and N not a multiple of the 64-column tile (200, 136, 72); K with a residue
// (1000, 520, 200: the last k-tile partly zero-filled, the last slice short); 2, 3, 4 and 8 slices;
// alpha and beta, column-major D, f32 and bf16 D.
const W8A16Case kReductionCasesF16[] = {
    {1, 4096, 4096, 128, 4},
    {16, 4096, 4096, 128, 4},
    {16, 1024, 4096, 64, 8},
    {16, 512, 1024, 128, 2},
    {19, 200, 1000, 64, 4},
    {19, 200, 1000, 1000, 8},
    {1, 136, 520, 520, 8},
    {17, 200, 1000, 64, 3},
    {19, 72, 200, 200, 2},
    {16, 512, 1024, 64, 2, Layout::kColumnMajor, 1.5f, -1.0f},
    {19, 200, 1000, 128, 4, Layout::kRowMajor, 0.5f, 1.0f, 8},
};
const W8A16Case kReductionCasesF32[] = {
    {16, 512, 1024, 128, 4, Layout::kColumnMajor, -2.0f, 0.25f},
    {19, 200, 1000, 64, 8},
};
const W8A16Case kReductionCasesBF16[] = {
    {16, 4096, 2048, 128, 4},
    {19, 72, 200, 200, 2},
    {1, 384, 1024, 64, 8},
};

// Each case of the lists above with `reduction`; with `d_out`, D of each (`out_f16` for the f16
// cases, then `out_f32`, `out_bf16`).
struct ReductionOutputs {
  std::vector<std::vector<__half>> f16;
  std::vector<std::vector<float>> f32;
  std::vector<std::vector<__nv_bfloat16>> bf16;
};
void run_reduction_cases(SplitKReduction reduction, ReductionOutputs* out) {
  std::uint32_t seed = 500;
  for (W8A16Case c : kReductionCasesF16) {
    c.reduction = reduction;
    out->f16.emplace_back();
    run_case<GemmF16, __half, __half>(c, seed++, &out->f16.back());
  }
  for (W8A16Case c : kReductionCasesF32) {
    c.reduction = reduction;
    out->f32.emplace_back();
    run_case<GemmF16F32, __half, float>(c, seed++, &out->f32.back());
  }
  for (W8A16Case c : kReductionCasesBF16) {
    c.reduction = reduction;
    out->bf16.emplace_back();
    run_case<GemmBF16, __nv_bfloat16, __nv_bfloat16>(c, seed++, &out->bf16.back());
  }
}

// The D of case `c` from both reductions, on the same inputs: bit for bit the same when beta == 0
// (both add the same f32 partial products in slice order 0, 1, ..., and scale by alpha once);
// with beta != 0 the reduction kernel may fuse alpha * sum + beta * C into one fma where the
// epilogue rounds alpha * sum first, so there run_case's bound (checked for each) is all.
template <class T>
void expect_same_d(const W8A16Case& c, const std::vector<T>& cluster,
                   const std::vector<T>& workspace) {
  SCOPED_TRACE(describe(c));
  if (c.beta != 0.0f) return;
  ASSERT_EQ(cluster.size(), workspace.size());
  int differ = 0;
  for (std::size_t i = 0; i < cluster.size(); ++i)
    if (std::memcmp(&cluster[i], &workspace[i], sizeof(T)) != 0 && ++differ <= 8)
      ADD_FAILURE() << "element " << i << " of the D buffer: cluster " << to_double(cluster[i])
                    << ", workspace " << to_double(workspace[i]);
  EXPECT_EQ(differ, 0) << differ << " elements differ between the two reductions";
}

TEST(GemmW8A16, WorkspaceReduction) {
  ReductionOutputs out;
  run_reduction_cases(SplitKReduction::kWorkspace, &out);
}

TEST(GemmW8A16, ClusterReductionMatchesWorkspace) {
  REQUIRE_CLUSTERS();
  ReductionOutputs cluster, workspace;
  run_reduction_cases(SplitKReduction::kCluster, &cluster);
  run_reduction_cases(SplitKReduction::kWorkspace, &workspace);
  ASSERT_EQ(cluster.f16.size(), workspace.f16.size());
  for (std::size_t i = 0; i < cluster.f16.size(); ++i)
    expect_same_d(kReductionCasesF16[i], cluster.f16[i], workspace.f16[i]);
  for (std::size_t i = 0; i < cluster.f32.size(); ++i)
    expect_same_d(kReductionCasesF32[i], cluster.f32[i], workspace.f32[i]);
  for (std::size_t i = 0; i < cluster.bf16.size(); ++i)
    expect_same_d(kReductionCasesBF16[i], cluster.bf16[i], workspace.bf16[i]);
}

// fp8 weights through the cluster reduction (the same kernel template, another instantiation).
TEST(GemmW8A16, ClusterReductionFp8) {
  REQUIRE_CLUSTERS();
  using GemmE4M3 = tilepipe::GemmMixedInput<__half, __nv_fp8_e4m3, __half>;
  W8A16Case c{16, 4096, 4096, 128, 4};
  c.reduction = SplitKReduction::kCluster;
  run_case<GemmE4M3, __half, __half, __nv_fp8_e4m3>(c, 600);
}

// Which reduction runs: kAuto takes the cluster where it can (2 to 8 slices on an sm_90+ GPU of a
// build with sm_90 code, by why_no_clusters, not the library's own query) and the workspace
// otherwise; kCluster where it cannot run fails, naming split_k_reduction, and launches nothing.
TEST(GemmW8A16, ReductionChoice) {
  GemmF16::Arguments args;
  args.m = 16;
  args.n = 4096;
  args.k = 4096;
  args.a = reinterpret_cast<const __half*>(0x1000000);
  args.lda = 4096;
  args.b = reinterpret_cast<const std::int8_t*>(0x2000000);
  args.ldb = 4096;
  args.scale = reinterpret_cast<const __half*>(0x4000000);
  args.d = reinterpret_cast<__half*>(0x5000000);
  args.ldd = 4096;
  args.split_k = 4;
  std::string why;  // "" where the cluster reduction must run
  ASSERT_NO_FATAL_FAILURE(why_no_clusters(&why));
  const bool clusters = why.empty();
  SplitKReduction r = SplitKReduction::kAuto;
  tilepipe::Status s = GemmF16::split_k_reduction(args, &r);
  ASSERT_TRUE(s.ok()) << s.what();
  EXPECT_EQ(r, clusters ? SplitKReduction::kCluster : SplitKReduction::kWorkspace) << why;
  args.split_k = 16;  // more slices than a cluster holds
  s = GemmF16::split_k_reduction(args, &r);
  ASSERT_TRUE(s.ok()) << s.what();
  EXPECT_EQ(r, SplitKReduction::kWorkspace);
  args.split_k = 1;
  s = GemmF16::split_k_reduction(args, &r);
  ASSERT_TRUE(s.ok()) << s.what();
  EXPECT_EQ(r, SplitKReduction::kAuto);  // nothing to sum
  args.split_k = 4;
  args.split_k_reduction = SplitKReduction::kWorkspace;
  s = GemmF16::split_k_reduction(args, &r);
  ASSERT_TRUE(s.ok()) << s.what();
  EXPECT_EQ(r, SplitKReduction::kWorkspace);
  args.split_k_reduction = SplitKReduction::kCluster;
  s = GemmF16::split_k_reduction(args, &r);
  if (clusters) {
    ASSERT_TRUE(s.ok()) << s.what();
    EXPECT_EQ(r, SplitKReduction::kCluster);
  } else {
    EXPECT_EQ(s.code(), tilepipe::Status::Code::kUnsupportedDevice);
    EXPECT_NE(s.message().find("split_k_reduction = kCluster"), std::string::npos) << s.what();
    const tilepipe::Status run = GemmF16::run(args);  // refused before anything is launched
    EXPECT_EQ(run.code(), tilepipe::Status::Code::kUnsupportedDevice) << run.what();
  }
}

// can_implement on the device refuses what check_arguments refuses, naming the argument.
TEST(GemmW8A16, RunRefusesBadArguments) {
  GemmF16::Arguments args;
  args.m = 16;
  args.n = 256;
  args.k = 256;
  args.a = reinterpret_cast<const __half*>(0x1000);
  args.lda = 256;
  args.b = reinterpret_cast<const std::int8_t*>(0x100000);
  args.ldb = 256;
  args.d = reinterpret_cast<__half*>(0x200000);
  args.ldd = 256;
  args.scale = nullptr;
  const tilepipe::Status s = GemmF16::run(args);
  EXPECT_EQ(s.code(), tilepipe::Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("scale"), std::string::npos) << s.what();
}

}  // namespace
