// Host tests of LdmatrixMap: the rows each lane hands to ldmatrix.x4 form four 8x8 matrices
// that are read without bank conflicts, and - simulating ldmatrix's register semantics from the
// PTX ISA - each lane ends up with exactly the mma.sync m16n8k16 fragment elements.

#include <gtest/gtest.h>

#include <set>
#include <utility>

#include <tilepipe/layout/ldmatrix_map.cuh>
#include <tilepipe/layout/swizzled_tile.cuh>

using tilepipe::Operand;
using tilepipe::SmemOrder;

namespace {

// Expected (mn, k) of half h (0, 1) of register j of lane l, per the PTX ISA fragment tables
// for mma.m16n8k16 with 16-bit inputs. For B, register index is 2 * (n8 tile) + b-register.
std::pair<int, int> expected_a(int l, int j, int h) {
  const int g = l / 4, t = l % 4;
  const int m = g + 8 * (j % 2);
  const int k = 2 * t + h + 8 * (j / 2);
  return {m, k};
}
std::pair<int, int> expected_b(int l, int j, int h) {
  const int g = l / 4, t = l % 4;
  const int n = g + 8 * (j / 2);
  const int k = 2 * t + h + 8 * (j % 2);
  return {n, k};
}

// What ldmatrix.x4 delivers: register j of lane l holds elements (l/4, 2(l%4)+h) of matrix j,
// where matrix j's row i is the 8 elements at the address lane 8j+i supplied; .trans swaps the
// roles of row and column inside each 8x8 matrix.
template <Operand Op, SmemOrder Order>
std::pair<int, int> simulated(int l, int j, int h, int mn0, int k0) {
  using Map = tilepipe::LdmatrixMap<Op, Order>;
  const int row_in_matrix = Map::kTrans ? 2 * (l % 4) + h : l / 4;
  const int col_in_matrix = Map::kTrans ? l / 4 : 2 * (l % 4) + h;
  const tilepipe::LdmatrixRow at = Map::row_of(8 * j + row_in_matrix, mn0, k0);
  const int col = at.chunk * 8 + col_in_matrix;
  // Stored tile coordinates -> (mn, k).
  return Order == SmemOrder::kKContiguous ? std::pair<int, int>{at.row - mn0, col - k0}
                                          : std::pair<int, int>{col - mn0, at.row - k0};
}

template <Operand Op, SmemOrder Order>
void check_fragment_semantics() {
  SCOPED_TRACE(testing::Message() << (Op == Operand::kA ? "A" : "B") << ", "
                                  << (Order == SmemOrder::kKContiguous ? "K" : "MN")
                                  << "-contiguous");
  for (int mn0 : {0, 16, 48})
    for (int k0 : {0, 16}) {
      for (int l = 0; l < 32; ++l)
        for (int j = 0; j < 4; ++j)
          for (int h = 0; h < 2; ++h) {
            const auto want = Op == Operand::kA ? expected_a(l, j, h) : expected_b(l, j, h);
            const auto got = simulated<Op, Order>(l, j, h, mn0, k0);
            ASSERT_EQ(got, want) << "lane " << l << " register " << j << " half " << h << " mn0 "
                                 << mn0 << " k0 " << k0;
          }
    }
}

template <Operand Op, SmemOrder Order, int Rows, int Cols>
void check_rows_conflict_free(int mn_extent, int k_extent) {
  using Map = tilepipe::LdmatrixMap<Op, Order>;
  using L = tilepipe::SwizzledTileLayout<Rows, Cols>;
  for (int mn0 = 0; mn0 < mn_extent; mn0 += 16)
    for (int k0 = 0; k0 < k_extent; k0 += 16)
      for (int q = 0; q < 4; ++q) {
        std::set<int> groups;
        for (int i = 0; i < 8; ++i) {
          const tilepipe::LdmatrixRow at = Map::row_of(8 * q + i, mn0, k0);
          ASSERT_LT(at.row, Rows);
          ASSERT_LT(at.chunk, L::kChunksPerRow);
          if (i > 0) {  // one matrix = 8 consecutive rows of one chunk column
            const tilepipe::LdmatrixRow first = Map::row_of(8 * q, mn0, k0);
            ASSERT_EQ(at.row, first.row + i);
            ASSERT_EQ(at.chunk, first.chunk);
          }
          groups.insert(L::chunk_offset(at.row, at.chunk) & 7);
        }
        EXPECT_EQ(groups.size(), 8u) << "matrix " << q << " at mn0 " << mn0 << " k0 " << k0;
      }
}

}  // namespace

TEST(LdmatrixMap, RegistersMatchMmaFragments) {
  check_fragment_semantics<Operand::kA, SmemOrder::kKContiguous>();
  check_fragment_semantics<Operand::kA, SmemOrder::kMNContiguous>();
  check_fragment_semantics<Operand::kB, SmemOrder::kKContiguous>();
  check_fragment_semantics<Operand::kB, SmemOrder::kMNContiguous>();
}

TEST(LdmatrixMap, ReadsAreConflictFree) {
  // TileMN 128, TileK 32 and 64, both storage orders, both operands.
  check_rows_conflict_free<Operand::kA, SmemOrder::kKContiguous, 128, 32>(128, 32);
  check_rows_conflict_free<Operand::kA, SmemOrder::kMNContiguous, 32, 128>(128, 32);
  check_rows_conflict_free<Operand::kB, SmemOrder::kKContiguous, 128, 32>(128, 32);
  check_rows_conflict_free<Operand::kB, SmemOrder::kMNContiguous, 32, 128>(128, 32);
  check_rows_conflict_free<Operand::kA, SmemOrder::kKContiguous, 128, 64>(128, 64);
  check_rows_conflict_free<Operand::kB, SmemOrder::kMNContiguous, 64, 256>(256, 64);
  check_rows_conflict_free<Operand::kA, SmemOrder::kKContiguous, 64, 16>(64, 16);
}

TEST(LdmatrixMap, TransposeExactlyForMNContiguous) {
  static_assert(!tilepipe::LdmatrixMap<Operand::kA, SmemOrder::kKContiguous>::kTrans, "");
  static_assert(tilepipe::LdmatrixMap<Operand::kA, SmemOrder::kMNContiguous>::kTrans, "");
  static_assert(!tilepipe::LdmatrixMap<Operand::kB, SmemOrder::kKContiguous>::kTrans, "");
  static_assert(tilepipe::LdmatrixMap<Operand::kB, SmemOrder::kMNContiguous>::kTrans, "");
  static_assert(
      tilepipe::smem_order_of(Operand::kA, tilepipe::Layout::kRowMajor) == SmemOrder::kKContiguous,
      "A row-major is K-contiguous");
  static_assert(tilepipe::smem_order_of(Operand::kB, tilepipe::Layout::kColumnMajor) ==
                    SmemOrder::kKContiguous,
                "B column-major is K-contiguous");
  static_assert(
      tilepipe::smem_order_of(Operand::kB, tilepipe::Layout::kRowMajor) == SmemOrder::kMNContiguous,
      "B row-major is N-contiguous");
  SUCCEED();
}

// LdmatrixAddressing: the per-lane offset plus per-load constants reproduce the general formula
// wherever kSplits claims so, and kSplits is false for a tile where the swizzle's XOR changes
// between loads (so the loader must fall back to the general formula there).
template <Operand Op, SmemOrder Order, int TileMN, int TileK, int WarpMN>
void check_addressing(bool expect_splits) {
  using Extent = tilepipe::OperandTileExtent<Order, TileMN, TileK>;
  using Layout = tilepipe::SwizzledTileLayout<Extent::kRows, Extent::kCols>;
  using A = tilepipe::LdmatrixAddressing<Op, Order, Layout, TileMN, TileK, WarpMN>;
  SCOPED_TRACE(testing::Message() << (Op == Operand::kA ? "A" : "B") << " "
                                  << (Order == SmemOrder::kKContiguous ? "K" : "MN")
                                  << "-contiguous, tile " << TileMN << "x" << TileK << ", warp "
                                  << WarpMN);
  ASSERT_EQ(A::kSplits, expect_splits);
  int mismatches = 0;
  for (int w = 0; w + WarpMN <= TileMN; w += WarpMN)
    for (int lane = 0; lane < 32; ++lane)
      for (int i = 0; i < A::kLoads; ++i)
        for (int kb = 0; kb < A::kKBlocks; ++kb) {
          const int general = A::chunk(lane, w, i, kb);
          ASSERT_GE(general, 0);
          ASSERT_LT(general, Layout::kChunks);
          if (A::split_chunk(A::chunk(lane, w, 0, 0), i, kb) != general) ++mismatches;
        }
  if (expect_splits) {
    EXPECT_EQ(mismatches, 0);
  } else {
    EXPECT_GT(mismatches, 0);
  }
}

TEST(LdmatrixAddressing, SplitsForTheLibraryTiles) {
  constexpr auto kA = Operand::kA;
  constexpr auto kB = Operand::kB;
  constexpr auto kK = SmemOrder::kKContiguous;
  constexpr auto kMN = SmemOrder::kMNContiguous;
  check_addressing<kA, kK, 256, 32, 64>(true);
  check_addressing<kB, kK, 128, 32, 64>(true);
  check_addressing<kA, kMN, 256, 32, 64>(true);
  check_addressing<kB, kMN, 128, 32, 64>(true);
  check_addressing<kA, kK, 64, 64, 32>(true);
  check_addressing<kB, kMN, 64, 64, 32>(true);
  check_addressing<kA, kMN, 128, 64, 32>(true);
  check_addressing<kB, kK, 256, 32, 64>(true);
  check_addressing<kA, kMN, 64, 32, 16>(true);
}

TEST(LdmatrixAddressing, FallsBackWhereTheXorChangesBetweenLoads) {
  // Rows of two chunks (TileK = 16): the XOR follows row / 4, so the second 16-row load of a
  // warp sees a different XOR than the first.
  check_addressing<Operand::kA, SmemOrder::kKContiguous, 128, 16, 64>(false);
  check_addressing<Operand::kB, SmemOrder::kKContiguous, 128, 16, 32>(false);
}
