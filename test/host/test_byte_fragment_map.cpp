// Host tests of ByteFragmentMap and ByteFragmentMapA (layout/byte_fragment_map.cuh), for k-tiles
// of 64 and 128: each lane's 128-bit loads of int8 B bytes and of f16 A hold, in the registers
// ByteFragmentLoaderB / A put them in, elements of the same physical k (ByteKOrder) for every
// element of the mma's k16 block; each k-block's k are 16 distinct k of the tile and the k-blocks
// cover the k-tile once; a lane's k lie in its 64-deep half (half_of); the loaders' split
// addressing equals the plain one; and every load of the warp is free of bank conflicts.

#include <gtest/gtest.h>

#include <set>
#include <utility>

#include <tilepipe/layout/byte_fragment_map.cuh>

namespace {

// A 128-bit load is served eight lanes at a time: the eight lanes' 16-byte chunks must lie in
// eight different 16-byte bank groups (of the 128-byte line of 32 banks).
void expect_conflict_free(const int (&byte_offsets)[32], const char* what) {
  for (int phase = 0; phase < 4; ++phase) {
    std::set<int> groups;
    for (int lane = 8 * phase; lane < 8 * phase + 8; ++lane) {
      EXPECT_EQ(byte_offsets[lane] % 16, 0) << what << ": 128-bit loads must be 16-byte aligned";
      groups.insert(byte_offsets[lane] / 16 % 8);
    }
    EXPECT_EQ(groups.size(), 8u) << what << ": a bank conflict in lanes " << 8 * phase << ".."
                                 << 8 * phase + 7;
  }
}

template <int TileK>
void check_order() {
  using Order = tilepipe::ByteKOrder<TileK>;
  EXPECT_EQ(Order::kKBlocks, TileK / 16);
  std::set<int> tile;
  for (int kb = 0; kb < Order::kKBlocks; ++kb) {
    std::set<int> block;
    for (int lane = 0; lane < 32; ++lane) {
      for (int j = 0; j < 2; ++j) {
        // The mma's element 2t + 8j (+ 1) of the k16 block is this physical k (+ 1).
        const int k = Order::k_of(lane, kb, j);
        EXPECT_EQ(Order::k_of(lane + 4 * (lane < 28 ? 1 : -7), kb, j), k)
            << "the k of a register depends on t = lane % 4 only";
        EXPECT_EQ(k / 64, Order::half_of(lane)) << "lane " << lane << "'s k must lie in its half";
        block.insert(k);
        block.insert(k + 1);
      }
    }
    EXPECT_EQ(block.size(), 16u);
    for (int k : block) EXPECT_TRUE(tile.insert(k).second) << "k " << k << " in two k-blocks";
  }
  EXPECT_EQ(tile.size(), static_cast<std::size_t>(TileK));
  EXPECT_EQ(*tile.begin(), 0);
  EXPECT_EQ(*tile.rbegin(), TileK - 1);
}

TEST(ByteKOrder, EachKBlockIsSixteenKAndTheBlocksCoverTheTile) {
  check_order<64>();
  check_order<128>();
}

// B: the loader's word `kb` of n8 tile `ni` is bytes [4 (kb % 4), + 4) of the 16 bytes it loads at
// `split_offset(lane_bytes, ni, kb / 4)`; byte 2j + e of it must be element (k_of(lane, kb, j) + e,
// column n_of(lane, ni)) of the stored tile.
template <int TileN, int TileK, int WarpN>
void check_b() {
  using Map = tilepipe::ByteFragmentMap<TileN, TileK, WarpN>;
  using Order = tilepipe::ByteKOrder<TileK>;
  using Layout = typename Map::Layout;
  ASSERT_TRUE(Map::kSplits);
  EXPECT_EQ(Map::kHalves, TileK / 64);
  for (int warp_n0 = 0; warp_n0 < TileN; warp_n0 += WarpN) {
    for (int ni = 0; ni < Map::kTiles; ++ni) {
      std::set<std::pair<int, int>> covered;  // (column, k) of the n8 tile's k-tile
      for (int h = 0; h < Map::kHalves; ++h) {
        int offsets[32];
        for (int lane = 0; lane < 32; ++lane) {
          offsets[lane] = Map::split_offset(Map::lane_bytes(lane, warp_n0), ni, h);
          EXPECT_EQ(offsets[lane], Map::offset(lane, warp_n0, ni, h));
          EXPECT_EQ(Map::n_of(lane, ni), 8 * ni + lane / 4);
          const int column = warp_n0 + Map::n_of(lane, ni);
          for (int kb = 4 * h; kb < 4 * h + 4; ++kb) {
            for (int byte = 0; byte < 4; ++byte) {
              const int k = Order::k_of(lane, kb, byte / 2) + byte % 2;
              EXPECT_EQ(offsets[lane] + 4 * (kb % 4) + byte, Layout::offset(column, k))
                  << "lane " << lane << ", n8 tile " << ni << ", k-block " << kb << ", byte "
                  << byte;
              EXPECT_TRUE(covered.insert({column, k}).second);
            }
          }
        }
        expect_conflict_free(offsets, "B");
      }
      EXPECT_EQ(covered.size(), 8u * TileK)
          << "the warp's loads must cover the n8 tile's k-tile once";
    }
  }
}

// A: the loader's load (mi, r, h, c) is 8 elements at `split_offset(...)` bytes; elements 0..3
// are k-block 4h + 2c, 4..7 the next k-block, and of each the first two register r (the low k
// pair of row g + 8r), the last two register 2 + r. Element e must be A(row, k_of(...) + e % 2).
template <int TileM, int TileK, int WarpM>
void check_a() {
  using Map = tilepipe::ByteFragmentMapA<TileM, TileK, WarpM>;
  using Order = tilepipe::ByteKOrder<TileK>;
  using Layout = typename Map::Layout;
  ASSERT_TRUE(Map::kSplits);
  for (int warp_m0 = 0; warp_m0 < TileM; warp_m0 += WarpM) {
    for (int mi = 0; mi < Map::kTiles; ++mi) {
      std::set<std::pair<int, int>> covered;  // (row, k) of the m16 tile's k-tile
      for (int r = 0; r < 2; ++r) {
        for (int h = 0; h < Map::kHalves; ++h) {
          for (int c = 0; c < 2; ++c) {
            int offsets[32];
            for (int lane = 0; lane < 32; ++lane) {
              offsets[lane] = Map::split_offset(Map::lane_bytes(lane, warp_m0), mi, r, h, c);
              EXPECT_EQ(offsets[lane], 2 * Map::offset(lane, warp_m0, mi, r, h, c));
              const int row = warp_m0 + Map::m_of(lane, mi, r);
              EXPECT_EQ(row - warp_m0, 16 * mi + lane / 4 + 8 * r);
              for (int e = 0; e < 8; ++e) {
                const int kb = 4 * h + 2 * c + e / 4;
                const int j = e % 4 / 2;  // register r (j = 0) or 2 + r (j = 1)
                const int k = Order::k_of(lane, kb, j) + e % 2;
                EXPECT_EQ(offsets[lane] / 2 + e, Layout::offset(row, k))
                    << "lane " << lane << ", m16 tile " << mi << ", row half " << r << ", element "
                    << e;
                EXPECT_TRUE(covered.insert({row, k}).second);
              }
            }
            expect_conflict_free(offsets, "A");
          }
        }
      }
      EXPECT_EQ(covered.size(), 16u * TileK)
          << "the warp's loads must cover the m16 tile's k-tile once";
    }
  }
}

TEST(ByteFragmentMap, BLoadsHoldTheKOrderAndAreConflictFree) {
  check_b<128, 64, 32>();
  check_b<256, 64, 64>();
  check_b<64, 64, 16>();
  check_b<128, 128, 32>();
  check_b<64, 128, 16>();
  check_b<256, 128, 64>();
}

TEST(ByteFragmentMapA, ALoadsHoldTheKOrderAndAreConflictFree) {
  check_a<16, 64, 16>();
  check_a<32, 64, 16>();
  check_a<64, 64, 32>();
  check_a<16, 128, 16>();
  check_a<32, 128, 16>();
  check_a<64, 128, 32>();
}

}  // namespace
