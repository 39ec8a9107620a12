// GemmMultistage at the edges: K's residue and partial tiles on the Ampere tier, operands of more
// than 2^31 elements (64-bit offsets), sub-matrix views of larger matrices, and bad inputs
// (misaligned views, D aliasing an input, too little shared memory) that must be refused with a
// clear status while nothing is written.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "device_test_util.cuh"
#include "device_fill.cuh"
#include "gemm_dispatch.cuh"
#include "gemm_test_util.cuh"
#include <tilepipe/gemm/gemm_multistage.cuh>

using tilepipe::Layout;
using tilepipe::Status;

namespace {

// A (M x K) with more than 2^31 elements, B (K x 24), D f32 row-major; small-integer inputs make
// every result exact. Rows at both ends of A are checked against the CPU, recomputing the inputs
// from the same hash on the host (the rows at the end lie past element 2^31).
template <Layout LA>
void run_large_offsets() {
  using Gemm = tilepipe::GemmMultistage<__half, float, LA, Layout::kColumnMajor, 4>;
  constexpr int M = 65600, N = 24, K = 32768;
  const std::int64_t lda = LA == Layout::kRowMajor ? K : M;
  const std::int64_t elems_a = std::int64_t(M) * K;
  ASSERT_GT(elems_a, std::int64_t(1) << 31);
  tptest::DeviceBuffer<__half> a(elems_a), b(std::int64_t(N) * K);
  tptest::DeviceBuffer<float> d(std::int64_t(M) * N);
  if (!a.ok()) GTEST_SKIP() << "could not allocate " << elems_a * 2 / (1 << 20) << " MiB for A";
  ASSERT_TRUE(b.ok() && d.ok());
  TP_CUDA_ASSERT(tptest::fill(tptest::DType::kF16, a.get(), elems_a, 11, /*range=*/2));
  TP_CUDA_ASSERT(tptest::fill(tptest::DType::kF16, b.get(), std::int64_t(N) * K, 12, 2));
  TP_CUDA_ASSERT(d.poison());
  typename Gemm::Arguments args;
  args.m = M;
  args.n = N;
  args.k = K;
  args.a = a.get();
  args.lda = lda;
  args.b = b.get();
  args.ldb = K;
  args.d = d.get();
  args.ldd = N;
  const Status s = Gemm::run(args);
  ASSERT_TRUE(s.ok()) << s.message();
  TP_CUDA_ASSERT_LAUNCH();
  std::vector<float> hd;
  TP_CUDA_ASSERT(d.download(hd));
  int bad = 0;
  std::vector<int> rows;
  for (int r = 0; r < 8; ++r) rows.push_back(r);
  for (int r = M - 72; r < M; ++r) rows.push_back(r);
  for (int r : rows)
    for (int c = 0; c < N; ++c) {
      double want = 0;
      for (int kk = 0; kk < K; ++kk) {
        const std::int64_t ia =
            LA == Layout::kRowMajor ? std::int64_t(r) * lda + kk : std::int64_t(kk) * lda + r;
        want += double(tptest::hash_value(11, ia, 2)) *
                tptest::hash_value(12, std::int64_t(c) * K + kk, 2);
      }
      const float got = hd[std::size_t(r) * N + c];
      if (got != float(want) && ++bad <= 5)
        ADD_FAILURE() << "D(" << r << ", " << c << ") = " << got << ", want " << want;
    }
  EXPECT_EQ(bad, 0);
}

}  // namespace

// The Ampere tier loads the partial k-tile first and masks the rows and columns of edge blocks
// once per block tile: K below one k-tile, K = 1, K one past a multiple of the k-tile depth (32
// on sm_80 builds, 64 on sm_90), M and N edges inside a 16-byte chunk (the masks of an operand
// stored M- or N-contiguous) and on one, blocks inside the matrix beside edge blocks, and fewer
// k-tiles than the prologue fills (6 stages). Every layout pair, exact against the CPU; the
// kernels are the dispatch table's (no new instantiation), run on the Ampere tier.
TEST(GemmEdges, KResidueAndEdgeTilesOnTheAmpereTier) {
  using Ampere = std::integral_constant<tilepipe::GemmTier, tilepipe::GemmTier::kAmpere>;
  const tptest::GemmCase shapes[] = {
      {130, 70, 20},   {260, 136, 1},   {257, 129, 65}, {33, 40, 129},
      {259, 131, 256}, {264, 136, 192}, {600, 300, 97}, {520, 260, 1027},
  };
  std::uint32_t seed = 900;
  auto run = [&](auto gemm) {
    using Gemm = decltype(gemm);
    for (tptest::GemmCase gc : shapes) {
      gc.layout_cd = seed % 2 ? Layout::kRowMajor : Layout::kColumnMajor;
      gc.beta = seed % 3 == 0 ? 1.0f : 0.0f;
      tptest::run_gemm_case<Gemm, __half, __half>(gc, tptest::Reference::kExactCpu, seed++);
    }
  };
  run(tptest::DispatchedGemm<__half, __half, Layout::kRowMajor, Layout::kColumnMajor, 4, Ampere>{});
  run(tptest::DispatchedGemm<__half, __half, Layout::kColumnMajor, Layout::kRowMajor, 3, Ampere>{});
  run(tptest::DispatchedGemm<__half, __half, Layout::kRowMajor, Layout::kRowMajor, 6, Ampere>{});
  run(tptest::DispatchedGemm<__half, __half, Layout::kColumnMajor, Layout::kColumnMajor, 2,
                             Ampere>{});
}

TEST(GemmEdges, LargeOffsetsRowMajorA) { run_large_offsets<Layout::kRowMajor>(); }
TEST(GemmEdges, LargeOffsetsColumnMajorA) { run_large_offsets<Layout::kColumnMajor>(); }

// A view of a sub-matrix that starts at an aligned element of a larger matrix (the parent's
// leading dimension) computes on exactly that sub-matrix and writes only its part of D's parent.
TEST(GemmEdges, SubMatrixViews) {
  using Gemm =
      tilepipe::GemmMultistage<__nv_bfloat16, float, Layout::kRowMajor, Layout::kRowMajor, 3>;
  constexpr int PM = 300, PK = 520, PN = 264;  // parents: A PM x PK, B PK x PN, D PM x PN
  constexpr int r0 = 5, k0 = 16, n0 = 40;      // the sub-problem's origin (k0, n0: 16-byte aligned)
  constexpr int m = 201, k = 333, n = 150;
  tptest::DeviceBuffer<__nv_bfloat16> a(PM * PK), b(PK * PN);
  tptest::DeviceBuffer<float> d(PM * PN);
  ASSERT_TRUE(a.ok() && b.ok() && d.ok());
  TP_CUDA_ASSERT(tptest::fill(tptest::DType::kBF16, a.get(), PM * PK, 21, 3));
  TP_CUDA_ASSERT(tptest::fill(tptest::DType::kBF16, b.get(), PK * PN, 22, 3));
  TP_CUDA_ASSERT(d.poison());
  typename Gemm::Arguments args;
  args.m = m;
  args.n = n;
  args.k = k;
  args.a = a.get() + r0 * PK + k0;
  args.lda = PK;
  args.b = b.get() + k0 * PN + n0;
  args.ldb = PN;
  args.d = d.get() + r0 * PN + n0;
  args.ldd = PN;
  const Status s = Gemm::run(args);
  ASSERT_TRUE(s.ok()) << s.message();
  TP_CUDA_ASSERT_LAUNCH();
  std::vector<float> hd;
  TP_CUDA_ASSERT(d.download(hd));
  int bad = 0, clobbered = 0;
  for (int i = 0; i < PM; ++i)
    for (int j = 0; j < PN; ++j) {
      const float got = hd[i * PN + j];
      const bool inside = i >= r0 && i < r0 + m && j >= n0 && j < n0 + n;
      if (!inside) {
        std::uint32_t bits;
        std::memcpy(&bits, &got, 4);
        if (bits != 0xFFFFFFFFu && ++clobbered <= 5)
          ADD_FAILURE() << "parent D(" << i << ", " << j << ") written";
        continue;
      }
      double want = 0;
      for (int kk = 0; kk < k; ++kk)
        want += double(tptest::hash_value(21, std::int64_t(i) * PK + k0 + kk, 3)) *
                tptest::hash_value(22, std::int64_t(k0 + kk) * PN + j, 3);
      if (got != float(want) && ++bad <= 5)
        ADD_FAILURE() << "D(" << i - r0 << ", " << j - n0 << ") = " << got << ", want " << want;
    }
  EXPECT_EQ(bad, 0);
  EXPECT_EQ(clobbered, 0);
}

namespace {

// Each bad argument set must be refused by run() with kInvalidArgument and a message naming the
// argument, and D (poisoned) must be left untouched: nothing was launched.
struct BadCase {
  const char* what;
  const char* expect;  // a piece of the message
  void (*spoil)(tilepipe::GemmArguments<__half, __half>&, __half* a_base, __half* d_base);
};

}  // namespace

TEST(GemmEdges, BadInputIsRefusedAndNothingIsWritten) {
  using Gemm = tilepipe::GemmMultistage<__half, __half, Layout::kRowMajor, Layout::kColumnMajor, 4>;
  constexpr int M = 96, N = 80, K = 64;
  tptest::DeviceBuffer<__half> a(M * K + 64), b(N * K), d(M * N + 64);
  ASSERT_TRUE(a.ok() && b.ok() && d.ok());
  TP_CUDA_ASSERT(tptest::fill(tptest::DType::kF16, a.get(), M * K + 64, 31));
  TP_CUDA_ASSERT(tptest::fill(tptest::DType::kF16, b.get(), N * K, 32));
  const BadCase cases[] = {
      // (Views one element off 16-byte alignment are valid: they run the narrow kernel.)
      {"A one byte off its element", "A is not aligned to its element size",
       [](auto& g, __half* a, __half*) {
         g.a = reinterpret_cast<const __half*>(reinterpret_cast<const char*>(a) + 1);
       }},
      {"D one byte off its element", "D is not aligned to its element size",
       [](auto& g, __half*, __half* d) {
         g.d = reinterpret_cast<__half*>(reinterpret_cast<char*>(d) + 1);
       }},
      {"lda shorter than a row of A", "lda = 60", [](auto& g, __half*, __half*) { g.lda = 60; }},
      {"D aliases A", "D overlaps A",
       [](auto& g, __half* a, __half*) {
         g.d = a;
         g.ldd = N;
       }},
      {"negative K", "k = -1", [](auto& g, __half*, __half*) { g.k = -1; }},
      {"null B", "B is a null pointer", [](auto& g, __half*, __half*) { g.b = nullptr; }},
  };
  for (const BadCase& bc : cases) {
    SCOPED_TRACE(bc.what);
    TP_CUDA_ASSERT(d.poison());
    std::vector<__half> a_before;
    TP_CUDA_ASSERT(a.download(a_before));
    typename Gemm::Arguments g;
    g.m = M;
    g.n = N;
    g.k = K;
    g.a = a.get();
    g.lda = K;
    g.b = b.get();
    g.ldb = K;
    g.d = d.get();
    g.ldd = N;
    bc.spoil(g, a.get(), d.get());
    const Status s = Gemm::run(g);
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
    EXPECT_NE(s.message().find(bc.expect), std::string::npos) << s.message();
    TP_CUDA_ASSERT(cudaDeviceSynchronize());
    std::vector<__half> hd, a_after;
    TP_CUDA_ASSERT(d.download(hd));
    TP_CUDA_ASSERT(a.download(a_after));
    int written = 0;
    for (const __half& x : hd) written += reinterpret_cast<const std::uint16_t&>(x) != 0xFFFF;
    EXPECT_EQ(written, 0) << "D was written although run() refused";
    EXPECT_EQ(std::memcmp(a_before.data(), a_after.data(), a_before.size() * 2), 0) << "A changed";
  }
}

// A device whose shared memory is too small for a configuration is refused with
// kInsufficientResources, from this device's real properties with its shared-memory limit
// lowered below what the configuration needs (the GPUs at hand all have enough for every
// configuration that compiles for them).
TEST(GemmEdges, TooLittleSharedMemoryIsAnError) {
  using Gemm6 =
      tilepipe::GemmMultistage<__half, __half, Layout::kRowMajor, Layout::kColumnMajor, 6>;
  int dev = 0, major = 0, minor = 0, optin = 0;
  TP_CUDA_ASSERT(cudaGetDevice(&dev));
  TP_CUDA_ASSERT(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  TP_CUDA_ASSERT(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  TP_CUDA_ASSERT(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  EXPECT_TRUE(Gemm6::check_device_properties(dev, major, minor, optin).ok());
  const Status s = Gemm6::check_device_properties(dev, major, minor, int(Gemm6::kSharedBytes) - 1);
  EXPECT_EQ(s.code(), Status::Code::kInsufficientResources);
  EXPECT_NE(s.message().find(std::to_string(Gemm6::kSharedBytes)), std::string::npos)
      << s.message();
}

// ---- Split-K at the edges -------------------------------------------------------------------

namespace {

using SplitKSmall =
    tilepipe::GemmMultistageSplitK<__half, __half, Layout::kRowMajor, Layout::kColumnMajor, 3,
                                   tilepipe::Identity, tilepipe::TileConfig<64, 64, 64, 32, 32>>;

int written_halves(const tptest::DeviceBuffer<__half>& buf) {
  std::vector<__half> h;
  if (buf.download(h) != cudaSuccess) return -1;
  int written = 0;
  for (const __half& x : h) written += reinterpret_cast<const std::uint16_t&>(x) != 0xFFFF;
  return written;
}

}  // namespace

// Bad split-K arguments are refused by run() with kInvalidArgument and a message naming the
// argument; neither D nor the workspace is written.
TEST(GemmEdges, SplitKBadInputIsRefusedAndNothingIsWritten) {
  using NoSplitK =
      tilepipe::GemmMultistage<__half, __half, Layout::kRowMajor, Layout::kColumnMajor, 4>;
  constexpr int M = 96, N = 80, K = 1024;
  tptest::DeviceBuffer<__half> a(M * K), b(N * K), d(M * N);
  ASSERT_TRUE(a.ok() && b.ok() && d.ok());
  TP_CUDA_ASSERT(tptest::fill(tptest::DType::kF16, a.get(), M * K, 41));
  TP_CUDA_ASSERT(tptest::fill(tptest::DType::kF16, b.get(), N * K, 42));
  SplitKSmall::Arguments good;
  good.m = M;
  good.n = N;
  good.k = K;
  good.a = a.get();
  good.lda = K;
  good.b = b.get();
  good.ldb = K;
  good.d = d.get();
  good.ldd = N;
  good.split_k = 4;
  const std::size_t needed = SplitKSmall::workspace_size(good);
  ASSERT_EQ(needed, std::size_t(4) * M * N * sizeof(float));
  // The workspace as halves, so that written_halves() can check it; 64 bytes of slack.
  tptest::DeviceBuffer<__half> ws(needed / 2 + 32);
  ASSERT_TRUE(ws.ok());
  good.workspace = ws.get();
  good.workspace_bytes = needed;

  struct Case {
    const char* what;
    const char* expect;
    bool split_k_compiled;
    void (*spoil)(SplitKSmall::Arguments&, __half* ws, __half* d);
  };
  const Case cases[] = {
      {"split_k = 0", "split_k = 0 is less than 1", true,
       [](auto& g, __half*, __half*) { g.split_k = 0; }},
      {"no workspace", "workspace is a null pointer", true,
       [](auto& g, __half*, __half*) {
         g.workspace = nullptr;
         g.workspace_bytes = 0;
       }},
      {"workspace one byte short", "is less than the", true,
       [](auto& g, __half*, __half*) { g.workspace_bytes -= 1; }},
      {"misaligned workspace", "workspace is not 16-byte aligned", true,
       [](auto& g, __half* w, __half*) { g.workspace = w + 4; }},
      {"workspace on D", "workspace overlaps D", true,
       [](auto& g, __half*, __half* dd) { g.workspace = dd; }},
      {"split-K not compiled in", "compiled without", false, [](auto&, __half*, __half*) {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    TP_CUDA_ASSERT(d.poison());
    TP_CUDA_ASSERT(ws.poison());
    SplitKSmall::Arguments g = good;
    c.spoil(g, ws.get(), d.get());
    const Status s = c.split_k_compiled ? SplitKSmall::run(g) : NoSplitK::run(g);
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
    EXPECT_NE(s.message().find(c.expect), std::string::npos) << s.message();
    TP_CUDA_ASSERT(cudaDeviceSynchronize());
    EXPECT_EQ(written_halves(d), 0) << "D was written although run() refused";
    EXPECT_EQ(written_halves(ws), 0) << "the workspace was written although run() refused";
  }
  // The good arguments run, and write all of D.
  TP_CUDA_ASSERT(d.poison());
  const Status s = SplitKSmall::run(good);
  ASSERT_TRUE(s.ok()) << s.message();
  TP_CUDA_ASSERT_LAUNCH();
  EXPECT_EQ(written_halves(d), M * N);
}

// K == 0 with split_k > 1 is one slice: no workspace, D = beta * C (A and B never read).
TEST(GemmEdges, SplitKWithKZeroGivesBetaC) {
  constexpr int M = 50, N = 40;
  tptest::DeviceBuffer<__half> c(M * N), d(M * N);
  ASSERT_TRUE(c.ok() && d.ok());
  TP_CUDA_ASSERT(tptest::fill(tptest::DType::kF16, c.get(), M * N, 51, /*range=*/4));
  TP_CUDA_ASSERT(d.poison());
  SplitKSmall::Arguments g;
  g.m = M;
  g.n = N;
  g.k = 0;
  g.c = c.get();
  g.ldc = N;
  g.d = d.get();
  g.ldd = N;
  g.alpha = 3.0f;
  g.beta = 0.5f;
  g.split_k = 8;
  EXPECT_EQ(SplitKSmall::workspace_size(g), 0u);
  const Status s = SplitKSmall::run(g);
  ASSERT_TRUE(s.ok()) << s.message();
  TP_CUDA_ASSERT_LAUNCH();
  std::vector<__half> hd;
  TP_CUDA_ASSERT(d.download(hd));
  int bad = 0;
  for (int i = 0; i < M * N; ++i) {
    const float want = 0.5f * tptest::hash_value(51, i, 4);
    if (__half2float(hd[i]) != want && ++bad <= 5)
      ADD_FAILURE() << "D[" << i << "] = " << __half2float(hd[i]) << ", want " << want;
  }
  EXPECT_EQ(bad, 0);
}

// Split-K in place (C == D, beta != 0), column-major D, two batches, K not a multiple of the
// k-tile and sliced unevenly: exact against the CPU (small integers).
TEST(GemmEdges, SplitKInPlaceColumnMajorBatched) {
  constexpr int M = 70, N = 33, K = 1000, B = 2;  // 16 k-tiles of 64 in 5 slices: 4 3 3 3 3
  constexpr std::int64_t ldd = 72, stride_d = ldd * N, stride_a = std::int64_t(M) * K,
                         stride_b = std::int64_t(N) * K;
  tptest::DeviceBuffer<__half> a(B * stride_a), b(B * stride_b), d(B * stride_d);
  ASSERT_TRUE(a.ok() && b.ok() && d.ok());
  TP_CUDA_ASSERT(tptest::fill(tptest::DType::kF16, a.get(), B * stride_a, 61, 2));
  TP_CUDA_ASSERT(tptest::fill(tptest::DType::kF16, b.get(), B * stride_b, 62, 2));
  TP_CUDA_ASSERT(
      tptest::fill(tptest::DType::kF16, d.get(), B * stride_d, 63, 3));  // C, updated in place
  SplitKSmall::Arguments g;
  g.m = M;
  g.n = N;
  g.k = K;
  g.a = a.get();
  g.lda = K;
  g.b = b.get();
  g.ldb = K;
  g.c = d.get();
  g.ldc = ldd;
  g.d = d.get();
  g.ldd = ldd;
  g.layout_cd = Layout::kColumnMajor;
  g.alpha = 1.0f;
  g.beta = -2.0f;
  g.batch_count = B;
  g.batch_stride_a = stride_a;
  g.batch_stride_b = stride_b;
  g.batch_stride_c = stride_d;
  g.batch_stride_d = stride_d;
  g.split_k = 5;
  ASSERT_EQ(SplitKSmall::split_k_slices(g).count, 5);
  tptest::DeviceBuffer<unsigned char> ws(SplitKSmall::workspace_size(g));
  ASSERT_TRUE(ws.ok());
  TP_CUDA_ASSERT(ws.poison());
  g.workspace = ws.get();
  g.workspace_bytes = ws.bytes();
  const Status s = SplitKSmall::run(g);
  ASSERT_TRUE(s.ok()) << s.message();
  TP_CUDA_ASSERT_LAUNCH();
  std::vector<__half> hd;
  TP_CUDA_ASSERT(d.download(hd));
  int bad = 0;
  for (int bt = 0; bt < B; ++bt)
    for (int j = 0; j < N; ++j)
      for (int i = 0; i < ldd; ++i) {
        const std::int64_t at = bt * stride_d + std::int64_t(j) * ldd + i;
        double want = tptest::hash_value(63, at, 3);  // padding rows keep C
        if (i < M) {
          double acc = 0;
          for (int kk = 0; kk < K; ++kk)
            acc += double(tptest::hash_value(61, bt * stride_a + std::int64_t(i) * K + kk, 2)) *
                   tptest::hash_value(62, bt * stride_b + std::int64_t(j) * K + kk, 2);
          want = acc - 2.0 * want;
        }
        const float got = __half2float(hd[at]);
        if (got != __half2float(__float2half_rn(float(want))) && ++bad <= 5)
          ADD_FAILURE() << "batch " << bt << " D(" << i << ", " << j << ") = " << got << ", want "
                        << want;
      }
  EXPECT_EQ(bad, 0);
}

// ---- Stream-K -------------------------------------------------------------------------------

namespace {

// SplitKSmall's tile with stream-K: its ordinary and narrow kernels are SplitKSmall's, so the
// stream-K kernel is its only new instantiation. The default tile with stream-K shares its other
// kernels with LargeOffsetsColumnMajorA's GEMM, and is the tile the benchmark runs.
using StreamKSmall =
    tilepipe::GemmMultistageStreamK<__half, __half, Layout::kRowMajor, Layout::kColumnMajor, 3,
                                    tilepipe::Identity, tilepipe::TileConfig<64, 64, 64, 32, 32>>;
using StreamKDefault =
    tilepipe::GemmMultistageStreamK<__half, float, Layout::kColumnMajor, Layout::kColumnMajor, 4>;

struct StreamKCase {
  const char* what;
  int m, n, k, batches;
  int blocks;  // args.stream_k; 0: stream_k_blocks(), the blocks that fit on the GPU at once
  float alpha, beta;
  Layout layout_cd;
};

template <class T>
bool poisoned(const T& x) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(&x);
  for (std::size_t i = 0; i < sizeof(T); ++i)
    if (bytes[i] != 0xFF) return false;
  return true;
}

// Runs one stream-K case twice, with D (and guard elements on both sides of it, and the gaps
// between its lines) and the workspace poisoned before each run: every element of D must equal
// the CPU's exact result (small-integer inputs) rounded to D's type, nothing else may be written,
// and the two runs must agree bit for bit (the fix-up sums in a fixed order).
template <class Gemm, class D>
void run_stream_k_case(const StreamKCase& c) {
  SCOPED_TRACE(c.what);
  constexpr Layout LA = Gemm::kLayoutA, LB = Gemm::kLayoutB;
  const int M = c.m, N = c.n, K = c.k, B = c.batches;
  // Leading dimensions rounded up to 16 bytes (stream-K takes 16-byte aligned arguments only),
  // so the odd extents leave gaps; D's has 8 elements more, which must stay untouched.
  const bool row_a = LA == Layout::kRowMajor, row_b = LB == Layout::kRowMajor;
  const std::int64_t lda = tptest::round_up(row_a ? K : M, 8),
                     ldb = tptest::round_up(row_b ? N : K, 8);
  const bool row_cd = c.layout_cd == Layout::kRowMajor;
  const std::int64_t ld_cd = tptest::round_up(row_cd ? N : M, 8) + 8;
  const std::int64_t stride_a = lda * (row_a ? M : K);
  const std::int64_t stride_b = ldb * (row_b ? K : N);
  const std::int64_t stride_cd = ld_cd * (row_cd ? M : N);
  constexpr std::int64_t kGuard = 64;
  constexpr tptest::DType kTypeD =
      std::is_same_v<D, float> ? tptest::DType::kF32 : tptest::DType::kF16;
  tptest::DeviceBuffer<__half> a(B * stride_a), b(B * stride_b);
  tptest::DeviceBuffer<D> cm(B * stride_cd), d(B * stride_cd + 2 * kGuard);
  ASSERT_TRUE(a.ok() && b.ok() && cm.ok() && d.ok());
  TP_CUDA_ASSERT(tptest::fill(tptest::DType::kF16, a.get(), B * stride_a, 71, 2));
  TP_CUDA_ASSERT(tptest::fill(tptest::DType::kF16, b.get(), B * stride_b, 72, 2));
  TP_CUDA_ASSERT(tptest::fill(kTypeD, cm.get(), B * stride_cd, 73, 3));

  typename Gemm::Arguments args;
  args.m = M;
  args.n = N;
  args.k = K;
  args.a = a.get();
  args.lda = lda;
  args.b = b.get();
  args.ldb = ldb;
  args.c = cm.get();
  args.ldc = ld_cd;
  args.d = d.get() + kGuard;
  args.ldd = ld_cd;
  args.alpha = c.alpha;
  args.beta = c.beta;
  args.layout_cd = c.layout_cd;
  args.batch_count = B;
  args.batch_stride_a = stride_a;
  args.batch_stride_b = stride_b;
  args.batch_stride_c = args.batch_stride_d = stride_cd;
  args.stream_k = c.blocks;
  if (c.blocks == 0) {
    const Status s = Gemm::stream_k_blocks(args.stream_k);
    ASSERT_TRUE(s.ok()) << s.message();
  }
  ASSERT_TRUE(Gemm::stream_k_runs(args));
  const std::size_t ws_bytes = Gemm::workspace_size(args);
  tptest::DeviceBuffer<unsigned char> ws(ws_bytes + 16);
  ASSERT_TRUE(ws.ok());
  args.workspace = ws_bytes > 0 ? ws.get() : nullptr;
  args.workspace_bytes = ws_bytes;

  // The reference, in double, from the same hashes.
  std::vector<float> ha(B * stride_a), hb(B * stride_b), hc(B * stride_cd);
  for (std::size_t i = 0; i < ha.size(); ++i) ha[i] = tptest::hash_value(71, i, 2);
  for (std::size_t i = 0; i < hb.size(); ++i) hb[i] = tptest::hash_value(72, i, 2);
  for (std::size_t i = 0; i < hc.size(); ++i) hc[i] = tptest::hash_value(73, i, 3);
  std::vector<double> want(std::size_t(B) * M * N, 0.0);
  for (int bt = 0; bt < B; ++bt)
    for (int i = 0; i < M; ++i)
      for (int kk = 0; kk < K; ++kk) {
        const double x = ha[bt * stride_a + tptest::at(LA, lda, i, kk)];
        double* row = &want[(std::size_t(bt) * M + i) * N];
        for (int j = 0; j < N; ++j) row[j] += x * hb[bt * stride_b + tptest::at(LB, ldb, kk, j)];
      }

  std::vector<D> first;
  for (int run = 0; run < 2; ++run) {
    TP_CUDA_ASSERT(d.poison());
    TP_CUDA_ASSERT(ws.poison());  // run() must zero the tile counters itself
    const Status s = Gemm::run(args);
    ASSERT_TRUE(s.ok()) << s.message();
    TP_CUDA_ASSERT_LAUNCH();
    std::vector<D> hd;
    TP_CUDA_ASSERT(d.download(hd));
    std::vector<bool> in_d(hd.size(), false);
    int bad = 0;
    for (int bt = 0; bt < B; ++bt)
      for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
          const std::int64_t off = bt * stride_cd + tptest::at(c.layout_cd, ld_cd, i, j);
          in_d[kGuard + off] = true;
          const double v = c.alpha * want[(std::size_t(bt) * M + i) * N + j] + c.beta * hc[off];
          const float got = tptest::to_float_host(hd[kGuard + off]);
          const float expect = tptest::to_float_host(tptest::from_float_host<D>(float(v)));
          if (got != expect && ++bad <= 5)
            ADD_FAILURE() << "batch " << bt << " D(" << i << ", " << j << ") = " << got << ", want "
                          << expect;
        }
    for (std::size_t e = 0; e < hd.size(); ++e)
      if (!in_d[e] && !poisoned(hd[e]) && ++bad <= 5)
        ADD_FAILURE() << "element " << e
                      << " of D's buffer (guards at both ends, gaps between lines) was written";
    EXPECT_EQ(bad, 0);
    if (run == 0) first = hd;
    else
      EXPECT_EQ(std::memcmp(first.data(), hd.data(), hd.size() * sizeof(D)), 0)
          << "the runs differ";
  }
}

}  // namespace

// 64 x 64 tiles, k-tiles of 64. Whole waves then shared tiles; one tile in many segments; more
// blocks than iterations; batches with beta and column-major D; tiles that divide evenly over the
// blocks (no workspace at all); and the device's own grid on an edge-heavy shape.
TEST(GemmEdges, StreamKSmallTiles) {
  const StreamKCase cases[] = {
      {"20 tiles on 7 blocks, K residue 40", 200, 300, 1000, 1, 7, 1.0f, 0.0f, Layout::kRowMajor},
      {"one tile in five segments, alpha and beta", 50, 40, 700, 1, 5, 2.0f, -1.0f,
       Layout::kRowMajor},
      {"more blocks than iterations", 64, 64, 130, 1, 100, 1.0f, 0.0f, Layout::kRowMajor},
      {"3 batches on 5 blocks, column-major D, beta", 100, 70, 520, 3, 5, 1.0f, 0.5f,
       Layout::kColumnMajor},
      {"tiles divide evenly over the blocks", 128, 128, 256, 1, 2, 1.0f, 0.0f, Layout::kRowMajor},
      {"the device's grid, edge tiles, K residue 8", 600, 320, 2056, 1, 0, 1.0f, 0.0f,
       Layout::kRowMajor},
  };
  for (const StreamKCase& c : cases) run_stream_k_case<StreamKSmall, __half>(c);
}

// The default tile (the benchmark's), f32 D, both operands column-major.
TEST(GemmEdges, StreamKDefaultTile) {
  const StreamKCase cases[] = {
      {"the device's grid, edge tiles, K residue 8", 1000, 600, 1032, 1, 0, 1.0f, 0.0f,
       Layout::kRowMajor},
      {"2 batches on 4 blocks, beta, column-major D", 300, 200, 520, 2, 4, 2.0f, 0.5f,
       Layout::kColumnMajor},
      {"one tile on 9 blocks", 100, 100, 300, 1, 9, 1.0f, 1.0f, Layout::kRowMajor},
  };
  for (const StreamKCase& c : cases) run_stream_k_case<StreamKDefault, float>(c);
}

// ---- Edge tiles moved back inside D ---------------------------------------------------------

namespace {

// D = A * B - 2 C in place (C is D) on 64 x 64 tiles whose last tile row and column move back
// inside D (tile_origin: 200 rows and 120 columns leave 56 and 8 over, multiples of 8), so that
// each moved tile computes rows or columns of the tile before it again. Were those stored again,
// the in-place update would apply -2 C twice there: every element of D is checked exactly against
// the CPU, and the gaps between D's lines and guards on both sides must keep their values.
// `configure` sets the path (split-K slices, stream-K blocks).
template <class Gemm, class Configure>
void run_moved_tiles_in_place(Layout layout_cd, Configure configure) {
  constexpr int M = 200, N = 120, K = 136;
  constexpr std::int64_t kGuard = 64;
  const bool row_cd = layout_cd == Layout::kRowMajor;
  const std::int64_t ldd = (row_cd ? N : M) + 8;
  const std::int64_t size_d = ldd * (row_cd ? M : N);
  tptest::DeviceBuffer<__half> a(std::int64_t(M) * K), b(std::int64_t(N) * K),
      d(size_d + 2 * kGuard);
  ASSERT_TRUE(a.ok() && b.ok() && d.ok());
  TP_CUDA_ASSERT(tptest::fill(tptest::DType::kF16, a.get(), std::int64_t(M) * K, 81, 2));
  TP_CUDA_ASSERT(tptest::fill(tptest::DType::kF16, b.get(), std::int64_t(N) * K, 82, 2));
  TP_CUDA_ASSERT(tptest::fill(tptest::DType::kF16, d.get(), size_d + 2 * kGuard, 83, 3));
  typename Gemm::Arguments g;
  g.m = M;
  g.n = N;
  g.k = K;
  g.a = a.get();
  g.lda = K;
  g.b = b.get();
  g.ldb = K;
  g.c = d.get() + kGuard;
  g.ldc = ldd;
  g.d = d.get() + kGuard;
  g.ldd = ldd;
  g.layout_cd = layout_cd;
  g.alpha = 1.0f;
  g.beta = -2.0f;
  configure(g);
  const std::size_t ws_bytes = Gemm::workspace_size(g);
  tptest::DeviceBuffer<unsigned char> ws(ws_bytes + 16);
  ASSERT_TRUE(ws.ok());
  TP_CUDA_ASSERT(ws.poison());
  g.workspace = ws.get();
  g.workspace_bytes = ws_bytes;
  const Status s = Gemm::run(g);
  ASSERT_TRUE(s.ok()) << s.message();
  TP_CUDA_ASSERT_LAUNCH();
  std::vector<__half> hd;
  TP_CUDA_ASSERT(d.download(hd));
  std::vector<bool> in_d(hd.size(), false);
  int bad = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      const std::int64_t at = kGuard + tptest::at(layout_cd, ldd, i, j);
      in_d[at] = true;
      double acc = 0;
      for (int kk = 0; kk < K; ++kk)
        acc += double(tptest::hash_value(81, std::int64_t(i) * K + kk, 2)) *
               tptest::hash_value(82, std::int64_t(j) * K + kk, 2);
      const double want = acc - 2.0 * tptest::hash_value(83, at, 3);
      const float got = __half2float(hd[at]);
      if (got != float(want) && ++bad <= 5)
        ADD_FAILURE() << "D(" << i << ", " << j << ") = " << got << ", want " << want;
    }
  for (std::size_t e = 0; e < hd.size(); ++e) {
    const float kept = tptest::hash_value(83, e, 3);
    if (!in_d[e] && __half2float(hd[e]) != kept && ++bad <= 5)
      ADD_FAILURE() << "element " << e << " of D's buffer (guards, gaps between lines) was written";
  }
  EXPECT_EQ(bad, 0);
}

}  // namespace

// The ordinary kernel, split-K through the workspace or a cluster, and stream-K: each stores a
// moved edge tile's own rows and columns only.
TEST(GemmEdges, MovedEdgeTilesStoreOnlyTheirOwnElements) {
  for (Layout layout_cd : {Layout::kRowMajor, Layout::kColumnMajor}) {
    SCOPED_TRACE(layout_cd == Layout::kRowMajor ? "row-major D" : "column-major D");
    run_moved_tiles_in_place<SplitKSmall>(layout_cd, [](auto&) {});
    run_moved_tiles_in_place<SplitKSmall>(layout_cd, [](auto& g) { g.split_k = 2; });
    run_moved_tiles_in_place<StreamKSmall>(layout_cd, [](auto& g) { g.stream_k = 7; });
  }
}

// Stream-K's argument errors reach run(): nothing is launched, nothing written.
TEST(GemmEdges, StreamKBadWorkspaceIsRefused) {
  constexpr int M = 100, N = 80, K = 640;
  tptest::DeviceBuffer<__half> a(M * K), b(N * K), d(M * N);
  ASSERT_TRUE(a.ok() && b.ok() && d.ok());
  TP_CUDA_ASSERT(tptest::fill(tptest::DType::kF16, a.get(), M * K, 81, 2));
  TP_CUDA_ASSERT(tptest::fill(tptest::DType::kF16, b.get(), N * K, 82, 2));
  TP_CUDA_ASSERT(d.poison());
  StreamKSmall::Arguments g;
  g.m = M;
  g.n = N;
  g.k = K;
  g.a = a.get();
  g.lda = K;
  g.b = b.get();
  g.ldb = K;
  g.d = d.get();
  g.ldd = N;
  g.stream_k = 3;
  ASSERT_GT(StreamKSmall::workspace_size(g), 0u);
  const Status s = StreamKSmall::run(g);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("workspace is a null pointer"), std::string::npos) << s.message();
  TP_CUDA_ASSERT(cudaDeviceSynchronize());
  EXPECT_EQ(written_halves(d), 0);
}
