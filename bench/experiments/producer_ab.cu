// Experiment (docs/performance-log.md, entry 13): who fills the shared-memory ring, and how.
//
// Not part of the CMake build: it needs sm_90a (setmaxnreg) and the CUDA driver's
// cuTensorMapEncodeTiled. Build and run on an H100/H200 from the repository root:
//
//   nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -Iinclude \
//        bench/experiments/producer_ab.cu -o producer_ab && ./producer_ab
//   ./producer_ab quick   # small shapes only, for compute-sanitizer
//   ./producer_ab ncu     # one 4096^3 launch of each kernel, twice, for Nsight Compute
//
// Three kernels with the same 256x128x64 block tile, 64x64 warp tiles and 4 stages, f16 TN:
//   [0] the library's GemmMultistage (8 warps; each copies its share with cp.async, one block
//       barrier per k-tile);
//   [1] "producer-wg": a fourth warpgroup issues every cp.async (128 threads, setmaxnreg down
//       to 72 registers) and the 8 mma warps (setmaxnreg up to 216) only ldmatrix and mma; full
//       and empty mbarriers per slot, cp.async.mbarrier.arrive.noinc to signal a landed k-tile;
//   [2] "tma-producer": one thread of that warpgroup fills each slot with two
//       cp.async.bulk.tensor copies (128-byte swizzle, which is SwizzledTileLayout<rows, 64>
//       bit for bit) that complete on the full mbarrier by transaction bytes.
// The mma warps of [1] and [2] run the same code (consume() below) with the library's
// FragmentLoader, WarpMma and LinearCombinationEpilogue, so each accumulator sees the same
// sequence of mma as in [0]: outputs must be bitwise equal to [0], and are checked on every shape
// (including edge tiles and a K that is not a multiple of 64). Timing: settled turns (150 ms of
// untimed runs before each timed turn, six rounds alternating direction), CUDA events per launch,
// medians; see entry 12 for why the settling matters on the H200.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <tilepipe/gemm/gemm_multistage.cuh>

using namespace tilepipe;

namespace {

__device__ __forceinline__ void mbar_init(std::uint64_t* b, unsigned count) {
  asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(arch::smem_address(b)), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_arrive(std::uint64_t* b) {
  asm volatile("{ .reg .b64 state; mbarrier.arrive.shared.b64 state, [%0]; }" ::"r"(arch::smem_address(b))
               : "memory");
}
// Returns once the phase of parity `parity` has completed.
__device__ __forceinline__ void mbar_wait(std::uint64_t* b, unsigned parity) {
  asm volatile(
      "{ .reg .pred done; RETRY_%=: mbarrier.try_wait.parity.shared.b64 done, [%0], %1; @!done bra RETRY_%=; }" ::"r"(
          arch::smem_address(b)),
      "r"(parity)
      : "memory");
}
// The barrier counts one arrival once every cp.async this thread issued before has landed.
__device__ __forceinline__ void cp_async_arrive_noinc(std::uint64_t* b) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];" ::"r"(arch::smem_address(b)) : "memory");
}

// Types shared by both specialised kernels.
template <class Policy>
struct Specialized {
  using Element = __half;
  using Tile = typename Policy::Tile;
  using Warp = typename Policy::Warp;
  static constexpr int kStages = Policy::kStages;
  static constexpr int kConsumers = Policy::kThreads;  // the mma warps
  static constexpr int kProducers = 128;               // one warpgroup (setmaxnreg works per warpgroup)
  static constexpr int kThreads = kConsumers + kProducers;
  static constexpr SmemOrder kOrder = SmemOrder::kKContiguous;  // TN: both operands K-contiguous
  using FragmentLoaderA = FragmentLoader<Element, Operand::kA, kOrder, Tile::kM, Tile::kK, Warp::kM>;
  using FragmentLoaderB = FragmentLoader<Element, Operand::kB, kOrder, Tile::kN, Tile::kK, Warp::kN>;
  using TileA = typename FragmentLoaderA::Tile;
  using TileB = typename FragmentLoaderB::Tile;
  using LoaderA = AsyncTileLoader<Element, TileA::kRows, TileA::kCols, kProducers>;
  using LoaderB = AsyncTileLoader<Element, TileB::kRows, TileB::kCols, kProducers>;
  using Mma = WarpMma<Element, Warp::kM, Warp::kN>;
  struct Stage {
    TileA a;
    TileB b;
  };
  struct Ring {
    Stage stages[kStages];
  };
  using Epilogue = LinearCombinationEpilogue<__half, Policy, sizeof(Ring)>;
  struct SharedStorage {  // placed at a 1024-byte boundary (the TMA swizzle's period)
    union {
      Ring ring;
      typename Epilogue::SharedStorage epilogue;
    };
    std::uint64_t full[kStages];   // a k-tile has landed in the slot
    std::uint64_t empty[kStages];  // every mma thread has read the slot for the last time
  };
  static constexpr int kSmemBytes = sizeof(SharedStorage) + 1024;
  struct Params {
    const Element* a;
    const Element* b;
    int m, n, k;
    int tiles_m, tiles_n;
    typename Epilogue::Params epilogue;
  };
};

template <class G>
__device__ typename G::SharedStorage& storage_of(unsigned char* smem) {
  const unsigned pad = (1024 - (arch::smem_address(smem) & 1023)) & 1023;
  return *reinterpret_cast<typename G::SharedStorage*>(smem + pad);
}

template <class G>
__device__ void init_barriers(typename G::SharedStorage& st, unsigned full_count) {
  if (threadIdx.x == 0) {
    for (int s = 0; s < G::kStages; ++s) {
      mbar_init(&st.full[s], full_count);
      mbar_init(&st.empty[s], G::kConsumers);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
}

// The producer warpgroup, once its copies are issued, matches the mma warps' block barriers: one
// before the epilogue and the epilogue's own.
template <class G>
__device__ void producer_finish() {
  __syncthreads();
  for (int i = 0; i < 2 * G::Epilogue::kPasses - 1; ++i) __syncthreads();
}

// The mma warps: k-tile t sits in slot t % S; wait for it on full[slot] (phase t / S), load the
// fragments of the next k-block while the tensor cores work on this one, and release the slot on
// empty[slot] once its last fragments are in registers. Then the library's epilogue.
template <class G>
__device__ void consume(typename G::SharedStorage& st, const typename G::Params& p) {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 216;");
  constexpr int S = G::kStages;
  constexpr int kWarpsN = G::Tile::kN / G::Warp::kN;
  const TileCoord tile = GroupedRaster<8>::tile_of(blockIdx.x, p.tiles_m, p.tiles_n);
  const int block_m0 = tile.m * G::Tile::kM, block_n0 = tile.n * G::Tile::kN;
  const int k_tiles = (p.k + G::Tile::kK - 1) / G::Tile::kK;
  const int thread = threadIdx.x;
  const int lane = thread % 32;
  const int warp_m0 = thread / 32 / kWarpsN * G::Warp::kM;
  const int warp_n0 = thread / 32 % kWarpsN * G::Warp::kN;
  const typename G::FragmentLoaderA frag_a(lane, warp_m0);
  const typename G::FragmentLoaderB frag_b(lane, warp_n0);
  const typename G::Mma mma;
  typename G::Mma::Accumulators acc;
  acc.clear();
  typename G::FragmentLoaderA::Fragment fa[2];
  typename G::FragmentLoaderB::Fragment fb[2];
  if (k_tiles > 0) {
    mbar_wait(&st.full[0], 0);
    frag_a.load(fa[0], st.ring.stages[0].a, 0);
    frag_b.load(fb[0], st.ring.stages[0].b, 0);
  }
  constexpr int kKBlocks = G::FragmentLoaderA::kKBlocks;
  int slot = 0;
  unsigned phase = 0;
  for (int t = 0; t < k_tiles; ++t) {
    const int next_slot = slot + 1 == S ? 0 : slot + 1;
    const unsigned next_phase = next_slot == 0 ? phase ^ 1u : phase;
#pragma unroll
    for (int kb = 0; kb < kKBlocks; ++kb) {
      const bool last = kb + 1 == kKBlocks;
      if (last) {
        mbar_arrive(&st.empty[slot]);
        if (t + 1 < k_tiles) mbar_wait(&st.full[next_slot], next_phase);
      }
      if (!last) {
        frag_a.load(fa[(kb + 1) % 2], st.ring.stages[slot].a, kb + 1);
        frag_b.load(fb[(kb + 1) % 2], st.ring.stages[slot].b, kb + 1);
      } else if (t + 1 < k_tiles) {
        frag_a.load(fa[(kb + 1) % 2], st.ring.stages[next_slot].a, 0);
        frag_b.load(fb[(kb + 1) % 2], st.ring.stages[next_slot].b, 0);
      }
      mma(acc, fa[kb % 2], fb[kb % 2]);
    }
    slot = next_slot;
    phase = next_phase;
  }
  __syncthreads();  // every slot has landed and been read: the epilogue may reuse the ring
  typename G::Epilogue epilogue(st.epilogue, thread);
  epilogue(acc, p.epilogue, block_m0, block_n0, warp_m0, warp_n0);
}

// [1] A warpgroup of cp.async producers.
template <class G>
__global__ void __launch_bounds__(G::kThreads, 1) cp_async_producer_kernel(typename G::Params p) {
  extern __shared__ unsigned char smem[];
  auto& st = storage_of<G>(smem);
  init_barriers<G>(st, G::kProducers);
  if (threadIdx.x < G::kConsumers) {
    consume<G>(st, p);
    return;
  }
  asm volatile("setmaxnreg.dec.sync.aligned.u32 72;");
  const TileCoord tile = GroupedRaster<8>::tile_of(blockIdx.x, p.tiles_m, p.tiles_n);
  const int block_m0 = tile.m * G::Tile::kM, block_n0 = tile.n * G::Tile::kN;
  const int k_tiles = (p.k + G::Tile::kK - 1) / G::Tile::kK;
  const int producer = threadIdx.x - G::kConsumers;
  auto pipe = cuda::make_pipeline();  // thread scope: memcpy_async is a plain cp.async
  const typename G::LoaderA load_a(MatrixView<const __half>{p.a, p.m, p.k, p.k}, producer);
  const typename G::LoaderB load_b(MatrixView<const __half>{p.b, p.n, p.k, p.k}, producer);
  for (int t = 0; t < k_tiles; ++t) {
    const int slot = t % G::kStages;
    mbar_wait(&st.empty[slot], ((t / G::kStages) & 1) ^ 1);  // a fresh barrier passes parity 1
    load_a.load(st.ring.stages[slot].a, block_m0, t * G::Tile::kK, pipe);
    load_b.load(st.ring.stages[slot].b, block_n0, t * G::Tile::kK, pipe);
    cp_async_arrive_noinc(&st.full[slot]);
  }
  producer_finish<G>();
}

// [2] One thread of TMA copies. Rows or k past the matrix arrive as zeros (the tensor map's
// out-of-bounds fill), and the transaction count is always the whole box.
template <class G>
__global__ void __launch_bounds__(G::kThreads, 1)
    tma_producer_kernel(typename G::Params p, const __grid_constant__ CUtensorMap map_a,
                        const __grid_constant__ CUtensorMap map_b) {
  extern __shared__ unsigned char smem[];
  auto& st = storage_of<G>(smem);
  init_barriers<G>(st, 1);
  if (threadIdx.x < G::kConsumers) {
    consume<G>(st, p);
    return;
  }
  asm volatile("setmaxnreg.dec.sync.aligned.u32 72;");
  if (threadIdx.x == G::kConsumers) {
    const TileCoord tile = GroupedRaster<8>::tile_of(blockIdx.x, p.tiles_m, p.tiles_n);
    const int block_m0 = tile.m * G::Tile::kM, block_n0 = tile.n * G::Tile::kN;
    const int k_tiles = (p.k + G::Tile::kK - 1) / G::Tile::kK;
    constexpr unsigned kStageBytes = sizeof(typename G::Stage);
    for (int t = 0; t < k_tiles; ++t) {
      const int slot = t % G::kStages;
      mbar_wait(&st.empty[slot], ((t / G::kStages) & 1) ^ 1);
      const unsigned full = arch::smem_address(&st.full[slot]);
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(full), "r"(kStageBytes)
                   : "memory");
      asm volatile(
          "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
              arch::smem_address(&st.ring.stages[slot].a)),
          "l"(reinterpret_cast<std::uint64_t>(&map_a)), "r"(t * G::Tile::kK), "r"(block_m0), "r"(full)
          : "memory");
      asm volatile(
          "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
              arch::smem_address(&st.ring.stages[slot].b)),
          "l"(reinterpret_cast<std::uint64_t>(&map_b)), "r"(t * G::Tile::kK), "r"(block_n0), "r"(full)
          : "memory");
    }
  }
  producer_finish<G>();
}

// A rows x k matrix, k contiguous with leading dimension k, in boxes of box_rows x 64 with the
// 128-byte swizzle.
CUtensorMap make_tensor_map(const __half* base, int rows, int k, int box_rows) {
  static PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found) !=
            cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      std::printf("cuTensorMapEncodeTiled is not available\n");
      std::exit(1);
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  CUtensorMap map;
  cuuint64_t dims[2] = {cuuint64_t(k), cuuint64_t(rows)};
  cuuint64_t strides[1] = {cuuint64_t(k) * sizeof(__half)};
  cuuint32_t box[2] = {64, cuuint32_t(box_rows)};
  cuuint32_t element_strides[2] = {1, 1};
  const CUresult r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, const_cast<__half*>(base), dims, strides,
                            box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    std::printf("cuTensorMapEncodeTiled failed (%d)\n", int(r));
    std::exit(1);
  }
  return map;
}

using Policy = GemmPolicy<256, 128, 64, 64, 64, 4>;
using G = Specialized<Policy>;
using Library = GemmMultistage<__half, __half, Layout::kRowMajor, Layout::kColumnMajor, 4, Policy>;

__global__ void fill_random(__half* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    unsigned h = unsigned(i * 2654435761u) ^ seed;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    p[i] = __float2half((h & 0xffff) / 32768.0f - 1.0f);  // in [-1, 1), never all zeros
  }
}
// Keeps the GPU busy while the host queues the timed launches.
__global__ void spin(long long ns) {
  long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); while (t - t0 < ns);
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::printf("%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// Two input sets (rotated) of the current problem.
constexpr int kSets = 2;
struct Problem {
  int m = 0, n = 0, k = 0;
  __half *a[kSets] = {}, *b[kSets] = {}, *d[kSets] = {};
  CUtensorMap map_a[kSets], map_b[kSets];
  void allocate(int m_, int n_, int k_) {
    m = m_, n = n_, k = k_;
    for (int s = 0; s < kSets; ++s) {
      check(cudaMalloc(&a[s], sizeof(__half) * size_t(m) * k), "cudaMalloc");
      check(cudaMalloc(&b[s], sizeof(__half) * size_t(n) * k), "cudaMalloc");
      check(cudaMalloc(&d[s], sizeof(__half) * size_t(m) * n), "cudaMalloc");
      fill_random<<<1024, 256>>>(a[s], size_t(m) * k, 1 + s);
      fill_random<<<1024, 256>>>(b[s], size_t(n) * k, 7 + s);
      map_a[s] = make_tensor_map(a[s], m, k, G::Tile::kM);
      map_b[s] = make_tensor_map(b[s], n, k, G::Tile::kN);
    }
  }
  void release() {
    for (int s = 0; s < kSets; ++s) cudaFree(a[s]), cudaFree(b[s]), cudaFree(d[s]);
  }
  G::Params params(int s) const {
    G::Params p;
    p.a = a[s], p.b = b[s], p.m = m, p.n = n, p.k = k;
    p.tiles_m = (m + G::Tile::kM - 1) / G::Tile::kM;
    p.tiles_n = (n + G::Tile::kN - 1) / G::Tile::kN;
    p.epilogue.d = d[s], p.epilogue.ldd = n, p.epilogue.m = m, p.epilogue.n = n;
    return p;
  }
} problem;

void run_library(int s) {
  Library::Arguments args;
  args.m = problem.m, args.n = problem.n, args.k = problem.k;
  args.a = problem.a[s], args.lda = problem.k, args.b = problem.b[s], args.ldb = problem.k;
  args.d = problem.d[s], args.ldd = problem.n;
  const Status status = Library::run(args, nullptr);
  if (!status) {
    std::printf("GemmMultistage: %s\n", status.message().c_str());
    std::exit(1);
  }
}
void run_cp_async_producer(int s) {
  const G::Params p = problem.params(s);
  cp_async_producer_kernel<G><<<p.tiles_m * p.tiles_n, G::kThreads, G::kSmemBytes>>>(p);
}
void run_tma_producer(int s) {
  const G::Params p = problem.params(s);
  tma_producer_kernel<G><<<p.tiles_m * p.tiles_n, G::kThreads, G::kSmemBytes>>>(p, problem.map_a[s], problem.map_b[s]);
}

using Run = void (*)(int);
const char* const kNames[] = {"library GemmMultistage", "producer-wg (cp.async)", "tma-producer"};
const Run kRuns[] = {run_library, run_cp_async_producer, run_tma_producer};
constexpr int kKernels = 3;

// One turn: `settle_ms` of untimed runs, then `runs` timed launches, each between two events.
std::vector<float> turn(Run run, double settle_ms, int runs) {
  cudaEvent_t start, now;
  cudaEventCreate(&start), cudaEventCreate(&now);
  cudaEventRecord(start);
  float elapsed = 0;
  for (int i = 0; elapsed < settle_ms;) {
    for (int j = 0; j < 10; ++j) run(i++ % kSets);
    cudaEventRecord(now);
    cudaEventSynchronize(now);
    cudaEventElapsedTime(&elapsed, start, now);
  }
  std::vector<cudaEvent_t> events(runs + 1);
  for (auto& e : events) cudaEventCreate(&e);
  spin<<<1, 1>>>(5000000);
  cudaEventRecord(events[0]);
  for (int r = 0; r < runs; ++r) {
    run(r % kSets);
    cudaEventRecord(events[r + 1]);
  }
  check(cudaDeviceSynchronize(), "timed runs");
  std::vector<float> ms(runs);
  for (int r = 0; r < runs; ++r) cudaEventElapsedTime(&ms[r], events[r], events[r + 1]);
  for (auto& e : events) cudaEventDestroy(e);
  cudaEventDestroy(start), cudaEventDestroy(now);
  return ms;
}

// Bitwise comparison of [1] and [2] against [0], outputs poisoned before each launch.
void compare() {
  const size_t count = size_t(problem.m) * problem.n;
  std::vector<unsigned short> reference(count), result(count);
  check(cudaMemset(problem.d[0], 0xff, count * 2), "cudaMemset");
  run_library(0);
  check(cudaMemcpy(reference.data(), problem.d[0], count * 2, cudaMemcpyDeviceToHost), "library");
  for (int i = 1; i < kKernels; ++i) {
    check(cudaMemset(problem.d[0], 0xff, count * 2), "cudaMemset");
    kRuns[i](0);
    check(cudaMemcpy(result.data(), problem.d[0], count * 2, cudaMemcpyDeviceToHost), kNames[i]);
    size_t differ = 0;
    for (size_t e = 0; e < count; ++e) differ += result[e] != reference[e];
    std::printf("%dx%dx%d %s: %zu of %zu elements differ from the library kernel%s\n", problem.m, problem.n,
                problem.k, kNames[i], differ, count, differ ? "  <-- FAIL" : "");
  }
}

}  // namespace

int main(int argc, char** argv) {
  check(cudaFuncSetAttribute(cp_async_producer_kernel<G>, cudaFuncAttributeMaxDynamicSharedMemorySize, G::kSmemBytes),
        "cudaFuncSetAttribute");
  check(cudaFuncSetAttribute(tma_producer_kernel<G>, cudaFuncAttributeMaxDynamicSharedMemorySize, G::kSmemBytes),
        "cudaFuncSetAttribute");
  const char* mode = argc > 1 ? argv[1] : "";
  if (std::strcmp(mode, "ncu") == 0) {
    problem.allocate(4096, 4096, 4096);
    for (int r = 0; r < 2; ++r)
      for (int i = 0; i < kKernels; ++i) kRuns[i](r);
    check(cudaDeviceSynchronize(), "ncu runs");
    return 0;
  }
  struct Shape {
    int m, n, k;
    bool timed;
  };
  std::vector<Shape> shapes = {{4096, 4096, 4096, true}, {8192, 8192, 8192, true}, {2048, 2048, 2048, true},
                               {1000, 3000, 4104, true}, {4096, 4096, 1000, false}, {256, 128, 64, false}};
  if (std::strcmp(mode, "quick") == 0) shapes = {{512, 384, 1000, false}, {300, 200, 136, false}};
  for (const Shape& shape : shapes) {
    problem.allocate(shape.m, shape.n, shape.k);
    compare();
    if (shape.timed) {
      const double flops = 2.0 * shape.m * shape.n * double(shape.k);
      const int runs = shape.m <= 2048 ? 400 : shape.m <= 4096 ? 150 : 25;
      std::vector<float> all[kKernels];
      std::printf("%dx%dx%d: median TFLOP/s per turn (150 ms settled, %d runs per turn)\n", shape.m, shape.n,
                  shape.k, runs);
      for (int round = 0; round < 6; ++round) {
        std::printf("  round %d:", round);
        for (int j = 0; j < kKernels; ++j) {
          const int i = round % 2 == 0 ? j : kKernels - 1 - j;
          std::vector<float> ms = turn(kRuns[i], 150, runs);
          std::sort(ms.begin(), ms.end());
          all[i].insert(all[i].end(), ms.begin(), ms.end());
          std::printf("  [%d] %.1f", i, flops / (ms[ms.size() / 2] * 1e-3) / 1e12);
        }
        std::printf("\n");
      }
      for (int i = 0; i < kKernels; ++i) {
        std::sort(all[i].begin(), all[i].end());
        const double tflops = flops / (all[i][all[i].size() / 2] * 1e-3) / 1e12;
        const double base = flops / (all[0][all[0].size() / 2] * 1e-3) / 1e12;
        std::printf("  [%d] %-24s %6.1f TFLOP/s  x%.3f  (%zu runs)\n", i, kNames[i], tflops, tflops / base,
                    all[i].size());
      }
    }
    problem.release();
  }
  return 0;
}
