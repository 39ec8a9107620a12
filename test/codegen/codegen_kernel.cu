// A small GEMM mainloop built only from tilepipe's collectives, compiled (never run) by the
// codegen test: the PTX must contain 16-byte cp.async.cg, ldmatrix and mma.sync, and ptxas must
// report no spills and no stack frame. It is the shape of kernel users are expected to write.

#include <cuda_fp16.h>

#include <tilepipe/tilepipe.cuh>

namespace {

constexpr int kTileM = 128, kTileN = 128, kTileK = 32;
constexpr int kWarpM = 64, kWarpN = 64;
constexpr int kWarpsM = kTileM / kWarpM, kWarpsN = kTileN / kWarpN;
constexpr int kThreads = 32 * kWarpsM * kWarpsN;
constexpr int kStages = 4;

using Element = __half;
using LoaderA = tilepipe::AsyncTileLoader<Element, kTileM, kTileK, kThreads>;  // A row-major
using LoaderB = tilepipe::AsyncTileLoader<Element, kTileN, kTileK, kThreads>;  // B column-major
using FragLoaderA = tilepipe::FragmentLoader<Element, tilepipe::Operand::kA,
                                             tilepipe::SmemOrder::kKContiguous, kTileM, kTileK, kWarpM>;
using FragLoaderB = tilepipe::FragmentLoader<Element, tilepipe::Operand::kB,
                                             tilepipe::SmemOrder::kKContiguous, kTileN, kTileK, kWarpN>;
using Mma = tilepipe::WarpMma<Element, kWarpM, kWarpN>;

struct Stage {
  LoaderA::Tile a;  // (TileM, TileK)
  LoaderB::Tile b;  // (TileN, TileK)
};
using Ring = tilepipe::SmemRingBuffer<Stage, kStages>;

}  // namespace

// D (M x N, f32, row-major) = A (M x K, row-major) * B (K x N, column-major).
__global__ void __launch_bounds__(kThreads)
codegen_gemm_kernel(const Element* a, const Element* b, float* d, int m, int n, int k) {
  extern __shared__ __align__(128) unsigned char smem[];
  auto& storage = *reinterpret_cast<Ring::SharedStorage*>(smem);

  const int block_m0 = blockIdx.y * kTileM;
  const int block_n0 = blockIdx.x * kTileN;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int warp_m0 = (warp / kWarpsN) * kWarpM, warp_n0 = (warp % kWarpsN) * kWarpN;

  Ring ring(storage);
  LoaderA load_a(tilepipe::MatrixView<const Element>{a, m, k, k}, threadIdx.x);
  LoaderB load_b(tilepipe::MatrixView<const Element>{b, n, k, k}, threadIdx.x);
  FragLoaderA frag_a(lane, warp_m0);
  FragLoaderB frag_b(lane, warp_n0);
  Mma mma;
  Mma::Accumulators acc;
  acc.clear();

  const int k_tiles = (k + kTileK - 1) / kTileK;
  // Prologue: Stages - 1 tiles in flight, one commit each.
  for (int t = 0; t < kStages - 1; ++t) {
    if (t < k_tiles) {
      load_a.load(ring.write_stage().a, block_m0, t * kTileK, ring.pipeline());
      load_b.load(ring.write_stage().b, block_n0, t * kTileK, ring.pipeline());
    }
    ring.producer_commit();
  }
  // Steady state and drain: wait for tile t, refill the slot freed by tile t - 1, compute t.
  for (int t = 0; t < k_tiles; ++t) {
    ring.consumer_wait();
    const int next = t + kStages - 1;
    if (next < k_tiles) {
      load_a.load(ring.write_stage().a, block_m0, next * kTileK, ring.pipeline());
      load_b.load(ring.write_stage().b, block_n0, next * kTileK, ring.pipeline());
    }
    ring.producer_commit();
    FragLoaderA::Fragment fa[2];
    FragLoaderB::Fragment fb[2];
    frag_a.load(fa[0], ring.read_stage().a, 0);
    frag_b.load(fb[0], ring.read_stage().b, 0);
#pragma unroll
    for (int kb = 0; kb < FragLoaderA::kKBlocks; ++kb) {
      if (kb + 1 < FragLoaderA::kKBlocks) {
        frag_a.load(fa[(kb + 1) % 2], ring.read_stage().a, kb + 1);
        frag_b.load(fb[(kb + 1) % 2], ring.read_stage().b, kb + 1);
      }
      mma(acc, fa[kb % 2], fb[kb % 2]);
    }
    ring.consumer_release();
  }
  ring.drain();

#pragma unroll
  for (int mi = 0; mi < Mma::Accumulators::kTilesM; ++mi)
#pragma unroll
    for (int ni = 0; ni < Mma::Accumulators::kTilesN; ++ni)
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int row = block_m0 + warp_m0 + Mma::Accumulators::row_of(lane, mi, j);
        const int col = block_n0 + warp_n0 + Mma::Accumulators::col_of(lane, ni, j);
        if (row < m && col < n) d[static_cast<long long>(row) * n + col] = acc.x[mi][ni][j];
      }
}
