// GemmGroupedSm90: grouped GEMM on the Hopper tier with the groups' sizes on the device, in its
// contiguous (torch._grouped_mm's offs) and masked forms, B [G, N, K] (bf16 -> bf16) and
// [G, K, N] (f16 -> f32). A and B hold small integers, so every element of D is the exact
// product rounded once to D's type and is compared bit for bit with a CPU reference in double,
// group by group. D is poisoned before each run and guarded by bands before and after it: rows
// outside every group, D's padding and the bands must keep their poison. Sizes that are bad
// (decreasing, negative, past the end) must be clamped (the kernel touches only A, B and D as
// given) and reported in the device status word. The pointer-array form (bf16, B_g [N, K]) is
// checked likewise, group by group in allocations of their own (grouped_pointer_array_case.cuh).
// GemmGrouped.Random draws
// TILEPIPE_GROUPED_FUZZ_COUNT problems (default: TILEPIPE_FUZZ_COUNT's, at most 1000). Skips on
// a GPU that is not sm_90 or in a build without 90a.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <tilepipe/gemm/gemm_grouped.cuh>

#include "device_test_util.cuh"
#include "gemm_test_util.cuh"
#include "grouped_pointer_array_case.cuh"
#include "grouped_test_util.cuh"

namespace {

using tilepipe::GroupedForm;
using tilepipe::Layout;
using tptest::DeviceBuffer;
using tptest::PointerArrayProblem;

// The two kernels of this program: bf16 with B [G, N, K], and f16 -> f32 with B [G, K, N].
template <class AB, class D, Layout LB>
using Grouped = tilepipe::GemmGroupedSm90<AB, D, LB>;
using Bf16 = Grouped<__nv_bfloat16, __nv_bfloat16, Layout::kColumnMajor>;

bool grouped_available() { return Bf16::available(); }

std::uint64_t env_u64(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  return v == nullptr || *v == '\0' ? fallback : std::strtoull(v, nullptr, 10);
}

struct Problem {
  GroupedForm form = GroupedForm::kContiguous;
  int m = 0, n = 0, k = 0;              // m: rows of A and D (contiguous) or of each group (masked)
  std::vector<int> sizes;               // offs or counts, as they are uploaded (possibly bad)
  int pad_a = 0, pad_b = 0, pad_d = 0;  // extra elements of each line (A's, B's rounded up to 8)
  float alpha = 1.0f;
  bool on_demand = true;  // tiles claimed through a workspace (as the PyTorch operator does)
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
                  "/" + std::to_string(p.pad_b) + "/" + std::to_string(p.pad_d) + " alpha " +
                  std::to_string(p.alpha) + (p.on_demand ? " on demand" : " dealt");
  return s + tptest::sizes_text(p.sizes);
}

// One problem's host data, device buffers and check; the sizes may be replaced between runs.
template <class AB, class D, Layout LB>
class GroupedCase {
 public:
  using Gemm = Grouped<AB, D, LB>;
  static constexpr std::size_t kGuard = 256;  // elements of D before and after it
  static constexpr unsigned char kPoison = 0x7B;

  GroupedCase(const Problem& p, std::uint32_t seed)
      : p_(p), groups_(static_cast<int>(p.sizes.size())), lda_(line(p.k + p.pad_a)),
        ldb_(line((LB == Layout::kColumnMajor ? p.k : p.n) + p.pad_b)), ldd_(p.n + p.pad_d),
        masked_(p.form == GroupedForm::kMasked), stride_a_(masked_ ? std::int64_t(p.m) * lda_ : 0),
        stride_b_((LB == Layout::kColumnMajor ? p.n : p.k) * ldb_),
        stride_d_(masked_ ? std::int64_t(p.m) * ldd_ : 0),
        d_elems_(static_cast<std::size_t>(masked_ ? groups_ * stride_d_ : p.m * ldd_)),
        a_(std::max<std::size_t>(1, (masked_ ? groups_ * stride_a_ : p.m * lda_))),
        b_(std::max<std::size_t>(1, groups_ * stride_b_)), d_(d_elems_ + 2 * kGuard),
        sizes_(groups_), status_(1) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> small(-3, 3);
    // Values in the pads would spoil D if read.
    ha_.assign(a_.size(), tptest::from_float_host<AB>(64.0f));
    hb_.assign(b_.size(), tptest::from_float_host<AB>(64.0f));
    for (std::size_t i = 0; i < ha_.size(); ++i)
      if (static_cast<std::int64_t>(i % lda_) < p.k)
        ha_[i] = tptest::from_float_host<AB>(static_cast<float>(small(rng)));
    const std::int64_t b_line = LB == Layout::kColumnMajor ? p.k : p.n;
    for (std::size_t i = 0; i < hb_.size(); ++i)
      if (static_cast<std::int64_t>(i % ldb_) < b_line)
        hb_[i] = tptest::from_float_host<AB>(static_cast<float>(small(rng)));
    ok_ = a_.ok() && b_.ok() && d_.ok() && sizes_.ok() && status_.ok() &&
          a_.upload(ha_) == cudaSuccess && b_.upload(hb_) == cudaSuccess &&
          set_sizes(p.sizes) == cudaSuccess;
  }

  // A leading dimension of A or B: `elements` rounded up to TMA's 16 bytes (8 elements).
  static std::int64_t line(int elements) { return std::max(8, (elements + 7) / 8 * 8); }

  bool ok() const { return ok_; }
  const Problem& problem() const { return p_; }

  // New sizes in the same device array (a CUDA graph's replays read them there).
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
    a.alpha = p_.alpha;
    a.status = status_.get();
    if (p_.on_demand) a.workspace = claims().get(), a.workspace_bytes = claims().bytes();
    return a;
  }

  cudaError_t poison() {
    cudaError_t e = d_.poison(kPoison);
    if (e == cudaSuccess) e = claims().poison(kPoison);
    return e == cudaSuccess ? status_.poison(kPoison) : e;
  }

  // Checks D, the guard bands and the status after a run; false (after ADD_FAILURE) on any error.
  bool check() const {
    const std::string what = describe(p_);
    std::vector<D> out;
    std::vector<int> status;
    if (d_.download(out) != cudaSuccess || status_.download(status) != cudaSuccess) {
      ADD_FAILURE() << what << ": reading D back failed";
      return false;
    }
    // A row of a group holds the exact product of one of the groups whose rows hold it.
    const auto check_row = [&](int batch, int row, const std::vector<int>& candidates,
                               const D* line, std::string* first) {
      int wrong = 0;
      for (int j = 0; j < p_.n; ++j) {
        double want = 0.0;
        bool right = false;
        for (int g : candidates) {
          want = reference(g, batch, row, j);
          const D w = tptest::from_float_host<D>(static_cast<float>(want));
          if (std::memcmp(&w, &line[j], sizeof(D)) == 0) right = true;
        }
        if (!right && wrong++ == 0)
          *first = std::to_string(j) + ") = " + std::to_string(tptest::to_float_host(line[j])) +
                   ", expected " + std::to_string(want);
      }
      return wrong;
    };
    return tptest::check_grouped_d(
        what, out, status[0], p_.sizes,
        {p_.form, p_.m, p_.n, ldd_, stride_d_, kGuard, d_elems_, kPoison}, check_row);
  }

 private:
  // alpha * (row `row` of batch `batch`'s A) . (column j of group g's B), exactly.
  double reference(int g, int batch, int row, int j) const {
    const std::size_t a0 = batch * stride_a_ + std::size_t(row) * lda_;
    const std::size_t b0 = g * stride_b_;
    double sum = 0.0;
    for (int c = 0; c < p_.k; ++c) {
      const std::size_t bi = LB == Layout::kColumnMajor ? b0 + std::size_t(j) * ldb_ + c
                                                        : b0 + std::size_t(c) * ldb_ + j;
      sum += double(tptest::to_float_host(ha_[a0 + c])) * tptest::to_float_host(hb_[bi]);
    }
    return p_.alpha * sum;
  }

  Problem p_;
  int groups_;
  std::int64_t lda_, ldb_, ldd_;
  bool masked_;
  std::int64_t stride_a_, stride_b_, stride_d_;
  std::size_t d_elems_;
  DeviceBuffer<AB> a_, b_;
  DeviceBuffer<D> d_;
  DeviceBuffer<int> sizes_, status_;
  std::vector<AB> ha_, hb_;
  bool ok_ = false;
};

// Runs one problem (poisoned D, one launch) and checks it.
template <class AB, class D, Layout LB>
bool run_problem(const Problem& p, std::uint32_t seed) {
  GroupedCase<AB, D, LB> c(p, seed);
  if (!c.ok() || c.poison() != cudaSuccess) {
    ADD_FAILURE() << describe(p) << ": allocating or filling the buffers failed";
    return false;
  }
  const tilepipe::Status s = Grouped<AB, D, LB>::run(c.args());
  if (!s) {
    ADD_FAILURE() << describe(p) << ": run failed: " << s.message();
    return false;
  }
  const cudaError_t e = tptest::synchronize_within(60.0, describe(p).c_str());
  if (e != cudaSuccess) {
    ADD_FAILURE() << describe(p) << ": " << cudaGetErrorString(e);
    return false;
  }
  return c.check();
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

// Empty groups, one-row groups, groups of whole and partial tiles, very unbalanced groups, rows
// of A past the last group (never written), N and K off the tile, and an odd ldd (every tile
// written from the registers).
TEST(GemmGrouped, ContiguousBf16) {
  TP_REQUIRE_HOPPER_TIER(grouped_available());
  std::vector<Problem> ps = {
      contiguous(256, 128, {300}),
      contiguous(512, 256, {128, 128, 128, 128}),
      contiguous(384, 192, {0, 1, 0, 129, 1, 64, 0, 0, 65, 1}, 37),
      contiguous(200, 100, {1000, 1, 3, 0, 7}),
      contiguous(520, 72, {5, 2, 700, 63}),
      contiguous(256, 2048, {130, 0, 126}),
  };
  ps[3].pad_b = 8;  // K = 100: lda 104 (rounded up to TMA's 16 bytes), ldb 112
  ps[4].pad_d = 3;  // ldd 523: D not 16-byte aligned
  ps[5].alpha = 0.5f;
  ps[2].pad_b = 8, ps[2].pad_d = 8;
  std::uint32_t seed = 1;
  for (Problem p : ps) {
    for (bool on_demand : {true, false}) {
      p.on_demand = on_demand;
      EXPECT_TRUE((run_problem<__nv_bfloat16, __nv_bfloat16, Layout::kColumnMajor>(p, seed)));
    }
    ++seed;
  }
}

TEST(GemmGrouped, OneAnd256Groups) {
  TP_REQUIRE_HOPPER_TIER(grouped_available());
  EXPECT_TRUE((
      run_problem<__nv_bfloat16, __nv_bfloat16, Layout::kColumnMajor>(contiguous(64, 64, {1}), 3)));
  std::mt19937 rng(11);
  std::vector<int> rows(256);
  for (int& r : rows) r = rng() % 4 == 0 ? 0 : static_cast<int>(rng() % 150);
  EXPECT_TRUE((run_problem<__nv_bfloat16, __nv_bfloat16, Layout::kColumnMajor>(
      contiguous(320, 128, rows), 4)));
  std::vector<int> counts(256);
  for (int& c : counts) c = static_cast<int>(rng() % 70);
  EXPECT_TRUE((run_problem<__nv_bfloat16, __nv_bfloat16, Layout::kColumnMajor>(
      masked(64, 256, 64, counts), 5)));
}

TEST(GemmGrouped, MaskedBf16) {
  TP_REQUIRE_HOPPER_TIER(grouped_available());
  std::vector<Problem> ps = {
      masked(256, 256, 128, {256, 0, 1, 129}),
      masked(200, 130, 64, {200, 199, 64, 65, 0}),
      masked(1, 8, 8, {1, 0, 1}),
  };
  ps[1].pad_d = 5;
  std::uint32_t seed = 20;
  for (const Problem& p : ps)
    EXPECT_TRUE((run_problem<__nv_bfloat16, __nv_bfloat16, Layout::kColumnMajor>(p, seed++)));
}

// f16 in, f32 out, B [G, K, N] (N contiguous), both forms.
TEST(GemmGrouped, F16ToF32WithKNLayout) {
  TP_REQUIRE_HOPPER_TIER(grouped_available());
  std::vector<Problem> ps = {
      contiguous(256, 128, {100, 0, 300, 1}),
      contiguous(136, 520, {7, 129}, 5),
      masked(150, 264, 64, {150, 3, 0}),
  };
  ps[1].pad_b = 8;
  std::uint32_t seed = 30;
  for (const Problem& p : ps)
    EXPECT_TRUE((run_problem<__half, float, Layout::kRowMajor>(p, seed++)));
}

// Bad sizes: clamped into A and D (nothing outside is written), reported in the status word.
TEST(GemmGrouped, BadSizesClampedAndReported) {
  TP_REQUIRE_HOPPER_TIER(grouped_available());
  const auto bad = [](GroupedForm form, int m, std::vector<int> sizes) {
    Problem p;
    p.form = form, p.m = m, p.n = 192, p.k = 64, p.sizes = std::move(sizes);
    return p;
  };
  const Problem ps[] = {
      bad(GroupedForm::kContiguous, 300, {100, 50, 200, 300}),     // decreasing
      bad(GroupedForm::kContiguous, 300, {100, 400, 500}),         // past the end
      bad(GroupedForm::kContiguous, 300, {-5, 120, 90, -1}),       // negative
      bad(GroupedForm::kContiguous, 300, {0, 0, 300, INT32_MAX}),  // the largest int
      bad(GroupedForm::kMasked, 130, {-3, 131, 64, 1 << 30}),
  };
  std::uint32_t seed = 40;
  for (const Problem& p : ps)
    EXPECT_TRUE((run_problem<__nv_bfloat16, __nv_bfloat16, Layout::kColumnMajor>(p, seed++)));
}

// K = 0 (D = 0 in the groups' rows), and D without elements: only the status is written.
TEST(GemmGrouped, DegenerateExtents) {
  TP_REQUIRE_HOPPER_TIER(grouped_available());
  Problem p = contiguous(64, 0, {5, 0, 70});
  p.pad_a = 8, p.pad_b = 8;
  EXPECT_TRUE((run_problem<__nv_bfloat16, __nv_bfloat16, Layout::kColumnMajor>(p, 50)));
  for (const std::vector<int>& offs : {std::vector<int>{0, 0}, std::vector<int>{0, 5}}) {
    Problem e = contiguous(64, 64, {0, 0});
    e.sizes = offs;  // m = 0: A and D have no rows
    EXPECT_TRUE((run_problem<__nv_bfloat16, __nv_bfloat16, Layout::kColumnMajor>(e, 51)));
  }
}

// One capture, replayed with other sizes written into the same device array between replays.
TEST(GemmGrouped, GraphReplayWithNewSizes) {
  TP_REQUIRE_HOPPER_TIER(grouped_available());
  GroupedCase<__nv_bfloat16, __nv_bfloat16, Layout::kColumnMajor> c(
      contiguous(256, 128, {100, 200, 0, 212}), 60);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(Bf16::run(c.args()));  // the first call asks the device; the capture only launches
  TP_CUDA_ASSERT(cudaDeviceSynchronize());
  cudaStream_t stream;
  TP_CUDA_ASSERT(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  TP_CUDA_ASSERT(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  const tilepipe::Status captured = Bf16::run(c.args(), stream);
  TP_CUDA_ASSERT(cudaStreamEndCapture(stream, &graph));
  ASSERT_TRUE(captured) << captured.message();
  TP_CUDA_ASSERT(cudaGraphInstantiate(&exec, graph, 0));
  const std::vector<int> replays[] = {{100, 300, 300, 512},
                                      {0, 0, 512, 512},
                                      {1, 2, 3, 4},
                                      {512, 10, 600, 512},
                                      {7, 400, 401, 511}};
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

// The README's call: a mixture-of-experts layer's contiguous form, as torch._grouped_mm takes it.
TEST(GemmGrouped, ContiguousCallAsInReadme) {
  TP_REQUIRE_HOPPER_TIER(grouped_available());
  const int experts = 3, n = 256, k = 128;
  const std::vector<int> host_offs = {40, 40, 300};  // expert 1 got no tokens
  const int tokens = host_offs.back();
  GroupedCase<__nv_bfloat16, __nv_bfloat16, Layout::kColumnMajor> c(contiguous(n, k, {40, 0, 260}),
                                                                    70);
  ASSERT_TRUE(c.ok());
  ASSERT_EQ(c.poison(), cudaSuccess);
  const auto given = c.args();
  const __nv_bfloat16* x = given.a;  // [tokens, k]
  const __nv_bfloat16* w = given.b;  // [experts, n, k]
  __nv_bfloat16* y = given.d;        // [tokens, n]
  const int* offs = given.offs;      // on the device
  int* status = given.status;
  void* claims = given.workspace;  // 4 bytes on the device
  cudaStream_t stream = nullptr;

  // [readme:grouped_contiguous]
  using Gemm = tilepipe::GemmGroupedSm90<__nv_bfloat16, __nv_bfloat16>;
  Gemm::Arguments args;
  args.form = tilepipe::GroupedForm::kContiguous;
  args.groups = experts;
  args.m = tokens, args.n = n, args.k = k;
  args.offs = offs;          // expert g's rows: offs[g-1] .. offs[g] (int32, on the device)
  args.a = x, args.lda = k;  // [tokens, k], row-major
  args.b = w, args.ldb = k, args.batch_stride_b = std::int64_t(n) * k;  // [experts, n, k]
  args.d = y, args.ldd = n;                                             // [tokens, n], row-major
  args.status = status;     // optional: 0, or 1 + the first expert whose offset was bad
  args.workspace = claims;  // optional: tiles claimed on demand
  args.workspace_bytes = Gemm::workspace_size(args);    // 4 bytes: a counter
  const tilepipe::Status st = Gemm::run(args, stream);  // one launch, no host synchronisation
  // [readme:grouped_contiguous]

  ASSERT_TRUE(st) << st.message();
  ASSERT_EQ(host_offs, c.problem().sizes);
  TP_CUDA_ASSERT_LAUNCH();
  EXPECT_TRUE(c.check());
}

// Pointer arrays: groups in allocations of their own with leading dimensions of their own; empty,
// one-row and unbalanced groups, N and K off the tile, odd ldd_g (D_g not 16-byte aligned), alpha.
TEST(GemmGrouped, PointerArrayBf16) {
  TP_REQUIRE_HOPPER_TIER(grouped_available());
  std::vector<PointerArrayProblem> ps = {
      tptest::pointer_array(300, 256, 128, {300, 0, 1, 129, 64}),
      tptest::pointer_array(700, 200, 100, {5, 700, 0, 63, 128, 1}),
      tptest::pointer_array(1, 8, 8, {1, 0, 1}),
      tptest::pointer_array(130, 520, 2048, {130, 65}),
  };
  ps[1].pad_a = {0, 8, 16, 8, 0, 24}, ps[1].pad_b = {8, 0, 0, 16, 8, 0};
  ps[1].pad_d = {3, 0, 1, 8, 5, 2};
  ps[3].alpha = 0.5f;
  std::uint32_t seed = 80;
  for (const PointerArrayProblem& p : ps) EXPECT_TRUE(tptest::run_pointer_array_problem(p, seed++));
}

// Bad groups are skipped (their D_g untouched) and the first reported: negative M_g, M_g past m,
// each flaw of an operand; a null pointer or short line of a group without rows is no flaw, nor
// are null A_g and B_g with K = 0.
TEST(GemmGrouped, PointerArrayBadGroupsSkippedAndReported) {
  TP_REQUIRE_HOPPER_TIER(grouped_available());
  PointerArrayProblem p = tptest::pointer_array(200, 192, 64, {0, 70, -4, 201, 90, 90, 90, 90, 90});
  p.flaw = {tptest::kNullA,    tptest::kNoFlaw,      tptest::kNoFlaw,
            tptest::kNoFlaw,   tptest::kNullA,       tptest::kNullD,
            tptest::kShortLda, tptest::kMisalignedB, tptest::kShortLdd};
  EXPECT_TRUE(tptest::run_pointer_array_problem(p, 90));
  p.rows = {0, 70, 0, 200, 90, 0, 3, 0, 90};  // groups 4, 6 and 8 are bad now
  EXPECT_TRUE(tptest::run_pointer_array_problem(p, 91));
  for (int& f : p.flaw) f = tptest::kNoFlaw;
  p.rows[2] = INT32_MIN, p.rows[5] = INT32_MAX;
  EXPECT_TRUE(tptest::run_pointer_array_problem(p, 92));
  PointerArrayProblem z = tptest::pointer_array(64, 64, 0, {5, 0, 64});
  z.flaw = {tptest::kNullA, tptest::kMisalignedB, tptest::kShortLda};  // K = 0: A, B unread
  EXPECT_TRUE(tptest::run_pointer_array_problem(z, 93));
  z.flaw[1] = tptest::kNullD;  // D_1 without rows: no flaw
  EXPECT_TRUE(tptest::run_pointer_array_problem(z, 94));
}

// One capture of both launches, replayed with new row counts and the groups' A_g swapped between
// replays: each replay's tensor maps are written anew at the same addresses, which the kernel
// must not read stale.
TEST(GemmGrouped, PointerArrayGraphReplay) {
  TP_REQUIRE_HOPPER_TIER(grouped_available());
  using Gemm = tptest::PointerArrayCase::Gemm;
  PointerArrayProblem p = tptest::pointer_array(320, 256, 192, {100, 320, 0, 7});
  p.pad_a = {8, 0, 16, 24}, p.pad_d = {1, 0, 4, 2};
  tptest::PointerArrayCase c(p, 95, 320);
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
  const std::vector<int> rows[] = {
      {100, 320, 0, 7}, {320, 1, 64, 200}, {0, 0, 0, 0}, {5, 321, 128, 300}, {319, 65, 2, 129}};
  const std::vector<int> orders[] = {{0, 1, 2, 3}, {3, 2, 1, 0}, {1, 0, 3, 2}, {2, 3, 0, 1}};
  for (int r = 0; r < 5; ++r) {
    ASSERT_EQ(c.set_sizes(rows[r], orders[r % 4]), cudaSuccess);
    ASSERT_EQ(c.poison(), cudaSuccess);
    TP_CUDA_ASSERT(cudaGraphLaunch(exec, stream));
    TP_CUDA_ASSERT(cudaStreamSynchronize(stream));
    EXPECT_TRUE(c.check()) << "replay " << r;
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

// The README's call of the pointer-array form.
TEST(GemmGrouped, PointerArrayCallAsInReadme) {
  TP_REQUIRE_HOPPER_TIER(grouped_available());
  tptest::PointerArrayCase c(tptest::pointer_array(300, 256, 128, {40, 0, 300}), 97);
  ASSERT_TRUE(c.ok());
  ASSERT_EQ(c.poison(), cudaSuccess);
  const auto given = c.args();
  const int experts = given.groups, max_rows = given.m, n = given.n, k = given.k;
  const int* rows = given.rows;
  const __nv_bfloat16* const* x = given.a;
  const __nv_bfloat16* const* w = given.b;
  __nv_bfloat16* const* y = given.d;
  const std::int64_t *ldx = given.lda, *ldw = given.ldb, *ldy = given.ldd;
  int* status = given.status;
  void* workspace = given.workspace;
  cudaStream_t stream = nullptr;

  // [readme:grouped_pointer_array]
  using Gemm = tilepipe::GemmGroupedPointerArraySm90<__nv_bfloat16, __nv_bfloat16>;
  Gemm::Arguments args;  // every pointer below: G entries on the device
  args.groups = experts;
  args.m = max_rows, args.n = n, args.k = k;  // m: the most rows of any group
  args.rows = rows;                           // M_g (int32)
  args.a = x, args.lda = ldx;                 // A_g: [M_g, k] row-major, lda_g (int64)
  args.b = w, args.ldb = ldw;                 // B_g: [n, k]
  args.d = y, args.ldd = ldy;                 // D_g: [M_g, n] row-major
  args.status = status;                       // optional: 0, or 1 + the first group skipped as bad
  args.workspace = workspace;  // Gemm::workspace_bytes(experts) bytes, 128-byte aligned
  const tilepipe::Status st = Gemm::run(args, stream);  // two launches, no host synchronisation
  // [readme:grouped_pointer_array]

  ASSERT_TRUE(st) << st.message();
  TP_CUDA_ASSERT_LAUNCH();
  EXPECT_TRUE(c.check());
}

// The randomized test: TILEPIPE_GROUPED_FUZZ_COUNT problems (default: TILEPIPE_FUZZ_COUNT, at
// most 1000; extents up to TILEPIPE_FUZZ_MAX_DIM, at most 700), each a random form, type, group
// count (1 to 256, at times one of them), sizes (empty, one-row, unbalanced groups, at times bad
// ones), N, K (a multiple of 8), pads and alpha; a quarter of them pointer arrays (up to 64
// groups in allocations of their own, at times with a flaw or a bad row count).
TEST(GemmGrouped, Random) {
  TP_REQUIRE_HOPPER_TIER(grouped_available());
  // The GPU check's TILEPIPE_FUZZ_COUNT (4000) gives 1000; its sanitizer steps' (60) give 60.
  const std::uint64_t count =
      env_u64("TILEPIPE_GROUPED_FUZZ_COUNT",
              std::min<std::uint64_t>(env_u64("TILEPIPE_FUZZ_COUNT", 1000), 1000));
  const int max_dim =
      static_cast<int>(std::min<std::uint64_t>(env_u64("TILEPIPE_FUZZ_MAX_DIM", 700), 700));
  const std::uint64_t seed0 = env_u64("TILEPIPE_FUZZ_SEED", 20261127);
  std::mt19937_64 rng(seed0);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<std::uint64_t>(n)); };
  int failures = 0, masked_count = 0, f16 = 0, bad_sizes = 0, groups_total = 0, arrays = 0;
  int on_demand = 0;
  std::uint64_t done = 0;
  for (; done < count && failures < 5; ++done) {
    if (pick(4) == 0) {
      const int groups = 1 + (pick(4) == 0 ? pick(64) : pick(16));
      PointerArrayProblem q;
      q.m = 1 + pick(max_dim);
      q.n = pick(3) == 0 ? 8 * (1 + pick(max_dim / 8)) : 1 + pick(max_dim);
      q.k = 8 * pick(65);
      q.alpha = pick(4) == 0 ? 0.5f : 1.0f;
      for (int g = 0; g < groups; ++g) {
        const int kind = pick(5);
        q.rows.push_back(kind == 0   ? 0
                         : kind == 1 ? 1
                         : kind == 2 ? pick(q.m + 1)
                                     : std::min(q.m, 1 + pick(129)));
        q.pad_a.push_back(8 * pick(3)), q.pad_b.push_back(8 * pick(3));
        q.pad_d.push_back(pick(3) == 0 ? 1 + pick(9) : 0);
        q.flaw.push_back(pick(12) == 0 ? 1 + pick(tptest::kFlawKinds - 1) : tptest::kNoFlaw);
      }
      if (pick(10) == 0) q.rows[pick(groups)] = pick(2) == 0 ? -1 - pick(100) : q.m + 1 + pick(100);
      bool any_bad = false;
      for (int g = 0; g < groups; ++g)
        any_bad = any_bad || q.flaw[g] != tptest::kNoFlaw || q.rows[g] < 0 || q.rows[g] > q.m;
      bad_sizes += any_bad;
      ++arrays;
      groups_total += groups;
      failures += !tptest::run_pointer_array_problem(q, static_cast<std::uint32_t>(rng()));
      continue;
    }
    Problem p;
    const int shape = pick(8);
    const int groups = shape == 0 ? 1 : shape == 1 ? 1 + pick(256) : 1 + pick(16);
    // Rows per group: mostly small, some empty, some one row, now and then a big one.
    const int cap = std::max(1, 2 * max_dim / groups);
    std::vector<int> rows(groups);
    for (int& r : rows) {
      const int kind = pick(6);
      r = kind == 0 ? 0 : kind == 1 ? 1 : kind == 2 ? pick(cap + 1) : std::min(cap, 1 + pick(129));
    }
    if (pick(5) == 0) rows[pick(groups)] = std::min(2 * max_dim, 64 * (1 + pick(max_dim / 64 + 1)));
    p.n = pick(3) == 0 ? 8 * (1 + pick(max_dim / 8)) : 1 + pick(max_dim);
    p.k = 8 * pick(65);  // 0 .. 512
    p.pad_a = 8 * pick(2), p.pad_b = 8 * pick(2), p.pad_d = pick(3) == 0 ? 1 + pick(9) : 0;
    p.alpha = pick(4) == 0 ? 0.5f : 1.0f;
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
    if (pick(10) == 0) {  // a bad size: negative, past the end, or (contiguous) decreasing
      const int g = pick(groups), how = pick(3);
      p.sizes[g] = how == 0 ? -1 - pick(100) : how == 1 ? p.m + 1 + pick(100) : p.sizes[g] / 2 - 1;
      ++bad_sizes;
    }
    if (p.m == 0 && p.sizes.back() == 0) p.m = 1;  // keep most problems non-empty
    groups_total += groups;
    const auto seed = static_cast<std::uint32_t>(rng());
    bool ok;
    if (pick(3) == 0) {
      ++f16;
      ok = run_problem<__half, float, Layout::kRowMajor>(p, seed);
    } else {
      ok = run_problem<__nv_bfloat16, __nv_bfloat16, Layout::kColumnMajor>(p, seed);
    }
    failures += !ok;
  }
  std::printf(
      "[grouped-fuzz] %llu problems (%d masked, %d pointer arrays, %d f16 -> f32 with B [G, K, "
      "N], %d with tiles claimed on demand; %d with a bad size or a flaw; %d groups in all), %d "
      "failures (seed %llu)\n",
      static_cast<unsigned long long>(done), masked_count, arrays, f16, on_demand, bad_sizes,
      groups_total, failures, static_cast<unsigned long long>(seed0));
  EXPECT_EQ(failures, 0);
}

}  // namespace
