// Host tests of SwizzledTileLayout: the map is a bijection, and both the loader's 16-byte
// writes and ldmatrix's 8-row reads are free of shared-memory bank conflicts.

#include <gtest/gtest.h>

#include <set>
#include <vector>

#include <tilepipe/layout/swizzled_tile.cuh>

namespace {

// The same checks, written against any layout type with chunk_offset(row, chunk) and
// offset(row, col), so they can also be shown to fail on an unswizzled layout.
template <class L>
bool is_bijection() {
  std::vector<int> hits(L::kElements, 0);
  for (int r = 0; r < L::kRows; ++r)
    for (int c = 0; c < L::kCols; ++c) {
      const int o = L::offset(r, c);
      if (o < 0 || o >= L::kElements) return false;
      ++hits[o];
    }
  for (int h : hits)
    if (h != 1) return false;
  return true;
}

// One 8-thread phase of 16-byte writes covers 8 consecutive row-major chunks (aligned to 8).
template <class L>
int write_phase_conflicts() {
  int conflicts = 0;
  for (int first = 0; first < L::kChunks; first += 8) {
    std::set<int> groups;
    for (int i = 0; i < 8; ++i) groups.insert(L::chunk_offset(first + i) & 7);
    conflicts += 8 - static_cast<int>(groups.size());
  }
  return conflicts;
}

// One ldmatrix 8x8 matrix reads the same chunk column of 8 consecutive rows (first row % 8 == 0).
template <class L>
int ldmatrix_phase_conflicts() {
  int conflicts = 0;
  for (int r0 = 0; r0 + 8 <= L::kRows; r0 += 8)
    for (int chunk = 0; chunk < L::kChunksPerRow; ++chunk) {
      std::set<int> groups;
      for (int i = 0; i < 8; ++i) groups.insert(L::chunk_offset(r0 + i, chunk) & 7);
      conflicts += 8 - static_cast<int>(groups.size());
    }
  return conflicts;
}

template <int Rows, int Cols, int ElementBytes = 2>
void check_layout() {
  using L = tilepipe::SwizzledTileLayout<Rows, Cols, ElementBytes>;
  constexpr int kPerChunk = 16 / ElementBytes;
  SCOPED_TRACE(testing::Message() << "tile " << Rows << " x " << Cols << " of " << ElementBytes
                                  << "-byte elements");
  EXPECT_TRUE(is_bijection<L>());
  EXPECT_EQ(write_phase_conflicts<L>(), 0);
  EXPECT_EQ(ldmatrix_phase_conflicts<L>(), 0);
  // Elements of one chunk stay together and in order (16-byte vectors are not split).
  for (int r = 0; r < Rows; ++r)
    for (int c = 0; c < Cols; ++c)
      EXPECT_EQ(L::offset(r, c), L::chunk_offset(r, c / kPerChunk) * kPerChunk + c % kPerChunk);
}

// A row-major layout without swizzle, to show the checks above can fail.
template <int Rows, int Cols>
struct PlainLayout {
  static constexpr int kRows = Rows, kCols = Cols, kElements = Rows * Cols;
  static constexpr int kChunksPerRow = Cols / 8, kChunks = Rows * Cols / 8;
  static constexpr int chunk_offset(int linear) { return linear; }
  static constexpr int chunk_offset(int row, int chunk) { return row * kChunksPerRow + chunk; }
  static constexpr int offset(int row, int col) { return row * Cols + col; }
};

}  // namespace

TEST(SwizzledTileLayout, KContiguousTiles) {
  // [MN][K] tiles: K = 16, 32, 64, 128 elements per row.
  check_layout<64, 16>();
  check_layout<128, 16>();
  check_layout<64, 32>();
  check_layout<128, 32>();
  check_layout<256, 32>();
  check_layout<128, 64>();
  check_layout<64, 128>();
}

TEST(SwizzledTileLayout, MNContiguousTiles) {
  // [K][MN] tiles: MN = 64, 128, 256 elements per row.
  check_layout<16, 64>();
  check_layout<32, 64>();
  check_layout<32, 128>();
  check_layout<64, 128>();
  check_layout<32, 256>();
  check_layout<16, 256>();
}

TEST(SwizzledTileLayout, OtherElementWidths) {
  // The swizzle works on 16-byte chunks, whatever they hold: 4 f32 or 16 int8 elements.
  static_assert(tilepipe::SwizzledTileLayout<64, 32, 4>::kChunksPerRow == 8, "4 floats a chunk");
  static_assert(tilepipe::SwizzledTileLayout<64, 64, 1>::kChunksPerRow == 4, "16 bytes a chunk");
  check_layout<64, 16, 4>();
  check_layout<128, 32, 4>();
  check_layout<32, 64, 4>();
  check_layout<64, 32, 1>();
  check_layout<128, 64, 1>();
  check_layout<32, 128, 1>();
}

TEST(SwizzledTileLayout, NarrowRows) {
  check_layout<8, 8>();
  check_layout<64, 8>();
  check_layout<16, 16>();
}

TEST(SwizzledTileLayout, ChecksDetectAnUnswizzledLayout) {
  using Plain = PlainLayout<128, 64>;
  EXPECT_TRUE(is_bijection<Plain>());
  EXPECT_EQ(write_phase_conflicts<Plain>(), 0);     // row-major writes are fine...
  EXPECT_GT(ldmatrix_phase_conflicts<Plain>(), 0);  // ...but column reads hit one bank group
  using PlainNarrow = PlainLayout<128, 32>;
  EXPECT_GT(ldmatrix_phase_conflicts<PlainNarrow>(), 0);
}

TEST(SwizzledTileLayout, IsConstexpr) {
  using L = tilepipe::SwizzledTileLayout<128, 32>;
  static_assert(L::kShift == 3, "short rows XOR with the line index");
  static_assert(tilepipe::SwizzledTileLayout<32, 128>::kShift == 4, "long rows XOR with the row");
  static_assert(L::offset(0, 0) == 0, "the first element stays in place");
  static_assert(L::offset(2, 0) == (8 ^ 1) * 8, "row 2 starts line 1, whose chunk 0 moves to 1");
  SUCCEED();
}

// is_translation: a move by a whole swizzle period moves every chunk by exactly that much, and a
// move by less than a period does not (the XOR term changes for some chunk).
template <int Rows, int Cols>
void check_translations() {
  using L = tilepipe::SwizzledTileLayout<Rows, Cols>;
  SCOPED_TRACE(testing::Message() << Rows << "x" << Cols);
  for (int delta = 8; delta < L::kChunks; delta += 8) {
    bool exact = true;
    for (int c = 0; c + delta < L::kChunks; ++c)
      exact = exact && L::chunk_offset(c + delta) == L::chunk_offset(c) + delta;
    EXPECT_EQ(L::is_translation(delta), exact) << "delta " << delta;
  }
}

TEST(SwizzledTileLayout, TranslationsByWholePeriods) {
  check_translations<256, 32>();
  check_translations<128, 64>();
  check_translations<32, 128>();
  check_translations<32, 256>();
  check_translations<64, 16>();
  check_translations<16, 512>();
}
