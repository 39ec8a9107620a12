// Host tests of the SIMT f32 fragment index math (layout/simt_fragment_map.cuh): each lane's A
// rows and B columns are those of its mma.sync-layout accumulators, so a lane's FFMAs compute
// exactly its accumulators; each load reads the fragment elements it claims (vectors contiguous
// and aligned under the swizzle); a warp's loads of a k-block cover its WarpMN x 4 slice; the
// distinct words of every load lie in distinct banks (broadcasts aside: no bank conflict); and the
// per-lane-plus-constant addressing (which SimtFragmentLoader requires) equals the general one.

#include <gtest/gtest.h>

#include <set>

#include <tilepipe/layout/simt_fragment_map.cuh>
#include <tilepipe/layout/swizzled_tile.cuh>

using tilepipe::Operand;
using tilepipe::SmemOrder;

namespace {

constexpr auto kA = Operand::kA;
constexpr auto kB = Operand::kB;
constexpr auto kK = SmemOrder::kKContiguous;
constexpr auto kMN = SmemOrder::kMNContiguous;

const char* name_of(Operand op) { return op == kA ? "A" : "B"; }
const char* name_of(SmemOrder o) { return o == kK ? "K-contiguous" : "MN-contiguous"; }

}  // namespace

// Accumulator j of an m16n8 tile of lane l is (l / 4 + 8 (j / 2), 2 (l % 4) + j % 2)
// (warp/fragments.cuh, the PTX ISA's mma.m16n8 C layout): its FFMA multiplies A's element
// h = j / 2 by B's element h = j % 2, which must sit at that row and that column.
TEST(SimtFragmentMap, ElementsAreTheAccumulatorsRowsAndColumns) {
  using MapA = tilepipe::SimtFragmentMap<kA>;
  using MapB = tilepipe::SimtFragmentMap<kB>;
  for (int lane = 0; lane < 32; ++lane)
    for (int j = 0; j < 4; ++j) {
      EXPECT_EQ(MapA::mn_of(lane, j / 2), lane / 4 + 8 * (j / 2)) << "lane " << lane << " j " << j;
      EXPECT_EQ(MapB::mn_of(lane, j % 2), 2 * (lane % 4) + j % 2) << "lane " << lane << " j " << j;
    }
  // Every element of an m16n8 tile belongs to exactly one (lane, j).
  std::set<int> outputs;
  for (int lane = 0; lane < 32; ++lane)
    for (int j = 0; j < 4; ++j) outputs.insert(MapA::mn_of(lane, j / 2) * 8 + MapB::mn_of(lane, j % 2));
  EXPECT_EQ(outputs.size(), 128u);
}

// For a warp's loads of a tile, at every warp position and k-block: each load is aligned to its
// vector, and element q of its vector is the fragment element (h, kk) it fills; every (lane, i, h,
// kk) is filled exactly once; the warp covers its WarpMN x 4 slice; the distinct 4-byte words of
// one load lie in distinct banks; the split addressing reproduces the general one.
template <Operand Op, SmemOrder Order, int TileMN, int TileK, int WarpMN>
void check_tile() {
  using Extent = tilepipe::OperandTileExtent<Order, TileMN, TileK>;
  using Layout = tilepipe::SwizzledTileLayout<Extent::kRows, Extent::kCols, 4>;
  using Addr = tilepipe::SimtFragmentAddressing<Op, Order, Layout, TileMN, TileK, WarpMN>;
  using Map = typename Addr::Map;
  SCOPED_TRACE(testing::Message() << name_of(Op) << " " << name_of(Order) << ", tile " << TileMN
                                  << " x " << TileK << ", warp " << WarpMN);
  ASSERT_TRUE(Addr::kSplits);
  EXPECT_EQ(Addr::kVector * Addr::kLoads, 8);
  const bool along_k = Order == kK;  // a vector runs along k; else (B only) along h
  auto offset_of = [](int mn, int k) { return Order == kK ? Layout::offset(mn, k) : Layout::offset(k, mn); };
  for (int w = 0; w + WarpMN <= TileMN; w += WarpMN)
    for (int kb = 0; kb < Addr::kKBlocks; ++kb) {
      std::set<int> covered;
      std::set<int> filled;  // (lane, i, h, kk)
      for (int i = 0; i < Addr::kFragments; ++i)
        for (int v = 0; v < Addr::kLoads; ++v) {
          std::set<int> words, banks;
          for (int lane = 0; lane < 32; ++lane) {
            const int e = Addr::element(lane, w, i, kb, v);
            ASSERT_GE(e, 0);
            ASSERT_LE(e + Addr::kVector, Layout::kElements);
            ASSERT_EQ(e % Addr::kVector, 0) << "load " << v << " not aligned to its vector";
            ASSERT_EQ(Addr::split_element(Addr::element(lane, w, 0, 0, Addr::h_of(v)), i, kb, v), e);
            for (int q = 0; q < Addr::kVector; ++q) {
              const int h = Addr::h_of(v) + (along_k ? 0 : q), kk = Addr::kk_of(v) + (along_k ? q : 0);
              const int mn = w + Map::kMN * i + Map::mn_of(lane, h), k = 4 * kb + kk;
              ASSERT_EQ(e + q, offset_of(mn, k)) << "lane " << lane << " fragment " << i << " load " << v
                                                 << " element " << q;
              EXPECT_TRUE(filled.insert(((lane * Addr::kFragments + i) * 2 + h) * 4 + kk).second)
                  << "fragment element filled twice: lane " << lane << " fragment " << i << " h " << h << " k " << kk;
              covered.insert((mn - w) * 4 + kk);
              if (words.insert(e + q).second) banks.insert((e + q) % 32);
            }
          }
          EXPECT_EQ(banks.size(), words.size()) << "bank conflict: warp at " << w << ", fragment " << i
                                                << ", k-block " << kb << ", load " << v;
        }
      EXPECT_EQ(filled.size(), std::size_t(32) * Addr::kFragments * 8) << "warp at " << w << ", k-block " << kb;
      EXPECT_EQ(covered.size(), std::size_t(WarpMN) * 4) << "warp at " << w << ", k-block " << kb;
    }
}

TEST(SimtFragmentAddressing, ConflictFreeAndExactForTheLibraryTiles) {
  // DefaultF32TileConfig<MathSimtF32>: 128 x 128 x 32, 64 x 32 warps; both operands and orders.
  check_tile<kA, kK, 128, 32, 64>();
  check_tile<kA, kMN, 128, 32, 64>();
  check_tile<kB, kK, 128, 32, 32>();
  check_tile<kB, kMN, 128, 32, 32>();
  // Other tiles: k-tiles of 4 to 128, MN-contiguous rows of 64 to 1024 bytes (below 128 bytes the
  // swizzle XORs by the 128-byte line rather than the row).
  check_tile<kA, kK, 64, 16, 32>();
  check_tile<kB, kK, 256, 64, 64>();
  check_tile<kA, kK, 32, 4, 16>();
  check_tile<kB, kK, 16, 128, 16>();
  check_tile<kA, kMN, 32, 16, 16>();
  check_tile<kB, kMN, 256, 8, 64>();
  check_tile<kA, kMN, 16, 16, 16>();
  check_tile<kB, kMN, 16, 32, 16>();
  check_tile<kA, kMN, 64, 4, 16>();
}
