#pragma once
// What the grouped GEMMs' tests (test_gemm_grouped.cu, test_gemm_grouped_fp8.cu) share: the
// groups' rows as the GEMMs clamp the sizes, contiguous offsets from row counts, and the check
// of a D read back after a run (status word, guard bands, untouched rows and padding), which
// hands each row of one or more groups to the test's own comparison.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <tilepipe/gemm/grouped_scheduler.cuh>

namespace tptest {

// A group's rows of A and D after clamping.
struct GroupRows {
  int begin, end;
};

// Each group's rows as the GEMMs promise them for `sizes` (offsets or counts, as `form` says)
// in `m` rows, and the status to expect: 0, or 1 + the first group whose size is negative, past
// m, or (contiguous) below the previous offset.
inline std::vector<GroupRows> expected_rows(tilepipe::GroupedForm form, int m,
                                            const std::vector<int>& sizes, int* status) {
  std::vector<GroupRows> r;
  *status = 0;
  for (std::size_t g = 0; g < sizes.size(); ++g) {
    const int size = sizes[g];
    const int prev = form == tilepipe::GroupedForm::kContiguous && g > 0 ? sizes[g - 1] : 0;
    const bool bad = size < 0 || size > m || size < prev;
    if (bad && *status == 0) *status = static_cast<int>(g) + 1;
    const int begin = std::min(std::max(prev, 0), m);
    r.push_back({begin, std::max(begin, std::min(std::max(size, 0), m))});
  }
  return r;
}

// Contiguous offsets (each group's end row) from row counts.
inline std::vector<int> offsets(const std::vector<int>& rows) {
  std::vector<int> offs;
  int end = 0;
  for (int r : rows) offs.push_back(end += r);
  return offs;
}

// The first sizes, for a problem's description.
inline std::string sizes_text(const std::vector<int>& sizes) {
  std::string s = " sizes";
  for (std::size_t g = 0; g < sizes.size() && g < 12; ++g) s += " " + std::to_string(sizes[g]);
  return s + (sizes.size() > 12 ? " ..." : "");
}

// Where a grouped GEMM's D lies in the buffer read back after a run: `guard` poisoned elements
// before and after it, `lines` rows of `ldd` (masked: `m` rows per batch, `stride_d` apart).
struct GroupedD {
  tilepipe::GroupedForm form;
  int m, n;
  std::int64_t ldd, stride_d;
  std::size_t guard, elements;
  unsigned char poison;
};

// Checks `out` (D and its guards, read back) and the status word against what `sizes` promise,
// every element: the guards, D's padding and the rows of no group keep their poison; each row of
// one or more groups (bad sizes may make them overlap) goes to `check_row(batch, row, candidates,
// first element of the row, &first_error)`, which returns how many of its N elements are wrong
// and describes the first. Rows are checked on up to 16 threads; false (after ADD_FAILURE) on any
// error.
template <class D, class CheckRow>
bool check_grouped_d(const std::string& what, const std::vector<D>& out, int status,
                     const std::vector<int>& sizes, const GroupedD& d, CheckRow check_row) {
  int want_status = 0;
  const std::vector<GroupRows> rows = expected_rows(d.form, d.m, sizes, &want_status);
  bool good = true;
  if (status != want_status) {
    ADD_FAILURE() << what << ": status " << status << ", expected " << want_status;
    good = false;
  }
  unsigned char poison[sizeof(D)];
  std::memset(poison, d.poison, sizeof(D));
  const auto untouched = [&](const D& x) { return std::memcmp(&x, poison, sizeof(D)) == 0; };
  for (std::size_t i = 0; i < d.guard; ++i)
    if (!untouched(out[i]) || !untouched(out[d.guard + d.elements + i])) {
      ADD_FAILURE() << what << ": a guard band around D was written";
      return false;
    }
  const bool masked = d.form == tilepipe::GroupedForm::kMasked;
  const int groups = static_cast<int>(sizes.size());
  const int lines = masked ? groups * d.m : d.m;
  std::mutex mutex;
  int bad = 0;
  const auto report = [&](int count, const std::string& message) {
    if (count == 0) return;
    std::lock_guard<std::mutex> lock(mutex);
    if (bad < 5) ADD_FAILURE() << what << ": " << message;
    bad += count;
  };
  const auto check_lines = [&](int l0, int l1) {
    std::vector<int> candidates;
    for (int l = l0; l < l1; ++l) {
      const int batch = masked ? l / d.m : 0, row = masked ? l % d.m : l;
      candidates.clear();
      for (int g = 0; g < groups; ++g)
        if ((!masked || g == batch) && row >= rows[g].begin && row < rows[g].end)
          candidates.push_back(g);
      const D* line = out.data() + d.guard + batch * d.stride_d + std::size_t(row) * d.ldd;
      const std::string where = "D[" + std::to_string(batch) + "](" + std::to_string(row) + ", ";
      for (std::int64_t j = candidates.empty() ? 0 : d.n; j < d.ldd; ++j)
        if (!untouched(line[j]))
          report(1, where + std::to_string(j) + ") was written (no group's row, or padding)");
      if (!candidates.empty()) {
        std::string first;
        const int wrong = check_row(batch, row, candidates, line, &first);
        report(wrong, where + first);
      }
    }
  };
  const int threads = std::max(1, std::min<int>(16, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  const int per = (lines + threads - 1) / threads;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back(check_lines, std::min(lines, t * per), std::min(lines, (t + 1) * per));
  for (auto& t : pool) t.join();
  return good && bad == 0;
}

}  // namespace tptest
