// Device tests of TmaTileLoader (sm_90a): k-tiles of A and B copied by TMA into a slot, the slot
// copied out of shared memory as it lies, and every element compared, bit for bit, with what the
// host's picture of a slot (SwizzledTileLayout boxes: slot_offset in hopper_test_util.cuh) puts
// there: random non-zero patterns (the matrices' padding too, which must never arrive), zeros
// where a box reaches past M, N or K, shared memory poisoned before the copy. K-major and
// M/N-major operands; f16, bf16 and f32; batches and a broadcast operand; clusters of two along M
// whose blocks each copy half of B and multicast it to both.

#include <gtest/gtest.h>

#include <cstdint>
#include <type_traits>
#include <vector>

#include <tilepipe/arch/cluster.cuh>
#include <tilepipe/arch/mbarrier.cuh>
#include <tilepipe/arch/tma.cuh>
#include <tilepipe/block/tma_tile_loader.cuh>

#include "device_test_util.cuh"
#include "hopper_test_util.cuh"

using tilepipe::Layout;

namespace {

// Where a cluster's tile starts: rows m0 of A (the block of rank r takes m0 + r * TileM),
// columns n0 of B, k0 along K, and the batch.
struct TileOrigin {
  int m0, n0, k0, batch;
};

template <class ElementT, Layout LA, Layout LB, int TileM, int TileN, int ClusterM>
struct LoaderCase {
  using Element = ElementT;
  // A slot's elements as bit patterns, and the poison they start as (never a source value).
  using Bits = std::conditional_t<sizeof(Element) == 2, std::uint16_t, std::uint32_t>;
  static constexpr Bits kPoison = static_cast<Bits>(0xFFFFFFFFu);
  static constexpr Layout kLayoutA = LA;
  static constexpr Layout kLayoutB = LB;
  static constexpr int kTileM = TileM;
  static constexpr int kTileN = TileN;
  static constexpr int kTileK = 128 / static_cast<int>(sizeof(Element));
  static constexpr int kClusterM = ClusterM;
  using Loader = tilepipe::TmaTileLoader<Element, LA, LB, TileM, TileN, kTileK, ClusterM>;
  struct SharedStorage {
    alignas(1024) Element a[Loader::kElementsA];  // (TileM x kTileK), swizzled
    alignas(1024) Element b[Loader::kElementsB];  // (TileN x kTileK), swizzled
    std::uint64_t full;
  };
  static constexpr std::size_t kSmemBytes = sizeof(SharedStorage) + 1024;
  static constexpr int kThreads = 128;
};

// Block of rank r in cluster c poisons its slot, has one thread load the tile at origins[c]
// with TmaTileLoader (its own rows of A, its part of B for every block of the cluster), waits on
// the slot's barrier, and copies A's and B's slots out in their shared-memory order.
template <class Case>
__global__ void __launch_bounds__(Case::kThreads)
    tma_load_kernel(const __grid_constant__ typename Case::Loader::Params params,
                    const TileOrigin* origins, typename Case::Bits* out_a,
                    typename Case::Bits* out_b) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Loader = typename Case::Loader;
  using Bits = typename Case::Bits;
  extern __shared__ unsigned char smem[];
  auto& s = tptest::aligned_shared_storage<typename Case::SharedStorage>(smem);
  auto* a = reinterpret_cast<Bits*>(s.a);
  auto* b = reinterpret_cast<Bits*>(s.b);
  for (int i = threadIdx.x; i < Loader::kElementsA; i += Case::kThreads) a[i] = Case::kPoison;
  for (int i = threadIdx.x; i < Loader::kElementsB; i += Case::kThreads) b[i] = Case::kPoison;
  if (threadIdx.x == 0) {
    tilepipe::arch::mbarrier_init(&s.full, 1);
    tilepipe::arch::fence_mbarrier_init();
  }
  // The poison is written by ordinary stores, the tile by the copy engine: order them.
  tilepipe::arch::fence_proxy_async_shared();
  int rank = 0;
  if constexpr (Case::kClusterM > 1) {
    rank = static_cast<int>(tilepipe::arch::cluster_ctarank());
    tilepipe::arch::cluster_sync();  // the peers' poison and barriers before any multicast
  } else {
    __syncthreads();
  }
  const TileOrigin t = origins[blockIdx.x / Case::kClusterM];
  if (threadIdx.x == 0) {
    Loader::prefetch(params);
    tilepipe::arch::mbarrier_arrive_expect_tx(&s.full, Loader::kBytesPerStage);
    Loader::load(params, s.a, s.b, &s.full, t.k0, t.m0 + rank * Case::kTileM, t.n0, t.batch, rank);
  }
  tilepipe::arch::mbarrier_wait(&s.full, 0);
  Bits* dst_a = out_a + static_cast<std::size_t>(blockIdx.x) * Loader::kElementsA;
  Bits* dst_b = out_b + static_cast<std::size_t>(blockIdx.x) * Loader::kElementsB;
  for (int i = threadIdx.x; i < Loader::kElementsA; i += Case::kThreads) dst_a[i] = a[i];
  for (int i = threadIdx.x; i < Loader::kElementsB; i += Case::kThreads) dst_b[i] = b[i];
  // No block leaves while a peer's multicast into it may still be in flight.
  if constexpr (Case::kClusterM > 1) tilepipe::arch::cluster_sync();
#else
  (void)params;
  (void)origins;
  (void)out_a;
  (void)out_b;
#endif
}

// A is m x k, B is k x n, `batches` of each; a batch stride of 0 is an operand shared by all.
struct Problem {
  int m, n, k, batches;
  std::int64_t lda, ldb, batch_stride_a, batch_stride_b;
};

// Random non-zero patterns, never the poison.
template <class Bits>
std::vector<Bits> random_source(std::size_t n, std::uint32_t seed) {
  if constexpr (sizeof(Bits) == 2) {
    std::vector<Bits> v = tptest::random_nonzero_bits(n, seed);
    for (auto& x : v)
      if (x == 0xFFFFu) x = 1;
    return v;
  } else {
    return tptest::random_nonzero_bits32(n, seed);  // magnitudes below 1: never all ones
  }
}

// Elements of an operand of `lines` lines (of `ld`) in `batches` batches `stride` apart.
std::size_t operand_span(int lines, std::int64_t ld, int batches, std::int64_t stride) {
  return static_cast<std::size_t>((batches > 1 ? stride * (batches - 1) : 0) + lines * ld);
}

template <class Case>
void run_loader_test(const Problem& p, const std::vector<TileOrigin>& origins, std::uint32_t seed) {
  using Element = typename Case::Element;
  using Bits = typename Case::Bits;
  using Loader = typename Case::Loader;
  constexpr int kTileK = Case::kTileK, kE = static_cast<int>(sizeof(Element));
  constexpr bool kRowA = Case::kLayoutA == Layout::kRowMajor;
  constexpr bool kColB = Case::kLayoutB == Layout::kColumnMajor;
  SCOPED_TRACE(testing::Message() << tptest::element_name<Element>() << ", A "
                                  << (kRowA ? "row" : "column") << "-major, B "
                                  << (kColB ? "column" : "row") << "-major, tile " << Case::kTileM
                                  << "x" << Case::kTileN << ", cluster " << Case::kClusterM
                                  << "; problem " << p.m << "x" << p.n << "x" << p.k << ", "
                                  << p.batches << " batches");

  const std::size_t span_a = operand_span(kRowA ? p.m : p.k, p.lda, p.batches, p.batch_stride_a);
  const std::size_t span_b = operand_span(kColB ? p.n : p.k, p.ldb, p.batches, p.batch_stride_b);
  const std::vector<Bits> a = random_source<Bits>(span_a, seed);
  const std::vector<Bits> b = random_source<Bits>(span_b, seed + 1);
  const int clusters = static_cast<int>(origins.size());
  const int blocks = clusters * Case::kClusterM;

  tptest::DeviceBuffer<Bits> d_a(span_a), d_b(span_b);
  tptest::DeviceBuffer<TileOrigin> d_origins(origins.size());
  tptest::DeviceBuffer<Bits> d_out_a(std::size_t(blocks) * Loader::kElementsA);
  tptest::DeviceBuffer<Bits> d_out_b(std::size_t(blocks) * Loader::kElementsB);
  ASSERT_TRUE(d_a.ok() && d_b.ok() && d_origins.ok() && d_out_a.ok() && d_out_b.ok());
  TP_CUDA_ASSERT(d_a.upload(a));
  TP_CUDA_ASSERT(d_b.upload(b));
  TP_CUDA_ASSERT(d_origins.upload(origins));
  TP_CUDA_ASSERT(d_out_a.poison());
  TP_CUDA_ASSERT(d_out_b.poison());

  typename Loader::Params params{};
  const tilepipe::Status s =
      Loader::make_params(params, reinterpret_cast<const Element*>(d_a.get()), p.lda,
                          p.batch_stride_a, reinterpret_cast<const Element*>(d_b.get()), p.ldb,
                          p.batch_stride_b, p.m, p.n, p.k, p.batches);
  ASSERT_TRUE(s.ok()) << s.what();

  auto kernel = tma_load_kernel<Case>;
  TP_CUDA_ASSERT(tptest::allow_smem(kernel, Case::kSmemBytes));
  if constexpr (Case::kClusterM > 1) {
    TP_CUDA_ASSERT(tptest::launch_in_clusters(kernel, blocks, Case::kThreads, Case::kSmemBytes,
                                              Case::kClusterM, params, d_origins.get(),
                                              d_out_a.get(), d_out_b.get()));
  } else {
    kernel<<<blocks, Case::kThreads, Case::kSmemBytes>>>(params, d_origins.get(), d_out_a.get(),
                                                         d_out_b.get());
  }
  TP_CUDA_ASSERT(cudaGetLastError());
  TP_CUDA_ASSERT(tptest::synchronize_within(60, "the TMA load kernel"));
  std::vector<Bits> out_a, out_b;
  TP_CUDA_ASSERT(d_out_a.download(out_a));
  TP_CUDA_ASSERT(d_out_b.download(out_b));

  // The slot each block should hold, and which logical element each position holds.
  int mismatches = 0;
  auto check = [&](const char* operand, const Bits* got, int rows, int block, auto offset_of,
                   auto source_of) {
    std::vector<Bits> want(std::size_t(rows) * kTileK, Case::kPoison);
    std::vector<int> element(want.size(), -1);
    for (int r = 0; r < rows; ++r)
      for (int kk = 0; kk < kTileK; ++kk) {
        const int at = offset_of(r, kk);
        want[at] = source_of(r, kk);
        element[at] = r * kTileK + kk;
      }
    for (std::size_t i = 0; i < want.size(); ++i)
      if (got[i] != want[i] && ++mismatches <= 10) {
        ADD_FAILURE() << "block " << block << ", " << operand << " slot position " << i
                      << " (tile row " << element[i] / kTileK << ", k " << element[i] % kTileK
                      << "): got 0x" << std::hex << +got[i] << ", want 0x" << +want[i];
      }
  };
  const bool batched_a = p.batches > 1 && p.batch_stride_a != 0;
  const bool batched_b = p.batches > 1 && p.batch_stride_b != 0;
  for (int block = 0; block < blocks; ++block) {
    const TileOrigin& t = origins[block / Case::kClusterM];
    const int m0 = t.m0 + block % Case::kClusterM * Case::kTileM;
    const std::int64_t base_a = batched_a ? t.batch * p.batch_stride_a : 0;
    const std::int64_t base_b = batched_b ? t.batch * p.batch_stride_b : 0;
    check("A", out_a.data() + std::size_t(block) * Loader::kElementsA, Case::kTileM, block,
          tptest::slot_offset<kE, kRowA, Case::kTileM, kTileK>, [&](int r, int kk) {
            const int m = m0 + r, k = t.k0 + kk;
            if (m >= p.m || k >= p.k) return Bits{0};
            return a[base_a + (kRowA ? m * p.lda + k : k * p.lda + m)];
          });
    check("B", out_b.data() + std::size_t(block) * Loader::kElementsB, Case::kTileN, block,
          tptest::slot_offset<kE, kColB, Case::kTileN, kTileK>, [&](int r, int kk) {
            const int n = t.n0 + r, k = t.k0 + kk;
            if (n >= p.n || k >= p.k) return Bits{0};
            return b[base_b + (kColB ? n * p.ldb + k : k * p.ldb + n)];
          });
  }
  EXPECT_EQ(mismatches, 0);
}

// Every combination of the origins given along each dimension.
std::vector<TileOrigin> grid_of(std::vector<int> m0, std::vector<int> n0, std::vector<int> k0,
                                std::vector<int> batch) {
  std::vector<TileOrigin> out;
  for (int m : m0)
    for (int n : n0)
      for (int k : k0)
        for (int b : batch) out.push_back({m, n, k, b});
  return out;
}

}  // namespace

// K-major A and B (A row-major, B column-major), 128 x 128 f16: interior tiles, tiles reaching
// past M (72 rows left), N (44 columns) and K (36 of 64), tiles wholly past M or K, two batches
// of A with B broadcast (batch stride 0).
TEST(TmaTileLoader, KMajorResiduesAndBroadcastB) {
  TP_REQUIRE_HOPPER_TIER(tptest::hopper_tier_on_current_device());
  using Case = LoaderCase<__half, Layout::kRowMajor, Layout::kColumnMajor, 128, 128, 1>;
  const Problem p{200, 300, 100, 2, /*lda*/ 112, /*ldb*/ 104, 200 * 112 + 64, 0};
  std::vector<TileOrigin> origins = grid_of({0, 128}, {0, 256}, {0, 64}, {0, 1});
  origins.push_back({256, 0, 0, 1});    // past M: zeros in A
  origins.push_back({0, 128, 128, 0});  // past K: zeros in A and B
  run_loader_test<Case>(p, origins, 11);
}

// M/N-major A and B (A column-major, B row-major: several boxes per slot for B), bf16, both
// batched, K residues of 2 and of 66.
TEST(TmaTileLoader, MNMajorBatched) {
  TP_REQUIRE_HOPPER_TIER(tptest::hopper_tier_on_current_device());
  using Case = LoaderCase<__nv_bfloat16, Layout::kColumnMajor, Layout::kRowMajor, 64, 128, 1>;
  const Problem p{150, 200, 130, 2, /*lda*/ 152, /*ldb*/ 216, 152 * 130 + 16, 216 * 130 + 32};
  run_loader_test<Case>(p, grid_of({0, 128}, {0, 128}, {0, 64, 128}, {0, 1}), 21);
}

// f32 (a slot is 32 of k) K-major, 64 x 64.
TEST(TmaTileLoader, Float) {
  TP_REQUIRE_HOPPER_TIER(tptest::hopper_tier_on_current_device());
  using Case = LoaderCase<float, Layout::kRowMajor, Layout::kColumnMajor, 64, 64, 1>;
  const Problem p{100, 90, 50, 1, /*lda*/ 52, /*ldb*/ 56, 0, 0};
  run_loader_test<Case>(p, grid_of({0, 64}, {0, 64}, {0, 32}, {0}), 31);
}

// Clusters of two along M: each block copies half of B's K-major tile and multicasts it, so both
// blocks' slots must hold all of it. In the second cluster, one block has 44 rows of A left and
// the other none (it still copies its half of B).
TEST(TmaTileLoader, MulticastKMajorB) {
  TP_REQUIRE_HOPPER_TIER(tptest::hopper_tier_on_current_device());
  using Case = LoaderCase<__half, Layout::kRowMajor, Layout::kColumnMajor, 128, 128, 2>;
  const Problem p{300, 200, 100, 1, /*lda*/ 104, /*ldb*/ 112, 0, 0};
  run_loader_test<Case>(p, grid_of({0, 256}, {0, 128}, {0, 64}, {0}), 41);
}

// The same with an N-major B of 256 columns: each block copies two 64-wide boxes and multicasts
// them; A column-major and broadcast, B batched.
TEST(TmaTileLoader, MulticastNMajorB) {
  TP_REQUIRE_HOPPER_TIER(tptest::hopper_tier_on_current_device());
  using Case = LoaderCase<__half, Layout::kColumnMajor, Layout::kRowMajor, 64, 256, 2>;
  const Problem p{130, 300, 70, 2, /*lda*/ 136, /*ldb*/ 304, 0, 304 * 70 + 8};
  run_loader_test<Case>(p, grid_of({0, 128}, {0, 256}, {0, 64}, {0, 1}), 51);
}
