// GemmFp8Sm90: FP8 (e4m3, e5m2) GEMM on the Hopper tier with tensorwise, row-wise and block-wise
// f32 scales. Every element of D is checked against a CPU reference in double computed from the
// decoded fp8 values and the scales:
// - exactly, where A and B hold small integers and the scales powers of two (each k-block's sum
//   then fits the tensor cores' fp8 accumulation exactly, and every f32 fold is exact), so a wrong
//   scale, block or row shows as a wrong value;
// - within a derived bound on random fp8 values and scales (FP8Bound below).
// D is poisoned before each run and guarded by bands that must stay untouched. GemmFp8.Random
// draws TILEPIPE_FP8_FUZZ_COUNT problems: mode, type, output, shape, split-K and
// stream-K at random (default: TILEPIPE_FUZZ_COUNT's, at most 1000). Skips on a GPU that is not
// sm_90 or in a build without 90a.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <tilepipe/gemm/gemm_fp8.cuh>

#include "device_test_util.cuh"
#include "gemm_test_util.cuh"

namespace {

using tilepipe::Fp8Scaling;
using tptest::DeviceBuffer;

using tilepipe::Fp8DecodeTile192Config;
using tilepipe::Fp8DecodeTile256SplitConfig;
using tilepipe::Fp8DecodeTile64Config;
using tilepipe::Fp8DecodeTile64KInterleavedConfig;
using tilepipe::Fp8DecodeTileConfig;
using tilepipe::Fp8Tile192Config;
using tilepipe::Fp8WideTileConfig;

template <class AB, class D, Fp8Scaling S, class Config = tilepipe::Fp8TileConfig>
using Fp8 = tilepipe::GemmFp8Sm90<AB, D, S, tilepipe::Identity, Config>;

bool fp8_available() {
  return Fp8<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kTensorwise>::available();
}

std::uint64_t env_u64(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  return v == nullptr || *v == '\0' ? fallback : std::strtoull(v, nullptr, 10);
}

const char* mode_name(Fp8Scaling s) {
  switch (s) {
    case Fp8Scaling::kTensorwise: return "tensorwise";
    case Fp8Scaling::kRowwise: return "rowwise";
    default: return "blockwise";
  }
}

// Half a unit in the last place of D's type at |x| (f32: 24 bits; bf16: 8 bits, f32's exponent
// range). The tests' D is one of these two; the PyTorch tests cover an f16 D.
template <class T>
double half_ulp(double x) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, __nv_bfloat16>,
                "half_ulp: D is f32 or bf16 here");
  const int bits = std::is_same_v<T, float> ? 24 : 8;
  int e = 0;
  std::frexp(std::max(std::fabs(x), 1e-30), &e);
  return std::ldexp(1.0, e - bits - 1);
}

struct Problem {
  int m, n, k;
  int pad_a = 0, pad_b = 0, pad_d = 0;  // extra elements of each leading dimension
  bool exact = true;                    // small integers and power-of-two scales
  int split_k = 1, stream_k = 0;
};

std::string describe(const Problem& p) {
  return std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k) + " pads " +
         std::to_string(p.pad_a) + "/" + std::to_string(p.pad_b) + "/" + std::to_string(p.pad_d) +
         (p.exact ? " exact" : " random") + " split_k " + std::to_string(p.split_k) + " stream_k " +
         std::to_string(p.stream_k);
}

// Runs one problem; returns false (after ADD_FAILURE) where an element is wrong or a guard moved.
// `worst` gets the largest |error| / bound over the elements of a random problem.
template <class AB, class D, Fp8Scaling S, class Config = tilepipe::Fp8TileConfig>
bool run_problem(const Problem& p, std::uint32_t seed, double* worst = nullptr,
                 int* cluster_k = nullptr) {
  using Gemm = Fp8<AB, D, S, Config>;
  const std::string what = std::string(tilepipe::ElementTraits<AB>::kName) + " -> " +
                           tptest::type_name<D>() + " " + mode_name(S) + " " + describe(p) +
                           (Config::kN == 256 ? " (wide tile)" : "") +
                           (Config::kM == 64 ? " (64-row tile)" : "");
  std::mt19937 rng(seed);
  const std::int64_t lda = p.k + p.pad_a, ldb = p.k + p.pad_b, ldd = p.n + p.pad_d;
  const int kb = (p.k + 127) / 128, nb = (p.n + 127) / 128;

  // fp8 values: integers in [-4, 4] (exact: every e4m3 and e5m2 holds them), or random reals.
  std::uniform_int_distribution<int> small(-4, 4);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  auto draw = [&](std::vector<AB>& v, std::int64_t rows, std::int64_t ld) {
    v.assign(static_cast<std::size_t>(rows * ld), AB(0.0f));
    for (std::int64_t r = 0; r < rows; ++r)
      for (int c = 0; c < p.k; ++c)
        v[r * ld + c] = AB(p.exact ? static_cast<float>(small(rng)) : 3.0f * normal(rng));
  };
  std::vector<AB> a, b;
  draw(a, p.m, lda);
  draw(b, p.n, ldb);
  // Pads hold values that would spoil D if read.
  for (std::int64_t r = 0; r < p.m; ++r)
    for (int c = p.k; c < lda; ++c) a[r * lda + c] = AB(64.0f);
  for (std::int64_t r = 0; r < p.n; ++r)
    for (int c = p.k; c < ldb; ++c) b[r * ldb + c] = AB(64.0f);

  // Scales: powers of two in [1/4, 4] (exact), or reals in [0.1, 2].
  std::uniform_int_distribution<int> exponent(-2, 2);
  std::uniform_real_distribution<float> real(0.1f, 2.0f);
  auto scale = [&] { return p.exact ? std::ldexp(1.0f, exponent(rng)) : real(rng); };
  const std::int64_t ld_sa = S == Fp8Scaling::kBlockwise ? p.m + (seed % 3) : 0;
  const std::int64_t ld_sb = S == Fp8Scaling::kBlockwise ? kb + (seed % 2) : 0;
  std::size_t na = 1, nbs = 1;
  if (S == Fp8Scaling::kRowwise) na = p.m, nbs = p.n;
  if (S == Fp8Scaling::kBlockwise)
    na = static_cast<std::size_t>(ld_sa * kb), nbs = static_cast<std::size_t>(ld_sb * nb);
  std::vector<float> sa(na), sb(nbs);
  for (float& x : sa) x = scale();
  for (float& x : sb) x = scale();

  // The reference: sum over k-blocks of sa * sb * (the block's exact dot product), in double;
  // `mass` is the sum of |terms| per element, for the bound.
  std::vector<double> ref(static_cast<std::size_t>(p.m) * p.n), mass(ref.size());
  auto reference_rows = [&](int i0, int i1) {
    std::vector<double> av(p.k), bv(p.k);
    for (int i = i0; i < i1; ++i) {
      for (int c = 0; c < p.k; ++c) av[c] = static_cast<float>(a[i * lda + c]);
      for (int j = 0; j < p.n; ++j) {
        for (int c = 0; c < p.k; ++c) bv[c] = static_cast<float>(b[j * ldb + c]);
        double sum = 0.0, m = 0.0;
        for (int q = 0; q < kb; ++q) {
          double block = 0.0, block_mass = 0.0;
          for (int c = q * 128; c < std::min(p.k, q * 128 + 128); ++c) {
            block += av[c] * bv[c];
            block_mass += std::fabs(av[c] * bv[c]);
          }
          double s = 1.0;
          if (S == Fp8Scaling::kTensorwise) s = double(sa[0]) * sb[0];
          if (S == Fp8Scaling::kRowwise) s = double(sa[i]) * sb[j];
          if (S == Fp8Scaling::kBlockwise)
            s = double(sa[i + q * ld_sa]) * sb[q + (j / 128) * ld_sb];
          sum += s * block;
          m += std::fabs(s) * block_mass;
        }
        ref[static_cast<std::size_t>(i) * p.n + j] = sum;
        mass[static_cast<std::size_t>(i) * p.n + j] = m;
      }
    }
  };
  {
    const int threads = std::max(1, std::min<int>(16, std::thread::hardware_concurrency()));
    std::vector<std::thread> pool;
    const int per = (p.m + threads - 1) / threads;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back(reference_rows, std::min(p.m, t * per), std::min(p.m, (t + 1) * per));
    for (auto& t : pool) t.join();
  }

  // Device buffers; D with a guard band before and after, all poisoned.
  constexpr std::size_t kGuard = 256;
  const std::size_t d_elems = static_cast<std::size_t>(p.m) * ldd;
  DeviceBuffer<AB> da(a.size()), db(b.size());
  DeviceBuffer<float> dsa(sa.size()), dsb(sb.size());
  DeviceBuffer<D> dd(d_elems + 2 * kGuard);
  if (!da.ok() || !db.ok() || !dsa.ok() || !dsb.ok() || !dd.ok()) {
    ADD_FAILURE() << what << ": cudaMalloc failed";
    return false;
  }
  cudaMemcpy(da.get(), a.data(), a.size() * sizeof(AB), cudaMemcpyHostToDevice);
  cudaMemcpy(db.get(), b.data(), b.size() * sizeof(AB), cudaMemcpyHostToDevice);
  cudaMemcpy(dsa.get(), sa.data(), sa.size() * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(dsb.get(), sb.data(), sb.size() * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemset(dd.get(), 0x7B, dd.bytes());

  typename Gemm::Arguments args;
  args.m = p.m;
  args.n = p.n;
  args.k = p.k;
  args.a = da.get();
  args.b = db.get();
  args.d = dd.get() + kGuard;
  args.lda = lda;
  args.ldb = ldb;
  args.ldd = ldd;
  args.scale_a = dsa.get();
  args.scale_b = dsb.get();
  args.ld_scale_a = ld_sa;
  args.ld_scale_b = ld_sb;
  args.split_k = p.split_k;
  args.stream_k = p.stream_k;
  // Split-K's and stream-K's workspace, poisoned (its counters need no preparation), guarded.
  tptest::GuardedWorkspace workspace(Gemm::workspace_size(args));
  if (workspace.error() != cudaSuccess) {
    ADD_FAILURE() << what << ": the workspace: " << cudaGetErrorString(workspace.error());
    return false;
  }
  args.workspace = workspace.get();
  args.workspace_bytes = workspace.bytes();
  if (cluster_k != nullptr) {  // how the launch sums split-K's slices (1: counted in)
    typename Gemm::Params params{};
    *cluster_k = Gemm::make_params(params, args) ? params.cluster_k : -1;
  }
  const tilepipe::Status st = Gemm::run(args);
  if (!st) {
    ADD_FAILURE() << what << ": run failed: " << st.message();
    return false;
  }
  const cudaError_t e = tptest::synchronize_within(60.0, what.c_str());
  if (e != cudaSuccess) {
    ADD_FAILURE() << what << ": " << cudaGetErrorString(e);
    return false;
  }
  if (workspace.expect_guards_intact() != cudaSuccess) return false;
  std::vector<D> out(dd.size());
  cudaMemcpy(out.data(), dd.get(), dd.bytes(), cudaMemcpyDeviceToHost);

  // Whether every byte of `x` still holds the poison (0x7B) D was filled with.
  const auto poisoned = [](const D& x) {
    unsigned char bytes[sizeof(D)];
    std::memcpy(bytes, &x, sizeof(D));
    for (unsigned char c : bytes)
      if (c != 0x7B) return false;
    return true;
  };
  for (std::size_t g = 0; g < kGuard; ++g) {
    if (!poisoned(out[g]) || !poisoned(out[kGuard + d_elems + g])) {
      ADD_FAILURE() << what << ": a guard band around D was written";
      return false;
    }
  }
  int bad = 0;
  for (int i = 0; i < p.m; ++i) {
    for (int j = 0; j < ldd; ++j) {
      const D got = out[kGuard + static_cast<std::size_t>(i) * ldd + j];
      if (j >= p.n) {  // D's padding is never written
        if (!poisoned(got) && bad++ < 5)
          ADD_FAILURE() << what << ": D's padding at (" << i << ", " << j << ") was written";
        continue;
      }
      const double r = ref[static_cast<std::size_t>(i) * p.n + j];
      const double g = tptest::to_float_host(got);
      // Exact problems: D is the reference rounded once. Random ones: the tensor cores' fp8
      // accumulation of a k-block of 128 (FP8Bound), the f32 folds, and D's rounding.
      double bound;
      if (p.exact) {
        bound = std::fabs(tptest::to_float_host(tptest::from_float_host<D>(static_cast<float>(r))) -
                          r) *
                1.0000001;
      } else {
        const double m = mass[static_cast<std::size_t>(i) * p.n + j];
        // FP8Bound: each k32 wgmma adds 32 exact products to the accumulator keeping at least 13
        // fraction bits below the largest magnitude involved (the DeepSeek-V3 report: about 14),
        // so it errs by at most 33 units of 2^-13 of the block's mass per step, 4 steps per
        // k-tile: 132 * 2^-13 < 2^-5.9 of the block's mass. The f32 folds (K/128 FMAs, the
        // scale products) add (K/128 + 3) * 2^-24 of the mass; D's rounding half an ulp.
        bound = m * (std::ldexp(1.0, -6) + (kb + 3) * std::ldexp(1.0, -24)) + half_ulp<D>(r);
      }
      const double err = std::fabs(g - r);
      if (!(err <= bound)) {
        if (bad++ < 5)
          ADD_FAILURE() << what << ": D(" << i << ", " << j << ") = " << g << ", reference " << r
                        << ", |error| " << err << " > bound " << bound;
      } else if (worst != nullptr && bound > 0) {
        *worst = std::max(*worst, err / bound);
      }
    }
  }
  return bad == 0;
}

template <class AB, class D, Fp8Scaling S, class Config = tilepipe::Fp8TileConfig>
void run_shapes(bool exact) {
  const Problem shapes[] = {
      {1, 1, 16},       {64, 128, 128},     {128, 128, 256},  {127, 257, 144},
      {200, 300, 1040}, {1, 520, 4096, 16}, {300, 64, 16},    {129, 129, 2064, 0, 16, 3},
      {520, 1000, 512}, {64, 4096, 1024},   {1000, 256, 128},
  };
  std::uint32_t seed = 1;
  for (Problem p : shapes) {
    p.exact = exact;
    EXPECT_TRUE((run_problem<AB, D, S, Config>(p, seed++)));
  }
}

// Each of `cases` on tile `Config` (e4m3 -> bf16) in each of `Modes`, seeds from `seed` on.
template <class Config, Fp8Scaling... Modes, std::size_t N>
void run_cases(const Problem (&cases)[N], std::uint32_t seed) {
  for (const Problem& p : cases) {
    const bool ok[] = {run_problem<__nv_fp8_e4m3, __nv_bfloat16, Modes, Config>(p, seed++)...};
    for (bool each : ok) EXPECT_TRUE(each) << p.m << " x " << p.n << " x " << p.k;
  }
}

TEST(GemmFp8, E4m3Bf16TensorwiseExact) {
  TP_REQUIRE_HOPPER_TIER(fp8_available());
  run_shapes<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kTensorwise>(true);
}
TEST(GemmFp8, E4m3Bf16RowwiseExact) {
  TP_REQUIRE_HOPPER_TIER(fp8_available());
  run_shapes<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kRowwise>(true);
}
TEST(GemmFp8, E4m3Bf16BlockwiseExact) {
  TP_REQUIRE_HOPPER_TIER(fp8_available());
  run_shapes<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kBlockwise>(true);
}
TEST(GemmFp8, E4m3F32BlockwiseExact) {
  TP_REQUIRE_HOPPER_TIER(fp8_available());
  run_shapes<__nv_fp8_e4m3, float, Fp8Scaling::kBlockwise>(true);
}
// e5m2 changes the wgmma's element type and nothing the scales touch (the fold works on f32
// partials), so it runs tensorwise only, and f16 and f32 results (the epilogue's conversion) on
// one tile and mode each: fewer kernels for CI's compile time. The PyTorch package's tests run
// every fp8 type, result type and mode.
TEST(GemmFp8, E5m2Bf16TensorwiseExact) {
  TP_REQUIRE_HOPPER_TIER(fp8_available());
  run_shapes<__nv_fp8_e5m2, __nv_bfloat16, Fp8Scaling::kTensorwise>(true);
}
// The 128 x 256 tile (Fp8WideTileConfig): each k-tile multiplied and folded in two halves.
TEST(GemmFp8, WideTileExact) {
  TP_REQUIRE_HOPPER_TIER(fp8_available());
  run_shapes<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kTensorwise, Fp8WideTileConfig>(true);
  run_shapes<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kRowwise, Fp8WideTileConfig>(true);
  run_shapes<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kBlockwise, Fp8WideTileConfig>(true);
}
// The 64 x 128 tile (Fp8DecodeTileConfig): one consumer warpgroup, so no stagger.
TEST(GemmFp8, DecodeTileExact) {
  TP_REQUIRE_HOPPER_TIER(fp8_available());
  run_shapes<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kTensorwise, Fp8DecodeTileConfig>(true);
  run_shapes<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kRowwise, Fp8DecodeTileConfig>(true);
  run_shapes<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kBlockwise, Fp8DecodeTileConfig>(true);
}
// The 192-wide tiles (one set of partial products; tensorwise and row-wise only): 128 rows with
// two consumer warpgroups and 64 rows with one, edge tiles in N (257, 300, 1000 columns).
TEST(GemmFp8, Tiles192Exact) {
  TP_REQUIRE_HOPPER_TIER(fp8_available());
  run_shapes<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kTensorwise, Fp8Tile192Config>(true);
  run_shapes<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kRowwise, Fp8Tile192Config>(true);
  run_shapes<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kTensorwise, Fp8DecodeTile192Config>(true);
  run_shapes<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kRowwise, Fp8DecodeTile192Config>(true);
}
// The 64 x 64 tile (Fp8DecodeTile64Config): one consumer warpgroup, half the 64 x 128 tile's
// columns (block-wise: two tiles per block of B's scales).
TEST(GemmFp8, DecodeTile64Exact) {
  TP_REQUIRE_HOPPER_TIER(fp8_available());
  run_shapes<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kTensorwise, Fp8DecodeTile64Config>(true);
  run_shapes<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kRowwise, Fp8DecodeTile64Config>(true);
  run_shapes<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kBlockwise, Fp8DecodeTile64Config>(true);
}
// The 64 x 64 tile with two consumer warpgroups on alternate k-tiles, one handing its sums to the
// other (Fp8DecodeTile64KInterleavedConfig; tensorwise and row-wise): one k-tile (the second
// warpgroup has none), odd and even counts, edge tiles, f32 D (its largest shared memory);
// split-K through the workspace and stream-K; many short units per block (the hand-over's
// barriers, from one unit to the next).
TEST(GemmFp8, KInterleavedTile) {
  TP_REQUIRE_HOPPER_TIER(fp8_available());
  using KI = Fp8DecodeTile64KInterleavedConfig;
  run_shapes<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kTensorwise, KI>(true);
  run_shapes<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kRowwise, KI>(true);
  run_shapes<__nv_fp8_e4m3, float, Fp8Scaling::kTensorwise, KI>(false);
  int blocks = 0;
  ASSERT_TRUE(
      (Fp8<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kTensorwise, KI>::stream_k_blocks(blocks)));
  const Problem cases[] = {
      {64, 1024, 2048, 0, 0, 0, true, 4, 0},       // 16 tiles x 4 slices
      {100, 650, 3008, 16, 0, 8, false, 3, 0},     // 22 edge tiles x 3, random values
      {256, 512, 4096, 0, 0, 0, true, 1, blocks},  // stream-K
      {64, 24576, 1536, 0, 0, 0, true, 1, 0},      // 384 tiles of 12 k-tiles
      {1024, 6144, 384, 0, 0, 0, true, 1, 0},      // 1536 tiles of 3 k-tiles
  };
  run_cases<KI, Fp8Scaling::kTensorwise, Fp8Scaling::kRowwise>(cases, 400);
}
// The 64 x 256 tile with two consumer warpgroups of 128 columns each, each storing its half
// (Fp8DecodeTile256SplitConfig), in every mode (each half its own block of B's scales): edge tiles
// whose second half lies past N, f32 D; split-K through the workspace (a slot per half), stream-K;
// one wave of tiles at N = 32768 and many short units per block.
TEST(GemmFp8, SplitColumnsTile) {
  TP_REQUIRE_HOPPER_TIER(fp8_available());
  using SC = Fp8DecodeTile256SplitConfig;
  run_shapes<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kTensorwise, SC>(true);
  run_shapes<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kRowwise, SC>(true);
  run_shapes<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kBlockwise, SC>(true);
  run_shapes<__nv_fp8_e4m3, float, Fp8Scaling::kTensorwise, SC>(false);
  int blocks = 0;
  ASSERT_TRUE(
      (Fp8<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kTensorwise, SC>::stream_k_blocks(blocks)));
  const Problem cases[] = {
      {64, 1024, 2048, 0, 0, 0, true, 4, 0},       // 4 tiles x 4 slices
      {100, 650, 3008, 16, 0, 8, false, 3, 0},     // edge tiles x 3, random values
      {256, 512, 4096, 0, 0, 0, true, 1, blocks},  // stream-K
      {64, 32768, 512, 0, 0, 0, true, 1, 0},       // 128 tiles of 4 k-tiles
      {48, 24576, 1536, 0, 0, 0, false, 1, 0},     // 96 tiles, random values
      {1024, 6144, 384, 0, 0, 0, true, 1, 0},      // 384 tiles of 3 k-tiles
  };
  run_cases<SC, Fp8Scaling::kTensorwise, Fp8Scaling::kRowwise, Fp8Scaling::kBlockwise>(cases, 500);
}
TEST(GemmFp8, RandomValuesWithinBound) {
  TP_REQUIRE_HOPPER_TIER(fp8_available());
  run_shapes<__nv_fp8_e4m3, float, Fp8Scaling::kBlockwise>(false);
  run_shapes<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kRowwise>(false);
  run_shapes<__nv_fp8_e5m2, __nv_bfloat16, Fp8Scaling::kTensorwise>(false);
  run_shapes<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kBlockwise, Fp8WideTileConfig>(false);
  run_shapes<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kTensorwise, Fp8DecodeTileConfig>(false);
  run_shapes<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kRowwise, Fp8Tile192Config>(false);
  run_shapes<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kTensorwise, Fp8DecodeTile192Config>(false);
  run_shapes<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kTensorwise, Fp8DecodeTile64Config>(false);
}

// Split-K and stream-K pieces meet in f32 after the fold: the scales are applied once.
TEST(GemmFp8, SplitKAndStreamK) {
  TP_REQUIRE_HOPPER_TIER(fp8_available());
  int blocks = 0;
  ASSERT_TRUE((Fp8<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kBlockwise>::stream_k_blocks(blocks)));
  const Problem cases[] = {
      {256, 256, 2048, 0, 0, 0, true, 4, 0},
      {130, 300, 1296, 16, 0, 8, true, 3, 0},
      {256, 512, 4096, 0, 0, 0, true, 1, blocks},
      {100, 700, 3072, 0, 0, 0, true, 1, blocks / 2},
  };
  std::uint32_t seed = 100;
  for (const Problem& p : cases) {
    EXPECT_TRUE((run_problem<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kBlockwise>(p, seed++)));
    EXPECT_TRUE((run_problem<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kRowwise>(p, seed++)));
    EXPECT_TRUE(
        (run_problem<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kBlockwise, Fp8WideTileConfig>(
            p, seed++)));
    EXPECT_TRUE(
        (run_problem<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kTensorwise, Fp8WideTileConfig>(
            p, seed++)));
    EXPECT_TRUE(
        (run_problem<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kBlockwise, Fp8DecodeTileConfig>(
            p, seed++)));
    EXPECT_TRUE(
        (run_problem<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kTensorwise, Fp8DecodeTileConfig>(
            p, seed++)));
  }
}

// Split-K on the 64-row tile: slices that all fit on the GPU at once, in clusters of one block
// per slice, meet in the first block's registers at a cluster barrier; more than fit are counted
// in by atomics. Both through the (guarded) workspace, against the reference, in every mode.
TEST(GemmFp8, SplitKInClustersAndThroughTheWorkspace) {
  TP_REQUIRE_HOPPER_TIER(fp8_available());
  struct Case {
    Problem p;
    bool in_clusters;
  };
  const Case cases[] = {
      {{64, 1024, 2048, 0, 0, 0, true, 4, 0}, true},    // 8 tiles x 4 slices
      {{100, 650, 3008, 16, 0, 8, false, 3, 0}, true},  // 12 edge tiles x 3, random values
      {{128, 256, 1024, 0, 16, 0, true, 8, 0}, true},   // 8 tiles x 8 slices of 1 k-tile
      {{64, 24576, 1536, 0, 0, 0, true, 3, 0}, false},  // 192 tiles x 3 slices
  };
  std::uint32_t seed = 300;
  for (const Case& c : cases) {
    int cluster_k[3] = {0, 0, 0};
    EXPECT_TRUE(
        (run_problem<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kTensorwise, Fp8DecodeTileConfig>(
            c.p, seed++, nullptr, &cluster_k[0])));
    EXPECT_TRUE(
        (run_problem<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kRowwise, Fp8DecodeTileConfig>(
            c.p, seed++, nullptr, &cluster_k[1])));
    EXPECT_TRUE(
        (run_problem<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kBlockwise, Fp8DecodeTileConfig>(
            c.p, seed++, nullptr, &cluster_k[2])));
    for (int k : cluster_k) EXPECT_EQ(k, c.in_clusters ? c.p.split_k : 1) << describe(c.p);
  }
}

// e4m3 -> bf16 on tile `Config` in each scale mode, seeds `seed`, `seed + 1`, ...
template <class Config>
void run_every_mode(const Problem& p, std::uint32_t& seed) {
  EXPECT_TRUE(
      (run_problem<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kTensorwise, Config>(p, seed++)));
  EXPECT_TRUE((run_problem<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kRowwise, Config>(p, seed++)));
  EXPECT_TRUE(
      (run_problem<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kBlockwise, Config>(p, seed++)));
}

// Units of fewer k-tiles than the ring has slots, several per block: the two consumers' stagger
// must not let one of them run a unit ahead of the other. Before it was a rendezvous, the first
// case hung on an H200 (split in 3: 576 units of 4 k-tiles on 132 blocks).
TEST(GemmFp8, ShortUnitsSeveralPerBlock) {
  TP_REQUIRE_HOPPER_TIER(fp8_available());
  const Problem cases[] = {
      {64, 24576, 1536, 0, 0, 0, true, 3, 0},  // 192 tiles x 3 slices of 4 k-tiles
      {1024, 6144, 384, 0, 0, 0, true, 1, 0},  // 384 whole tiles of 3 k-tiles
  };
  std::uint32_t seed = 200;
  for (const Problem& p : cases) run_every_mode<tilepipe::Fp8TileConfig>(p, seed);
  // The wide tile's ring has 4 slots: units of 3 k-tiles.
  const Problem wide_cases[] = {
      {64, 24576, 1536, 0, 0, 0, true, 4, 0},   // 96 tiles x 4 slices of 3 k-tiles
      {1024, 12288, 384, 0, 0, 0, true, 1, 0},  // 384 whole tiles of 3 k-tiles
  };
  for (const Problem& p : wide_cases) run_every_mode<Fp8WideTileConfig>(p, seed);
  // The 64-row tile's ring has 8 slots: units of 4 and 3 k-tiles.
  const Problem decode_cases[] = {
      {64, 24576, 1536, 0, 0, 0, true, 3, 0},  // 192 tiles x 3 slices of 4 k-tiles
      {1024, 6144, 384, 0, 0, 0, true, 1, 0},  // 768 whole tiles of 3 k-tiles
  };
  for (const Problem& p : decode_cases) run_every_mode<Fp8DecodeTileConfig>(p, seed);
}

// The README's call: block-wise scales as DeepSeek-V3 and torch._scaled_mm lay them out, checked
// exactly (small integers, power-of-two scales).
TEST(GemmFp8, BlockwiseCallAsInReadme) {
  TP_REQUIRE_HOPPER_TIER(fp8_available());
  const int m = 256, n = 384, k = 512, k_blocks = k / 128;
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> small(-4, 4), exponent(-2, 2);
  std::vector<__nv_fp8_e4m3> ha(m * k), hb(n * k);
  for (auto& x : ha) x = __nv_fp8_e4m3(static_cast<float>(small(rng)));
  for (auto& x : hb) x = __nv_fp8_e4m3(static_cast<float>(small(rng)));
  std::vector<float> hsa(m * k_blocks), hsb(k_blocks * (n / 128));
  for (auto& x : hsa) x = std::ldexp(1.0f, exponent(rng));
  for (auto& x : hsb) x = std::ldexp(1.0f, exponent(rng));
  DeviceBuffer<__nv_fp8_e4m3> da(ha.size()), db(hb.size());
  DeviceBuffer<float> dsa(hsa.size()), dsb(hsb.size());
  DeviceBuffer<__nv_bfloat16> dd(m * n);
  TP_CUDA_ASSERT(cudaMemcpy(da.get(), ha.data(), da.bytes(), cudaMemcpyHostToDevice));
  TP_CUDA_ASSERT(cudaMemcpy(db.get(), hb.data(), db.bytes(), cudaMemcpyHostToDevice));
  TP_CUDA_ASSERT(cudaMemcpy(dsa.get(), hsa.data(), dsa.bytes(), cudaMemcpyHostToDevice));
  TP_CUDA_ASSERT(cudaMemcpy(dsb.get(), hsb.data(), dsb.bytes(), cudaMemcpyHostToDevice));
  TP_CUDA_ASSERT(cudaMemset(dd.get(), 0xFF, dd.bytes()));
  const __nv_fp8_e4m3* a = da.get();
  const __nv_fp8_e4m3* b = db.get();
  const float* scale_a = dsa.get();
  const float* scale_b = dsb.get();
  __nv_bfloat16* d = dd.get();
  cudaStream_t stream = nullptr;

  // [readme:fp8_blockwise]
  using Gemm =
      tilepipe::GemmFp8Sm90<__nv_fp8_e4m3, __nv_bfloat16, tilepipe::Fp8Scaling::kBlockwise>;
  Gemm::Arguments args;
  args.m = m, args.n = n, args.k = k;
  args.a = a, args.lda = k;  // M x K, row-major
  args.b = b, args.ldb = k;  // N x K, K contiguous (a Linear layer's weight)
  args.d = d, args.ldd = n;  // M x N, row-major
  args.scale_a = scale_a;    // scale_a[i + kb * ld_scale_a]: row i, k-block kb (M-major)
  args.ld_scale_a = m;
  args.scale_b = scale_b;  // scale_b[kb + nb * ld_scale_b]: the 128 x 128 block (nb, kb) of B
  args.ld_scale_b = (k + 127) / 128;
  const tilepipe::Status status = Gemm::run(args, stream);
  // [readme:fp8_blockwise]

  ASSERT_TRUE(status) << status.message();
  TP_CUDA_ASSERT_LAUNCH();
  std::vector<__nv_bfloat16> hd(m * n);
  TP_CUDA_ASSERT(cudaMemcpy(hd.data(), d, dd.bytes(), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double r = 0.0;
      for (int c = 0; c < k; ++c)
        r += double(hsa[i + (c / 128) * m]) * hsb[c / 128 + (j / 128) * k_blocks] *
             static_cast<float>(ha[i * k + c]) * static_cast<float>(hb[j * k + c]);
      const float want = __bfloat162float(__float2bfloat16_rn(static_cast<float>(r)));
      const float got = __bfloat162float(hd[i * n + j]);
      if (got != want && bad++ < 5)
        ADD_FAILURE() << "D(" << i << ", " << j << ") = " << got << ", expected " << want;
    }
  EXPECT_EQ(bad, 0);
}

// Bad arguments are refused with a message naming them; nothing is launched.
TEST(GemmFp8, RefusesBadArguments) {
  using G = Fp8<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kBlockwise>;
  DeviceBuffer<__nv_fp8_e4m3> a(64 * 256), b(64 * 256);
  DeviceBuffer<__nv_bfloat16> d(64 * 64);
  DeviceBuffer<float> s(64 * 4);
  auto good = [&] {
    G::Arguments g;
    g.m = 64, g.n = 64, g.k = 256;
    g.a = a.get(), g.b = b.get(), g.d = d.get();
    g.lda = 256, g.ldb = 256, g.ldd = 64;
    g.scale_a = s.get(), g.scale_b = s.get();
    g.ld_scale_a = 64, g.ld_scale_b = 2;
    return g;
  };
  ASSERT_TRUE(G::check_arguments(good()));
  auto refused = [&](G::Arguments g, const char* name) {
    const tilepipe::Status st = G::check_arguments(g);
    EXPECT_FALSE(st) << name;
    EXPECT_NE(st.message().find(name), std::string::npos) << st.message();
  };
  auto g = good();
  g.scale_a = nullptr;
  refused(g, "scale_a");
  g = good();
  g.scale_b = reinterpret_cast<const float*>(reinterpret_cast<const char*>(s.get()) + 2);
  refused(g, "scale_b");
  g = good();
  g.ld_scale_a = 63;
  refused(g, "ld_scale_a");
  g = good();
  g.ld_scale_b = 1;
  refused(g, "ld_scale_b");
  g = good();
  g.k = 250, g.lda = 250;  // a K-major row of 250 bytes: TMA needs strides of 16 bytes
  refused(g, "lda");
  g = good();
  g.a = a.get() + 8;
  refused(g, "A is not");
  g = good();
  g.m = -1;
  refused(g, "m");
  g = good();
  g.ldd = 63;
  refused(g, "ldd");
}

// K = 0: no k-tile, so D = output_op(0) (times B's scales, row-wise: 0 again) in every element,
// with A and B null (never read) and block-wise scales of no element. The tensorwise and row-wise
// folds still read their scales, which must be the caller's, not null.
template <Fp8Scaling S>
void run_k_zero() {
  using G = Fp8<__nv_fp8_e4m3, __nv_bfloat16, S>;
  const int m = 130, n = 300, ldd = 307;
  DeviceBuffer<__nv_bfloat16> d(static_cast<std::size_t>(m) * ldd);
  DeviceBuffer<float> sa(m), sb(n);
  ASSERT_TRUE(d.ok() && sa.ok() && sb.ok());
  ASSERT_EQ(sa.upload(std::vector<float>(m, 2.0f)), cudaSuccess);
  ASSERT_EQ(sb.upload(std::vector<float>(n, 0.5f)), cudaSuccess);
  ASSERT_EQ(d.poison(0x7B), cudaSuccess);
  typename G::Arguments g;
  g.m = m, g.n = n, g.k = 0;
  g.d = d.get(), g.ldd = ldd;
  if (S != Fp8Scaling::kBlockwise) g.scale_a = sa.get(), g.scale_b = sb.get();
  const tilepipe::Status st = G::run(g);
  ASSERT_TRUE(st) << mode_name(S) << ": " << st.message();
  ASSERT_EQ(tptest::synchronize_within(60.0, "GemmFp8 K = 0"), cudaSuccess) << mode_name(S);
  std::vector<__nv_bfloat16> out;
  ASSERT_EQ(d.download(out), cudaSuccess);
  int bad = 0;
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < ldd; ++j) {
      const __nv_bfloat16 got = out[static_cast<std::size_t>(i) * ldd + j];
      unsigned short bits;
      std::memcpy(&bits, &got, sizeof bits);
      const bool ok = j < n ? tptest::to_float_host(got) == 0.0f : bits == 0x7B7B;
      if (!ok && bad++ < 5)
        ADD_FAILURE() << mode_name(S) << ": D(" << i << ", " << j << ") has bits " << bits
                      << (j < n ? ", not 0" : ": D's padding was written");
    }
  }
}

TEST(GemmFp8, KZeroWritesOutputOfZero) {
  TP_REQUIRE_HOPPER_TIER(fp8_available());
  run_k_zero<Fp8Scaling::kTensorwise>();
  run_k_zero<Fp8Scaling::kRowwise>();
  run_k_zero<Fp8Scaling::kBlockwise>();
}

// The randomized test: TILEPIPE_FP8_FUZZ_COUNT problems (default: TILEPIPE_FUZZ_COUNT, at most
// 1000; dimensions up to TILEPIPE_FUZZ_MAX_DIM, at most 700), each a random mode, type,
// output, shape (K a multiple of 16), padding, split-K or stream-K; exact values (every element
// compared to its one rounding) in three of four, random values within the bound in the rest.
TEST(GemmFp8, Random) {
  TP_REQUIRE_HOPPER_TIER(fp8_available());
  // The GPU check's TILEPIPE_FUZZ_COUNT (4000) gives 1000; its sanitizer steps' (60) give 60.
  const std::uint64_t count =
      env_u64("TILEPIPE_FP8_FUZZ_COUNT",
              std::min<std::uint64_t>(env_u64("TILEPIPE_FUZZ_COUNT", 1000), 1000));
  const int max_dim =
      static_cast<int>(std::min<std::uint64_t>(env_u64("TILEPIPE_FUZZ_MAX_DIM", 700), 700));
  const std::uint64_t seed0 = env_u64("TILEPIPE_FUZZ_SEED", 20261126);
  int blocks = 0;
  ASSERT_TRUE((Fp8<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kBlockwise>::stream_k_blocks(blocks)));
  std::mt19937_64 rng(seed0);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<std::uint64_t>(n)); };
  auto dim = [&](int max) {
    switch (pick(3)) {
      case 0: return 1 + pick(64);
      case 1: return std::max(1, 64 * pick(max / 64 + 1) + pick(3) - 1);
      default: return 1 + pick(max);
    }
  };
  int failures = 0, counts[3] = {0, 0, 0}, split = 0, stream = 0, random_values = 0;
  // Problems on the 128 x 128, 128 x 256, 64 x 128, 128 x 192, 64 x 192 and 64 x 64 tiles, the
  // 64 x 64 one with k-interleaved consumers and the 64 x 256 one with split columns.
  int tiles[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  double worst = 0.0;
  for (std::uint64_t i = 0; i < count && failures < 5; ++i) {
    Problem p{dim(max_dim), dim(max_dim), 16 * (1 + pick(160))};
    p.pad_a = 16 * pick(2), p.pad_b = 16 * pick(2), p.pad_d = pick(2) * (1 + pick(9));
    p.exact = pick(4) != 0;
    const int cut = pick(6);
    if (cut == 0) p.split_k = 2 + pick(4), ++split;
    if (cut == 1) p.stream_k = std::max(1, blocks / (1 + pick(4))), ++stream;
    random_values += !p.exact;
    int mode = pick(3);
    const int kind = pick(5);
    // e4m3 -> bf16 runs on each of the eight tiles (the 192-wide and k-interleaved ones
    // tensorwise and row-wise); e5m2 -> bf16 tensorwise and e4m3 -> f32 block-wise (fewer
    // kernels) on the 128 x 128 one.
    const int tile = kind < 2 ? 0 : pick(8);
    if (kind < 2) mode = kind == 0 ? 0 : 2;
    if ((tile == 3 || tile == 4 || tile == 6) && mode == 2) mode = pick(2);
    ++tiles[tile];
    ++counts[mode];
    const auto seed = static_cast<std::uint32_t>(rng());
    bool ok = true;
    double* w = p.exact ? nullptr : &worst;  // exact problems meet their bound with equality
#define TP_FP8_RUN(AB, D, C)                                                        \
  switch (mode) {                                                                   \
    case 0: ok = run_problem<AB, D, Fp8Scaling::kTensorwise, C>(p, seed, w); break; \
    case 1: ok = run_problem<AB, D, Fp8Scaling::kRowwise, C>(p, seed, w); break;    \
    default: ok = run_problem<AB, D, Fp8Scaling::kBlockwise, C>(p, seed, w); break; \
  }
    if (kind == 0) {
      ok = run_problem<__nv_fp8_e5m2, __nv_bfloat16, Fp8Scaling::kTensorwise>(p, seed, w);
    } else if (kind == 1) {
      ok = run_problem<__nv_fp8_e4m3, float, Fp8Scaling::kBlockwise>(p, seed, w);
    } else if (tile == 1) {
      TP_FP8_RUN(__nv_fp8_e4m3, __nv_bfloat16, Fp8WideTileConfig);
    } else if (tile == 2) {
      TP_FP8_RUN(__nv_fp8_e4m3, __nv_bfloat16, Fp8DecodeTileConfig);
    } else if (tile == 5) {
      TP_FP8_RUN(__nv_fp8_e4m3, __nv_bfloat16, Fp8DecodeTile64Config);
    } else if (tile == 7) {
      TP_FP8_RUN(__nv_fp8_e4m3, __nv_bfloat16, Fp8DecodeTile256SplitConfig);
    } else if (tile == 6) {
      ok = mode == 0 ? run_problem<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kTensorwise,
                                   Fp8DecodeTile64KInterleavedConfig>(p, seed, w)
                     : run_problem<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kRowwise,
                                   Fp8DecodeTile64KInterleavedConfig>(p, seed, w);
    } else if (tile >= 3) {
      const bool rows64 = tile == 4;
      if (mode == 0)
        ok = rows64 ? run_problem<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kTensorwise,
                                  Fp8DecodeTile192Config>(p, seed, w)
                    : run_problem<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kTensorwise,
                                  Fp8Tile192Config>(p, seed, w);
      else
        ok =
            rows64
                ? run_problem<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kRowwise,
                              Fp8DecodeTile192Config>(p, seed, w)
                : run_problem<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kRowwise, Fp8Tile192Config>(
                      p, seed, w);
    } else {
      TP_FP8_RUN(__nv_fp8_e4m3, __nv_bfloat16, tilepipe::Fp8TileConfig);
    }
#undef TP_FP8_RUN
    failures += !ok;
  }
  std::printf(
      "[fp8-fuzz] %llu problems (%d tensorwise, %d rowwise, %d blockwise; %d split-K, %d "
      "stream-K; %d on the 128 x 256 tile, %d on the 64 x 128 one, %d on the 128 x 192 one, %d "
      "on the 64 x 192 one, %d on the 64 x 64 one, %d on it k-interleaved, %d on the 64 x 256 "
      "one with split columns; %d random-valued), "
      "%d failures, worst |error|/bound of the random-valued %.3g (seed %llu)\n",
      static_cast<unsigned long long>(counts[0] + counts[1] + counts[2]), counts[0], counts[1],
      counts[2], split, stream, tiles[1], tiles[2], tiles[3], tiles[4], tiles[5], tiles[6],
      tiles[7], random_values, failures, worst, static_cast<unsigned long long>(seed0));
  EXPECT_EQ(failures, 0);
}

}  // namespace
