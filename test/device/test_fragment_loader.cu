// Device tests of FragmentLoader: every lane's registers after ldmatrix are compared with the
// mma.sync m16n8k16 fragment layout of the PTX ISA, computed here on the host from its tables,
// for A and B in both shared-memory storage orders.

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <tilepipe/tilepipe.cuh>

#include "device_test_util.cuh"

using tilepipe::Operand;
using tilepipe::SmemOrder;

namespace {

using Element = __half;

// One block tile of TileMN x TileK (stored as the loader sees it) is loaded to shared memory,
// then each warp loads its fragments of every k-block and writes its registers out raw:
// out[warp][k_block][register] with registers in lane-major order.
template <Operand Op, SmemOrder Order, int TileMN, int TileK, int WarpMN>
__global__ void fragment_kernel(tilepipe::MatrixView<const Element> src, std::uint32_t* out) {
  using FragLoader = tilepipe::FragmentLoader<Element, Op, Order, TileMN, TileK, WarpMN>;
  using Tile = typename FragLoader::Tile;
  constexpr int kWarps = TileMN / WarpMN;
  constexpr int kThreads = 32 * kWarps;
  using Loader = tilepipe::AsyncTileLoader<Element, Tile::kRows, Tile::kCols, kThreads>;
  __shared__ Tile tile;

  auto pipe = cuda::make_pipeline();
  Loader(src, threadIdx.x).load(tile, 0, 0, pipe);
  pipe.producer_commit();
  cuda::pipeline_consumer_wait_prior<0>(pipe);
  __syncthreads();

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  FragLoader loader(lane, warp * WarpMN);
  constexpr int kRegs = sizeof(typename FragLoader::Fragment) / sizeof(std::uint32_t);
  for (int kb = 0; kb < FragLoader::kKBlocks; ++kb) {
    typename FragLoader::Fragment frag;
    loader.load(frag, tile, kb);
    const std::uint32_t* regs = reinterpret_cast<const std::uint32_t*>(&frag);
    std::uint32_t* dst =
        out + ((std::size_t(warp) * FragLoader::kKBlocks + kb) * 32 + lane) * kRegs;
    for (int i = 0; i < kRegs; ++i) dst[i] = regs[i];
  }
}

template <Operand Op, SmemOrder Order, int TileMN, int TileK, int WarpMN>
void run_fragment_test() {
  const bool is_a = Op == Operand::kA;
  const bool k_contig = Order == SmemOrder::kKContiguous;
  SCOPED_TRACE(testing::Message() << (is_a ? "A" : "B") << (k_contig ? " K" : " MN")
                                  << "-contiguous, tile " << TileMN << "x" << TileK << ", warp "
                                  << WarpMN);
  // The operand slice (mn, k) stored as the loader sees it: [mn][k] or [k][mn].
  const int rows = k_contig ? TileMN : TileK, cols = k_contig ? TileK : TileMN;
  // Every element gets a distinct non-zero 16-bit id.
  std::vector<std::uint16_t> ids(std::size_t(rows) * cols);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::uint16_t>(i * 7 + 1);
  auto id_of = [&](int mn, int k) {
    return k_contig ? ids[std::size_t(mn) * cols + k] : ids[std::size_t(k) * cols + mn];
  };

  constexpr int kWarps = TileMN / WarpMN, kKBlocks = TileK / 16;
  constexpr int kRegs = is_a ? WarpMN / 16 * 4 : WarpMN / 8 * 2;
  tptest::DeviceBuffer<std::uint16_t> d_src(ids.size());
  tptest::DeviceBuffer<std::uint32_t> d_out(std::size_t(kWarps) * kKBlocks * 32 * kRegs);
  ASSERT_TRUE(d_src.ok() && d_out.ok());
  TP_CUDA_ASSERT(d_src.upload(ids));
  TP_CUDA_ASSERT(d_out.poison());
  tilepipe::MatrixView<const Element> view{reinterpret_cast<const Element*>(d_src.get()), rows,
                                           cols, cols};
  fragment_kernel<Op, Order, TileMN, TileK, WarpMN><<<1, 32 * kWarps>>>(view, d_out.get());
  TP_CUDA_ASSERT_LAUNCH();
  std::vector<std::uint32_t> out;
  TP_CUDA_ASSERT(d_out.download(out));

  // PTX ISA, mma.m16n8k16, 16-bit inputs; g = lane / 4, t = lane % 4. Halves: low = first.
  //  A (16x16), registers a0..a3: row g + 8 (j % 2), cols 2t + 8 (j / 2) + {0, 1}
  //  B (16x8),  registers b0, b1: rows 2t + 8 j + {0, 1}, col g
  int mismatches = 0;
  for (int w = 0; w < kWarps; ++w)
    for (int kb = 0; kb < kKBlocks; ++kb)
      for (int lane = 0; lane < 32; ++lane)
        for (int reg = 0; reg < kRegs; ++reg)
          for (int h = 0; h < 2; ++h) {
            const int g = lane / 4, t = lane % 4;
            int mn, k;
            if (is_a) {
              const int tile = reg / 4, j = reg % 4;
              mn = 16 * tile + g + 8 * (j % 2);
              k = 2 * t + 8 * (j / 2) + h;
            } else {
              const int tile = reg / 2, j = reg % 2;
              mn = 8 * tile + g;
              k = 2 * t + 8 * j + h;
            }
            mn += w * WarpMN;
            k += 16 * kb;
            const std::uint32_t word =
                out[((std::size_t(w) * kKBlocks + kb) * 32 + lane) * kRegs + reg];
            const std::uint16_t got = static_cast<std::uint16_t>(h ? word >> 16 : word & 0xFFFF);
            const std::uint16_t want = id_of(mn, k);
            if (got != want && ++mismatches <= 10) {
              ADD_FAILURE() << "warp " << w << " k-block " << kb << " lane " << lane << " register "
                            << reg << " half " << h << ": got id " << got << ", want id " << want
                            << " (mn " << mn << ", k " << k << ")";
            }
          }
  EXPECT_EQ(mismatches, 0);
}

}  // namespace

TEST(FragmentLoader, AKContiguous) {
  run_fragment_test<Operand::kA, SmemOrder::kKContiguous, 128, 32, 64>();
  run_fragment_test<Operand::kA, SmemOrder::kKContiguous, 64, 64, 32>();
  run_fragment_test<Operand::kA, SmemOrder::kKContiguous, 64, 16, 16>();
}
TEST(FragmentLoader, AMNContiguous) {
  run_fragment_test<Operand::kA, SmemOrder::kMNContiguous, 128, 32, 64>();
  run_fragment_test<Operand::kA, SmemOrder::kMNContiguous, 64, 64, 32>();
}
TEST(FragmentLoader, BKContiguous) {
  run_fragment_test<Operand::kB, SmemOrder::kKContiguous, 128, 32, 64>();
  run_fragment_test<Operand::kB, SmemOrder::kKContiguous, 256, 32, 64>();
  run_fragment_test<Operand::kB, SmemOrder::kKContiguous, 64, 64, 16>();
}
TEST(FragmentLoader, BMNContiguous) {
  run_fragment_test<Operand::kB, SmemOrder::kMNContiguous, 128, 32, 64>();
  run_fragment_test<Operand::kB, SmemOrder::kMNContiguous, 64, 64, 32>();
}
