// The grouped GEMMs' tests' own helpers (test/device/grouped_test_util.cuh), without a GPU: the
// groups' rows and status as the GEMMs clamp the sizes, and the check of a D read back, which
// must fail on each kind of error it exists to catch (a wrong value, written padding, a written
// row of no group, a written guard band, a wrong status) and pass on the right data. Its rows are
// checked on several threads, so the expected failures are caught on all of them.

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <climits>
#include <cstring>
#include <string>
#include <vector>

#include "../device/grouped_test_util.cuh"

namespace {

using tilepipe::GroupedForm;

TEST(GroupedRows, ClampedAsTheGemmsPromise) {
  int status = -1;
  // Contiguous: a decreasing offset (group 1), then one past m (group 3), then a negative one.
  auto r = tptest::expected_rows(GroupedForm::kContiguous, 100, {40, 30, 60, 150, -5}, &status);
  EXPECT_EQ(status, 2);
  const int want[5][2] = {{0, 40}, {40, 40}, {30, 60}, {60, 100}, {100, 100}};
  for (int g = 0; g < 5; ++g) {
    EXPECT_EQ(r[g].begin, want[g][0]) << "group " << g;
    EXPECT_EQ(r[g].end, want[g][1]) << "group " << g;
  }
  r = tptest::expected_rows(GroupedForm::kContiguous, 100, {0, 50, 100}, &status);
  EXPECT_EQ(status, 0);
  EXPECT_EQ(r[2].begin, 50);
  // Masked: each group from row 0 of its own batch; past m and negative counts are bad.
  r = tptest::expected_rows(GroupedForm::kMasked, 64, {10, 64, INT_MAX, -1}, &status);
  EXPECT_EQ(status, 3);
  EXPECT_EQ(r[1].end, 64);
  EXPECT_EQ(r[2].end, 64);
  EXPECT_EQ(r[3].end, 0);
  EXPECT_EQ(tptest::offsets({3, 0, 5}), (std::vector<int>{3, 3, 8}));
}

// A contiguous D of 6 rows, 3 columns and ldd 4 (one column of padding), guards of 4 elements,
// groups ending at rows 2, 2 and 5 (group 1 empty, row 5 in none); D(row, j) = 10 row + j.
struct Synthetic {
  std::vector<float> out;
  std::vector<int> sizes{2, 2, 5};
  tptest::GroupedD d{GroupedForm::kContiguous, 6, 3, 4, 0, 4, 24, 0x7B};
  Synthetic() : out(24 + 8) {
    std::memset(out.data(), 0x7B, out.size() * sizeof(float));
    for (int row = 0; row < 5; ++row)
      for (int j = 0; j < 3; ++j) at(row, j) = 10.0f * row + j;
  }
  float& at(int row, int j) { return out[4 + row * 4 + j]; }
  bool check(int status = 0) const {
    const auto row_values = [](int, int row, const std::vector<int>& candidates, const float* line,
                               std::string* first) {
      EXPECT_EQ(candidates, std::vector<int>{row < 2 ? 0 : 2}) << "row " << row;
      int wrong = 0;
      for (int j = 0; j < 3; ++j)
        if (line[j] != 10.0f * row + j && wrong++ == 0) *first = std::to_string(j) + ") wrong";
      return wrong;
    };
    return tptest::check_grouped_d("synthetic", out, status, sizes, d, row_values);
  }
};

TEST(CheckGroupedD, PassesOnTheRightData) { EXPECT_TRUE(Synthetic().check()); }

TEST(CheckGroupedD, FailsOnAWrongValue) {
  Synthetic s;
  s.at(3, 1) = 0.0f;
  EXPECT_NONFATAL_FAILURE_ON_ALL_THREADS(EXPECT_FALSE(s.check()), "D[0](3, 1) wrong");
}

TEST(CheckGroupedD, FailsOnWrittenPadding) {
  Synthetic s;
  s.at(1, 3) = 1.0f;
  EXPECT_NONFATAL_FAILURE_ON_ALL_THREADS(EXPECT_FALSE(s.check()), "D[0](1, 3) was written");
}

TEST(CheckGroupedD, FailsOnAWrittenRowOfNoGroup) {
  Synthetic s;
  s.at(5, 0) = 1.0f;
  EXPECT_NONFATAL_FAILURE_ON_ALL_THREADS(EXPECT_FALSE(s.check()), "D[0](5, 0) was written");
}

TEST(CheckGroupedD, FailsOnAWrittenGuard) {
  Synthetic s;
  s.out[1] = 1.0f;
  EXPECT_NONFATAL_FAILURE_ON_ALL_THREADS(EXPECT_FALSE(s.check()),
                                         "a guard band around D was written");
}

TEST(CheckGroupedD, FailsOnAWrongStatus) {
  Synthetic s;
  EXPECT_NONFATAL_FAILURE_ON_ALL_THREADS(EXPECT_FALSE(s.check(2)), "status 2, expected 0");
}

}  // namespace
