// Host tests of the SIMT f32 fragment index math (layout/simt_fragment_map.cuh): each lane's A
// rows and B columns are those of its mma.sync-layout accumulators (K-contiguous A), or, for an
// M-contiguous A, two adjacent rows whose accumulators the row exchange (SimtRowExchange, run as
// SimtWarpMma::start / finish do) takes to mma.sync's rows and back, in every warp tile; each load
// is a vector of the width its order allows (16 bytes K-contiguous, 8 bytes MN-contiguous) and
// reads the fragment elements it claims (contiguous and aligned under the swizzle); a warp's loads
// of a k-block cover its WarpMN x 4 slice; the distinct words of every load lie in distinct banks
// (broadcasts aside: no bank conflict); and the per-lane-plus-constant addressing (which
// SimtFragmentLoader requires) equals the general one.

#include <gtest/gtest.h>

#include <set>
#include <vector>

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
    for (int j = 0; j < 4; ++j)
      outputs.insert(MapA::mn_of(lane, j / 2) * 8 + MapB::mn_of(lane, j % 2));
  EXPECT_EQ(outputs.size(), 128u);
}

// An M-contiguous A (2 rows per lane): lane g holds rows 8 (g % 2) + 2 (g / 2) and the next of each
// m16 tile, so a lane's two rows are one 8-byte vector of a k row, the 8 g together 16 consecutive
// rows (64 bytes), and every row of the tile belongs to the 4 lanes of one g.
TEST(SimtFragmentMap, MContiguousRowsComeInAdjacentPairs) {
  using Map = tilepipe::SimtFragmentMap<kA, 2>;
  EXPECT_EQ(tilepipe::simt_rows_per_lane(kA, kMN), 2);
  EXPECT_EQ(tilepipe::simt_rows_per_lane(kA, kK), 1);
  EXPECT_EQ(tilepipe::simt_rows_per_lane(kB, kMN), 1);
  EXPECT_EQ(tilepipe::simt_rows_per_lane(kB, kK), 1);
  const int first_row[8] = {0, 8, 2, 10, 4, 12, 6, 14};  // of lane g's pair
  std::vector<int> lanes_of_row(16, 0);
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4;
    EXPECT_EQ(Map::mn_of(lane, 0), first_row[g]) << "lane " << lane;
    EXPECT_EQ(Map::mn_of(lane, 1), first_row[g] + 1) << "lane " << lane;
    for (int h = 0; h < 2; ++h) ++lanes_of_row.at(Map::mn_of(lane, h));
  }
  for (int r = 0; r < 16; ++r) EXPECT_EQ(lanes_of_row[r], 4) << "row " << r;
}

// The row exchange, modelled on the host for all 32 lanes of a warp: each register holds the
// (row, column) of the warp tile it accumulates, as SimtWarpMma::exchanged moves registers j and
// j + 2 (elements h = 0, 1) of every m16n8 tile: each lane sends SimtRowExchange::send of the pair,
// receives what lane ^ kLaneMask sent (__shfl_xor_sync), and keeps SimtRowExchange::receive. From
// the paired rows every register must land on mma.sync's (row, column) of its lane (finish), from
// mma.sync's on the paired rows (start), for every warp tile a SIMT tile can have; the paired
// layout must also cover the warp tile once (each FFMA computes one output element).
namespace {

struct Position {
  int row, col;
  bool operator==(const Position& o) const { return row == o.row && col == o.col; }
};
// Registers of a warp: [lane][(mi * tiles_n + ni) * 4 + j].
using WarpRegisters = std::vector<std::vector<Position>>;

// Register j of m16n8 tile (mi, ni) of `lane`, with A's rows as SimtFragmentMap<kA, R>.
template <int R>
Position position_of(int lane, int mi, int ni, int j) {
  return {16 * mi + tilepipe::SimtFragmentMap<kA, R>::mn_of(lane, j / 2),
          8 * ni + 2 * (lane % 4) + j % 2};
}

template <int R>
WarpRegisters warp_in_rows(int tiles_m, int tiles_n) {
  WarpRegisters w(32, std::vector<Position>(std::size_t(tiles_m) * tiles_n * 4));
  for (int lane = 0; lane < 32; ++lane)
    for (int mi = 0; mi < tiles_m; ++mi)
      for (int ni = 0; ni < tiles_n; ++ni)
        for (int j = 0; j < 4; ++j)
          w[lane][(mi * tiles_n + ni) * 4 + j] = position_of<R>(lane, mi, ni, j);
  return w;
}

// SimtWarpMma<WarpM, WarpN, R>::exchanged, one shuffle at a time for the whole warp. Positions
// travel as floats (exact: row * 1024 + column < 2^24).
template <int R>
WarpRegisters exchanged(const WarpRegisters& from, int tiles_m, int tiles_n) {
  using Exchange = tilepipe::SimtRowExchange<R>;
  auto encode = [](Position p) { return float(p.row * 1024 + p.col); };
  auto decode = [](float f) { return Position{int(f) / 1024, int(f) % 1024}; };
  WarpRegisters to = from;
  if (!Exchange::kExchanges) return to;
  for (int mi = 0; mi < tiles_m; ++mi)
    for (int ni = 0; ni < tiles_n; ++ni)
      for (int col = 0; col < 2; ++col) {
        const int lo = (mi * tiles_n + ni) * 4 + col, hi = lo + 2;
        float sent[32];
        for (int lane = 0; lane < 32; ++lane)
          sent[lane] =
              Exchange::send(Exchange::upper(lane), encode(from[lane][lo]), encode(from[lane][hi]));
        for (int lane = 0; lane < 32; ++lane) {
          float x_lo = encode(from[lane][lo]), x_hi = encode(from[lane][hi]);
          Exchange::receive(Exchange::upper(lane), x_lo, x_hi, sent[lane ^ Exchange::kLaneMask]);
          to[lane][lo] = decode(x_lo);
          to[lane][hi] = decode(x_hi);
        }
      }
  return to;
}

template <int R>
void check_exchange(int warp_m, int warp_n) {
  SCOPED_TRACE(testing::Message() << R << " rows per lane, warp tile " << warp_m << " x "
                                  << warp_n);
  const int tiles_m = warp_m / 16, tiles_n = warp_n / 8;
  const WarpRegisters paired = warp_in_rows<R>(tiles_m, tiles_n),
                      mma = warp_in_rows<1>(tiles_m, tiles_n);
  std::set<int> covered;
  for (int lane = 0; lane < 32; ++lane)
    for (const Position& p : paired[lane]) covered.insert(p.row * warp_n + p.col);
  EXPECT_EQ(covered.size(), std::size_t(warp_m) * warp_n);
  const WarpRegisters finished = exchanged<R>(paired, tiles_m, tiles_n);
  const WarpRegisters started = exchanged<R>(mma, tiles_m, tiles_n);
  long long bad = 0;
  for (int lane = 0; lane < 32; ++lane)
    for (std::size_t r = 0; r < mma[lane].size(); ++r) {
      if (!(finished[lane][r] == mma[lane][r]) && ++bad <= 4)
        ADD_FAILURE() << "finish: lane " << lane << " register " << r << " holds ("
                      << finished[lane][r].row << ", " << finished[lane][r].col
                      << "), mma.sync's is (" << mma[lane][r].row << ", " << mma[lane][r].col
                      << ")";
      if (!(started[lane][r] == paired[lane][r]) && ++bad <= 4)
        ADD_FAILURE() << "start: lane " << lane << " register " << r << " holds ("
                      << started[lane][r].row << ", " << started[lane][r].col
                      << "), the paired rows' is (" << paired[lane][r].row << ", "
                      << paired[lane][r].col << ")";
    }
  EXPECT_EQ(bad, 0);
}

}  // namespace

TEST(SimtRowExchange, PutsEveryAccumulatorAtMmaSyncsRowAndColumn) {
  // Every warp tile SimtWarpMma takes up to 128 x 64 (WarpM a multiple of 16, WarpN of 16): the
  // f32 default tile's 64 x 32 among them.
  for (int warp_m = 16; warp_m <= 128; warp_m += 16)
    for (int warp_n = 16; warp_n <= 64; warp_n += 16) {
      check_exchange<2>(warp_m, warp_n);
      check_exchange<1>(warp_m, warp_n);
    }
}

// For a warp's loads of a tile, at every warp position and k-block: each load is aligned to its
// vector (16 bytes K-contiguous, 8 bytes MN-contiguous), and element q of its vector is the
// fragment element (h, kk) it fills; every (lane, i, h, kk) is filled exactly once; the warp covers
// its WarpMN x 4 slice; the distinct 4-byte words of one load lie in distinct banks; the split
// addressing reproduces the general one.
template <Operand Op, SmemOrder Order, int TileMN, int TileK, int WarpMN>
void check_tile() {
  using Extent = tilepipe::OperandTileExtent<Order, TileMN, TileK>;
  using Layout = tilepipe::SwizzledTileLayout<Extent::kRows, Extent::kCols, 4>;
  using Addr = tilepipe::SimtFragmentAddressing<Op, Order, Layout, TileMN, TileK, WarpMN>;
  using Map = typename Addr::Map;
  SCOPED_TRACE(testing::Message() << name_of(Op) << " " << name_of(Order) << ", tile " << TileMN
                                  << " x " << TileK << ", warp " << WarpMN);
  ASSERT_TRUE(Addr::kSplits);
  EXPECT_EQ(Addr::kVector, Order == kK ? 4 : 2) << "a load narrower than its order allows";
  EXPECT_EQ(Addr::kVector * Addr::kLoads, 8);
  EXPECT_EQ(Map::kRowsPerLane, Op == kA && Order == kMN ? 2 : 1);
  const bool along_k = Order == kK;  // a vector runs along k; else along h
  auto offset_of = [](int mn, int k) {
    return Order == kK ? Layout::offset(mn, k) : Layout::offset(k, mn);
  };
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
            ASSERT_EQ(Addr::split_element(Addr::element(lane, w, 0, 0, Addr::h_of(v)), i, kb, v),
                      e);
            for (int q = 0; q < Addr::kVector; ++q) {
              const int h = Addr::h_of(v) + (along_k ? 0 : q),
                        kk = Addr::kk_of(v) + (along_k ? q : 0);
              const int mn = w + Map::kMN * i + Map::mn_of(lane, h), k = 4 * kb + kk;
              ASSERT_EQ(e + q, offset_of(mn, k))
                  << "lane " << lane << " fragment " << i << " load " << v << " element " << q;
              EXPECT_TRUE(filled.insert(((lane * Addr::kFragments + i) * 2 + h) * 4 + kk).second)
                  << "fragment element filled twice: lane " << lane << " fragment " << i << " h "
                  << h << " k " << kk;
              covered.insert((mn - w) * 4 + kk);
              if (words.insert(e + q).second) banks.insert((e + q) % 32);
            }
          }
          EXPECT_EQ(banks.size(), words.size()) << "bank conflict: warp at " << w << ", fragment "
                                                << i << ", k-block " << kb << ", load " << v;
        }
      EXPECT_EQ(filled.size(), std::size_t(32) * Addr::kFragments * 8)
          << "warp at " << w << ", k-block " << kb;
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
  check_tile<kA, kMN, 64, 32, 32>();
  check_tile<kA, kMN, 256, 16, 128>();
}
