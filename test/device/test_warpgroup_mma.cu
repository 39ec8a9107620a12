// Device tests of WarpgroupMma (sm_90a): two warpgroups, each 64 rows of a 128 x N tile, run
// `issue` on two k-tiles of A and B that the host laid out in shared memory as TMA leaves a slot
// (slot_offset in hopper_test_util.cuh), onto accumulators that start at known values, and the
// result is compared exactly with a double CPU product (small integers: f32 sums are exact). Each
// thread writes its registers out as they are; the host places register i of thread t at
// (Accumulators::row_of(t, i), col_of(t, i)), so a wrong accumulator map fails too. Every N the
// wgmma wrappers provide (64, 128, 256); f16 with A and B each K-major or M/N-major, bf16 in
// four of the twelve combinations, and tf32 (K-major only, as wgmma allows).

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include <tilepipe/arch/tma.cuh>
#include <tilepipe/arch/wgmma.cuh>
#include <tilepipe/warp/warpgroup_mma.cuh>

#include "device_test_util.cuh"
#include "hopper_test_util.cuh"

using tilepipe::Layout;

namespace {

constexpr int kWarpgroups = 2;
constexpr int kTileM = 64 * kWarpgroups;
constexpr int kKTiles = 2;
constexpr int kThreads = 128 * kWarpgroups;

template <class ElementT, Layout LA, Layout LB, int N>
struct MmaCase {
  using Element = ElementT;
  static constexpr Layout kLayoutA = LA;
  static constexpr Layout kLayoutB = LB;
  static constexpr int kN = N;
  static constexpr int kTileK = 128 / static_cast<int>(sizeof(Element));
  using Mma = tilepipe::WarpgroupMma<Element, LA, LB, N, kTileK>;
  using Accumulators = typename Mma::Accumulators;
  struct SharedStorage {
    alignas(1024) Element a[kKTiles][kTileM * kTileK];  // (KTiles, 128 x TileK), swizzled
    alignas(1024) Element b[kKTiles][N * kTileK];       // (KTiles, N x TileK), swizzled
  };
  static constexpr std::size_t kSmemBytes = sizeof(SharedStorage) + 1024;
};

// `image` is the storage as the host laid it out. `acc_io` holds the accumulators, register i of
// thread t at i * kThreads + t: their start, and after the two k-tiles' wgmmas, their end.
template <class Case>
__global__ void __launch_bounds__(kThreads)
    warpgroup_mma_kernel(const uint4* image, float* acc_io) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Acc = typename Case::Accumulators;
  extern __shared__ unsigned char smem[];
  auto& s = tptest::aligned_shared_storage<typename Case::SharedStorage>(smem);
  auto* words = reinterpret_cast<uint4*>(&s);
  constexpr int kWords = static_cast<int>(sizeof(s) / 16);
  for (int i = threadIdx.x; i < kWords; i += kThreads) words[i] = image[i];
  // Written by ordinary stores, read by the tensor cores next.
  tilepipe::arch::fence_proxy_async_shared();
  __syncthreads();

  const int warpgroup = threadIdx.x / 128;
  // Fully unrolled, with constant offsets from one pointer: the accumulators stay in registers
  // and no addresses live across the wgmmas.
  float* mine = acc_io + threadIdx.x;
  Acc acc;
#pragma unroll
  for (int i = 0; i < Acc::kRegisters; ++i) acc.x[i] = mine[i * kThreads];
  // This warpgroup's 64 rows of A: a whole number of 1024-byte atoms in either layout.
  const int a_offset = warpgroup * 64 * Case::kTileK;
  for (int kt = 0; kt < kKTiles; ++kt) Case::Mma::issue(acc, s.a[kt] + a_offset, s.b[kt]);
  tilepipe::arch::wgmma_wait_group<0>();
  tilepipe::arch::wgmma_fence_operands(acc.x);
#pragma unroll
  for (int i = 0; i < Acc::kRegisters; ++i) mine[i * kThreads] = acc.x[i];
#else
  (void)image;
  (void)acc_io;
#endif
}

template <class Element>
Element element_of(int v) {
  if constexpr (std::is_same_v<Element, float>) return static_cast<float>(v);
  else return tptest::from_float<Element>(static_cast<float>(v));
}

template <class Case>
void run_mma_test(std::uint32_t seed) {
  using Element = typename Case::Element;
  using Acc = typename Case::Accumulators;
  constexpr int N = Case::kN, kTileK = Case::kTileK, K = kKTiles * kTileK;
  constexpr int kE = static_cast<int>(sizeof(Element));
  constexpr bool kKMajorA = Case::kLayoutA == Layout::kRowMajor;
  constexpr bool kKMajorB = Case::kLayoutB == Layout::kColumnMajor;
  SCOPED_TRACE(testing::Message() << tptest::element_name<Element>() << ", A "
                                  << (kKMajorA ? "K" : "M") << "-major, B "
                                  << (kKMajorB ? "K" : "N") << "-major, m" << kTileM << "n" << N
                                  << "k" << K << " (two k-tiles of " << kTileK << ")");

  // A (128 x K), B (K x N) and the accumulators' start C0 (128 x N), small integers.
  const std::vector<int> a = tptest::random_small_ints(std::size_t(kTileM) * K, 4, seed);
  const std::vector<int> b = tptest::random_small_ints(std::size_t(K) * N, 4, seed + 1);
  const std::vector<int> c0 = tptest::random_small_ints(std::size_t(kTileM) * N, 64, seed + 2);

  // Shared memory as the host lays it out: each k-tile's slot of A and of B.
  auto image = std::make_unique<typename Case::SharedStorage>();
  for (int kt = 0; kt < kKTiles; ++kt)
    for (int kk = 0; kk < kTileK; ++kk) {
      const int k = kt * kTileK + kk;
      for (int m = 0; m < kTileM; ++m)
        image->a[kt][tptest::slot_offset<kE, kKMajorA, kTileM, kTileK>(m, kk)] =
            element_of<Element>(a[m * K + k]);
      for (int n = 0; n < N; ++n)
        image->b[kt][tptest::slot_offset<kE, kKMajorB, N, kTileK>(n, kk)] =
            element_of<Element>(b[k * N + n]);
    }
  std::vector<uint4> words(sizeof(typename Case::SharedStorage) / 16);
  std::memcpy(words.data(), image.get(), sizeof(typename Case::SharedStorage));

  // Register i of thread t (warpgroup t / 128, thread t % 128 in it) holds element
  // (64 * warpgroup + row_of(t % 128, i), col_of(t % 128, i)).
  auto row_of = [](int t, int i) { return 64 * (t / 128) + Acc::row_of(t % 128, i); };
  auto col_of = [](int t, int i) { return Acc::col_of(t % 128, i); };
  std::vector<float> acc(std::size_t(Acc::kRegisters) * kThreads);
  for (int i = 0; i < Acc::kRegisters; ++i)
    for (int t = 0; t < kThreads; ++t)
      acc[std::size_t(i) * kThreads + t] = static_cast<float>(c0[row_of(t, i) * N + col_of(t, i)]);

  tptest::DeviceBuffer<uint4> d_image(words.size());
  tptest::DeviceBuffer<float> d_acc(acc.size());
  ASSERT_TRUE(d_image.ok() && d_acc.ok());
  TP_CUDA_ASSERT(d_image.upload(words));
  TP_CUDA_ASSERT(d_acc.upload(acc));
  auto kernel = warpgroup_mma_kernel<Case>;
  TP_CUDA_ASSERT(tptest::allow_smem(kernel, Case::kSmemBytes));
  kernel<<<1, kThreads, Case::kSmemBytes>>>(d_image.get(), d_acc.get());
  TP_CUDA_ASSERT_LAUNCH();
  std::vector<float> out;
  TP_CUDA_ASSERT(d_acc.download(out));

  // Each element of D once: where the map sends two registers to one element, or none to
  // another, the element is reported.
  std::vector<int> hits(std::size_t(kTileM) * N, 0);
  std::vector<float> d(hits.size(), 0.0f);
  for (int i = 0; i < Acc::kRegisters; ++i)
    for (int t = 0; t < kThreads; ++t) {
      const int r = row_of(t, i), c = col_of(t, i);
      ASSERT_TRUE(r >= 0 && r < kTileM && c >= 0 && c < N)
          << "register " << i << " of thread " << t << " maps to (" << r << ", " << c << ")";
      ++hits[r * N + c];
      d[r * N + c] = out[std::size_t(i) * kThreads + t];
    }
  int mismatches = 0;
  for (int m = 0; m < kTileM; ++m)
    for (int n = 0; n < N; ++n) {
      double ref = c0[m * N + n];
      for (int k = 0; k < K; ++k) ref += static_cast<double>(a[m * K + k]) * b[k * N + n];
      const bool once = hits[m * N + n] == 1;
      if ((!once || d[m * N + n] != static_cast<float>(ref)) && ++mismatches <= 10) {
        ADD_FAILURE() << "D(" << m << ", " << n << ") = " << d[m * N + n] << ", want " << ref
                      << (once ? "" : " (not held by exactly one register)");
      }
    }
  EXPECT_EQ(mismatches, 0);
}

template <class Element, int N>
void run_all_layouts(std::uint32_t seed) {
  run_mma_test<MmaCase<Element, Layout::kRowMajor, Layout::kColumnMajor, N>>(seed);
  run_mma_test<MmaCase<Element, Layout::kRowMajor, Layout::kRowMajor, N>>(seed + 10);
  run_mma_test<MmaCase<Element, Layout::kColumnMajor, Layout::kColumnMajor, N>>(seed + 20);
  run_mma_test<MmaCase<Element, Layout::kColumnMajor, Layout::kRowMajor, N>>(seed + 30);
}

}  // namespace

TEST(WarpgroupMma, HalfN64) {
  TP_REQUIRE_HOPPER_TIER(tptest::hopper_tier_on_current_device());
  run_all_layouts<__half, 64>(100);
}
TEST(WarpgroupMma, HalfN128) {
  TP_REQUIRE_HOPPER_TIER(tptest::hopper_tier_on_current_device());
  run_all_layouts<__half, 128>(200);
}
TEST(WarpgroupMma, HalfN256) {
  TP_REQUIRE_HOPPER_TIER(tptest::hopper_tier_on_current_device());
  run_all_layouts<__half, 256>(300);
}
// bf16: each transpose combination once, over the three N.
TEST(WarpgroupMma, BFloat16) {
  TP_REQUIRE_HOPPER_TIER(tptest::hopper_tier_on_current_device());
  run_mma_test<MmaCase<__nv_bfloat16, Layout::kRowMajor, Layout::kColumnMajor, 256>>(400);
  run_mma_test<MmaCase<__nv_bfloat16, Layout::kColumnMajor, Layout::kRowMajor, 128>>(410);
  run_mma_test<MmaCase<__nv_bfloat16, Layout::kRowMajor, Layout::kRowMajor, 64>>(420);
  run_mma_test<MmaCase<__nv_bfloat16, Layout::kColumnMajor, Layout::kColumnMajor, 256>>(430);
}
// f32 A and B as tf32 (m64nNk8), K-major only: small integers are exact in tf32.
TEST(WarpgroupMma, Tf32) {
  TP_REQUIRE_HOPPER_TIER(tptest::hopper_tier_on_current_device());
  run_mma_test<MmaCase<float, Layout::kRowMajor, Layout::kColumnMajor, 64>>(500);
  run_mma_test<MmaCase<float, Layout::kRowMajor, Layout::kColumnMajor, 128>>(510);
  run_mma_test<MmaCase<float, Layout::kRowMajor, Layout::kColumnMajor, 256>>(520);
}
