// GemmMultistage and GemmAuto on arguments that are not 16-byte aligned.
//
// The Hopper tier (an sm_90 GPU and a build for 90a; TP_REQUIRE_HOPPER_TIER, and `run_on`, which
// fails rather than fall back): a D or C that is not 16-byte aligned is used as it is (D written
// from the registers), and an A or B that is not is copied into the workspace first. Each case
// places every matrix in a buffer of its own, with its own offset, leading dimension and batch
// stride: odd N (D alone unaligned), K = 4099 (A and B copied), odd lda only, odd ldb only, every
// base pointer one element in, batches with odd strides, beta != 0 with C unaligned, column-major
// D, a broadcast B. Inputs are random small integers, so every element of D is exact against a
// double product on the CPU; every other element of D's buffer (before D, the padding of its
// lines, between batches, after it) must keep its poison, and so must the guard bands around the
// workspace. Without a workspace a case that copies must say Ampere and one that does not Hopper.
//
// The Ampere tier's narrow kernel, on every GPU (forced with `run_on`): K = 4099 with leading
// dimensions that fit the matrices exactly (odd), pointers one element past their allocation's
// start, both A/B layout pairs that differ in which dimension is contiguous, and 4- and 8-byte
// alignment (so that its 4- and 8-byte cp.async run, not only its element copies). The same
// cases also run through the front door with the workspace it asks for: the Hopper tier with
// copies on an sm_90 GPU, the narrow kernel elsewhere. Exact against the CPU, guard elements
// around D, C poisoned when beta == 0.

#include <gtest/gtest.h>

#include <tilepipe/gemm/gemm_heuristic.cuh>

#include "gemm_test_util.cuh"

namespace {

using tilepipe::GemmTier;
using tilepipe::Layout;
using tptest::GemmCase;
using tptest::Reference;

using DefaultTN = tilepipe::GemmMultistage<__half, __half, Layout::kRowMajor, Layout::kColumnMajor>;
using DefaultNT =
    tilepipe::GemmMultistage<__nv_bfloat16, float, Layout::kColumnMajor, Layout::kRowMajor, 3>;

// A GEMM forced onto the Ampere tier: its narrow kernel for these arguments, on every GPU.
template <class Gemm>
struct OnAmpere : Gemm {
  static tilepipe::Status run(const typename Gemm::Arguments& args, cudaStream_t stream = nullptr) {
    return Gemm::run_on(GemmTier::kAmpere, args, stream);
  }
};

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

// ---- The Hopper tier's cases ---------------------------------------------------------------

// Where one matrix lies in its buffer, in elements.
struct Place {
  int offset = 0;      // from the buffer's start to the matrix
  bool tight = false;  // leading dimension: the line's own length (odd where it is), else that
                       // length rounded up to 8 (16-byte aligned)
  int ld_add = 0;      // added to that leading dimension
  int stride_add = 0;  // added to the batch stride, the matrix's span rounded up to 8
};

struct HopperCase {
  const char* what;
  int m, n, k;
  Layout layout_cd;
  float alpha, beta;
  int batch;
  bool copies;  // A or B needs a copy (a workspace)
  Place a, b, c, d;
  bool broadcast_b = false;
};

struct Placed {
  std::int64_t ld, stride;
  std::size_t size;  // elements of the buffer
  int offset;
};

constexpr std::int64_t kGuard = 64;  // elements after the last batch of each matrix

Placed place(const Place& p, Layout l, int rows, int cols, int batch, bool broadcast) {
  const std::int64_t line = l == Layout::kRowMajor ? cols : rows;
  const std::int64_t ld = (p.tight ? line : tptest::round_up(line, 8)) + p.ld_add;
  const std::int64_t span = tptest::span(l, ld, rows, cols);
  const std::int64_t stride = broadcast ? 0 : tptest::round_up(span, 8) + p.stride_add;
  const std::size_t size = p.offset + stride * (batch - 1) + span + kGuard;
  return {ld, stride, size, p.offset};
}

template <class Gemm, class AB, class D>
void run_hopper_case(const HopperCase& hc, std::uint32_t seed) {
  constexpr Layout LA = Gemm::kLayoutA, LB = Gemm::kLayoutB;
  const Layout LC = hc.layout_cd;
  const int m = hc.m, n = hc.n, k = hc.k, batch = hc.batch;
  const Placed pa = place(hc.a, LA, m, k, batch, false);
  const Placed pb = place(hc.b, LB, k, n, batch, hc.broadcast_b);
  const Placed pc = place(hc.c, LC, m, n, batch, false);
  const Placed pd = place(hc.d, LC, m, n, batch, false);
  SCOPED_TRACE(testing::Message() << hc.what << ": " << tptest::type_name<AB>() << "->"
                                  << tptest::type_name<D>() << " " << m << "x" << n << "x" << k
                                  << " batch " << batch << " lda " << pa.ld << " ldb " << pb.ld
                                  << " ldc " << pc.ld << " ldd " << pd.ld << " CD "
                                  << tptest::name_of(LC));

  // Every element of A, B and C random, padding included (reading one that is not an input
  // would show); C NaN where beta is 0 (it must not be read).
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> small(-3, 3);
  std::vector<AB> a(pa.size), b(pb.size);
  std::vector<D> c(pc.size);
  for (auto& x : a) x = tptest::from_float_host<AB>(float(small(rng)));
  for (auto& x : b) x = tptest::from_float_host<AB>(float(small(rng)));
  for (auto& x : c)
    x = tptest::from_float_host<D>(hc.beta != 0.0f ? float(small(rng)) : std::nanf(""));
  tptest::DeviceBuffer<AB> d_a(pa.size), d_b(pb.size);
  tptest::DeviceBuffer<D> d_c(pc.size), d_d(pd.size);
  ASSERT_TRUE(d_a.ok() && d_b.ok() && d_c.ok() && d_d.ok());
  TP_CUDA_ASSERT(d_a.upload(a));
  TP_CUDA_ASSERT(d_b.upload(b));
  TP_CUDA_ASSERT(d_c.upload(c));
  TP_CUDA_ASSERT(d_d.poison(0xFF));

  typename Gemm::Arguments args;
  args.m = m;
  args.n = n;
  args.k = k;
  args.a = d_a.get() + pa.offset;
  args.lda = pa.ld;
  args.batch_stride_a = pa.stride;
  args.b = d_b.get() + pb.offset;
  args.ldb = pb.ld;
  args.batch_stride_b = pb.stride;
  args.c = d_c.get() + pc.offset;
  args.ldc = pc.ld;
  args.batch_stride_c = pc.stride;
  args.d = d_d.get() + pd.offset;
  args.ldd = pd.ld;
  args.batch_stride_d = pd.stride;
  args.alpha = hc.alpha;
  args.beta = hc.beta;
  args.layout_cd = LC;
  args.batch_count = batch;
  EXPECT_FALSE(Gemm::vector_aligned(args)) << "a case of this file must be unaligned";
  // Without a workspace only the cases that copy nothing take the Hopper tier.
  EXPECT_EQ(Gemm::workspace_size(args) > 0, hc.copies);
  EXPECT_EQ(Gemm::tier(args), hc.copies ? GemmTier::kAmpere : GemmTier::kHopper);
  tptest::GuardedWorkspace workspace(Gemm::workspace_size(args));
  TP_CUDA_ASSERT(workspace.error());
  args.workspace = workspace.get();
  args.workspace_bytes = workspace.bytes();
  EXPECT_EQ(Gemm::tier(args), GemmTier::kHopper);
  const tilepipe::Status s = Gemm::run_on(GemmTier::kHopper, args);
  ASSERT_TRUE(s.ok()) << s.message();
  TP_CUDA_ASSERT(cudaGetLastError());
  TP_CUDA_ASSERT(tptest::synchronize_within(120, "the unaligned GEMM"));
  TP_CUDA_ASSERT(workspace.expect_guards_intact());
  std::vector<D> d;
  TP_CUDA_ASSERT(d_d.download(d));

  // Every element of D exact (one rounding of an exact value); every other one poisoned.
  std::vector<char> is_d(pd.size, 0);
  long long bad = 0, clobbered = 0;
  for (int bt = 0; bt < batch; ++bt)
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        double acc = 0;
        for (int kk = 0; kk < k; ++kk)
          acc += double(tptest::to_float_host(
                     a[pa.offset + bt * pa.stride + tptest::at(LA, pa.ld, i, kk)])) *
                 double(tptest::to_float_host(
                     b[pb.offset + bt * pb.stride + tptest::at(LB, pb.ld, kk, j)]));
        double want = double(hc.alpha) * acc;
        if (hc.beta != 0.0f)
          want +=
              double(hc.beta) *
              tptest::to_float_host(c[pc.offset + bt * pc.stride + tptest::at(LC, pc.ld, i, j)]);
        const std::int64_t off = pd.offset + bt * pd.stride + tptest::at(LC, pd.ld, i, j);
        is_d[off] = 1;
        const float expect = tptest::to_float_host(tptest::from_float_host<D>(float(want)));
        const float got = tptest::to_float_host(d[off]);
        if (!(got == expect) && ++bad <= 8)
          ADD_FAILURE() << "batch " << bt << " D(" << i << ", " << j << ") = " << got << ", want "
                        << expect;
      }
  EXPECT_EQ(bad, 0) << "elements of D wrong";
  for (std::size_t i = 0; i < pd.size; ++i) {
    if (is_d[i]) continue;
    unsigned char bytes[sizeof(D)];
    std::memcpy(bytes, static_cast<const void*>(&d[i]), sizeof(D));
    for (unsigned char by : bytes)
      if (by != 0xFF) {
        if (++clobbered <= 8) ADD_FAILURE() << "element " << i << " of D's buffer was written";
        break;
      }
  }
  EXPECT_EQ(clobbered, 0) << "elements outside D written";
}

constexpr Place kAligned{};
constexpr Place kTight{0, true, 0, 0};
constexpr Place kOddLd{0, false, 1, 0};
constexpr Place kOneIn{1, false, 0, 0};
constexpr Place kOddStride{0, false, 0, 1};

template <class Gemm, class AB, class D>
void run_hopper_cases(std::uint32_t seed) {
  const Layout R = Layout::kRowMajor, C = Layout::kColumnMajor;
  const HopperCase cases[] = {
      // what, m, n, k, layout_cd, alpha, beta, batch, copies, a, b, c, d
      {"odd N, D alone unaligned", 300, 521, 256, R, 1, 0, 1, false, kAligned, kAligned, kAligned,
       kTight},
      {"K = 4099, A and B tight", 131, 267, 4099, R, 1, 0, 1, true, kTight, kTight, kAligned,
       kTight},
      {"odd lda only", 257, 300, 520, R, 2, 0, 1, true, kOddLd, kAligned, kAligned, kAligned},
      {"odd ldb only", 257, 300, 520, R, 1, 0, 1, true, kAligned, kOddLd, kAligned, kAligned},
      {"every pointer one element in", 200, 264, 136, R, 1, 1, 1, true, kOneIn, kOneIn, kOneIn,
       kOneIn},
      {"batches with odd strides", 130, 136, 72, C, 1, -1, 3, true, kOddStride, kOddStride,
       kOddStride, kOddStride},
      {"beta != 0, C unaligned", 190, 250, 128, R, 1, 2, 2, false, kAligned, kAligned,
       Place{1, false, 1, 3}, kAligned},
      {"column-major D, odd M", 301, 200, 96, C, 2, 0, 1, false, kAligned, kAligned, kAligned,
       kTight},
      {"broadcast B, odd ldb", 100, 130, 77, R, 1, 0.5f, 2, true, kAligned, kTight, kOddLd, kOddLd,
       /*broadcast_b=*/true},
  };
  for (const HopperCase& hc : cases) run_hopper_case<Gemm, AB, D>(hc, seed++);
}

bool hopper_tier_available() { return DefaultTN::HopperGemm::available(); }

}  // namespace

TEST(GemmUnaligned, HopperTierF16RowCol) {
  TP_REQUIRE_HOPPER_TIER(hopper_tier_available());
  run_hopper_cases<DefaultTN, __half, __half>(100);
}
TEST(GemmUnaligned, HopperTierBf16ColRowToF32) {
  TP_REQUIRE_HOPPER_TIER(hopper_tier_available());
  run_hopper_cases<DefaultNT, __nv_bfloat16, float>(200);
}

TEST(GemmUnaligned, NarrowKernelRowColF16) { run_cases<OnAmpere<DefaultTN>, __half, __half>(1); }
TEST(GemmUnaligned, NarrowKernelColRowBf16ToF32) {
  run_cases<OnAmpere<DefaultNT>, __nv_bfloat16, float>(20);
}
// The front door's own choice, with the workspace it asks for.
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
  EXPECT_EQ(Auto::tier(a), GemmTier::kAmpere);
  tptest::run_gemm_case<Auto, __half, __half>(
      {16, 300, 4099, Layout::kRowMajor, 1.0f, 0.0f, 1, 0, false, 1, 1}, Reference::kExactCpu, 40);
}

// An A that is not 16-byte aligned takes the Hopper tier only with a workspace for its copy:
// tier() says Ampere without one, and Hopper with one where the GPU and the build have the tier,
// whatever split_k and stream_k ask (ignored for such arguments, as on the narrow kernel).
TEST(GemmUnaligned, TierFollowsTheWorkspace) {
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
  EXPECT_EQ(DefaultTN::workspace_size(a), std::size_t(256) * 4104 * 2);
  EXPECT_EQ(DefaultTN::tier(a), GemmTier::kAmpere);
  const tilepipe::Status s = DefaultTN::run_on(GemmTier::kHopper, a);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("workspace is a null pointer"), std::string::npos) << s.message();
  a.workspace = reinterpret_cast<void*>(0x4000000);
  a.workspace_bytes = DefaultTN::workspace_size(a);
  const GemmTier expected = tptest::hopper_tier_expected() ? GemmTier::kHopper : GemmTier::kAmpere;
  EXPECT_EQ(DefaultTN::tier(a), expected);
  // split_k and stream_k are ignored for such arguments on the Hopper tier too.
  a.split_k = 4;
  EXPECT_EQ(DefaultTN::tier(a), expected);
  a.split_k = 1;
  a.stream_k = 8;
  EXPECT_EQ(DefaultTN::tier(a), expected);
}
