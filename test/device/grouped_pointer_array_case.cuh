// One problem of a pointer-array grouped GEMM for test_gemm_grouped (GemmGroupedPointerArraySm90,
// bf16, B_g [N, K]) and test_gemm_grouped_fp8 (GemmGroupedPointerArrayFp8Sm90, fp8 with each
// group's scale arrays): every group's A_g, B_g, D_g (and scales) in an allocation of its own,
// with leading dimensions of its own, small integers (and power-of-two scales) so that D is exact.
// Each D_g is poisoned before a run and guarded by bands inside its allocation: its rows past M_g
// (up to its allocation's), its padding, the bands and every skipped group's D_g must keep their
// poison. Flaws (null pointers, short leading dimensions, a misaligned B_g; FP8: a null scale_a, a
// misaligned scale_b, block-wise a short ld_scale_a) make a group with rows bad: it must be
// skipped and reported in the status.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <tilepipe/gemm/gemm_grouped_pointer_array.cuh>
#include <tilepipe/gemm/gemm_grouped_pointer_array_fp8.cuh>

#include "device_test_util.cuh"
#include "gemm_test_util.cuh"

namespace tptest {

enum PointerArrayFlaw {
  kNoFlaw,
  kNullA,
  kNullD,
  kShortLda,
  kMisalignedB,
  kShortLdd,
  kFlawKinds,  // the flaws of every pointer-array GEMM; FP8's scale arrays' follow
  kNullScaleA = kFlawKinds,
  kMisalignedScaleB,
  kShortLdScaleA,  // block-wise only (elsewhere no flaw)
  kFp8FlawKinds
};

struct PointerArrayProblem {
  int m = 0, n = 0, k = 0;               // m: the bound on every group's rows
  std::vector<int> rows;                 // M_g as uploaded (possibly negative or past m)
  std::vector<int> pad_a, pad_b, pad_d;  // per group: extra elements of each line
  std::vector<int> flaw;                 // per group: a PointerArrayFlaw
  float alpha = 1.0f;
};

inline std::string describe(const PointerArrayProblem& p) {
  std::string s = "pointer-array m " + std::to_string(p.m) + " n " + std::to_string(p.n) + " k " +
                  std::to_string(p.k) + " G " + std::to_string(p.rows.size()) + " alpha " +
                  std::to_string(p.alpha) + " rows/flaw";
  for (std::size_t g = 0; g < p.rows.size() && g < 12; ++g)
    s += " " + std::to_string(p.rows[g]) + "/" + std::to_string(p.flaw[g]);
  return s + (p.rows.size() > 12 ? " ..." : "");
}

// A problem whose groups have `rows`, no pads and no flaws.
inline PointerArrayProblem pointer_array(int m, int n, int k, const std::vector<int>& rows) {
  PointerArrayProblem p;
  p.m = m, p.n = n, p.k = k, p.rows = rows;
  p.pad_a.assign(rows.size(), 0), p.pad_b = p.pad_a, p.pad_d = p.pad_a, p.flaw = p.pad_a;
  return p;
}

// `Gemm`: GemmGroupedPointerArraySm90<AB, D> or GemmGroupedPointerArrayFp8Sm90<AB, D, ...>.
template <class AB, class D, class Gemm_>
class PointerArrayCaseOf {
 public:
  using Gemm = Gemm_;
  static constexpr bool kFp8 = tilepipe::is_fp8_element_v<AB>;
  static constexpr std::size_t kGuard = 128;  // elements before and after each D_g
  static constexpr unsigned char kPoison = 0x7B;

  // `capacity`: rows of every A_g and D_g allocation (0: each group's clamped M_g), so that a
  // replay may give a group more rows.
  PointerArrayCaseOf(const PointerArrayProblem& p, std::uint32_t seed, int capacity = 0)
      : p_(p), groups_(static_cast<int>(p.rows.size())), ws_(Gemm::workspace_bytes(groups_)),
        rows_dev_(groups_), status_(1), ptrs_(5 * groups_), lds_(4 * groups_) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> small(kFp8 ? -4 : -3, kFp8 ? 4 : 3);
    std::uniform_int_distribution<int> exponent(-2, 2);
    const AB pad = from_float(64.0f);  // would spoil D if read
    const int kb = (p.k + 127) / 128, nb = (p.n + 127) / 128;
    ld_sb_ = kb + seed % 2;
    ok_ = ws_.ok() && rows_dev_.ok() && status_.ok() && ptrs_.ok() && lds_.ok();
    for (int g = 0; g < groups_ && ok_; ++g) {
      Group x;
      x.cap = capacity > 0 ? capacity : std::min(std::max(p.rows[g], 0), p.m);
      x.lda = line(p.k + p.pad_a[g]), x.ldb = line(p.k + p.pad_b[g]), x.ldd = p.n + p.pad_d[g];
      x.ha.assign(std::max<std::size_t>(1, std::size_t(x.cap) * x.lda), pad);
      x.hb.assign(std::max<std::size_t>(1, std::size_t(p.n) * x.ldb), pad);
      for (std::size_t i = 0; i < x.ha.size(); ++i)
        if (std::int64_t(i % x.lda) < p.k) x.ha[i] = from_float(float(small(rng)));
      for (std::size_t i = 0; i < x.hb.size(); ++i)
        if (std::int64_t(i % x.ldb) < p.k) x.hb[i] = from_float(float(small(rng)));
      x.a = std::make_unique<DeviceBuffer<AB>>(x.ha.size());
      x.b = std::make_unique<DeviceBuffer<AB>>(x.hb.size());
      x.d = std::make_unique<DeviceBuffer<D>>(std::size_t(x.cap) * x.ldd + 2 * kGuard);
      ok_ = x.a->ok() && x.b->ok() && x.d->ok() && x.a->upload(x.ha) == cudaSuccess &&
            x.b->upload(x.hb) == cudaSuccess;
      if constexpr (kFp8) {  // powers of two in [1/4, 4], the counts of the Gemm's table
        x.ld_sa = std::max(x.cap, 1) + seed % 3;
        const auto mode = Gemm::kScaling;
        x.hsa.resize(mode == tilepipe::Fp8Scaling::kTensorwise ? 1
                     : mode == tilepipe::Fp8Scaling::kRowwise  ? std::max(x.cap, 1)
                                                               : std::max(kb, 1) * x.ld_sa);
        x.hsb.resize(mode == tilepipe::Fp8Scaling::kTensorwise ? 1
                     : mode == tilepipe::Fp8Scaling::kRowwise
                         ? std::max(p.n, 1)
                         : std::max<std::int64_t>(nb * ld_sb_, 1));
        for (float& v : x.hsa) v = std::ldexp(1.0f, exponent(rng));
        for (float& v : x.hsb) v = std::ldexp(1.0f, exponent(rng));
        x.sa = std::make_unique<DeviceBuffer<float>>(x.hsa.size());
        x.sb = std::make_unique<DeviceBuffer<float>>(x.hsb.size() + 1);  // + 1: misaligned
        ok_ = ok_ && x.sa->ok() && x.sb->ok() && x.sa->upload(x.hsa) == cudaSuccess &&
              x.sb->upload(x.hsb) == cudaSuccess;
      }
      groups_data_.push_back(std::move(x));
    }
    order_.resize(groups_);
    for (int g = 0; g < groups_; ++g) order_[g] = g;
    ok_ = ok_ && set_sizes(p.rows, order_) == cudaSuccess;
  }

  // Elements of a line of `elements`, rounded up to 16 bytes (TMA's).
  static std::int64_t line(int elements) {
    constexpr int kLine = static_cast<int>(16 / sizeof(AB));
    return std::max(kLine, (elements + kLine - 1) / kLine * kLine);
  }

  bool ok() const { return ok_; }
  const PointerArrayProblem& problem() const { return p_; }

  // New row counts, and group g's A_g (and scale_a) taken from allocation `order[g]` (a
  // permutation), written into the same device arrays (a CUDA graph's replays read them there).
  cudaError_t set_sizes(const std::vector<int>& rows, const std::vector<int>& order) {
    p_.rows = rows, order_ = order;
    std::vector<void*> ptrs(5 * groups_);
    std::vector<std::int64_t> lds(4 * groups_);
    for (int g = 0; g < groups_; ++g) {
      const Group& x = groups_data_[g];
      const Group& xa = groups_data_[order[g]];
      const int f = p_.flaw[g];
      ptrs[g] = f == kNullA ? nullptr : xa.a->get();
      ptrs[groups_ + g] = x.b->get() + (f == kMisalignedB ? 1 : 0);
      ptrs[2 * groups_ + g] = f == kNullD ? nullptr : x.d->get() + kGuard;
      lds[g] = f == kShortLda ? (p_.k >= 16 ? p_.k - 8 : p_.k + 4) : xa.lda;
      lds[groups_ + g] = x.ldb;
      lds[2 * groups_ + g] = f == kShortLdd ? p_.n - 1 : x.ldd;
      if constexpr (kFp8) {
        ptrs[3 * groups_ + g] = f == kNullScaleA ? nullptr : xa.sa->get();
        ptrs[4 * groups_ + g] =
            reinterpret_cast<char*>(x.sb->get()) + (f == kMisalignedScaleB ? 2 : 0);
        lds[3 * groups_ + g] = f == kShortLdScaleA ? std::max(rows[g], 1) - 1 : xa.ld_sa;
      }
    }
    cudaError_t e = rows_dev_.upload(rows);
    if (e == cudaSuccess) e = ptrs_.upload(ptrs);
    return e == cudaSuccess ? lds_.upload(lds) : e;
  }

  typename Gemm::Arguments args() const {
    typename Gemm::Arguments a;
    a.groups = groups_, a.m = p_.m, a.n = p_.n, a.k = p_.k;
    a.rows = rows_dev_.get();
    void** ptrs = ptrs_.get();
    a.a = reinterpret_cast<const AB* const*>(ptrs);
    a.b = reinterpret_cast<const AB* const*>(ptrs + groups_);
    a.d = reinterpret_cast<D* const*>(ptrs + 2 * groups_);
    a.lda = lds_.get(), a.ldb = lds_.get() + groups_, a.ldd = lds_.get() + 2 * groups_;
    if constexpr (kFp8) {
      a.scale_a = reinterpret_cast<const float* const*>(ptrs + 3 * groups_);
      a.scale_b = reinterpret_cast<const float* const*>(ptrs + 4 * groups_);
      a.ld_scale_a = lds_.get() + 3 * groups_;
      a.ld_scale_b = ld_sb_;
    } else {
      a.alpha = p_.alpha;
    }
    a.status = status_.get();
    a.workspace = ws_.get();
    return a;
  }

  cudaError_t poison() {
    for (Group& x : groups_data_) {
      const cudaError_t e = x.d->poison(kPoison);
      if (e != cudaSuccess) return e;
    }
    return status_.poison(kPoison);
  }

  // Whether group g is to be skipped (and reported).
  bool bad(int g) const {
    const int r = p_.rows[g], f = p_.flaw[g];
    if (r < 0 || r > p_.m) return true;
    if (r == 0 || p_.n == 0) return false;
    if (f == kNullD || f == kShortLdd) return true;
    if (p_.k > 0 && (f == kNullA || f == kShortLda || f == kMisalignedB)) return true;
    if constexpr (kFp8) {
      const bool blockwise = Gemm::kScaling == tilepipe::Fp8Scaling::kBlockwise;
      if (blockwise && p_.k == 0) return false;  // no scale is read
      return f == kNullScaleA || f == kMisalignedScaleB || (blockwise && f == kShortLdScaleA);
    }
    return false;
  }

  // Checks every D_g allocation and the status; false (after ADD_FAILURE) on any error.
  bool check() const {
    const std::string what = describe(p_) + (kFp8 ? " fp8" : "");
    std::vector<int> status;
    if (status_.download(status) != cudaSuccess) {
      ADD_FAILURE() << what << ": reading the status back failed";
      return false;
    }
    int want_status = 0;
    for (int g = groups_ - 1; g >= 0; --g)
      if (bad(g)) want_status = g + 1;
    bool good = status[0] == want_status;
    if (!good) ADD_FAILURE() << what << ": status " << status[0] << ", expected " << want_status;
    unsigned char poison[sizeof(D)];
    std::memset(poison, kPoison, sizeof(D));
    const auto untouched = [&](D x) { return std::memcmp(&x, poison, sizeof(D)) == 0; };
    int wrong = 0;
    for (int g = 0; g < groups_; ++g) {
      const Group& x = groups_data_[g];
      std::vector<D> out;
      if (x.d->download(out) != cudaSuccess) {
        ADD_FAILURE() << what << ": reading D_" << g << " back failed";
        return false;
      }
      const int rows = bad(g) ? 0 : p_.rows[g];
      for (std::size_t i = 0; i < out.size(); ++i) {
        const bool band = i < kGuard || i >= out.size() - kGuard;
        const std::int64_t at = std::int64_t(i) - std::int64_t(kGuard);
        const int r = band ? 0 : int(at / x.ldd), j = band ? 0 : int(at % x.ldd);
        bool right;
        double want = 0.0;
        if (band || r >= rows || j >= p_.n) {
          right = untouched(out[i]);
        } else {
          want = reference(g, r, j);
          const D w = from_float_host<D>(float(want));
          right = std::memcmp(&w, &out[i], sizeof(D)) == 0;
        }
        if (!right && wrong++ < 5)
          ADD_FAILURE() << what << ": D_" << g << (band ? " guard band" : "") << "(" << r << ", "
                        << j << ") = " << to_float_host(out[i]) << ", expected "
                        << (band || r >= rows || j >= p_.n ? std::string("untouched")
                                                           : std::to_string(want));
      }
    }
    return good && wrong == 0;
  }

 private:
  struct Group {
    int cap = 0;
    std::int64_t lda = 0, ldb = 0, ldd = 0, ld_sa = 0;
    std::vector<AB> ha, hb;
    std::vector<float> hsa, hsb;  // FP8: the scales
    std::unique_ptr<DeviceBuffer<AB>> a, b;
    std::unique_ptr<DeviceBuffer<D>> d;
    std::unique_ptr<DeviceBuffer<float>> sa, sb;
  };

  static AB from_float(float x) {
    if constexpr (kFp8) return AB(x);
    else return from_float_host<AB>(x);
  }
  static float to_float(AB x) {
    if constexpr (kFp8) return static_cast<float>(x);
    else return to_float_host(x);
  }

  // Row r of group g's A . column j of its B_g (times alpha, or FP8: the sum over k-blocks of the
  // block's scales times its dot product), exactly.
  double reference(int g, int r, int j) const {
    const Group& xa = groups_data_[order_[g]];
    const Group& xb = groups_data_[g];
    double sum = 0.0;
    for (int q = 0; q * 128 < p_.k; ++q) {
      double block = 0.0;
      for (int c = q * 128; c < std::min(p_.k, q * 128 + 128); ++c)
        block += double(to_float(xa.ha[std::size_t(r) * xa.lda + c])) *
                 to_float(xb.hb[std::size_t(j) * xb.ldb + c]);
      double s = p_.alpha;
      if constexpr (kFp8) {
        const auto mode = Gemm::kScaling;
        s = mode == tilepipe::Fp8Scaling::kTensorwise ? double(xa.hsa[0]) * xb.hsb[0]
            : mode == tilepipe::Fp8Scaling::kRowwise
                ? double(xa.hsa[r]) * xb.hsb[j]
                : double(xa.hsa[q * xa.ld_sa + r]) * xb.hsb[(j / 128) * ld_sb_ + q];
      }
      sum += s * block;
    }
    return sum;
  }

  PointerArrayProblem p_;
  int groups_;
  std::vector<Group> groups_data_;
  std::vector<int> order_;
  DeviceBuffer<unsigned char> ws_;
  DeviceBuffer<int> rows_dev_, status_;
  DeviceBuffer<void*> ptrs_;
  DeviceBuffer<std::int64_t> lds_;
  std::int64_t ld_sb_ = 0;  // FP8 block-wise: every group's ld_scale_b
  bool ok_ = false;
};

using PointerArrayCase =
    PointerArrayCaseOf<__nv_bfloat16, __nv_bfloat16,
                       tilepipe::GemmGroupedPointerArraySm90<__nv_bfloat16, __nv_bfloat16>>;

// Runs one problem (poisoned D_g, one call) and checks it.
template <class Case = PointerArrayCase>
bool run_pointer_array_problem(const PointerArrayProblem& p, std::uint32_t seed) {
  const std::string what = describe(p) + (Case::kFp8 ? " fp8" : "");
  Case c(p, seed);
  if (!c.ok() || c.poison() != cudaSuccess) {
    ADD_FAILURE() << what << ": allocating or filling the buffers failed";
    return false;
  }
  const tilepipe::Status s = Case::Gemm::run(c.args());
  if (!s) {
    ADD_FAILURE() << what << ": run failed: " << s.message();
    return false;
  }
  const cudaError_t e = synchronize_within(60.0, what.c_str());
  if (e != cudaSuccess) {
    ADD_FAILURE() << what << ": " << cudaGetErrorString(e);
    return false;
  }
  return c.check();
}

}  // namespace tptest
