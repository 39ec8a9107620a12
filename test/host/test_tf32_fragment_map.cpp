// Host tests of the tf32 fragment index math (layout/tf32_fragment_map.cuh): the k-slot
// permutation is one permutation of each 8-deep k-block that A and B share, so a simulated
// mma.m16n8k8 sums every k exactly once for every output element; each lane's registers are the
// PTX ISA's fragment elements; the plain 32-bit shared loads of every register hit 32 different
// banks in both storage orders; and the per-lane-plus-constant addressing equals the general one.

#include <gtest/gtest.h>

#include <set>

#include <tilepipe/layout/swizzled_tile.cuh>
#include <tilepipe/layout/tf32_fragment_map.cuh>

using tilepipe::Operand;
using tilepipe::SmemOrder;
using tilepipe::tf32_k_of_slot;

namespace {

constexpr auto kA = Operand::kA;
constexpr auto kB = Operand::kB;
constexpr auto kK = SmemOrder::kKContiguous;
constexpr auto kMN = SmemOrder::kMNContiguous;

const char* name_of(Operand op) { return op == kA ? "A" : "B"; }
const char* name_of(SmemOrder o) { return o == kK ? "K-contiguous" : "MN-contiguous"; }

}  // namespace

TEST(Tf32FragmentMap, SlotsArePermutationOfK) {
  std::set<int> ks;
  for (int slot = 0; slot < 8; ++slot) ks.insert(tf32_k_of_slot(slot));
  EXPECT_EQ(ks, (std::set<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  // Lane t holds slots t and t + 4: k = 2t and 2t + 1, in some order.
  for (int t = 0; t < 4; ++t)
    EXPECT_EQ((std::set<int>{tf32_k_of_slot(t), tf32_k_of_slot(t + 4)}),
              (std::set<int>{2 * t, 2 * t + 1}));
  // The two properties the bank-conflict argument needs, per slot set {t} and {t + 4}.
  for (int set = 0; set < 2; ++set) {
    std::set<int> mod4, half;
    for (int t = 0; t < 4; ++t) {
      mod4.insert(tf32_k_of_slot(t + 4 * set) % 4);
      half.insert(tf32_k_of_slot(t + 4 * set) / 2);
    }
    EXPECT_EQ(mod4.size(), 4u) << "slot set " << set;
    EXPECT_EQ(half.size(), 4u) << "slot set " << set;
  }
}

// Registers against the PTX ISA's fragment tables of mma.m16n8k8 (.tf32), with the k slot of each
// register mapped through the permutation; then a simulated mma: output (m, n) pairs A's register
// of slot s in lane (m % 8, s % 4) with B's of slot s in lane (n, s % 4), and must meet each k
// once, with the same k on both sides.
TEST(Tf32FragmentMap, RegistersMatchMmaFragmentsAndAgreeOnK) {
  using MapA = tilepipe::Tf32FragmentMap<kA>;
  using MapB = tilepipe::Tf32FragmentMap<kB>;
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, t = lane % 4;
    // a[0] = (g, t), a[1] = (g + 8, t), a[2] = (g, t + 4), a[3] = (g + 8, t + 4) in slots.
    const int a_row[4] = {g, g + 8, g, g + 8}, a_slot[4] = {t, t, t + 4, t + 4};
    for (int r = 0; r < 4; ++r) {
      EXPECT_EQ(MapA::mn_of(lane, r), a_row[r]) << "lane " << lane << " a[" << r << "]";
      EXPECT_EQ(MapA::slot_of(lane, r), a_slot[r]) << "lane " << lane << " a[" << r << "]";
    }
    // b[0] = (slot t, n g), b[1] = (slot t + 4, n g).
    for (int r = 0; r < 2; ++r) {
      EXPECT_EQ(MapB::mn_of(lane, r), g) << "lane " << lane << " b[" << r << "]";
      EXPECT_EQ(MapB::slot_of(lane, r), t + 4 * r) << "lane " << lane << " b[" << r << "]";
    }
  }
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 8; ++n) {
      std::set<int> ks;
      for (int slot = 0; slot < 8; ++slot) {
        const int lane_a = 4 * (m % 8) + slot % 4, reg_a = (m / 8) + 2 * (slot / 4);
        const int lane_b = 4 * n + slot % 4, reg_b = slot / 4;
        ASSERT_EQ(MapA::mn_of(lane_a, reg_a), m);
        ASSERT_EQ(MapB::mn_of(lane_b, reg_b), n);
        ASSERT_EQ(MapA::k_of(lane_a, reg_a), MapB::k_of(lane_b, reg_b))
            << "m " << m << " n " << n << " slot " << slot;
        ks.insert(MapA::k_of(lane_a, reg_a));
      }
      EXPECT_EQ(ks.size(), 8u) << "m " << m << " n " << n;
    }
}

// For a warp's loads of a tile: every register's element lies in the tile, the warp's registers of
// one k-block cover its WarpMN x 8 slice exactly once, and each register's 32 lanes read 32
// different banks (4-byte words of a 128-byte-aligned tile). `expect_splits`: the per-lane offset
// plus per-load constants (kSplits) reproduce the general formula.
template <Operand Op, SmemOrder Order, int TileMN, int TileK, int WarpMN>
void check_tile(bool expect_splits) {
  using Extent = tilepipe::OperandTileExtent<Order, TileMN, TileK>;
  using Layout = tilepipe::SwizzledTileLayout<Extent::kRows, Extent::kCols, 4>;
  using Addr = tilepipe::Tf32FragmentAddressing<Op, Order, Layout, TileMN, TileK, WarpMN>;
  SCOPED_TRACE(testing::Message() << name_of(Op) << " " << name_of(Order) << ", tile " << TileMN
                                  << " x " << TileK << ", warp " << WarpMN);
  EXPECT_EQ(Addr::kSplits, expect_splits);
  for (int w = 0; w + WarpMN <= TileMN; w += WarpMN)
    for (int kb = 0; kb < Addr::kKBlocks; ++kb) {
      std::set<int> covered;
      for (int i = 0; i < Addr::kFragments; ++i)
        for (int r = 0; r < Addr::kRegisters; ++r) {
          std::set<int> banks;
          for (int lane = 0; lane < 32; ++lane) {
            const int e = Addr::element(lane, w, i, kb, r);
            ASSERT_GE(e, 0);
            ASSERT_LT(e, Layout::kElements);
            const int row = Addr::row(lane, w, i, kb, r), col = Addr::col(lane, w, i, kb, r);
            const int mn = Order == kK ? row : col, k = Order == kK ? col : row;
            ASSERT_GE(mn, w);
            ASSERT_LT(mn, w + WarpMN);
            ASSERT_GE(k, 8 * kb);
            ASSERT_LT(k, 8 * kb + 8);
            covered.insert((mn - w) * 8 + k - 8 * kb);
            banks.insert(e % 32);
            if (Addr::kSplits) {
              ASSERT_EQ(Addr::split_element(Addr::element(lane, w, 0, 0, r), i, kb), e);
            }
          }
          EXPECT_EQ(banks.size(), 32u) << "bank conflict: warp at " << w << ", fragment " << i
                                       << ", k-block " << kb << ", register " << r;
        }
      EXPECT_EQ(covered.size(), std::size_t(WarpMN) * 8) << "warp at " << w << ", k-block " << kb;
    }
}

TEST(Tf32FragmentAddressing, ConflictFreeAndExactForTheLibraryTiles) {
  // The f32 tiles (128 x 128 x 32, 64 x 64 warps), both operands and orders.
  check_tile<kA, kK, 128, 32, 64>(true);
  check_tile<kA, kMN, 128, 32, 64>(true);
  check_tile<kB, kK, 128, 32, 64>(true);
  check_tile<kB, kMN, 128, 32, 64>(true);
  // Deeper and shallower k-tiles, other warp tiles; MN-contiguous rows of 128 bytes and more.
  check_tile<kA, kK, 256, 64, 64>(true);
  check_tile<kB, kMN, 256, 64, 128>(true);
  check_tile<kA, kMN, 64, 16, 32>(true);
  check_tile<kB, kMN, 32, 32, 32>(true);
  check_tile<kA, kK, 64, 16, 16>(true);
  check_tile<kB, kK, 64, 8, 32>(false);
}
