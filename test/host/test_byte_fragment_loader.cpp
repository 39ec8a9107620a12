// Host test of ByteFragmentLoaderA / B (warp/byte_fragment_loader.cuh), end to end: the 32 lanes of
// each warp load their fragments of a k-tile from swizzled shared tiles, and the products that
// mma.sync m16n8k16 forms from those registers (its fragment layout, arch/mma.cuh) over the
// k-tile's k-blocks (4 or 8) equal A * B over the k-tile for every row and column of the warp tile.
// On the host the loaders' 128-bit loads are plain reads, so this checks the registers they fill.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>

#include <tilepipe/warp/byte_fragment_loader.cuh>

namespace {

// The 16-bit halves of a register (low first), as the f16 values they hold.
float half_of(std::uint32_t reg, int which) {
  __half_raw r;
  r.x = static_cast<unsigned short>(which == 0 ? reg & 0xFFFF : reg >> 16);
  return __half2float(__half(r));
}
int byte_of(std::uint32_t reg, int which) {
  return static_cast<std::int8_t>((reg >> (8 * which)) & 0xFF);
}

template <int TileM, int TileN, int kTileK, int WarpM, int WarpN>
void check_loaders(std::uint32_t seed) {
  using LoadA = tilepipe::ByteFragmentLoaderA<__half, TileM, kTileK, WarpM>;
  using LoadB = tilepipe::ByteFragmentLoaderB<std::int8_t, TileN, kTileK, WarpN>;
  typename LoadA::Tile a;
  typename LoadB::Tile b;
  std::memset(static_cast<void*>(&a), 0, sizeof(a));  // __half's constructor leaves it unset
  std::memset(static_cast<void*>(&b), 0, sizeof(b));
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> small(-8, 8), byte(-128, 127);
  for (int m = 0; m < TileM; ++m)
    for (int k = 0; k < kTileK; ++k) a.at(m, k) = __float2half(float(small(rng)));
  for (int n = 0; n < TileN; ++n)
    for (int k = 0; k < kTileK; ++k) b.at(n, k) = static_cast<std::int8_t>(byte(rng));

  for (int warp_m0 = 0; warp_m0 < TileM; warp_m0 += WarpM) {
    for (int warp_n0 = 0; warp_n0 < TileN; warp_n0 += WarpN) {
      typename LoadA::Fragment fa[32];
      typename LoadB::Fragment fb[32];
      for (int lane = 0; lane < 32; ++lane) {
        LoadA(lane, warp_m0).load(fa[lane], a);
        LoadB(lane, warp_n0).load(fb[lane], b);
      }
      // D(r, n) of the warp tile: the mma's sum over p = 0..15 of each k-block, per m16 and n8
      // tile.
      double d[WarpM][WarpN] = {};
      for (int kb = 0; kb < kTileK / 16; ++kb) {
        for (int mi = 0; mi < WarpM / 16; ++mi) {
          for (int ni = 0; ni < WarpN / 8; ++ni) {
            double am[16][16], bm[16][8];  // (row, p), (p, column) of this k16 block
            for (int lane = 0; lane < 32; ++lane) {
              const int g = lane / 4, t = lane % 4;
              const std::uint32_t* ar = fa[lane].kb[kb].x[mi];
              const std::uint32_t braw = fb[lane].x[ni][kb];
              for (int e = 0; e < 2; ++e) {
                am[g][2 * t + e] = half_of(ar[0], e);
                am[g + 8][2 * t + e] = half_of(ar[1], e);
                am[g][2 * t + 8 + e] = half_of(ar[2], e);
                am[g + 8][2 * t + 8 + e] = half_of(ar[3], e);
                bm[2 * t + e][g] = byte_of(braw, e);          // register 0: bytes 0, 1
                bm[2 * t + 8 + e][g] = byte_of(braw, 2 + e);  // register 1: bytes 2, 3
              }
            }
            for (int r = 0; r < 16; ++r)
              for (int c = 0; c < 8; ++c)
                for (int p = 0; p < 16; ++p) d[16 * mi + r][8 * ni + c] += am[r][p] * bm[p][c];
          }
        }
      }
      for (int r = 0; r < WarpM; ++r) {
        for (int c = 0; c < WarpN; ++c) {
          double want = 0.0;
          for (int k = 0; k < kTileK; ++k)
            want += double(__half2float(a.at(warp_m0 + r, k))) * double(b.at(warp_n0 + c, k));
          EXPECT_EQ(d[r][c], want) << "row " << warp_m0 + r << ", column " << warp_n0 + c;
        }
      }
    }
  }
}

TEST(ByteFragmentLoader, MmaOfTheLoadedFragmentsIsTheKTileProduct) {
  check_loaders<16, 128, 64, 16, 32>(1);
  check_loaders<32, 64, 64, 16, 16>(2);
  check_loaders<64, 128, 64, 32, 64>(3);
  check_loaders<16, 128, 128, 16, 32>(4);
  check_loaders<16, 64, 128, 16, 16>(5);
  check_loaders<64, 128, 128, 32, 64>(6);
}

}  // namespace
