// Host tests of ByteFragmentMap: each lane's 16-bit loads of int8 B bytes hold exactly the
// elements of its mma.sync m16n8k16 B fragment, together the warp's loads cover each k16 block of
// its columns once, the loader's split addressing equals the plain one, and every load of the
// warp is free of bank conflicts.

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <utility>

#include <tilepipe/layout/byte_fragment_map.cuh>

namespace {

// Checks one tile configuration; returns nothing, fails the test on any mismatch.
template <int TileN, int TileK, int WarpN>
void check_map() {
  using Map = tilepipe::ByteFragmentMap<TileN, TileK, WarpN>;
  using Layout = typename Map::Layout;
  for (int warp_n0 = 0; warp_n0 < TileN; warp_n0 += WarpN) {
    for (int kb = 0; kb < Map::kKBlocks; ++kb) {
      for (int ni = 0; ni < Map::kTiles; ++ni) {
        std::set<std::pair<int, int>> covered;  // (row, k) of the n8 tile's k16 block
        for (int j = 0; j < 2; ++j) {
          std::map<int, std::set<int>> words_of_bank;  // one 16-bit load of the warp
          for (int lane = 0; lane < 32; ++lane) {
            const int g = lane / 4, t = lane % 4;
            // The PTX ISA's B fragment: register j holds k = 2t + 8j, +1 of column g.
            EXPECT_EQ(Map::k_of(lane, j), 2 * t + 8 * j);
            EXPECT_EQ(Map::n_of(lane, ni), 8 * ni + g);
            const int row = warp_n0 + Map::n_of(lane, ni);
            const int k = 16 * kb + Map::k_of(lane, j);
            const int offset = Map::offset(lane, warp_n0, ni, kb, j);
            // The two bytes of the register are elements k and k + 1 of the row, adjacent.
            EXPECT_EQ(offset, Layout::offset(row, k));
            EXPECT_EQ(offset + 1, Layout::offset(row, k + 1));
            EXPECT_EQ(offset % 2, 0) << "16-bit loads must be 2-byte aligned";
            EXPECT_LT(offset + 1, Layout::kElements);
            if (Map::kSplits) {
              EXPECT_EQ(Map::split_offset(Map::lane_bytes(lane, warp_n0), ni, kb, j), offset);
            }
            EXPECT_TRUE(covered.insert({row, k}).second);
            EXPECT_TRUE(covered.insert({row, k + 1}).second);
            words_of_bank[offset / 4 % 32].insert(offset / 4);
          }
          for (const auto& [bank, words] : words_of_bank)
            EXPECT_EQ(words.size(), 1u) << "bank " << bank << " serves " << words.size()
                                         << " words: a bank conflict (TileN " << TileN << ", TileK "
                                         << TileK << ", n8 tile " << ni << ", k-block " << kb << ")";
        }
        EXPECT_EQ(covered.size(), 8u * 16u) << "the warp's loads must cover the 8 x 16 block once";
      }
    }
  }
}

TEST(ByteFragmentMap, MatchesTheMmaFragmentAndIsConflictFree) {
  check_map<128, 64, 32>();   // GemmMixedInput's default tile
  check_map<128, 128, 64>();  // rows of one 128-byte line
  check_map<64, 32, 16>();    // rows of two chunks (the loader takes the plain offsets)
  check_map<256, 64, 64>();
}

TEST(ByteFragmentMap, SplitAddressingHoldsForTheDefaultTiles) {
  EXPECT_TRUE((tilepipe::ByteFragmentMap<128, 64, 32>::kSplits));
  EXPECT_TRUE((tilepipe::ByteFragmentMap<128, 128, 64>::kSplits));
  EXPECT_TRUE((tilepipe::ByteFragmentMap<256, 64, 64>::kSplits));
}

}  // namespace
