// Device tests of MbarrierRing (sm_90a): a producer thread fills the slots of the ring with TMA
// tensor copies that complete on each slot's full barrier (as TmaTileLoader's tiles do), one to
// four consumer warps read every slot and release it, for 130 laps of rings of 2 to 6 stages, and
// in clusters of two blocks whose producers each copy half of every slot and multicast it to
// both. Tensor copies, not raw-address bulk copies (cp.async.bulk): compute-sanitizer's racecheck
// blames a raw bulk copy's write on the thread that issued it, and so reports the consumers'
// reads, ordered by the full barrier, as races; a tensor copy's write it leaves to the copy engine.
// Pseudo-random sleeps keyed by the lap delay the producer, the consumers or both. Each consumer
// reads every slot twice, as soon as its wait returns and again after holding the slot: the first
// read catches a wait that returns before the copy has landed (a wrong parity), the second a refill
// before every consumer has released the slot (a producer that does not wait, a release too
// early). A deadlock fails the program after a minute rather than hanging.

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <tilepipe/arch/cluster.cuh>
#include <tilepipe/arch/tma.cuh>
#include <tilepipe/block/mbarrier_ring.cuh>
#include <tilepipe/detail/tensor_map.cuh>

#include "device_test_util.cuh"
#include "hopper_test_util.cuh"

namespace {

constexpr int kSlotWords = 64;                  // a slot: 256 bytes of 32-bit words
constexpr std::uint32_t kPoison = 0xFFFFFFFFu;  // never a source word
constexpr int kLaps = 130;
constexpr int kGroups = 4;  // independent rings (clusters of blocks, or blocks)

enum Delays : unsigned { kNoDelay = 0, kDelayProducer = 1, kDelayConsumers = 2 };

struct RingRun {
  int items;      // slots the producer fills, one after the other (k-tiles)
  int consumers;  // consumer warps per block, each one arrival on a slot's empty barrier
  unsigned delays;
  std::uint32_t seed;
};

// A slot that did not hold what the producer copied for that item.
struct Mismatch {
  int block, consumer, item, word, read;
  std::uint32_t got, want;
};

struct Report {
  unsigned mismatches;
  unsigned reads;  // slot reads the consumers completed (two per consumer and item)
  Mismatch first[8];
};

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)  // the kernel's helpers, where it has a body

// Nanoseconds to sleep at `item` for `role`: none in a quarter of the laps, else up to 4 us.
__device__ unsigned delay_ns(std::uint32_t seed, int item, int role) {
  std::uint32_t h = seed ^ (static_cast<std::uint32_t>(item) * 0x9E3779B9u) ^
                    (static_cast<std::uint32_t>(role) * 0x85EBCA6Bu);
  h ^= h >> 16;
  h *= 0x7FEB352Du;
  h ^= h >> 15;
  h *= 0x846CA68Bu;
  h ^= h >> 16;
  return (h & 3u) == 0 ? 0u : h % 4000u;
}

// One read of the slot by a consumer warp: every word against the source of `item`.
__device__ void check_slot(const volatile std::uint32_t* slot, const std::uint32_t* want,
                           int consumer, int item, int read, Report* report) {
  const int lane = threadIdx.x % 32;
  for (int w = lane; w < kSlotWords; w += 32) {
    const std::uint32_t got = slot[w];
    if (got != want[w]) {
      const unsigned n = atomicAdd(&report->mismatches, 1u);
      if (n < 8)
        report->first[n] = {static_cast<int>(blockIdx.x), consumer, item, w, read, got, want[w]};
    }
  }
  if (lane == 0) atomicAdd(&report->reads, 1u);
}

#endif

// Warp 0's first thread is the producer, warps 1.. the consumers. Each group of ClusterSize
// blocks walks `run.items` items of `src` (kSlotWords words each) through its ring. `src_map` is
// `src` as a (word, item, group) tensor whose box is one block's part of an item.
template <int Stages, int ClusterSize>
__global__ void ring_kernel(RingRun run, const __grid_constant__ CUtensorMap src_map,
                            const std::uint32_t* src, Report* report) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Ring = tilepipe::MbarrierRing<Stages, ClusterSize>;
  __shared__ __align__(128) std::uint32_t slots[Stages][kSlotWords];
  __shared__ typename Ring::SharedStorage barriers;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int i = threadIdx.x; i < Stages * kSlotWords; i += blockDim.x) (&slots[0][0])[i] = kPoison;
  if (threadIdx.x == 0) Ring::init(barriers, static_cast<std::uint32_t>(run.consumers));
  // The poison is written by ordinary stores, the items by the copy engine: order them.
  tilepipe::arch::fence_proxy_async_shared();
  int rank = 0;
  if constexpr (ClusterSize > 1) {
    rank = static_cast<int>(tilepipe::arch::cluster_ctarank());
    tilepipe::arch::cluster_sync();  // every block's barriers before any copy or arrival
  } else {
    __syncthreads();
  }
  const int group = static_cast<int>(blockIdx.x) / ClusterSize;
  const std::uint32_t* items = src + static_cast<std::size_t>(group) * run.items * kSlotWords;
  Ring ring(barriers);
  typename Ring::State state;  // each role walks the ring from slot 0, phase 0
  if (warp == 0) {
    if (lane == 0) {
      // This block's part of every item, into the slot of every block of the cluster.
      const int first = rank * (kSlotWords / ClusterSize);
      for (int t = 0; t < run.items; ++t) {
        if (run.delays & kDelayProducer) __nanosleep(delay_ns(run.seed, t, 0));
        ring.producer_acquire(state);
        std::uint64_t* full = ring.producer_arm(state, kSlotWords * 4);
        if constexpr (ClusterSize == 1) {
          tilepipe::arch::tma_load(slots[state.index()], &src_map, full, first, t, group);
        } else {
          constexpr auto kAll = static_cast<std::uint16_t>((1u << ClusterSize) - 1);
          tilepipe::arch::tma_load_multicast(&slots[state.index()][first], &src_map, full, first, t,
                                             group, kAll);
        }
        state.advance();
      }
      // In a cluster the other blocks' consumers release into this block's barriers: it stays
      // until their last releases have arrived (as WarpSpecializedMainloop::produce_tail).
      if constexpr (ClusterSize > 1) {
        for (int i = 0; i < Stages; ++i) {
          ring.producer_acquire(state);
          state.advance();
        }
      }
    }
  } else {
    const int consumer = warp - 1;
    const int role = 1 + consumer + 8 * rank;
    for (int t = 0; t < run.items; ++t) {
      const std::uint32_t* want = items + static_cast<std::size_t>(t) * kSlotWords;
      if (run.delays & kDelayConsumers) __nanosleep(delay_ns(run.seed, t, role) / 4);
      ring.consumer_wait(state);
      check_slot(slots[state.index()], want, consumer, t, 0, report);
      // Hold the slot: a refill that does not wait for this consumer lands now.
      if (run.delays & kDelayConsumers) __nanosleep(delay_ns(run.seed, t, role + 64));
      check_slot(slots[state.index()], want, consumer, t, 1, report);
      __syncwarp();  // the whole warp has read the slot before its one arrival
      if (lane == 0) ring.consumer_release(state);
      state.advance();
    }
  }
#else
  (void)run;
  (void)src_map;
  (void)src;
  (void)report;
#endif
}

// `src` (kGroups groups of `items` items of kSlotWords words) as a (word, item, group) tensor of
// 32-bit words, unswizzled, whose box is one of the `parts` parts of an item.
// CUDA_ERROR_NOT_FOUND where the driver has no cuTensorMapEncodeTiled.
CUresult make_src_map(CUtensorMap& map, const std::uint32_t* src, int items, int parts) {
  const auto encode = tilepipe::detail::tensor_map_encoder();
  if (encode == nullptr) return CUDA_ERROR_NOT_FOUND;
  const cuuint64_t dims[3] = {kSlotWords, static_cast<cuuint64_t>(items), kGroups};
  const cuuint64_t strides[2] = {kSlotWords * 4, static_cast<cuuint64_t>(items) * kSlotWords * 4};
  const cuuint32_t box[3] = {static_cast<cuuint32_t>(kSlotWords / parts), 1, 1};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  return encode(&map, CU_TENSOR_MAP_DATA_TYPE_UINT32, 3, const_cast<std::uint32_t*>(src), dims,
                strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

template <int Stages, int ClusterSize>
void run_ring_test(unsigned delays, int consumers, std::uint32_t seed) {
  const int items = kLaps * Stages + 1;
  SCOPED_TRACE(testing::Message() << Stages << " stages, cluster of " << ClusterSize << ", "
                                  << consumers << " consumer warps, " << items << " items, delays: "
                                  << (delays & kDelayProducer ? "producer " : "")
                                  << (delays & kDelayConsumers ? "consumers" : "")
                                  << (delays == kNoDelay ? "none" : ""));
  const std::vector<std::uint32_t> src =
      tptest::random_nonzero_bits32(std::size_t(kGroups) * items * kSlotWords, seed);
  tptest::DeviceBuffer<std::uint32_t> d_src(src.size());
  tptest::DeviceBuffer<Report> d_report(1);
  ASSERT_TRUE(d_src.ok() && d_report.ok());
  TP_CUDA_ASSERT(d_src.upload(src));
  TP_CUDA_ASSERT(cudaMemset(d_report.get(), 0, sizeof(Report)));
  CUtensorMap src_map{};
  ASSERT_EQ(make_src_map(src_map, d_src.get(), items, ClusterSize), CUDA_SUCCESS)
      << "cuTensorMapEncodeTiled refused the source's map, or the driver has none";

  const RingRun run{items, consumers, delays, seed};
  const int blocks = kGroups * ClusterSize, threads = 32 * (1 + consumers);
  auto kernel = ring_kernel<Stages, ClusterSize>;
  if constexpr (ClusterSize > 1) {
    TP_CUDA_ASSERT(tptest::launch_in_clusters(kernel, blocks, threads, 0, ClusterSize, run, src_map,
                                              d_src.get(), d_report.get()));
  } else {
    kernel<<<blocks, threads>>>(run, src_map, d_src.get(), d_report.get());
  }
  TP_CUDA_ASSERT(cudaGetLastError());
  TP_CUDA_ASSERT(tptest::synchronize_within(60, "the ring kernel"));

  Report report{};
  TP_CUDA_ASSERT(cudaMemcpy(&report, d_report.get(), sizeof(Report), cudaMemcpyDeviceToHost));
  for (unsigned i = 0; i < report.mismatches && i < 8; ++i) {
    const Mismatch& m = report.first[i];
    ADD_FAILURE() << "block " << m.block << ", consumer " << m.consumer << ", item " << m.item
                  << " (lap " << m.item / Stages << ", slot " << m.item % Stages << "), word "
                  << m.word << ", " << (m.read == 0 ? "read after the wait" : "read after holding")
                  << ": got 0x" << std::hex << m.got << ", want 0x" << m.want
                  << (m.got == kPoison ? " (the poison: nothing landed)" : "");
  }
  EXPECT_EQ(report.mismatches, 0u);
  EXPECT_EQ(report.reads, static_cast<unsigned>(blocks * consumers * items * 2));
}

// Each stage count without delays and with the producer, the consumers or both delayed, with
// 2, 1, 3 and 4 consumer warps.
template <int Stages, int ClusterSize>
void run_all_delays(std::uint32_t seed) {
  run_ring_test<Stages, ClusterSize>(kNoDelay, 2, seed);
  run_ring_test<Stages, ClusterSize>(kDelayProducer, 1, seed + 1);
  run_ring_test<Stages, ClusterSize>(kDelayConsumers, 3, seed + 2);
  run_ring_test<Stages, ClusterSize>(kDelayProducer | kDelayConsumers, 4, seed + 3);
}

}  // namespace

TEST(MbarrierRing, TwoStages) {
  TP_REQUIRE_HOPPER_TIER(tptest::hopper_tier_on_current_device());
  run_all_delays<2, 1>(100);
}
TEST(MbarrierRing, ThreeStages) {
  TP_REQUIRE_HOPPER_TIER(tptest::hopper_tier_on_current_device());
  run_all_delays<3, 1>(200);
}
TEST(MbarrierRing, FourStages) {
  TP_REQUIRE_HOPPER_TIER(tptest::hopper_tier_on_current_device());
  run_all_delays<4, 1>(300);
}
TEST(MbarrierRing, FiveStages) {
  TP_REQUIRE_HOPPER_TIER(tptest::hopper_tier_on_current_device());
  run_all_delays<5, 1>(400);
}
TEST(MbarrierRing, SixStages) {
  TP_REQUIRE_HOPPER_TIER(tptest::hopper_tier_on_current_device());
  run_all_delays<6, 1>(500);
}
// Clusters of two: consumers release the slot in both blocks, producers multicast halves.
TEST(MbarrierRing, ClusterOfTwoTwoStages) {
  TP_REQUIRE_HOPPER_TIER(tptest::hopper_tier_on_current_device());
  run_all_delays<2, 2>(600);
}
TEST(MbarrierRing, ClusterOfTwoFourStages) {
  TP_REQUIRE_HOPPER_TIER(tptest::hopper_tier_on_current_device());
  run_all_delays<4, 2>(700);
}
