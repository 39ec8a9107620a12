// Device tests of SmemRingBuffer: a kernel streams k-tiles through the ring with the multistage
// schedule for Stages 2..6, and every tile the consumer reads must equal its source. A wrong wait
// depth, a missing commit or a missing barrier shows up as a stale or half-written tile.

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <tilepipe/tilepipe.cuh>

#include "device_test_util.cuh"

namespace {

using Element = __half;
constexpr int kRows = 64, kCols = 32, kThreads = 128;
using Loader = tilepipe::AsyncTileLoader<Element, kRows, kCols, kThreads>;

struct Stage {
  Loader::Tile tile;  // (Rows, Cols)
};

// Block b streams the k-tiles of rows [64 b, 64 b + 64) of a (rows x k_tiles * 32) matrix and
// copies each tile it consumes to out[b][t]. Threads read elements that other threads loaded
// (the reverse of the load order), so the barrier inside consumer_wait matters.
template <int Stages>
__global__ void stream_kernel(tilepipe::MatrixView<const Element> src, int k_tiles,
                              std::uint16_t* out, int* read_slots) {
  using Ring = tilepipe::SmemRingBuffer<Stage, Stages>;
  extern __shared__ __align__(128) unsigned char smem[];
  Ring ring(*reinterpret_cast<typename Ring::SharedStorage*>(smem));
  Loader loader(src, threadIdx.x);
  const int row0 = blockIdx.x * kRows;

  for (int t = 0; t < Stages - 1; ++t) {
    ring.producer_acquire();
    if (t < k_tiles) loader.load(ring.write_stage().tile, row0, t * kCols, ring.pipeline());
    ring.producer_commit();
  }
  for (int t = 0; t < k_tiles; ++t) {
    ring.consumer_wait();
    ring.producer_acquire();
    const int next = t + Stages - 1;
    if (next < k_tiles) loader.load(ring.write_stage().tile, row0, next * kCols, ring.pipeline());
    ring.producer_commit();

    const Stage& stage = ring.read_stage();
    std::uint16_t* dst = out + (static_cast<std::size_t>(blockIdx.x) * k_tiles + t) * kRows * kCols;
    for (int i = kRows * kCols - 1 - threadIdx.x; i >= 0; i -= kThreads) {
      const Element v = stage.tile.at(i / kCols, i % kCols);
      dst[i] = reinterpret_cast<const std::uint16_t&>(v);
    }
    if (threadIdx.x == 0 && blockIdx.x == 0) read_slots[t] = ring.read_index();
    ring.consumer_release();
  }
  ring.drain();
}

template <int Stages>
void run_stream_test(int k_tiles) {
  SCOPED_TRACE(testing::Message() << Stages << " stages, " << k_tiles << " k-tiles");
  constexpr int kBlocks = 6;
  const int rows = kBlocks * kRows, cols = k_tiles * kCols;
  std::vector<std::uint16_t> host =
      tptest::random_nonzero_bits(std::size_t(rows) * cols, 1000u * Stages + k_tiles);
  tptest::DeviceBuffer<std::uint16_t> d_src(host.size());
  tptest::DeviceBuffer<std::uint16_t> d_out(host.size());
  tptest::DeviceBuffer<int> d_slots(k_tiles);
  ASSERT_TRUE(d_src.ok() && d_out.ok() && d_slots.ok());
  TP_CUDA_ASSERT(d_src.upload(host));
  TP_CUDA_ASSERT(d_out.poison());
  TP_CUDA_ASSERT(d_slots.poison());

  using Ring = tilepipe::SmemRingBuffer<Stage, Stages>;
  const std::size_t smem = sizeof(typename Ring::SharedStorage);
  TP_CUDA_ASSERT(tptest::allow_smem(stream_kernel<Stages>, smem));
  tilepipe::MatrixView<const Element> view{reinterpret_cast<const Element*>(d_src.get()), rows,
                                           cols, cols};
  stream_kernel<Stages><<<kBlocks, kThreads, smem>>>(view, k_tiles, d_out.get(), d_slots.get());
  TP_CUDA_ASSERT_LAUNCH();

  std::vector<std::uint16_t> out;
  std::vector<int> slots;
  TP_CUDA_ASSERT(d_out.download(out));
  TP_CUDA_ASSERT(d_slots.download(slots));
  int mismatches = 0;
  for (int b = 0; b < kBlocks; ++b)
    for (int t = 0; t < k_tiles; ++t)
      for (int r = 0; r < kRows; ++r)
        for (int c = 0; c < kCols; ++c) {
          const std::uint16_t want = host[std::size_t(b * kRows + r) * cols + t * kCols + c];
          const std::uint16_t got = out[((std::size_t(b) * k_tiles + t) * kRows + r) * kCols + c];
          if (got != want && ++mismatches <= 10) {
            ADD_FAILURE() << "block " << b << " k-tile " << t << " element (" << r << ", " << c
                          << "): got 0x" << std::hex << got << ", want 0x" << want;
          }
        }
  EXPECT_EQ(mismatches, 0);
  for (int t = 0; t < k_tiles; ++t) EXPECT_EQ(slots[t], t % Stages) << "k-tile " << t;
}

template <int Stages>
void run_all_counts() {
  run_stream_test<Stages>(1);
  run_stream_test<Stages>(Stages - 1);
  run_stream_test<Stages>(Stages);
  run_stream_test<Stages>(131);
}

}  // namespace

TEST(SmemRingBuffer, TwoStages) { run_all_counts<2>(); }
TEST(SmemRingBuffer, ThreeStages) { run_all_counts<3>(); }
TEST(SmemRingBuffer, FourStages) { run_all_counts<4>(); }
TEST(SmemRingBuffer, FiveStages) { run_all_counts<5>(); }
TEST(SmemRingBuffer, SixStages) { run_all_counts<6>(); }
