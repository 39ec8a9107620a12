// Device tests of WarpMma: a block tile is loaded to shared memory, each warp feeds its warp tile
// through FragmentLoader and WarpMma, and the f32 accumulators must equal the CPU's product
// exactly (small random integers). f16 and bf16, all four storage orders of A and B.

#include <gtest/gtest.h>

#include <cstdint>
#include <type_traits>
#include <vector>

#include <tilepipe/tilepipe.cuh>

#include "device_test_util.cuh"

using tilepipe::Layout;
using tilepipe::Operand;
using tilepipe::SmemOrder;

namespace {

// D (TileM x TileN, f32, row-major) = A (TileM x K) * B (K x TileN) with K = TileK: one block,
// WarpsM x WarpsN warps.
template <class Element, Layout LA, Layout LB, int TileM, int TileN, int TileK, int WarpM,
          int WarpN>
struct MmaConfig {
  static constexpr SmemOrder kOrderA = tilepipe::smem_order_of(Operand::kA, LA);
  static constexpr SmemOrder kOrderB = tilepipe::smem_order_of(Operand::kB, LB);
  static constexpr int kWarpsM = TileM / WarpM, kWarpsN = TileN / WarpN;
  static constexpr int kThreads = 32 * kWarpsM * kWarpsN;
  using FragA = tilepipe::FragmentLoader<Element, Operand::kA, kOrderA, TileM, TileK, WarpM>;
  using FragB = tilepipe::FragmentLoader<Element, Operand::kB, kOrderB, TileN, TileK, WarpN>;
  using TileA = typename FragA::Tile;
  using TileB = typename FragB::Tile;
  using LoaderA = tilepipe::AsyncTileLoader<Element, TileA::kRows, TileA::kCols, kThreads>;
  using LoaderB = tilepipe::AsyncTileLoader<Element, TileB::kRows, TileB::kCols, kThreads>;
  using Mma = tilepipe::WarpMma<Element, WarpM, WarpN>;
  struct Smem {
    TileA a;
    TileB b;
  };
};

template <class Element, class Cfg, int TileN>
__global__ void warp_mma_kernel(tilepipe::MatrixView<const Element> a,
                                tilepipe::MatrixView<const Element> b, float* d) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  auto& smem = *reinterpret_cast<typename Cfg::Smem*>(smem_raw);
  auto pipe = cuda::make_pipeline();
  typename Cfg::LoaderA(a, threadIdx.x).load(smem.a, 0, 0, pipe);
  typename Cfg::LoaderB(b, threadIdx.x).load(smem.b, 0, 0, pipe);
  pipe.producer_commit();
  cuda::pipeline_consumer_wait_prior<0>(pipe);
  __syncthreads();

  using Acc = typename Cfg::Mma::Accumulators;
  constexpr int kWarpM = Acc::kTilesM * 16, kWarpN = Acc::kTilesN * 8;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int warp_m0 = warp / Cfg::kWarpsN * kWarpM, warp_n0 = warp % Cfg::kWarpsN * kWarpN;
  typename Cfg::FragA load_a(lane, warp_m0);
  typename Cfg::FragB load_b(lane, warp_n0);
  typename Cfg::Mma mma;
  Acc acc;
  acc.clear();
  for (int kb = 0; kb < Cfg::FragA::kKBlocks; ++kb) {
    typename Cfg::FragA::Fragment fa;
    typename Cfg::FragB::Fragment fb;
    load_a.load(fa, smem.a, kb);
    load_b.load(fb, smem.b, kb);
    mma(acc, fa, fb);
  }
  acc.for_each(lane, [&](int r, int c, float v) { d[(warp_m0 + r) * TileN + warp_n0 + c] = v; });
}

template <class Element, Layout LA, Layout LB, int TileM, int TileN, int TileK, int WarpM,
          int WarpN>
void run_mma_test(std::uint32_t seed) {
  using Cfg = MmaConfig<Element, LA, LB, TileM, TileN, TileK, WarpM, WarpN>;
  SCOPED_TRACE(testing::Message() << (std::is_same_v<Element, __half> ? "f16" : "bf16") << ", A "
                                  << (LA == Layout::kRowMajor ? "row" : "col") << ", B "
                                  << (LB == Layout::kRowMajor ? "row" : "col") << ", tile " << TileM
                                  << "x" << TileN << "x" << TileK << ", warp " << WarpM << "x"
                                  << WarpN);
  constexpr int M = TileM, N = TileN, K = TileK;
  const std::vector<int> a = tptest::random_small_ints(std::size_t(M) * K, 8, seed);  // a[m*K+k]
  const std::vector<int> b =
      tptest::random_small_ints(std::size_t(K) * N, 8, seed + 1);  // b[k*N+n]
  // Store in the requested global layouts.
  std::vector<int> a_stored(a.size()), b_stored(b.size());
  for (int m = 0; m < M; ++m)
    for (int k = 0; k < K; ++k)
      a_stored[LA == Layout::kRowMajor ? m * K + k : k * M + m] = a[m * K + k];
  for (int k = 0; k < K; ++k)
    for (int n = 0; n < N; ++n)
      b_stored[LB == Layout::kRowMajor ? k * N + n : n * K + k] = b[k * N + n];

  tptest::DeviceBuffer<Element> d_a(a.size()), d_b(b.size());
  tptest::DeviceBuffer<float> d_d(std::size_t(M) * N);
  ASSERT_TRUE(d_a.ok() && d_b.ok() && d_d.ok());
  TP_CUDA_ASSERT(d_a.upload(tptest::to_elements<Element>(a_stored)));
  TP_CUDA_ASSERT(d_b.upload(tptest::to_elements<Element>(b_stored)));
  TP_CUDA_ASSERT(d_d.poison());

  // Views in storage terms: rows strided, columns contiguous.
  const tilepipe::MatrixView<const Element> va =
      LA == Layout::kRowMajor ? tilepipe::MatrixView<const Element>{d_a.get(), M, K, K}
                              : tilepipe::MatrixView<const Element>{d_a.get(), K, M, M};
  const tilepipe::MatrixView<const Element> vb =
      LB == Layout::kColumnMajor ? tilepipe::MatrixView<const Element>{d_b.get(), N, K, K}
                                 : tilepipe::MatrixView<const Element>{d_b.get(), K, N, N};
  auto kernel = warp_mma_kernel<Element, Cfg, N>;
  const std::size_t smem = sizeof(typename Cfg::Smem);
  TP_CUDA_ASSERT(tptest::allow_smem(kernel, smem));
  kernel<<<1, Cfg::kThreads, smem>>>(va, vb, d_d.get());
  TP_CUDA_ASSERT_LAUNCH();

  std::vector<float> d;
  TP_CUDA_ASSERT(d_d.download(d));
  int mismatches = 0;
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      long long ref = 0;
      for (int k = 0; k < K; ++k) ref += static_cast<long long>(a[m * K + k]) * b[k * N + n];
      const float got = d[m * N + n];
      if (got != static_cast<float>(ref) && ++mismatches <= 10) {
        ADD_FAILURE() << "D(" << m << ", " << n << ") = " << got << ", want " << ref;
      }
    }
  EXPECT_EQ(mismatches, 0);
}

template <class Element>
void run_all_layouts(std::uint32_t seed) {
  // 2 x 2 warps of 64 x 64 over a 128 x 128 x 32 tile (the GEMM's shape).
  run_mma_test<Element, Layout::kRowMajor, Layout::kColumnMajor, 128, 128, 32, 64, 64>(seed);
  run_mma_test<Element, Layout::kRowMajor, Layout::kRowMajor, 128, 128, 32, 64, 64>(seed + 10);
  run_mma_test<Element, Layout::kColumnMajor, Layout::kColumnMajor, 128, 128, 32, 64, 64>(seed +
                                                                                          20);
  run_mma_test<Element, Layout::kColumnMajor, Layout::kRowMajor, 128, 128, 32, 64, 64>(seed + 30);
  // 32 x 64 warp tiles, deeper K.
  run_mma_test<Element, Layout::kRowMajor, Layout::kColumnMajor, 64, 128, 64, 32, 64>(seed + 40);
  run_mma_test<Element, Layout::kColumnMajor, Layout::kRowMajor, 64, 128, 64, 32, 64>(seed + 50);
}

}  // namespace

TEST(WarpMma, Half) { run_all_layouts<__half>(100); }
TEST(WarpMma, BFloat16) { run_all_layouts<__nv_bfloat16>(200); }
