// GemmGroupedFp8Sm90: the grouped GEMM on FP8 operands with the groups' sizes on the device, in
// the contiguous and masked forms, with tensorwise, row-wise and block-wise scales found per
// group. Every element of D is checked against a CPU reference in double computed from the
// decoded fp8 values and the scales, group by group: exactly where A and B hold small integers
// and the scales powers of two (a scale of the wrong group, row, column or block shows as a wrong
// value), within test_gemm_fp8's derived bound on random values. D is poisoned before each run and
// guarded by bands before and after it: rows outside every group, D's padding and the bands must
// keep their poison, and bad sizes must be clamped and reported in the status word. Tiles are
// claimed on demand (through a workspace, poisoned before each run) or dealt.
// The pointer-array form (GemmGroupedPointerArrayFp8Sm90) is checked group by group in allocations
// of their own (grouped_pointer_array_case.cuh), exactly. GemmGroupedFp8.Random draws
// TILEPIPE_GROUPED_FP8_FUZZ_COUNT problems (default: TILEPIPE_FUZZ_COUNT's, at most 1000). Skips on
// a GPU that is not sm_90 or in a build without 90a.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include <tilepipe/gemm/gemm_grouped_fp8.cuh>
#include <tilepipe/gemm/gemm_grouped_pointer_array_fp8.cuh>

#include "device_test_util.cuh"
#include "gemm_test_util.cuh"
#include "grouped_pointer_array_case.cuh"
#include "grouped_test_util.cuh"

namespace {

using tilepipe::Fp8Scaling;
using tilepipe::GroupedForm;
using tptest::DeviceBuffer;
using tptest::PointerArrayProblem;
using E4m3 = __nv_fp8_e4m3;
using Bf16 = __nv_bfloat16;

// The 128 x 128 tile in every mode, unless a test names the 128 x 256 one (block-wise's default).
template <class AB, class D, Fp8Scaling S, class Config = tilepipe::Fp8TileConfig>
using Grouped = tilepipe::GemmGroupedFp8Sm90<AB, D, S, tilepipe::Identity, Config>;

bool available() { return Grouped<E4m3, Bf16, Fp8Scaling::kTensorwise>::available(); }

std::uint64_t env_u64(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  return v == nullptr || *v == '\0' ? fallback : std::strtoull(v, nullptr, 10);
}

const char* mode_name(Fp8Scaling s) {
  return s == Fp8Scaling::kTensorwise ? "tensorwise"
         : s == Fp8Scaling::kRowwise  ? "rowwise"
                                      : "blockwise";
}

struct Problem {
  GroupedForm form = GroupedForm::kContiguous;
  int m = 0, n = 0, k = 0;              // m: rows of A and D (contiguous) or of each group (masked)
  std::vector<int> sizes;               // offs or counts, as uploaded (possibly bad)
  int pad_a = 0, pad_b = 0, pad_d = 0;  // extra elements per line (A's and B's multiples of 16)
  bool exact = true;                    // small integers and power-of-two scales
  bool on_demand = true;                // tiles claimed through a workspace
};

// The workspace of every on-demand launch, poisoned before each: `run` must zero it.
DeviceBuffer<unsigned>& claims() {
  static DeviceBuffer<unsigned> c(1);
  return c;
}

std::string describe(const Problem& p) {
  std::string s = std::string(p.form == GroupedForm::kMasked ? "masked" : "contiguous") + " m " +
                  std::to_string(p.m) + " n " + std::to_string(p.n) + " k " + std::to_string(p.k) +
                  " G " + std::to_string(p.sizes.size()) + " pads " + std::to_string(p.pad_a) +
                  "/" + std::to_string(p.pad_b) + "/" + std::to_string(p.pad_d) +
                  (p.exact ? " exact" : " random") + (p.on_demand ? " on demand" : " dealt");
  return s + tptest::sizes_text(p.sizes);
}

// Half a unit in the last place of D's type at |x| (f32: 24 bits; bf16: 8).
template <class T>
double half_ulp(double x) {
  const int bits = std::is_same_v<T, float> ? 24 : 8;
  int e = 0;
  std::frexp(std::max(std::fabs(x), 1e-30), &e);
  return std::ldexp(1.0, e - bits - 1);
}

// One problem's host data, device buffers and check; the sizes may be replaced between runs.
template <class AB, class D, Fp8Scaling S, class Config = tilepipe::Fp8TileConfig>
class Case {
 public:
  using Gemm = Grouped<AB, D, S, Config>;
  static constexpr std::size_t kGuard = 256;  // elements of D before and after it
  static constexpr unsigned char kPoison = 0x7B;

  Case(const Problem& p, std::uint32_t seed)
      : p_(p), groups_(static_cast<int>(p.sizes.size())), masked_(p.form == GroupedForm::kMasked),
        lda_(std::max(16, p.k + p.pad_a)), ldb_(std::max(16, p.k + p.pad_b)), ldd_(p.n + p.pad_d),
        kb_((p.k + 127) / 128), nb_((p.n + 127) / 128),
        stride_a_(masked_ ? std::int64_t(p.m) * lda_ : 0), stride_b_(std::int64_t(p.n) * ldb_),
        stride_d_(masked_ ? std::int64_t(p.m) * ldd_ : 0),
        d_elems_(static_cast<std::size_t>(masked_ ? groups_ * stride_d_ : p.m * ldd_)),
        ld_sa_(S == Fp8Scaling::kBlockwise ? p.m + seed % 3 : 0),
        ld_sb_(S == Fp8Scaling::kBlockwise ? kb_ + seed % 2 : 0),
        a_(std::max<std::size_t>(1, masked_ ? groups_ * stride_a_ : p.m * lda_)),
        b_(std::max<std::size_t>(1, groups_ * stride_b_)), d_(d_elems_ + 2 * kGuard),
        sa_(scales_a()), sb_(scales_b()), sizes_(groups_), status_(1) {
    std::mt19937 rng(seed);
    // fp8 values: integers in [-4, 4] (exact in e4m3 and e5m2) or random reals; pads hold
    // values that would spoil D if read.
    std::uniform_int_distribution<int> small(-4, 4);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    const auto fill = [&](std::vector<AB>& v, std::size_t size, std::int64_t ld) {
      v.assign(size, AB(64.0f));
      for (std::size_t i = 0; i < size; ++i)
        if (static_cast<std::int64_t>(i % ld) < p.k)
          v[i] = AB(p.exact ? static_cast<float>(small(rng)) : 3.0f * normal(rng));
    };
    fill(ha_, a_.size(), lda_);
    fill(hb_, b_.size(), ldb_);
    // Scales: powers of two in [1/4, 4] (exact), or reals in [0.1, 2].
    std::uniform_int_distribution<int> exponent(-2, 2);
    std::uniform_real_distribution<float> real(0.1f, 2.0f);
    hsa_.resize(sa_.size());
    hsb_.resize(sb_.size());
    for (float& x : hsa_) x = p.exact ? std::ldexp(1.0f, exponent(rng)) : real(rng);
    for (float& x : hsb_) x = p.exact ? std::ldexp(1.0f, exponent(rng)) : real(rng);
    ok_ = a_.ok() && b_.ok() && d_.ok() && sa_.ok() && sb_.ok() && sizes_.ok() && status_.ok() &&
          a_.upload(ha_) == cudaSuccess && b_.upload(hb_) == cudaSuccess &&
          sa_.upload(hsa_) == cudaSuccess && sb_.upload(hsb_) == cudaSuccess &&
          set_sizes(p.sizes) == cudaSuccess;
  }

  bool ok() const { return ok_; }
  const Problem& problem() const { return p_; }

  cudaError_t set_sizes(const std::vector<int>& sizes) {
    p_.sizes = sizes;
    return sizes_.upload(sizes);
  }

  typename Gemm::Arguments args() const {
    typename Gemm::Arguments a;
    a.form = p_.form;
    a.groups = groups_;
    a.m = p_.m, a.n = p_.n, a.k = p_.k;
    (masked_ ? a.counts : a.offs) = sizes_.get();
    a.a = a_.get(), a.lda = lda_, a.batch_stride_a = stride_a_;
    a.b = b_.get(), a.ldb = ldb_, a.batch_stride_b = stride_b_;
    a.d = d_.get() + kGuard, a.ldd = ldd_, a.batch_stride_d = stride_d_;
    a.scale_a = sa_.get(), a.scale_b = sb_.get();
    a.ld_scale_a = ld_sa_, a.ld_scale_b = ld_sb_;
    a.status = status_.get();
    if (p_.on_demand) a.workspace = claims().get(), a.workspace_bytes = claims().bytes();
    return a;
  }

  cudaError_t poison() {
    cudaError_t e = d_.poison(kPoison);
    if (e == cudaSuccess) e = claims().poison(kPoison);
    return e == cudaSuccess ? status_.poison(kPoison) : e;
  }

  // Checks D, the guard bands and the status after a run; false (after ADD_FAILURE) on an error.
  // `worst` gets the largest |error| / bound of a random problem's elements.
  bool check(double* worst = nullptr) const {
    const std::string what = std::string(tilepipe::ElementTraits<AB>::kName) + " -> " +
                             tptest::type_name<D>() + " " + mode_name(S) +
                             (Config::kN == 256 ? " (wide tile) " : " ") + describe(p_);
    std::vector<D> out;
    std::vector<int> status;
    if (d_.download(out) != cudaSuccess || status_.download(status) != cudaSuccess) {
      ADD_FAILURE() << what << ": reading D back failed";
      return false;
    }
    // A row of a group holds the product of one of the groups whose rows hold it: exactly the
    // reference rounded once (exact problems), or within test_gemm_fp8's FP8Bound (the tensor
    // cores' fp8 accumulation per k-tile, the f32 folds and scales, D's rounding).
    std::mutex mutex;
    double worst_ratio = 0.0;
    const auto check_row = [&](int batch, int row, const std::vector<int>& candidates,
                               const D* line, std::string* first) {
      std::vector<float> av(p_.k), bv(p_.k);
      const std::size_t a0 = batch * stride_a_ + std::size_t(row) * lda_;
      for (int c = 0; c < p_.k; ++c) av[c] = static_cast<float>(ha_[a0 + c]);
      int wrong = 0;
      double row_worst = 0.0;
      for (int j = 0; j < p_.n; ++j) {
        const double got = tptest::to_float_host(line[j]);
        double want = 0.0, bound = 0.0;
        bool right = false;
        for (int g : candidates) {
          const std::size_t b0 = g * stride_b_ + std::size_t(j) * ldb_;
          for (int c = 0; c < p_.k; ++c) bv[c] = static_cast<float>(hb_[b0 + c]);
          double mass = 0.0;
          want = reference(g, batch, row, j, av, bv, &mass);
          bound = p_.exact ? std::fabs(tptest::to_float_host(
                                           tptest::from_float_host<D>(static_cast<float>(want))) -
                                       want) *
                                 1.0000001
                           : mass * (std::ldexp(1.0, -6) + (kb_ + 3) * std::ldexp(1.0, -24)) +
                                 half_ulp<D>(want);
          const double err = std::fabs(got - want);
          if (err <= bound) {
            right = true;
            if (!p_.exact && bound > 0) row_worst = std::max(row_worst, err / bound);
            break;
          }
        }
        if (!right && wrong++ == 0)
          *first = std::to_string(j) + ") = " + std::to_string(got) + ", expected " +
                   std::to_string(want) + " within " + std::to_string(bound);
      }
      std::lock_guard<std::mutex> lock(mutex);
      worst_ratio = std::max(worst_ratio, row_worst);
      return wrong;
    };
    const bool good = tptest::check_grouped_d(
        what, out, status[0], p_.sizes,
        {p_.form, p_.m, p_.n, ldd_, stride_d_, kGuard, d_elems_, kPoison}, check_row);
    if (worst != nullptr) *worst = std::max(*worst, worst_ratio);
    return good;
  }

 private:
  // The scales' counts (gemm_grouped_fp8.cuh's table), at least one each.
  std::size_t scales_a() const {
    const std::int64_t rows = masked_ ? std::int64_t(groups_) * p_.m : p_.m;
    const std::int64_t n = S == Fp8Scaling::kTensorwise ? 1
                           : S == Fp8Scaling::kRowwise  ? rows
                                                        : (masked_ ? groups_ : 1) * kb_ * ld_sa_;
    return static_cast<std::size_t>(std::max<std::int64_t>(1, n));
  }
  std::size_t scales_b() const {
    const std::int64_t n = S == Fp8Scaling::kTensorwise ? groups_
                           : S == Fp8Scaling::kRowwise  ? std::int64_t(groups_) * p_.n
                                                        : std::int64_t(groups_) * nb_ * ld_sb_;
    return static_cast<std::size_t>(std::max<std::int64_t>(1, n));
  }

  // Group g's element (row, j) of batch `batch`: the sum over k-blocks of the block's scale times
  // its exact dot product, in double; `mass` gets the sum of the terms' magnitudes.
  double reference(int g, int batch, int row, int j, const std::vector<float>& av,
                   const std::vector<float>& bv, double* mass) const {
    double sum = 0.0, m = 0.0;
    for (int q = 0; q < kb_; ++q) {
      double block = 0.0, block_mass = 0.0;
      for (int c = q * 128; c < std::min(p_.k, q * 128 + 128); ++c) {
        block += double(av[c]) * bv[c];
        block_mass += std::fabs(double(av[c]) * bv[c]);
      }
      double s;
      if (S == Fp8Scaling::kTensorwise) {
        s = double(hsa_[0]) * hsb_[g];
      } else if (S == Fp8Scaling::kRowwise) {
        s = double(hsa_[(masked_ ? std::size_t(batch) * p_.m : 0) + row]) *
            hsb_[std::size_t(g) * p_.n + j];
      } else {
        const std::size_t a = (masked_ ? std::size_t(batch) * kb_ * ld_sa_ : 0) + q * ld_sa_ + row;
        s = double(hsa_[a]) * hsb_[(std::size_t(g) * nb_ + j / 128) * ld_sb_ + q];
      }
      sum += s * block;
      m += std::fabs(s) * block_mass;
    }
    *mass = m;
    return sum;
  }

  Problem p_;
  int groups_;
  bool masked_;
  std::int64_t lda_, ldb_, ldd_;
  int kb_, nb_;
  std::int64_t stride_a_, stride_b_, stride_d_;
  std::size_t d_elems_;
  std::int64_t ld_sa_, ld_sb_;
  DeviceBuffer<AB> a_, b_;
  DeviceBuffer<D> d_;
  DeviceBuffer<float> sa_, sb_;
  DeviceBuffer<int> sizes_, status_;
  std::vector<AB> ha_, hb_;
  std::vector<float> hsa_, hsb_;
  bool ok_ = false;
};

// Runs one problem (poisoned D, one launch) and checks it.
template <class AB, class D, Fp8Scaling S, class Config = tilepipe::Fp8TileConfig>
bool run_problem(const Problem& p, std::uint32_t seed, double* worst = nullptr) {
  Case<AB, D, S, Config> c(p, seed);
  if (!c.ok() || c.poison() != cudaSuccess) {
    ADD_FAILURE() << describe(p) << ": allocating or filling the buffers failed";
    return false;
  }
  const tilepipe::Status s = Grouped<AB, D, S, Config>::run(c.args());
  if (!s) {
    ADD_FAILURE() << describe(p) << ": run failed: " << s.message();
    return false;
  }
  const cudaError_t e = tptest::synchronize_within(60.0, describe(p).c_str());
  if (e != cudaSuccess) {
    ADD_FAILURE() << describe(p) << ": " << cudaGetErrorString(e);
    return false;
  }
  return c.check(worst);
}

using tptest::offsets;

Problem contiguous(int n, int k, const std::vector<int>& rows, int spare_rows = 0) {
  Problem p;
  p.sizes = offsets(rows);
  p.m = (p.sizes.empty() ? 0 : p.sizes.back()) + spare_rows;
  p.n = n, p.k = k;
  return p;
}

Problem masked(int m, int n, int k, const std::vector<int>& counts) {
  Problem p;
  p.form = GroupedForm::kMasked;
  p.m = m, p.n = n, p.k = k, p.sizes = counts;
  return p;
}

// Empty groups, one-row groups, whole and partial tiles, very unbalanced groups, rows past the
// last group (never written), N and K off the tile and the scale blocks, an odd ldd (tiles written
// from the registers); the same problems masked.
std::vector<Problem> shapes() {
  std::vector<Problem> ps = {
      contiguous(128, 128, {128, 0, 1, 127, 300}),
      contiguous(200, 400, {5, 250, 0, 64}, 40),
      contiguous(384, 1040, {1, 1, 1, 700}),
      contiguous(136, 2064, {129, 0, 0, 64, 3}),
      contiguous(77, 48, {70, 20}),
  };
  ps[1].pad_d = 3, ps[2].pad_a = 16, ps[2].pad_b = 32;
  ps.push_back(masked(130, 300, 400, {130, 0, 1, 64}));
  ps.push_back(masked(64, 129, 2064, {64, 63, 2}));
  ps.back().pad_d = 1;
  return ps;
}

// Each shape with tiles claimed on demand and dealt.
template <Fp8Scaling S>
void run_shapes(std::uint32_t seed) {
  for (Problem p : shapes()) {
    for (bool on_demand : {true, false}) {
      p.on_demand = on_demand;
      EXPECT_TRUE((run_problem<E4m3, Bf16, S>(p, seed)));
    }
    ++seed;
  }
}

TEST(GemmGroupedFp8, TensorwiseExact) {
  TP_REQUIRE_HOPPER_TIER(available());
  run_shapes<Fp8Scaling::kTensorwise>(1);
}

TEST(GemmGroupedFp8, RowwiseExact) {
  TP_REQUIRE_HOPPER_TIER(available());
  run_shapes<Fp8Scaling::kRowwise>(20);
}

TEST(GemmGroupedFp8, BlockwiseExact) {
  TP_REQUIRE_HOPPER_TIER(available());
  run_shapes<Fp8Scaling::kBlockwise>(40);
}

// The 128 x 256 tile block-wise (two blocks of B's scales per tile, folded in halves).
TEST(GemmGroupedFp8, WideTileBlockwise) {
  TP_REQUIRE_HOPPER_TIER(available());
  std::uint32_t seed = 60;
  for (Problem p : shapes()) {
    EXPECT_TRUE(
        (run_problem<E4m3, Bf16, Fp8Scaling::kBlockwise, tilepipe::Fp8WideTileConfig>(p, seed++)));
    p.exact = false;
    EXPECT_TRUE(
        (run_problem<E4m3, Bf16, Fp8Scaling::kBlockwise, tilepipe::Fp8WideTileConfig>(p, seed++)));
  }
}

// Random values and scales within the bound, every mode; e5m2 into f32 row-wise.
TEST(GemmGroupedFp8, RandomValues) {
  TP_REQUIRE_HOPPER_TIER(available());
  double worst = 0.0;
  std::uint32_t seed = 80;
  for (Problem p : shapes()) {
    p.exact = false;
    EXPECT_TRUE((run_problem<E4m3, Bf16, Fp8Scaling::kTensorwise>(p, seed++, &worst)));
    EXPECT_TRUE((run_problem<E4m3, Bf16, Fp8Scaling::kRowwise>(p, seed++, &worst)));
    EXPECT_TRUE((run_problem<E4m3, Bf16, Fp8Scaling::kBlockwise>(p, seed++, &worst)));
    EXPECT_TRUE((run_problem<__nv_fp8_e5m2, float, Fp8Scaling::kRowwise>(p, seed++, &worst)));
  }
  std::printf("[grouped-fp8] random values: worst |error| / bound %.3f\n", worst);
}

TEST(GemmGroupedFp8, OneAnd256Groups) {
  TP_REQUIRE_HOPPER_TIER(available());
  EXPECT_TRUE((run_problem<E4m3, Bf16, Fp8Scaling::kBlockwise>(contiguous(256, 512, {333}), 100)));
  std::vector<int> rows(256);
  for (int g = 0; g < 256; ++g) rows[g] = g % 7 == 0 ? 0 : g % 5 == 0 ? 1 : (g * 37) % 150;
  EXPECT_TRUE((run_problem<E4m3, Bf16, Fp8Scaling::kBlockwise>(contiguous(128, 256, rows), 101)));
  EXPECT_TRUE((run_problem<E4m3, Bf16, Fp8Scaling::kRowwise>(contiguous(136, 128, rows), 102)));
  std::vector<int> counts(256);
  for (int g = 0; g < 256; ++g) counts[g] = (g * 53) % 97;
  EXPECT_TRUE((run_problem<E4m3, Bf16, Fp8Scaling::kBlockwise>(masked(96, 128, 256, counts), 103)));
}

TEST(GemmGroupedFp8, BadSizesClampedAndReported) {
  TP_REQUIRE_HOPPER_TIER(available());
  const auto bad = [](GroupedForm form, int m, std::vector<int> sizes) {
    Problem p;
    p.form = form, p.m = m, p.n = 192, p.k = 256, p.sizes = std::move(sizes);
    return p;
  };
  const Problem ps[] = {
      bad(GroupedForm::kContiguous, 300, {100, 50, 200, 300}),     // decreasing
      bad(GroupedForm::kContiguous, 300, {100, 400, 500}),         // past the end
      bad(GroupedForm::kContiguous, 300, {-5, 120, 90, -1}),       // negative
      bad(GroupedForm::kContiguous, 300, {0, 0, 300, INT32_MAX}),  // the largest int
      bad(GroupedForm::kMasked, 130, {-3, 131, 64, 1 << 30}),
  };
  std::uint32_t seed = 120;
  for (const Problem& p : ps) {
    EXPECT_TRUE((run_problem<E4m3, Bf16, Fp8Scaling::kBlockwise>(p, seed++)));
    EXPECT_TRUE((run_problem<E4m3, Bf16, Fp8Scaling::kRowwise>(p, seed++)));
  }
}

// K = 0 (D = 0 in the groups' rows; block-wise scales may be null), and D without elements:
// only the status is written.
TEST(GemmGroupedFp8, DegenerateExtents) {
  TP_REQUIRE_HOPPER_TIER(available());
  EXPECT_TRUE(
      (run_problem<E4m3, Bf16, Fp8Scaling::kTensorwise>(contiguous(64, 0, {5, 0, 70}), 140)));
  EXPECT_TRUE((run_problem<E4m3, Bf16, Fp8Scaling::kRowwise>(contiguous(64, 0, {5, 0, 70}), 141)));
  EXPECT_TRUE(
      (run_problem<E4m3, Bf16, Fp8Scaling::kBlockwise>(contiguous(64, 0, {5, 0, 70}), 142)));
  for (const std::vector<int>& offs : {std::vector<int>{0, 0}, std::vector<int>{0, 5}}) {
    Problem e = contiguous(64, 128, {0, 0});
    e.sizes = offs;  // m = 0: A and D have no rows
    EXPECT_TRUE((run_problem<E4m3, Bf16, Fp8Scaling::kBlockwise>(e, 143)));
  }
}

// One capture, replayed with other sizes written into the same device array between replays.
TEST(GemmGroupedFp8, GraphReplayWithNewSizes) {
  TP_REQUIRE_HOPPER_TIER(available());
  using Gemm = Grouped<E4m3, Bf16, Fp8Scaling::kBlockwise>;
  Case<E4m3, Bf16, Fp8Scaling::kBlockwise> c(contiguous(256, 384, {100, 200, 0, 212}), 160);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(Gemm::run(c.args()));  // the first call asks the device; the capture only launches
  TP_CUDA_ASSERT(cudaDeviceSynchronize());
  cudaStream_t stream;
  TP_CUDA_ASSERT(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  TP_CUDA_ASSERT(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  const tilepipe::Status captured = Gemm::run(c.args(), stream);
  TP_CUDA_ASSERT(cudaStreamEndCapture(stream, &graph));
  ASSERT_TRUE(captured) << captured.message();
  TP_CUDA_ASSERT(cudaGraphInstantiate(&exec, graph, 0));
  const std::vector<int> replays[] = {
      {100, 300, 300, 512}, {0, 0, 512, 512}, {1, 2, 3, 4}, {512, 10, 600, 512}};
  for (const std::vector<int>& offs : replays) {
    ASSERT_EQ(c.set_sizes(offs), cudaSuccess);
    ASSERT_EQ(c.poison(), cudaSuccess);
    TP_CUDA_ASSERT(cudaGraphLaunch(exec, stream));
    TP_CUDA_ASSERT(cudaStreamSynchronize(stream));
    EXPECT_TRUE(c.check()) << "replay with offs " << describe(c.problem());
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

// The README's call: DeepSeek-V3's recipe (block-wise scales) on the contiguous form.
TEST(GemmGroupedFp8, ContiguousCallAsInReadme) {
  TP_REQUIRE_HOPPER_TIER(available());
  const int experts = 3, n = 256, k = 384;
  Case<E4m3, Bf16, Fp8Scaling::kBlockwise, tilepipe::Fp8WideTileConfig> c(
      contiguous(n, k, {40, 0, 260}), 180);
  ASSERT_TRUE(c.ok());
  ASSERT_EQ(c.poison(), cudaSuccess);
  const auto given = c.args();
  const int tokens = given.m;
  const __nv_fp8_e4m3* x = given.a;       // [tokens, k]
  const __nv_fp8_e4m3* w = given.b;       // [experts, n, k]
  __nv_bfloat16* y = given.d;             // [tokens, n]
  const float* x_scales = given.scale_a;  // [ceil(k / 128), ld_scale_a]
  const float* w_scales = given.scale_b;  // [experts, ceil(n / 128), ld_scale_b]
  const std::int64_t ld_x_scales = given.ld_scale_a, ld_w_scales = given.ld_scale_b;
  const int* offs = given.offs;  // on the device
  int* status = given.status;
  cudaStream_t stream = nullptr;

  // [readme:grouped_fp8]
  using Gemm =
      tilepipe::GemmGroupedFp8Sm90<__nv_fp8_e4m3, __nv_bfloat16, tilepipe::Fp8Scaling::kBlockwise>;
  Gemm::Arguments args;
  args.form = tilepipe::GroupedForm::kContiguous;
  args.groups = experts;
  args.m = tokens, args.n = n, args.k = k;
  args.offs = offs;          // expert g's rows: offs[g-1] .. offs[g] (int32, on the device)
  args.a = x, args.lda = k;  // [tokens, k], row-major
  args.b = w, args.ldb = k, args.batch_stride_b = std::int64_t(n) * k;  // [experts, n, k]
  args.d = y, args.ldd = n;                                             // [tokens, n], row-major
  args.scale_a = x_scales, args.ld_scale_a = ld_x_scales;               // per token and 128 of k
  args.scale_b = w_scales, args.ld_scale_b = ld_w_scales;  // per expert and 128 x 128 block
  args.status = status;  // optional: 0, or 1 + the first expert whose offset was bad
  const tilepipe::Status st = Gemm::run(args, stream);  // one launch, no host synchronisation
  // [readme:grouped_fp8]

  ASSERT_TRUE(st) << st.message();
  TP_CUDA_ASSERT_LAUNCH();
  EXPECT_TRUE(c.check());
}

// The pointer-array form, in each mode (the default tiles: block-wise the wide one).
template <class AB, class D, Fp8Scaling S>
using PointerArrayCase =
    tptest::PointerArrayCaseOf<AB, D, tilepipe::GemmGroupedPointerArrayFp8Sm90<AB, D, S>>;

template <class AB, class D, Fp8Scaling S>
bool run_pointer_array(const PointerArrayProblem& p, std::uint32_t seed) {
  return tptest::run_pointer_array_problem<PointerArrayCase<AB, D, S>>(p, seed);
}

template <class AB, class D, Fp8Scaling S>
void run_pointer_arrays(const std::vector<PointerArrayProblem>& ps, std::uint32_t seed) {
  for (const PointerArrayProblem& p : ps) EXPECT_TRUE((run_pointer_array<AB, D, S>(p, seed++)));
}

// Groups in allocations of their own with leading dimensions (and block-wise ld_scale_a) of
// their own; empty, one-row and unbalanced groups, N and K off the tile and the scale blocks, odd
// ldd_g; e5m2 into f32 row-wise.
TEST(GemmGroupedFp8, PointerArray) {
  TP_REQUIRE_HOPPER_TIER(available());
  std::vector<PointerArrayProblem> ps = {
      tptest::pointer_array(300, 256, 128, {300, 0, 1, 129, 64}),
      tptest::pointer_array(700, 200, 400, {5, 700, 0, 63, 128, 1}),
      tptest::pointer_array(1, 16, 16, {1, 0, 1}),
      tptest::pointer_array(130, 520, 2064, {130, 65}),
  };
  ps[1].pad_a = {0, 16, 32, 16, 0, 48}, ps[1].pad_b = {16, 0, 0, 32, 16, 0};
  ps[1].pad_d = {3, 0, 1, 8, 5, 2};
  run_pointer_arrays<E4m3, Bf16, Fp8Scaling::kTensorwise>(ps, 200);
  run_pointer_arrays<E4m3, Bf16, Fp8Scaling::kRowwise>(ps, 210);
  run_pointer_arrays<E4m3, Bf16, Fp8Scaling::kBlockwise>(ps, 220);
  run_pointer_arrays<__nv_fp8_e5m2, float, Fp8Scaling::kRowwise>(ps, 230);
}

// Bad groups are skipped (their D_g untouched) and the first reported: negative M_g, M_g past m,
// each flaw of an operand or a scale array (block-wise: also a short ld_scale_a; elsewhere no
// flaw); nothing of a group without rows is read, nor A_g and B_g with K = 0, nor block-wise
// scales with K = 0.
template <Fp8Scaling S>
void bad_pointer_arrays(std::uint32_t seed) {
  using namespace tptest;
  PointerArrayProblem p =
      pointer_array(200, 192, 256, {0, 70, -4, 201, 90, 90, 90, 90, 90, 90, 90, 90, 90});
  p.flaw = {kNullScaleA, kNoFlaw,           kNoFlaw,       kNoFlaw,   kNullA,
            kNullD,      kShortLda,         kMisalignedB,  kShortLdd, kNullScaleA,
            kNoFlaw,     kMisalignedScaleB, kShortLdScaleA};
  EXPECT_TRUE((run_pointer_array<E4m3, Bf16, S>(p, seed)));
  p.rows = {0, 70, 0, 200, 0, 0, 0, 0, 0, 90, 0, 4, 90};  // 9 and 11 bad (12 block-wise)
  EXPECT_TRUE((run_pointer_array<E4m3, Bf16, S>(p, seed + 1)));
  p.rows[9] = p.rows[11] = 0;  // 12 alone (block-wise), else none
  EXPECT_TRUE((run_pointer_array<E4m3, Bf16, S>(p, seed + 2)));
  PointerArrayProblem z = pointer_array(64, 64, 0, {5, 0, 64, 7});
  z.flaw = {kNullA, kMisalignedB, kShortLda, kShortLdScaleA};  // K = 0: A, B unread
  EXPECT_TRUE((run_pointer_array<E4m3, Bf16, S>(z, seed + 3)));
  z.flaw[1] = kNullScaleA;        // group 1 has no rows: no flaw
  z.flaw[3] = kMisalignedScaleB;  // read with K = 0 unless block-wise
  EXPECT_TRUE((run_pointer_array<E4m3, Bf16, S>(z, seed + 4)));
}

TEST(GemmGroupedFp8, PointerArrayBadGroupsSkippedAndReported) {
  TP_REQUIRE_HOPPER_TIER(available());
  bad_pointer_arrays<Fp8Scaling::kTensorwise>(240);
  bad_pointer_arrays<Fp8Scaling::kRowwise>(250);
  bad_pointer_arrays<Fp8Scaling::kBlockwise>(260);
}

// Random problems: mode, form, group count (1 to 256), sizes (empty, one-row, unbalanced, at
// times bad), N, K (a multiple of 16), pads, exact or random values; a few on the wide tile; a
// fifth of them pointer arrays (up to 64 groups in allocations of their own, exact values, at
// times with a flaw or a bad row count).
TEST(GemmGroupedFp8, Random) {
  TP_REQUIRE_HOPPER_TIER(available());
  // The GPU check's TILEPIPE_FUZZ_COUNT (4000) gives 1000; its sanitizer steps' (60) give 60.
  const std::uint64_t count =
      env_u64("TILEPIPE_GROUPED_FP8_FUZZ_COUNT",
              std::min<std::uint64_t>(env_u64("TILEPIPE_FUZZ_COUNT", 1000), 1000));
  const int max_dim =
      static_cast<int>(std::min<std::uint64_t>(env_u64("TILEPIPE_FUZZ_MAX_DIM", 600), 600));
  const std::uint64_t seed0 = env_u64("TILEPIPE_FUZZ_SEED", 20261130);
  std::mt19937_64 rng(seed0);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<std::uint64_t>(n)); };
  int failures = 0, masked_count = 0, bad_sizes = 0, random_values = 0, wide = 0, arrays = 0;
  int on_demand = 0;
  int modes[3] = {0, 0, 0};
  double worst = 0.0;
  std::uint64_t done = 0;
  for (; done < count && failures < 5; ++done) {
    if (pick(5) == 0) {
      const int groups = 1 + (pick(4) == 0 ? pick(64) : pick(16));
      PointerArrayProblem q;
      q.m = 1 + pick(max_dim);
      q.n = pick(3) == 0 ? 16 * (1 + pick(max_dim / 16)) : 1 + pick(max_dim);
      q.k = 16 * pick(49);
      bool any_bad = false;
      for (int g = 0; g < groups; ++g) {
        const int kind = pick(5);
        q.rows.push_back(kind == 0   ? 0
                         : kind == 1 ? 1
                         : kind == 2 ? pick(q.m + 1)
                                     : std::min(q.m, 1 + pick(129)));
        q.pad_a.push_back(16 * pick(3)), q.pad_b.push_back(16 * pick(3));
        q.pad_d.push_back(pick(3) == 0 ? 1 + pick(9) : 0);
        q.flaw.push_back(pick(12) == 0 ? 1 + pick(tptest::kFp8FlawKinds - 1) : tptest::kNoFlaw);
        any_bad = any_bad || q.flaw.back() != tptest::kNoFlaw;
      }
      if (pick(10) == 0) {
        q.rows[pick(groups)] = pick(2) == 0 ? -1 - pick(100) : q.m + 1 + pick(100);
        any_bad = true;
      }
      bad_sizes += any_bad;
      ++arrays;
      const auto seed = static_cast<std::uint32_t>(rng());
      const int mode = pick(3);
      ++modes[mode];
      bool ok;
      if (mode == 0) ok = run_pointer_array<E4m3, Bf16, Fp8Scaling::kTensorwise>(q, seed);
      else if (mode == 2) ok = run_pointer_array<E4m3, Bf16, Fp8Scaling::kBlockwise>(q, seed);
      else if (pick(3) == 0)
        ok = run_pointer_array<__nv_fp8_e5m2, float, Fp8Scaling::kRowwise>(q, seed);
      else ok = run_pointer_array<E4m3, Bf16, Fp8Scaling::kRowwise>(q, seed);
      failures += !ok;
      continue;
    }
    Problem p;
    const int shape = pick(8);
    const int groups = shape == 0 ? 1 : shape == 1 ? 1 + pick(256) : 1 + pick(16);
    const int cap = std::max(1, 2 * max_dim / groups);
    std::vector<int> rows(groups);
    for (int& r : rows) {
      const int kind = pick(6);
      r = kind == 0 ? 0 : kind == 1 ? 1 : kind == 2 ? pick(cap + 1) : std::min(cap, 1 + pick(129));
    }
    p.n = pick(3) == 0 ? 16 * (1 + pick(max_dim / 16)) : 1 + pick(max_dim);
    p.k = 16 * pick(49);  // 0 .. 768
    p.pad_a = 16 * pick(2), p.pad_b = 16 * pick(2), p.pad_d = pick(3) == 0 ? 1 + pick(9) : 0;
    p.exact = pick(3) != 0;
    p.on_demand = pick(2) == 0;
    on_demand += p.on_demand;
    if (pick(3) == 0) {
      p.form = GroupedForm::kMasked;
      p.m = 1 + pick(std::max(1, cap));
      p.sizes = rows;
      for (int& c : p.sizes) c = std::min(c, p.m);
      ++masked_count;
    } else {
      p.sizes = offsets(rows);
      p.m = p.sizes.back() + (pick(4) == 0 ? pick(70) : 0);
    }
    if (pick(10) == 0) {
      const int g = pick(groups), how = pick(3);
      p.sizes[g] = how == 0 ? -1 - pick(100) : how == 1 ? p.m + 1 + pick(100) : p.sizes[g] / 2 - 1;
      ++bad_sizes;
      // Bad sizes may make groups overlap, and a row of two groups may hold either's product:
      // exact values keep that check strict (a random value near the other group's would pass).
      p.exact = true;
    }
    if (p.m == 0 && p.sizes.back() == 0) p.m = 1;
    random_values += !p.exact;
    const auto seed = static_cast<std::uint32_t>(rng());
    const int mode = pick(3);
    ++modes[mode];
    bool ok;
    if (mode == 0) {
      ok = run_problem<E4m3, Bf16, Fp8Scaling::kTensorwise>(p, seed, &worst);
    } else if (mode == 1) {
      ok = run_problem<E4m3, Bf16, Fp8Scaling::kRowwise>(p, seed, &worst);
    } else if (pick(8) == 0) {
      ++wide;
      ok = run_problem<E4m3, Bf16, Fp8Scaling::kBlockwise, tilepipe::Fp8WideTileConfig>(p, seed,
                                                                                        &worst);
    } else {
      ok = run_problem<E4m3, Bf16, Fp8Scaling::kBlockwise>(p, seed, &worst);
    }
    failures += !ok;
  }
  std::printf(
      "[grouped-fp8-fuzz] %llu problems (%d tensorwise, %d rowwise, %d blockwise of which %d on "
      "the wide tile; %d masked; %d pointer arrays; %d with tiles claimed on demand; %d with a "
      "bad size or a flaw; %d random-valued), %d failures, worst |error|/bound of the "
      "random-valued %.3f (seed %llu)\n",
      static_cast<unsigned long long>(done), modes[0], modes[1], modes[2], wide, masked_count,
      arrays, on_demand, bad_sizes, random_values, failures, worst,
      static_cast<unsigned long long>(seed0));
  EXPECT_EQ(failures, 0);
}

}  // namespace
