// One problem of GemmGroupedPointerArraySm90 (bf16, B_g [N, K]) for test_gemm_grouped: every
// group's A_g, B_g and D_g in an allocation of its own, with leading dimensions of its own, small
// integers so that D is exact. Each D_g is poisoned before a run and guarded by bands inside its
// allocation: its rows past M_g (up to its allocation's), its padding, the bands and every skipped
// group's D_g must keep their poison. Flaws (null pointers, short leading dimensions, a
// misaligned B_g) make a group with rows bad: it must be skipped and reported in the status.
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

#include "device_test_util.cuh"
#include "gemm_test_util.cuh"

namespace tptest {

enum PointerArrayFlaw { kNoFlaw, kNullA, kNullD, kShortLda, kMisalignedB, kShortLdd, kFlawKinds };

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

class PointerArrayCase {
 public:
  using AB = __nv_bfloat16;
  using D = __nv_bfloat16;
  using Gemm = tilepipe::GemmGroupedPointerArraySm90<AB, D>;
  static constexpr std::size_t kGuard = 128;  // elements before and after each D_g
  static constexpr unsigned char kPoison = 0x7B;

  // `capacity`: rows of every A_g and D_g allocation (0: each group's clamped M_g), so that a
  // replay may give a group more rows.
  PointerArrayCase(const PointerArrayProblem& p, std::uint32_t seed, int capacity = 0)
      : p_(p), groups_(static_cast<int>(p.rows.size())), ws_(Gemm::workspace_bytes(groups_)),
        rows_dev_(groups_), status_(1), ptrs_(3 * groups_), lds_(3 * groups_) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> small(-3, 3);
    const AB pad = from_float_host<AB>(64.0f);  // would spoil D if read
    ok_ = ws_.ok() && rows_dev_.ok() && status_.ok() && ptrs_.ok() && lds_.ok();
    for (int g = 0; g < groups_ && ok_; ++g) {
      Group x;
      x.cap = capacity > 0 ? capacity : std::min(std::max(p.rows[g], 0), p.m);
      x.lda = line(p.k + p.pad_a[g]), x.ldb = line(p.k + p.pad_b[g]), x.ldd = p.n + p.pad_d[g];
      x.ha.assign(std::max<std::size_t>(1, std::size_t(x.cap) * x.lda), pad);
      x.hb.assign(std::max<std::size_t>(1, std::size_t(p.n) * x.ldb), pad);
      for (std::size_t i = 0; i < x.ha.size(); ++i)
        if (std::int64_t(i % x.lda) < p.k) x.ha[i] = from_float_host<AB>(float(small(rng)));
      for (std::size_t i = 0; i < x.hb.size(); ++i)
        if (std::int64_t(i % x.ldb) < p.k) x.hb[i] = from_float_host<AB>(float(small(rng)));
      x.a = std::make_unique<DeviceBuffer<AB>>(x.ha.size());
      x.b = std::make_unique<DeviceBuffer<AB>>(x.hb.size());
      x.d = std::make_unique<DeviceBuffer<D>>(std::size_t(x.cap) * x.ldd + 2 * kGuard);
      ok_ = x.a->ok() && x.b->ok() && x.d->ok() && x.a->upload(x.ha) == cudaSuccess &&
            x.b->upload(x.hb) == cudaSuccess;
      groups_data_.push_back(std::move(x));
    }
    order_.resize(groups_);
    for (int g = 0; g < groups_; ++g) order_[g] = g;
    ok_ = ok_ && set_sizes(p.rows, order_) == cudaSuccess;
  }

  static std::int64_t line(int elements) { return std::max(8, (elements + 7) / 8 * 8); }

  bool ok() const { return ok_; }
  const PointerArrayProblem& problem() const { return p_; }

  // New row counts, and group g's A_g taken from allocation `order[g]` (a permutation), written
  // into the same device arrays (a CUDA graph's replays read them there).
  cudaError_t set_sizes(const std::vector<int>& rows, const std::vector<int>& order) {
    p_.rows = rows, order_ = order;
    std::vector<void*> ptrs(3 * groups_);
    std::vector<std::int64_t> lds(3 * groups_);
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
    }
    cudaError_t e = rows_dev_.upload(rows);
    if (e == cudaSuccess) e = ptrs_.upload(ptrs);
    return e == cudaSuccess ? lds_.upload(lds) : e;
  }

  Gemm::Arguments args() const {
    Gemm::Arguments a;
    a.groups = groups_, a.m = p_.m, a.n = p_.n, a.k = p_.k;
    a.rows = rows_dev_.get();
    void** ptrs = ptrs_.get();
    a.a = reinterpret_cast<const AB* const*>(ptrs);
    a.b = reinterpret_cast<const AB* const*>(ptrs + groups_);
    a.d = reinterpret_cast<D* const*>(ptrs + 2 * groups_);
    a.lda = lds_.get(), a.ldb = lds_.get() + groups_, a.ldd = lds_.get() + 2 * groups_;
    a.alpha = p_.alpha;
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
    return f == kNullD || f == kShortLdd ||
           (p_.k > 0 && (f == kNullA || f == kShortLda || f == kMisalignedB));
  }

  // Checks every D_g allocation and the status; false (after ADD_FAILURE) on any error.
  bool check() const {
    const std::string what = describe(p_);
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
    std::int64_t lda = 0, ldb = 0, ldd = 0;
    std::vector<AB> ha, hb;
    std::unique_ptr<DeviceBuffer<AB>> a, b;
    std::unique_ptr<DeviceBuffer<D>> d;
  };

  // alpha * (row r of group g's A) . (column j of its B_g), exactly.
  double reference(int g, int r, int j) const {
    const Group& xa = groups_data_[order_[g]];
    const Group& xb = groups_data_[g];
    double sum = 0.0;
    for (int c = 0; c < p_.k; ++c)
      sum += double(to_float_host(xa.ha[std::size_t(r) * xa.lda + c])) *
             to_float_host(xb.hb[std::size_t(j) * xb.ldb + c]);
    return p_.alpha * sum;
  }

  PointerArrayProblem p_;
  int groups_;
  std::vector<Group> groups_data_;
  std::vector<int> order_;
  DeviceBuffer<unsigned char> ws_;
  DeviceBuffer<int> rows_dev_, status_;
  DeviceBuffer<void*> ptrs_;
  DeviceBuffer<std::int64_t> lds_;
  bool ok_ = false;
};

// Runs one problem (poisoned D_g, one call) and checks it.
inline bool run_pointer_array_problem(const PointerArrayProblem& p, std::uint32_t seed) {
  PointerArrayCase c(p, seed);
  if (!c.ok() || c.poison() != cudaSuccess) {
    ADD_FAILURE() << describe(p) << ": allocating or filling the buffers failed";
    return false;
  }
  const tilepipe::Status s = PointerArrayCase::Gemm::run(c.args());
  if (!s) {
    ADD_FAILURE() << describe(p) << ": run failed: " << s.message();
    return false;
  }
  const cudaError_t e = synchronize_within(60.0, describe(p).c_str());
  if (e != cudaSuccess) {
    ADD_FAILURE() << describe(p) << ": " << cudaGetErrorString(e);
    return false;
  }
  return c.check();
}

}  // namespace tptest
