// Randomized differential testing of GemmMultistage, plus determinism and concurrency.
//
// GemmRandom.Differential draws TILEPIPE_FUZZ_COUNT (default 1000) problems from a seeded
// generator: M, N, K in 1..3000 biased towards tile edges and odd values; random A/B/C/D layouts,
// input and output types and Stages 2..6; alpha and beta including 0 and 1; padded leading
// dimensions; batches (with a broadcast B now and then); and, for the configurations compiled
// with split-K (one stage count per type and layout pair), split_k in {2, 3, 5, 8} two times in
// three, with a poisoned workspace between guard bands. Each is checked element by element
// against cuBLAS (or a double-precision CPU product for small problems) with a bound derived from
// K and the precisions, and the guard bands around every D must keep their sentinel bytes.
// Problem i depends only on (seed, i): to replay one, set TILEPIPE_FUZZ_SEED and
// TILEPIPE_FUZZ_ONLY=i. TILEPIPE_FUZZ_SEED=random draws a fresh seed (printed).
// TILEPIPE_FUZZ_MAX_DIM caps M, N and K (scripts/gpu_check.sh sets it under compute-sanitizer).
// A few configurations fuse an output operator (relu(scale[row] * v + bias[col]), one of them
// with split-K); their problems draw random scales and biases, and the reference applies them.
// On an sm_90 GPU in a build for 90a, about half of the aligned problems without split-K run on
// the Hopper tier (GemmMultistage::run_on, which fails rather than fall back) and the rest on the
// Ampere tier; the summary counts both, and the test fails where a tier got less than its
// minimum share (kMinHopperShare, kMinAmpereShare).
// GemmRandom.HopperSchedules draws problems of the same kinds for the Hopper tier's split-K and
// stream-K (GemmSm90 called directly: the front door runs those on the Ampere tier), a third of
// them decode-sized (M <= 128).
// A quarter of the problems are unaligned: leading dimensions that are not multiples of 16
// bytes (the matrix's extent plus 0..2 elements, odd where that would be a multiple of 8) and
// every pointer one element past its allocation's start, run by a small table of its own
// (narrow_configs(): one GemmMultistage with the narrow kernel per layout pair, since the
// dispatch table is compiled without it) on the Ampere tier's narrow kernel.

#include <cublas_v2.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "device_test_util.cuh"
#include "gemm_dispatch.cuh"

using tilepipe::Layout;

namespace {

using tptest::DType;
using tptest::ErasedArgs;
using tptest::GemmConfig;

// The unaligned problems' GEMMs: GemmMultistage with its narrow kernel (AnyAlignment, the
// default), one per layout pair with the input and output types and stage counts varied. The
// 128 x 128 x 32 tile has no Hopper tier, which these arguments could not take anyway.
template <class AB, class D, Layout LA, Layout LB, int Stages>
using NarrowGemm = tilepipe::GemmMultistage<AB, D, LA, LB, Stages, tilepipe::Identity,
                                            tilepipe::TileConfig<128, 128, 32, 64, 64>>;

template <class AB, class D, Layout LA, Layout LB, int Stages>
tilepipe::Status run_narrow(const ErasedArgs& e, cudaStream_t stream) {
  using Gemm = NarrowGemm<AB, D, LA, LB, Stages>;
  return Gemm::run(tptest::typed_args<Gemm, AB, D>(e), stream);
}
template <class AB, class D, Layout LA, Layout LB, int Stages>
std::size_t workspace_narrow(const ErasedArgs& e) {
  using Gemm = NarrowGemm<AB, D, LA, LB, Stages>;
  return Gemm::workspace_size(tptest::typed_args<Gemm, AB, D>(e));
}
template <class AB, class D, Layout LA, Layout LB, int Stages>
tilepipe::GemmTier tier_narrow(const ErasedArgs& e) {
  using Gemm = NarrowGemm<AB, D, LA, LB, Stages>;
  return Gemm::tier(tptest::typed_args<Gemm, AB, D>(e));
}
template <class AB, class D, Layout LA, Layout LB, int Stages>
GemmConfig narrow_config() {
  return {tptest::dtype_of<AB>(),
          tptest::dtype_of<D>(),
          LA,
          LB,
          Stages,
          false,
          false,
          &run_narrow<AB, D, LA, LB, Stages>,
          &workspace_narrow<AB, D, LA, LB, Stages>,
          &tier_narrow<AB, D, LA, LB, Stages>};
}
const std::vector<GemmConfig>& narrow_configs() {
  static const std::vector<GemmConfig> configs = {
      narrow_config<__half, __half, Layout::kRowMajor, Layout::kColumnMajor, 4>(),
      narrow_config<__nv_bfloat16, float, Layout::kColumnMajor, Layout::kRowMajor, 3>(),
      narrow_config<__half, float, Layout::kRowMajor, Layout::kRowMajor, 2>(),
      narrow_config<__nv_bfloat16, __nv_bfloat16, Layout::kColumnMajor, Layout::kColumnMajor, 5>(),
  };
  return configs;
}

// The least share of the problems each tier must get where the GPU and the build have it: the
// draw gives the Hopper tier half of the aligned problems without split-K (29% of all) and the
// Ampere tier the rest (all of them without the Hopper tier); at 500 problems and more, both
// minimums are over 4 standard deviations below those means, at the default 1,000 over 6.
constexpr double kMinHopperShare = 0.20;
constexpr double kMinAmpereShare = 0.60;
// Below this many problems (the sanitizer runs draw 60) a share says too little to be asserted.
constexpr long long kMinProblemsForShares = 500;

std::uint64_t env_u64(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  if (std::strcmp(v, "random") == 0)
    return std::random_device{}() * 4294967296ull + std::random_device{}();
  return std::strtoull(v, nullptr, 10);
}

std::int64_t round_up(std::int64_t x, std::int64_t to) { return (x + to - 1) / to * to; }
std::int64_t offset_of(Layout l, std::int64_t ld, int r, int c) {
  return l == Layout::kRowMajor ? r * ld + c : c * ld + r;
}
std::int64_t span_of(Layout l, std::int64_t ld, int rows, int cols) {
  return l == Layout::kRowMajor ? (rows - 1) * ld + cols : (cols - 1) * ld + rows;
}

struct Problem {
  int config;  // index into tptest::all_configs()
  int m, n, k, batch;
  Layout layout_cd;
  int pad_a, pad_b, pad_c, pad_d;  // extra elements per leading dimension
  bool broadcast_b;
  float alpha, beta;
  std::uint64_t data_seed;
  int split_k;   // 1 unless the configuration has split-K, or a Hopper schedule splits K
  int stream_k;  // 0 unless a Hopper schedule runs stream-K (its blocks)
  bool hopper;   // run on the Hopper tier (where the device has it)
  int narrow;    // -1, or the unaligned problem's configuration in narrow_configs() (then `config`
                 // is not used, split_k is 1 and the problem runs on the Ampere tier)

  const GemmConfig& gemm() const {
    return narrow >= 0 ? narrow_configs()[narrow] : tptest::all_configs()[config];
  }

  std::string describe() const {
    std::ostringstream s;
    s << gemm().name() << (narrow >= 0 ? " (narrow)" : "") << ", " << m << "x" << n << "x" << k
      << ", batch " << batch << (broadcast_b ? " (B broadcast)" : "") << ", C/D "
      << (layout_cd == Layout::kRowMajor ? "row" : "col") << ", pads " << pad_a << "/" << pad_b
      << "/" << pad_c << "/" << pad_d << ", alpha " << alpha << ", beta " << beta;
    if (split_k > 1) s << ", split_k " << split_k;
    if (stream_k > 0) s << ", stream_k " << stream_k;
    s << ", " << (hopper ? "Hopper" : "Ampere") << " tier";
    return s.str();
  }
};

// Problem `index` of the stream seeded by `seed`.
Problem draw_problem(std::uint64_t seed, std::uint64_t index) {
  std::mt19937_64 rng(seed * 0x2545F4914F6CDD1Dull + index);
  auto pick = [&](int n) { return static_cast<int>(rng() % std::uint64_t(n)); };
  // Under compute-sanitizer the scripts cap the extents (TILEPIPE_FUZZ_MAX_DIM) to keep runs short.
  static const int max_dim = static_cast<int>(env_u64("TILEPIPE_FUZZ_MAX_DIM", 3000));
  auto raw_dim = [&] {
    switch (pick(4)) {
      case 0: return 1 + pick(64);                              // small
      case 1: return std::max(1, 32 * pick(94) + pick(3) - 1);  // on a tile edge, or one off
      case 2: return (1 + pick(3000)) | 1;                      // odd
      default: return 1 + pick(3000);
    }
  };
  auto dim = [&] { return std::max(1, std::min(max_dim, raw_dim())); };
  Problem p{};
  p.config = pick(static_cast<int>(tptest::all_configs().size()));
  p.m = dim();
  p.n = dim();
  p.k = dim();
  const double work = double(p.m) * p.n * p.k;
  p.batch = work <= 5e7 ? 1 + pick(3) : 1;
  p.broadcast_b = p.batch > 1 && pick(5) == 0;
  p.layout_cd = pick(2) ? Layout::kRowMajor : Layout::kColumnMajor;
  p.pad_a = 8 * pick(3);
  p.pad_b = 8 * pick(3);
  p.pad_c = 8 * pick(3);
  p.pad_d = 8 * pick(3);
  const float alphas[] = {1.0f, 1.0f, 0.0f, -1.0f, 0.5f, 1.75f};
  const float betas[] = {0.0f, 0.0f, 1.0f, -0.5f, 2.0f};
  p.alpha = pick(4) ? alphas[pick(6)] : std::uniform_real_distribution<float>(-2, 2)(rng);
  p.beta = pick(4) ? betas[pick(5)] : std::uniform_real_distribution<float>(-2, 2)(rng);
  p.data_seed = rng();
  // Drawn last, so that every other field of problem `index` is what it was before split-K.
  p.split_k = 1;
  if (tptest::all_configs()[p.config].split_k && pick(3) != 0) {
    const int splits[] = {2, 3, 5, 8};
    p.split_k = splits[pick(4)];
  }
  // Each tier gets about half of the problems it can run (the Hopper tier: those without split-K,
  // on an sm_90 GPU in a build for 90a; by that rule, not the library's own answer, which would let
  // a wrong "not available" move every problem to the Ampere tier silently).
  p.hopper = pick(2) == 0 && p.split_k == 1 && tptest::hopper_tier_expected();
  // Drawn after everything else, for the same reason: a quarter of the problems are unaligned.
  p.narrow = -1;
  if (pick(4) == 0) {
    p.narrow = pick(static_cast<int>(narrow_configs().size()));
    p.split_k = 1;
    p.hopper = false;
  }
  p.stream_k = 0;
  return p;
}

// Problem `index` of GemmRandom.HopperSchedules: draw_problem's, aligned, f16 or bf16 inputs, on
// the Hopper tier with split-K (split_k in 2 .. 16) or stream-K (1 block to three waves), every
// third one with M of at most 128 (decode-sized, the pieces then share few tiles).
Problem draw_hopper_problem(std::uint64_t seed, std::uint64_t index, int sms) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + index);
  auto pick = [&](int n) { return static_cast<int>(rng() % std::uint64_t(n)); };
  Problem p = draw_problem(seed, index);
  const auto& configs = tptest::all_configs();
  while (configs[p.config].ab == tptest::DType::kF32) p.config = pick(int(configs.size()));
  p.narrow = -1;
  p.hopper = true;
  if (index % 3 == 0) p.m = 1 + pick(128);
  if (index % 2 == 0) {
    const int splits[] = {2, 3, 4, 5, 8, 16};
    p.split_k = splits[pick(6)];
    p.stream_k = 0;
  } else {
    p.split_k = 1;
    const int blocks[] = {1, 2, 7, sms / 2, sms, sms + 1, 2 * sms, 3 * sms};
    p.stream_k = std::max(1, blocks[pick(8)]);
  }
  return p;
}

struct Stats {
  long long problems = 0, cpu_refs = 0, cublas_refs = 0, elements = 0, guard_elements = 0;
  long long hopper_problems = 0;   // run on the Hopper tier
  long long ampere_problems = 0;   // run on the Ampere tier
  long long split_k_problems = 0;  // run with a workspace (split-K, stream-K)
  long long hopper_split_k = 0;    // on the Hopper tier with split_k > 1
  long long hopper_stream_k = 0;   // on the Hopper tier with stream_k > 0
  long long hopper_small_m = 0;    // on the Hopper tier with a split or stream-K and M <= 128
  long long narrow_problems = 0;   // unaligned, run on a narrow kernel
  double worst_ratio = 0;          // largest |error| / bound seen
};

// Device buffers of one problem. D has guard bands of kGuard elements before and after; the
// split-K workspace has kWorkspaceGuard bytes before and after.
constexpr std::int64_t kGuard = 64;
constexpr std::size_t kWorkspaceGuard = 256;

// Workspace for `args` (none when split-K does not run), poisoned, with guard bands; sets
// args.workspace and args.workspace_bytes. Null on allocation failure.
std::unique_ptr<tptest::DeviceBuffer<unsigned char>> make_workspace(const GemmConfig& cfg,
                                                                    ErasedArgs& args) {
  const std::size_t bytes = cfg.workspace_size(args);
  auto ws = std::make_unique<tptest::DeviceBuffer<unsigned char>>(bytes + 2 * kWorkspaceGuard);
  if (!ws->ok() || ws->poison(0xFF) != cudaSuccess) return nullptr;
  args.workspace = bytes > 0 ? ws->get() + kWorkspaceGuard : nullptr;
  args.workspace_bytes = bytes;
  return ws;
}

// Whether the workspace's guard bands still hold their poison.
bool workspace_guards_intact(const tptest::DeviceBuffer<unsigned char>& ws) {
  unsigned char before[kWorkspaceGuard], after[kWorkspaceGuard];
  if (cudaMemcpy(before, ws.get(), kWorkspaceGuard, cudaMemcpyDeviceToHost) != cudaSuccess ||
      cudaMemcpy(after, ws.get() + ws.bytes() - kWorkspaceGuard, kWorkspaceGuard,
                 cudaMemcpyDeviceToHost) != cudaSuccess)
    return false;
  for (std::size_t i = 0; i < kWorkspaceGuard; ++i)
    if (before[i] != 0xFF || after[i] != 0xFF) return false;
  return true;
}

// Runs problem p and checks it; returns "" on success or a description of what went wrong.
std::string check_problem(const Problem& p, cublasHandle_t handle, Stats& stats) {
  const GemmConfig& cfg = p.gemm();
  const std::size_t ab_size = tptest::size_of(cfg.ab), d_size = tptest::size_of(cfg.d);
  const int m = p.m, n = p.n, k = p.k, batch = p.batch;
  // Aligned problems: leading dimensions and batch strides are multiples of 8 elements, pads of 0,
  // 8 or 16. Unaligned ones: not multiples of 8 (the extent plus 0..2, or one more), and every
  // matrix starts `off` = 1 element into its buffer.
  const std::int64_t off = p.narrow >= 0 ? 1 : 0;
  auto fit = [&](std::int64_t x) { return off ? (x % 8 == 0 ? x + 1 : x) : round_up(x, 8); };
  auto ld_of = [&](std::int64_t inner, int pad) {
    return off ? fit(inner + pad / 8) : fit(inner) + pad;
  };
  const std::int64_t lda = ld_of(cfg.la == Layout::kRowMajor ? k : m, p.pad_a);
  const std::int64_t ldb = ld_of(cfg.lb == Layout::kRowMajor ? n : k, p.pad_b);
  const std::int64_t inner_cd = p.layout_cd == Layout::kRowMajor ? n : m;
  const std::int64_t ldc = ld_of(inner_cd, p.pad_c), ldd = ld_of(inner_cd, p.pad_d);
  const std::int64_t sa = fit(span_of(cfg.la, lda, m, k));
  const std::int64_t sb = p.broadcast_b ? 0 : fit(span_of(cfg.lb, ldb, k, n));
  const std::int64_t sc = fit(span_of(p.layout_cd, ldc, m, n));
  const std::int64_t sd = fit(span_of(p.layout_cd, ldd, m, n)) + 8;
  const std::int64_t na = off + sa * (batch - 1) + span_of(cfg.la, lda, m, k);
  const std::int64_t nb = off + sb * (batch - 1) + span_of(cfg.lb, ldb, k, n);
  const std::int64_t nc = off + sc * (batch - 1) + span_of(p.layout_cd, ldc, m, n);
  const std::int64_t nd = off + sd * (batch - 1) + span_of(p.layout_cd, ldd, m, n) + 2 * kGuard;

  auto cuda_fail = [](const char* what, cudaError_t e) {
    return std::string(what) + ": " + cudaGetErrorString(e);
  };
  tptest::DeviceBuffer<unsigned char> a(na * ab_size), b(nb * ab_size), c(nc * d_size),
      d(nd * d_size);
  if (!a.ok() || !b.ok() || !c.ok() || !d.ok()) return "cudaMalloc failed";
  cudaError_t e = tptest::fill(cfg.ab, a.get(), na, p.data_seed);
  if (e == cudaSuccess) e = tptest::fill(cfg.ab, b.get(), nb, p.data_seed + 1);
  if (e == cudaSuccess) e = tptest::fill(cfg.d, c.get(), nc, p.data_seed + 2);
  // beta == 0: C must not be read, so make it NaN.
  if (e == cudaSuccess && p.beta == 0.0f) e = c.poison(0xFF);
  if (e == cudaSuccess) e = d.poison(0xFF);
  if (e != cudaSuccess) return cuda_fail("filling inputs", e);

  ErasedArgs args;
  args.m = m;
  args.n = n;
  args.k = k;
  args.a = a.get() + off * ab_size;
  args.b = b.get() + off * ab_size;
  args.c = c.get() + off * d_size;
  args.d = d.get() + (kGuard + off) * d_size;
  args.lda = lda;
  args.ldb = ldb;
  args.ldc = ldc;
  args.ldd = ldd;
  args.alpha = p.alpha;
  args.beta = p.beta;
  args.layout_cd = p.layout_cd;
  args.batch_count = batch;
  args.batch_stride_a = sa;
  args.batch_stride_b = sb;
  args.batch_stride_c = sc;
  args.batch_stride_d = sd;
  args.split_k = p.split_k;
  args.stream_k = p.stream_k;
  // The fused configurations' scales (one per row, in [-2, 2]) and biases (one per column).
  std::vector<float> scale, bias;
  tptest::DeviceBuffer<float> d_scale(cfg.fused ? m : 0), d_bias(cfg.fused ? n : 0);
  if (cfg.fused) {
    std::mt19937_64 rng(p.data_seed + 3);
    std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
    for (int i = 0; i < m; ++i) scale.push_back(dist(rng));
    for (int j = 0; j < n; ++j) bias.push_back(dist(rng));
    if (!d_scale.ok() || !d_bias.ok()) return "cudaMalloc failed (scale, bias)";
    if ((e = d_scale.upload(scale)) != cudaSuccess || (e = d_bias.upload(bias)) != cudaSuccess)
      return cuda_fail("upload", e);
    args.scale_row = d_scale.get();
    args.bias_col = d_bias.get();
  }
  // The tier first: the Hopper tier's split-K and stream-K ask for their own workspace.
  args.tier = p.hopper ? tilepipe::GemmTier::kHopper : tilepipe::GemmTier::kAmpere;
  const auto workspace = make_workspace(cfg, args);
  if (!workspace) return "cudaMalloc failed (workspace)";
  const tilepipe::Status status = cfg.run(args, nullptr);
  if (!status) return "run refused a valid problem: " + status.message();
  e = cudaDeviceSynchronize();
  if (e != cudaSuccess) return cuda_fail("kernel", e);
  if (args.workspace_bytes > 0) ++stats.split_k_problems;
  if (p.hopper) ++stats.hopper_problems;
  else ++stats.ampere_problems;
  if (p.hopper && p.split_k > 1) ++stats.hopper_split_k;
  if (p.hopper && p.stream_k > 0) ++stats.hopper_stream_k;
  if (p.hopper && (p.split_k > 1 || p.stream_k > 0) && p.m <= 128) ++stats.hopper_small_m;
  if (p.narrow >= 0) ++stats.narrow_problems;
  if (!workspace_guards_intact(*workspace)) return "the workspace's guard bands were written";

  // Reference alpha * A * B and the magnitude |alpha| * |A| * |B| (for the bound), column-major
  // m x n per batch, in double.
  std::vector<double> ref(std::size_t(batch) * m * n), mag(ref.size());
  std::vector<unsigned char> ha, hb;
  const bool small = double(m) * n * k * batch <= double(1 << 22);
  if (small) {
    ++stats.cpu_refs;
    ha.resize(a.bytes());
    hb.resize(b.bytes());
    if ((e = cudaMemcpy(ha.data(), a.get(), a.bytes(), cudaMemcpyDeviceToHost)) != cudaSuccess ||
        (e = cudaMemcpy(hb.data(), b.get(), b.bytes(), cudaMemcpyDeviceToHost)) != cudaSuccess)
      return cuda_fail("download", e);
    for (int bt = 0; bt < batch; ++bt)
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
          double acc = 0, mg = 0;
          for (int kk = 0; kk < k; ++kk) {
            const double x = tptest::load_as_double(cfg.ab, ha.data(),
                                                    off + bt * sa + offset_of(cfg.la, lda, i, kk));
            const double y = tptest::load_as_double(cfg.ab, hb.data(),
                                                    off + bt * sb + offset_of(cfg.lb, ldb, kk, j));
            acc += x * y;
            mg += std::fabs(x * y);
          }
          ref[(std::size_t(bt) * n + j) * m + i] = double(p.alpha) * acc;
          mag[(std::size_t(bt) * n + j) * m + i] = std::fabs(double(p.alpha)) * mg;
        }
  } else {
    ++stats.cublas_refs;
    // cuBLAS works on its own copies of A and B with slack after the end: its kernels may read a
    // few bytes past the last element (memcheck caught one), while tilepipe's exact-size buffers
    // keep any over-read of tilepipe's visible. |A| and |B| (sign bit cleared) feed the
    // magnitude product of the bound.
    constexpr std::int64_t kSlack = 64;
    tptest::DeviceBuffer<std::uint16_t> ref_a(na + kSlack), ref_b(nb + kSlack), abs_a(na + kSlack),
        abs_b(nb + kSlack);
    tptest::DeviceBuffer<float> r32(std::size_t(batch) * m * n), m32(std::size_t(batch) * m * n);
    if (!ref_a.ok() || !ref_b.ok() || !abs_a.ok() || !abs_b.ok() || !r32.ok() || !m32.ok())
      return "cudaMalloc failed (reference)";
    // Zeroed first: with alpha == 0 cuBLAS may produce its output in a way initcheck does not see.
    if ((e = cudaMemset(r32.get(), 0, r32.bytes())) != cudaSuccess ||
        (e = cudaMemset(m32.get(), 0, m32.bytes())) != cudaSuccess)
      return cuda_fail("memset", e);
    std::vector<std::uint16_t> bits(std::max(na, nb) + kSlack, 0);
    // (From each matrix's first element: cuBLAS gets copies that start there.)
    for (auto [src, copy, abs_copy, cnt] :
         {std::tuple{a.get() + off * 2, ref_a.get(), abs_a.get(), na - off},
          std::tuple{b.get() + off * 2, ref_b.get(), abs_b.get(), nb - off}}) {
      std::fill(bits.begin(), bits.end(), std::uint16_t{0});
      if ((e = cudaMemcpy(bits.data(), src, cnt * 2, cudaMemcpyDeviceToHost)) != cudaSuccess)
        return cuda_fail("download", e);
      if ((e = cudaMemcpy(copy, bits.data(), (cnt + kSlack) * 2, cudaMemcpyHostToDevice)) !=
          cudaSuccess)
        return cuda_fail("upload", e);
      for (std::int64_t i = 0; i < cnt; ++i) bits[i] &= 0x7FFF;
      if ((e = cudaMemcpy(abs_copy, bits.data(), (cnt + kSlack) * 2, cudaMemcpyHostToDevice)) !=
          cudaSuccess)
        return cuda_fail("upload", e);
    }
    const cudaDataType_t t = cfg.ab == DType::kF16 ? CUDA_R_16F : CUDA_R_16BF;
    const cublasOperation_t op_a = cfg.la == Layout::kColumnMajor ? CUBLAS_OP_N : CUBLAS_OP_T;
    const cublasOperation_t op_b = cfg.lb == Layout::kColumnMajor ? CUBLAS_OP_N : CUBLAS_OP_T;
    const float alpha = p.alpha, abs_alpha = std::fabs(p.alpha), zero = 0.0f;
    for (int pass = 0; pass < 2; ++pass) {
      const cublasStatus_t cs = cublasGemmStridedBatchedEx(
          handle, op_a, op_b, m, n, k, pass ? &abs_alpha : &alpha, pass ? abs_a.get() : ref_a.get(),
          t, int(lda), sa, pass ? abs_b.get() : ref_b.get(), t, int(ldb), sb, &zero,
          pass ? m32.get() : r32.get(), CUDA_R_32F, m, std::int64_t(m) * n, batch,
          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
      if (cs != CUBLAS_STATUS_SUCCESS)
        return "cublasGemmStridedBatchedEx failed: " + std::to_string(int(cs));
    }
    std::vector<float> r, mm;
    if ((e = r32.download(r)) != cudaSuccess || (e = m32.download(mm)) != cudaSuccess)
      return cuda_fail("download", e);
    std::copy(r.begin(), r.end(), ref.begin());
    std::copy(mm.begin(), mm.end(), mag.begin());
  }

  std::vector<unsigned char> hc(c.bytes()), hd(d.bytes());
  if ((e = cudaMemcpy(hc.data(), c.get(), c.bytes(), cudaMemcpyDeviceToHost)) != cudaSuccess ||
      (e = cudaMemcpy(hd.data(), d.get(), d.bytes(), cudaMemcpyDeviceToHost)) != cudaSuccess)
    return cuda_fail("download", e);

  // Bound: both tilepipe and the reference accumulate in f32, each within K * 2^-24 * |A||B| of
  // the exact product; then alpha/beta scaling and D's rounding: relative (unit roundoff u) for
  // normal numbers, absolute (half the subnormal spacing, u_sub) below the smallest normal.
  const double u = cfg.d == DType::kF32   ? std::ldexp(1.0, -24)
                   : cfg.d == DType::kF16 ? std::ldexp(1.0, -11)
                                          : std::ldexp(1.0, -8);
  const double u_sub = cfg.d == DType::kF32   ? std::ldexp(1.0, -150)
                       : cfg.d == DType::kF16 ? std::ldexp(1.0, -25)
                                              : std::ldexp(1.0, -134);
  const double gamma = (small ? 1.0 : 2.0) * (k + 2) * std::ldexp(1.0, -24);
  std::vector<char> in_d(nd, 0);
  std::ostringstream bad;
  long long wrong = 0;
  for (int bt = 0; bt < batch; ++bt)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        const std::size_t r_at = (std::size_t(bt) * n + j) * m + i;
        double want = ref[r_at];
        double bound = gamma * mag[r_at];
        if (p.beta != 0.0f) {
          const double cv = double(p.beta) * tptest::load_as_double(
                                                 cfg.d, hc.data(),
                                                 off + bt * sc + offset_of(p.layout_cd, ldc, i, j));
          want += cv;
          bound += std::fabs(cv) * std::ldexp(1.0, -23);
        }
        if (cfg.fused) {
          // relu(scale * v + bias): the scale scales the error so far, the f32 multiply and add
          // each round once, and relu moves no two values further apart.
          const double sv = double(scale[i]) * want;
          bound = std::fabs(double(scale[i])) * bound +
                  std::ldexp(1.0, -23) * (std::fabs(sv) + std::fabs(double(bias[j])));
          want = std::max(0.0, sv + double(bias[j]));
        }
        bound += 2 * u * std::fabs(want) + 2 * u_sub;
        const std::int64_t d_at = kGuard + off + bt * sd + offset_of(p.layout_cd, ldd, i, j);
        in_d[d_at] = 1;
        const double got = tptest::load_as_double(cfg.d, hd.data(), d_at);
        const double err = std::fabs(got - want);
        if (!(err <= bound)) {
          if (++wrong <= 5)
            bad << "\n  batch " << bt << " D(" << i << ", " << j << ") = " << got << ", want "
                << want << " (bound " << bound << ")";
        } else {
          stats.worst_ratio = std::max(stats.worst_ratio, err / bound);
        }
      }
  stats.elements += std::int64_t(batch) * m * n;
  long long clobbered = 0;
  for (std::int64_t i = 0; i < nd; ++i) {
    if (in_d[i]) continue;
    ++stats.guard_elements;
    for (std::size_t by = 0; by < d_size; ++by)
      if (hd[i * d_size + by] != 0xFF) {
        if (++clobbered <= 3)
          bad << "\n  element " << i - kGuard << " of the D buffer (outside D) was written";
        break;
      }
  }
  ++stats.problems;
  if (wrong == 0 && clobbered == 0) return "";
  return std::to_string(wrong) + " wrong elements, " + std::to_string(clobbered) +
         " guard elements written:" + bad.str();
}

// Checks problems `draw(i)` for i < count (only TILEPIPE_FUZZ_ONLY's where set) into `stats`;
// returns the failures (each reported with its replay line: the environment `env`, then the
// program's arguments `args`), stopping after 10 or a sticky CUDA error. `*secs` gets the time.
template <class Draw>
long long run_problems(std::uint64_t count, Draw&& draw, const std::string& env,
                       const std::string& args, Stats& stats, double* secs) {
  const char* only = std::getenv("TILEPIPE_FUZZ_ONLY");
  cublasHandle_t handle;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) {
    ADD_FAILURE() << "cublasCreate failed";
    return 1;
  }
  long long failures = 0;
  const auto start = std::chrono::steady_clock::now();
  for (std::uint64_t i = 0; i < count; ++i) {
    if (only && std::strtoull(only, nullptr, 10) != i) continue;
    const Problem p = draw(i);
    const std::string result = check_problem(p, handle, stats);
    if (!result.empty()) {
      ++failures;
      ADD_FAILURE() << "problem " << i << " (" << p.describe() << "): " << result
                    << "\n  replay: " << env << " TILEPIPE_FUZZ_ONLY=" << i << args;
      if (cudaGetLastError() != cudaSuccess || failures >= 10)
        break;  // a sticky error ends the run
    }
  }
  cublasDestroy(handle);
  *secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return failures;
}

}  // namespace

TEST(GemmRandom, Differential) {
  const std::uint64_t seed = env_u64("TILEPIPE_FUZZ_SEED", 20261121);
  const std::uint64_t count = env_u64("TILEPIPE_FUZZ_COUNT", 1000);
  const char* only = std::getenv("TILEPIPE_FUZZ_ONLY");
  std::printf("[fuzz] seed %llu, %llu problems%s\n", static_cast<unsigned long long>(seed),
              static_cast<unsigned long long>(count), only ? " (one replayed)" : "");
  Stats stats;
  double secs = 0;
  const long long failures = run_problems(
      count, [&](std::uint64_t i) { return draw_problem(seed, i); },
      "TILEPIPE_FUZZ_SEED=" + std::to_string(seed), "", stats, &secs);
  std::printf(
      "[fuzz] %lld problems (%lld on the Hopper tier, %lld on the Ampere tier; %lld vs CPU "
      "double, %lld vs cuBLAS, %lld with split-K, %lld unaligned), %lld "
      "elements and %lld guard elements checked, %lld failures, worst |error|/bound %.3g, "
      "%.1f s, seed %llu\n",
      stats.problems, stats.hopper_problems, stats.ampere_problems, stats.cpu_refs,
      stats.cublas_refs, stats.split_k_problems, stats.narrow_problems, stats.elements,
      stats.guard_elements, failures, stats.worst_ratio, secs,
      static_cast<unsigned long long>(seed));
  EXPECT_EQ(failures, 0) << "seed " << seed;
  if (only) return;
  EXPECT_EQ(stats.problems, static_cast<long long>(count));
  // Each tier's share, where it must run (the Ampere tier on every GPU the test runs on).
  const long long problems = static_cast<long long>(count);
  if (problems < kMinProblemsForShares) {
    std::printf("[fuzz] %lld problems: too few to check each tier's share (%lld needed)\n",
                problems, kMinProblemsForShares);
    return;
  }
  if (tptest::hopper_tier_expected())
    EXPECT_GE(stats.hopper_problems, kMinHopperShare * problems)
        << "the Hopper tier ran too few problems on an sm_90 GPU in a build for 90a; seed " << seed;
  EXPECT_GE(stats.ampere_problems, kMinAmpereShare * problems)
      << "the Ampere tier ran too few problems; seed " << seed;
}

// The Hopper tier's schedulers: TILEPIPE_FUZZ_HOPPER_COUNT problems (default two thirds of
// TILEPIPE_FUZZ_COUNT), half with split-K and half with stream-K, each checked like
// Differential's. Where the GPU and the build have no Hopper tier, skipped.
TEST(GemmRandom, HopperSchedules) {
  TP_REQUIRE_HOPPER_TIER(
      (tilepipe::GemmSm90<__half, __half, Layout::kRowMajor, Layout::kColumnMajor>::available()));
  const std::uint64_t seed = env_u64("TILEPIPE_FUZZ_SEED", 20261121) + 1;
  const std::uint64_t count =
      env_u64("TILEPIPE_FUZZ_HOPPER_COUNT", env_u64("TILEPIPE_FUZZ_COUNT", 1000) * 2 / 3);
  const char* only = std::getenv("TILEPIPE_FUZZ_ONLY");
  int sms = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  Stats stats;
  double secs = 0;
  const long long failures = run_problems(
      count, [&](std::uint64_t i) { return draw_hopper_problem(seed, i, sms); },
      "TILEPIPE_FUZZ_SEED=" + std::to_string(seed - 1),
      " test_gemm_random --gtest_filter=GemmRandom.HopperSchedules", stats, &secs);
  std::printf(
      "[fuzz-hopper] %lld problems on the Hopper tier: %lld split-K, %lld stream-K, %lld of them "
      "with M <= 128; %lld vs CPU double, %lld vs cuBLAS; %lld elements and %lld guard elements "
      "checked, %lld failures, worst |error|/bound %.3g, %.1f s, seed %llu\n",
      stats.problems, stats.hopper_split_k, stats.hopper_stream_k, stats.hopper_small_m,
      stats.cpu_refs, stats.cublas_refs, stats.elements, stats.guard_elements, failures,
      stats.worst_ratio, secs, static_cast<unsigned long long>(seed - 1));
  EXPECT_EQ(failures, 0) << "seed " << seed - 1;
  if (only) return;
  EXPECT_EQ(stats.problems, static_cast<long long>(count));
  EXPECT_EQ(stats.hopper_split_k + stats.hopper_stream_k, stats.problems);
}

namespace {

// Allocates and fills the inputs of problem p, and returns D's bytes after running it on `stream`
// `repeats` times into the same D (each run must give the same bits).
struct Prepared {
  Problem p;
  ErasedArgs args;
  std::unique_ptr<tptest::DeviceBuffer<unsigned char>> a, b, c, d, workspace;
  std::unique_ptr<tptest::DeviceBuffer<float>> scale, bias;  // a fused configuration's vectors
};

std::unique_ptr<Prepared> prepare(const Problem& p) {
  auto out = std::make_unique<Prepared>();
  out->p = p;
  const GemmConfig& cfg = tptest::all_configs()[p.config];
  const std::size_t ab = tptest::size_of(cfg.ab), ds = tptest::size_of(cfg.d);
  const std::int64_t lda = cfg.la == Layout::kRowMajor ? round_up(p.k, 8) : round_up(p.m, 8);
  const std::int64_t ldb = cfg.lb == Layout::kRowMajor ? round_up(p.n, 8) : round_up(p.k, 8);
  const std::int64_t ldcd = p.layout_cd == Layout::kRowMajor ? round_up(p.n, 8) : round_up(p.m, 8);
  const std::int64_t na = span_of(cfg.la, lda, p.m, p.k), nb = span_of(cfg.lb, ldb, p.k, p.n);
  const std::int64_t ncd = span_of(p.layout_cd, ldcd, p.m, p.n);
  out->a = std::make_unique<tptest::DeviceBuffer<unsigned char>>(na * ab);
  out->b = std::make_unique<tptest::DeviceBuffer<unsigned char>>(nb * ab);
  out->c = std::make_unique<tptest::DeviceBuffer<unsigned char>>(ncd * ds);
  out->d = std::make_unique<tptest::DeviceBuffer<unsigned char>>(ncd * ds);
  if (tptest::fill(cfg.ab, out->a->get(), na, p.data_seed) != cudaSuccess ||
      tptest::fill(cfg.ab, out->b->get(), nb, p.data_seed + 1) != cudaSuccess ||
      tptest::fill(cfg.d, out->c->get(), ncd, p.data_seed + 2) != cudaSuccess ||
      out->d->poison(0xFF) != cudaSuccess)
    return nullptr;
  ErasedArgs& e = out->args;
  e.m = p.m;
  e.n = p.n;
  e.k = p.k;
  e.a = out->a->get();
  e.b = out->b->get();
  e.c = out->c->get();
  e.d = out->d->get();
  e.lda = lda;
  e.ldb = ldb;
  e.ldc = ldcd;
  e.ldd = ldcd;
  e.alpha = p.alpha;
  e.beta = p.beta;
  e.layout_cd = p.layout_cd;
  e.split_k = p.split_k;
  if (cfg.fused) {  // FusedOp's scales and biases, random like the other inputs
    out->scale = std::make_unique<tptest::DeviceBuffer<float>>(p.m);
    out->bias = std::make_unique<tptest::DeviceBuffer<float>>(p.n);
    if (tptest::fill(DType::kF32, out->scale->get(), p.m, p.data_seed + 3) != cudaSuccess ||
        tptest::fill(DType::kF32, out->bias->get(), p.n, p.data_seed + 4) != cudaSuccess)
      return nullptr;
    e.scale_row = out->scale->get();
    e.bias_col = out->bias->get();
  }
  out->workspace = make_workspace(cfg, e);
  if (!out->workspace) return nullptr;
  return out;
}

std::vector<unsigned char> read_d(const Prepared& pr) {
  std::vector<unsigned char> h(pr.d->bytes());
  cudaMemcpy(h.data(), pr.d->get(), h.size(), cudaMemcpyDeviceToHost);
  return h;
}

}  // namespace

// The same inputs give bit-identical outputs across repeated runs and across streams.
TEST(GemmRandom, Deterministic) {
  cudaStream_t streams[2];
  for (auto& s : streams) TP_CUDA_ASSERT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (std::uint64_t i = 0; i < 12; ++i) {
    Problem p = draw_problem(777, i);
    p.batch = 1;
    auto pr = prepare(p);
    ASSERT_TRUE(pr) << "setup failed";
    const GemmConfig& cfg = tptest::all_configs()[p.config];
    ASSERT_TRUE(cfg.run(pr->args, nullptr).ok()) << cfg.run(pr->args, nullptr).message();
    TP_CUDA_ASSERT(cudaDeviceSynchronize());
    const std::vector<unsigned char> first = read_d(*pr);
    for (int rep = 0; rep < 4; ++rep) {
      TP_CUDA_ASSERT(pr->d->poison(0xFF));
      cudaStream_t s = rep < 2 ? nullptr : streams[rep - 2];
      ASSERT_TRUE(cfg.run(pr->args, s).ok());
      TP_CUDA_ASSERT(cudaDeviceSynchronize());
      EXPECT_TRUE(read_d(*pr) == first) << "run " << rep + 1 << " differs: " << p.describe();
    }
  }
  for (auto s : streams) cudaStreamDestroy(s);
}

// Many launches of different shapes and configurations on several streams at once give the
// same bits as the same launches one after another.
TEST(GemmRandom, ConcurrentStreamsMatchSequential) {
  constexpr int kProblems = 32, kStreams = 4;
  std::vector<std::unique_ptr<Prepared>> prepared;
  std::vector<std::vector<unsigned char>> sequential;
  for (int i = 0; i < kProblems; ++i) {
    Problem p = draw_problem(4242, i);
    p.batch = 1;
    prepared.push_back(prepare(p));
    ASSERT_TRUE(prepared.back()) << "setup failed";
    ASSERT_TRUE(tptest::all_configs()[p.config].run(prepared.back()->args, nullptr).ok());
    TP_CUDA_ASSERT(cudaDeviceSynchronize());
    sequential.push_back(read_d(*prepared.back()));
    TP_CUDA_ASSERT(prepared.back()->d->poison(0xFF));
  }
  TP_CUDA_ASSERT(cudaDeviceSynchronize());
  cudaStream_t streams[kStreams];
  for (auto& s : streams) TP_CUDA_ASSERT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (int i = 0; i < kProblems; ++i)
    ASSERT_TRUE(tptest::all_configs()[prepared[i]->p.config]
                    .run(prepared[i]->args, streams[i % kStreams])
                    .ok());
  TP_CUDA_ASSERT(cudaDeviceSynchronize());
  for (int i = 0; i < kProblems; ++i)
    EXPECT_TRUE(read_d(*prepared[i]) == sequential[i])
        << "problem " << i << ": " << prepared[i]->p.describe();
  for (auto s : streams) cudaStreamDestroy(s);
}

// Split-K sums its slices in a fixed order: repeated runs, on other streams and with the
// workspace poisoned in between, give bit-identical D.
TEST(GemmRandom, SplitKDeterministic) {
  cudaStream_t stream;
  TP_CUDA_ASSERT(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  int tested = 0;
  for (std::uint64_t i = 0; tested < 8 && i < 1000; ++i) {
    Problem p = draw_problem(9001, i);
    if (!tptest::all_configs()[p.config].split_k) continue;
    p.batch = 1;
    p.split_k = 2 + tested % 7;  // 2 .. 8
    p.k = std::max(p.k, 600);    // long enough for several slices of any k-tile depth
    auto pr = prepare(p);
    ASSERT_TRUE(pr) << "setup failed";
    ASSERT_GT(pr->args.workspace_bytes, 0u) << p.describe();
    const GemmConfig& cfg = tptest::all_configs()[p.config];
    ASSERT_TRUE(cfg.run(pr->args, nullptr).ok()) << cfg.run(pr->args, nullptr).message();
    TP_CUDA_ASSERT(cudaDeviceSynchronize());
    const std::vector<unsigned char> first = read_d(*pr);
    for (int rep = 0; rep < 2; ++rep) {
      TP_CUDA_ASSERT(pr->d->poison(0xFF));
      TP_CUDA_ASSERT(pr->workspace->poison(0xFF));
      ASSERT_TRUE(cfg.run(pr->args, rep == 0 ? nullptr : stream).ok());
      TP_CUDA_ASSERT(cudaDeviceSynchronize());
      EXPECT_TRUE(read_d(*pr) == first)
          << "split-K run " << rep + 1 << " differs: " << p.describe();
    }
    ++tested;
  }
  EXPECT_EQ(tested, 8);
  cudaStreamDestroy(stream);
}
