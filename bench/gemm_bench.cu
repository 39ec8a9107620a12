// gemm_bench: tilepipe::GemmMultistage against cuBLAS and against the mma.sync ceiling, in one run.
//
//   gemm_bench [--quick] [--json PATH] [--filter S1,S2,...] [--runs N] [--target-ms T]
//              [--settle-ms S] [--no-sweep] [--list]
//
// 1. Measures the mma.sync m16n8k16 f32-accumulate peak (f16 and bf16) with a register-only
//    microbenchmark (mma_peak.cu).
// 2. For every problem (square M = N = K from 512 to 16384; the model shapes M in {16, 128, 1024,
//    8192} x (N, K) in {(4096, 4096), (14336, 4096), (4096, 14336)}), for f16 and bf16, TN and NN,
//    times cuBLAS (cublasGemmEx, f32 compute, D in the input type) and a set of GemmMultistage
//    configurations: the whole tile x stage sweep for f16 TN at 2048, 4096 and 8192; elsewhere the
//    default (DefaultGemmPolicy<4>: 256x128x64 in a build for sm_90 only, else 256x128x32), the
//    candidates of kCandidateConfigs, the best configuration of the f16 TN sweep at 4096, and for
//    f16 TN squares DefaultGemmPolicy<S> for S = 2..6. At 16384^3 only the default, the best of the
//    sweep and (f16 TN) the defaults of every stage count.
//    On every problem also "auto": tilepipe::GemmAuto, whose heuristic picks the tile and the
//    split-K factor (with a workspace); its choice is in the summary and the JSON.
// 3. Prints a table per sweep size and one summary table (LAST on stdout), and writes a JSON file
//    (--json) that scripts/plot_bench.py turns into a plot. Progress goes to stderr.
//
// Method (docs/performance.md says more): inputs uniform in [-1, 1) drawn on the device; enough
// input sets (A, B, D) that one pass over them covers 3x the L2, used in turn; each configuration is
// first run once on poisoned output and checked against a cuBLAS f32-output reference (relative
// Frobenius error < 1e-2, no NaN/Inf); then the configurations of the problem take turns over 4
// rounds (forward in even rounds, backward in odd ones), each turn 3 warm-up runs and a quarter of
// the timed runs (20 to 200 in all, about 100 ms of GPU time) launched back to back behind a short
// spin kernel (so that the launches queue up and the GPU never waits for the host), each bracketed
// by its own CUDA events; the median of all of a configuration's runs is reported. Taking turns
// matters on a shared GPU, whose clock can step by ~10% within a run: it moves every
// configuration of a problem alike. The peak is measured at the start and at the end of the run,
// and also takes a turn in every round of every problem ("/now": the ratio at the same clock).
//
// Exit status: 0 if every result verified, 3 if any did not, 1 on a CUDA/cuBLAS error, 2 on usage.

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include <tilepipe/gemm/kernel_sm90.cuh>

#include "bench_common.cuh"

namespace tilepipe_bench {
namespace {

// ---- Errors ----------------------------------------------------------------------------------

#define CHECK_CUDA(expr)                                                                \
  do {                                                                                  \
    const cudaError_t err_ = (expr);                                                    \
    if (err_ != cudaSuccess) {                                                          \
      std::fprintf(stderr, "[bench] %s:%d: %s failed: %s\n", __FILE__, __LINE__, #expr, \
                   cudaGetErrorString(err_));                                           \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)

#define CHECK_CUBLAS(expr)                                                              \
  do {                                                                                  \
    const cublasStatus_t st_ = (expr);                                                  \
    if (st_ != CUBLAS_STATUS_SUCCESS) {                                                 \
      std::fprintf(stderr, "[bench] %s:%d: %s failed: %s\n", __FILE__, __LINE__, #expr, \
                   cublasGetStatusString(st_));                                         \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)

constexpr double kVerifyThreshold = 1e-2;  // relative Frobenius error, f16 and bf16 outputs
constexpr double kL2Factor = 3.0;          // the input sets together cover this many L2s
constexpr int kWarmupRuns = 3;
// Rounds in which the configurations of one problem take turns (see run_problem).
constexpr int kRounds = 4;
// Iterations of one launch of the mma.sync peak kernel timed in turns (~0.4 ms on an H200).
constexpr int kPeakTurnIterations = 1024;
constexpr double kHugeFlops = 4e12;        // 16384^3: only cuBLAS, the default (+ f16 TN stages)

// ---- Device helpers: random fill, comparison, spin ------------------------------------------

__device__ std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// p[i] = uniform in [-1, 1), a function of (seed, i) only.
template <class T>
__global__ void fill_uniform_kernel(T* p, std::size_t n, std::uint64_t seed) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const std::uint64_t h = splitmix64(seed * 0x100000001B3ull ^ i);
    const float x = float(h >> 40) * (2.0f / 16777216.0f) - 1.0f;
    if constexpr (std::is_same_v<T, __half>) p[i] = __float2half_rn(x);
    else p[i] = __float2bfloat16_rn(x);
  }
}

// sums[0] += sum (got - want)^2, sums[1] += sum want^2, *nonfinite += count of NaN/Inf in got.
// Both matrices are m x n row-major with leading dimension n.
template <class T>
__global__ void compare_kernel(const T* got, const float* want, std::size_t count, double* sums,
                               unsigned long long* nonfinite) {
  double err2 = 0, ref2 = 0;
  unsigned long long bad = 0;
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const float g = float(got[i]);
    const double w = want[i];
    if (!isfinite(g)) {
      ++bad;
      continue;
    }
    err2 += (g - w) * (g - w);
    ref2 += w * w;
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    err2 += __shfl_down_sync(0xFFFFFFFFu, err2, offset);
    ref2 += __shfl_down_sync(0xFFFFFFFFu, ref2, offset);
    bad += __shfl_down_sync(0xFFFFFFFFu, bad, offset);
  }
  if (threadIdx.x % 32 == 0) {
    atomicAdd(&sums[0], err2);
    atomicAdd(&sums[1], ref2);
    if (bad) atomicAdd(nonfinite, bad);
  }
}

// Holds the stream for `ns` nanoseconds, so that the launches issued behind it queue up.
__global__ void spin_kernel(unsigned long long ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    __nanosleep(1000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

// ---- Problems, options, results --------------------------------------------------------------

struct Problem {
  std::string group;  // "square" or "model"
  int m, n, k;
  DType dtype;
  LayoutPair layout;

  double flops() const { return 2.0 * m * n * double(k); }
  std::string shape() const {
    return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  }
  std::string key() const {
    return std::string(name_of(dtype)) + "/" + name_of(layout) + "/" + shape();
  }
  bool is_f16_tn() const { return dtype == DType::kF16 && layout == LayoutPair::kTN; }
};

struct Options {
  bool quick = false;
  bool sweep = true;
  bool list = false;
  std::string json_path;
  std::vector<std::string> filters;  // a problem runs if its key contains any of them
  int min_runs = 20;
  int max_runs = 200;
  double target_ms = 100;  // timed runs per configuration: about this much GPU time, within bounds
  double settle_ms = 0;    // untimed runs of the configuration before each turn's timed runs
  std::string command_line;
};

struct Record {
  Problem problem;
  bool cublas = false;
  bool is_auto = false;  // GemmAuto: `config` and `split_k` are what its heuristic chose
  TileConfig config{};  // tilepipe only
  int split_k = 1;
  std::size_t workspace_bytes = 0;
  bool auto_hopper = false;  // GemmAuto ran its Large choice on the Hopper tier
  std::size_t smem_bytes = 0;
  int threads = 0;
  KernelResources resources;
  double median_ms = NAN, min_ms = NAN, max_ms = NAN, q1_ms = NAN, q3_ms = NAN;
  int runs = 0;
  int sets = 0;
  double tflops = NAN;
  double peak_now = NAN;  // the mma.sync peak timed in turns with this problem's configurations
  double rel_error = NAN;
  unsigned long long nonfinite = 0;
  bool verified = false;
  std::string error;  // a launch that failed (can_implement, cuBLAS status)

  std::string config_name() const {
    if (cublas) return "cublas";
    if (is_auto) return "auto(" + auto_choice().name() + ")";
    return config.name();
  }
  AutoChoice auto_choice() const {
    AutoChoice c;
    c.config = config;
    c.split_k = split_k;
    c.workspace_bytes = workspace_bytes;
    c.hopper = auto_hopper;
    return c;
  }
  bool is_fixed_config() const { return !cublas && !is_auto; }  // one of the compiled configurations
  bool is_default() const { return is_fixed_config() && config == kDefaultConfig; }
};

struct Timing {
  double median_ms = NAN, min_ms = NAN, max_ms = NAN, q1_ms = NAN, q3_ms = NAN;
  int runs = 0;
};

// ---- Timing ----------------------------------------------------------------------------------

// One launch of the configuration being measured on input set `set`; returns "" or an error.
using Launch = std::function<std::string(int set)>;

class Timer {
 public:
  Timer(cudaStream_t stream, const Options& o) : stream_(stream), o_(o) {
    events_.resize(o.max_runs + 1);
    for (auto& e : events_) CHECK_CUDA(cudaEventCreate(&e));
  }
  ~Timer() {
    for (auto& e : events_) cudaEventDestroy(e);
  }

  // Warm-up runs (which also estimate the time of one run), then back-to-back timed runs behind a
  // spin kernel, about `target_ms` of them and at least `min_runs`; run i is bracketed by events
  // i and i+1. Input sets rotate across all runs. The times are appended to `samples`.
  bool time(const Launch& launch, int sets, double target_ms, int min_runs,
            std::vector<float>* samples, std::string* error) {
    int next_set = 0;
    auto run = [&]() {
      std::string e = launch(next_set);
      next_set = (next_set + 1) % sets;
      return e;
    };
    CHECK_CUDA(cudaEventRecord(events_[0], stream_));
    for (int i = 0; i < kWarmupRuns; ++i) {
      if (std::string e = run(); !e.empty()) {
        *error = e;
        return false;
      }
    }
    CHECK_CUDA(cudaEventRecord(events_[1], stream_));
    CHECK_CUDA(cudaStreamSynchronize(stream_));
    float warm_ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&warm_ms, events_[0], events_[1]));
    const double estimate = std::max(1e-3, double(warm_ms) / kWarmupRuns);
    const int runs = std::clamp(int(std::ceil(target_ms / estimate)), min_runs, o_.max_runs);

    // --settle-ms: more untimed runs, so that the GPU's clock settles to this configuration's own
    // power draw before it is timed (the H200 takes ~50-100 ms, docs/performance-log.md entry 11).
    if (o_.settle_ms > 0) {
      const int settle_runs = std::min(100000, int(std::ceil(o_.settle_ms / estimate)));
      for (int i = 0; i < settle_runs; ++i) {
        if (std::string e = run(); !e.empty()) {
          *error = e;
          CHECK_CUDA(cudaStreamSynchronize(stream_));
          return false;
        }
      }
    }

    // About 20 us of host time per launch (argument checks, attribute call, launch) must fit in
    // the spin, so that the GPU runs the timed launches back to back.
    const double spin_ms = std::min(20.0, 1.0 + 0.02 * runs);
    spin_kernel<<<1, 1, 0, stream_>>>(static_cast<unsigned long long>(spin_ms * 1e6));
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaEventRecord(events_[0], stream_));
    for (int i = 0; i < runs; ++i) {
      if (std::string e = run(); !e.empty()) {
        *error = e;
        CHECK_CUDA(cudaStreamSynchronize(stream_));
        return false;
      }
      CHECK_CUDA(cudaEventRecord(events_[i + 1], stream_));
    }
    CHECK_CUDA(cudaStreamSynchronize(stream_));
    for (int i = 0; i < runs; ++i) {
      float ms = 0;
      CHECK_CUDA(cudaEventElapsedTime(&ms, events_[i], events_[i + 1]));
      samples->push_back(ms);
    }
    return true;
  }

  // Median and quartiles of a set of run times.
  static Timing summarize(std::vector<float> ms) {
    Timing t;
    if (ms.empty()) return t;
    std::sort(ms.begin(), ms.end());
    const std::size_t n = ms.size();
    t.runs = int(n);
    t.median_ms = n % 2 ? ms[n / 2] : 0.5 * (double(ms[n / 2 - 1]) + ms[n / 2]);
    t.min_ms = ms.front();
    t.max_ms = ms.back();
    t.q1_ms = ms[n / 4];
    t.q3_ms = ms[(3 * n) / 4];
    return t;
  }

 private:
  cudaStream_t stream_;
  const Options& o_;
  std::vector<cudaEvent_t> events_;
};

// ---- Buffers of one problem ------------------------------------------------------------------

struct Buffers {
  std::size_t elems_a = 0, elems_b = 0, elems_d = 0;
  int sets = 0;
  void* a = nullptr;  // sets x elems_a
  void* b = nullptr;  // sets x elems_b
  void* d = nullptr;  // sets x elems_d
  float* ref = nullptr;  // m x n, row-major: the cuBLAS f32-output reference on set 0

  const void* a_of(int s) const { return static_cast<const char*>(a) + 2 * elems_a * s; }
  const void* b_of(int s) const { return static_cast<const char*>(b) + 2 * elems_b * s; }
  void* d_of(int s) const { return static_cast<char*>(d) + 2 * elems_d * s; }

  void release() {
    cudaFree(a);
    cudaFree(b);
    cudaFree(d);
    cudaFree(ref);
    *this = Buffers{};
  }
};

// Leading dimensions: tight (every size in the benchmark is a multiple of 8 elements).
std::int64_t lda_of(const Problem& p) { return p.layout == LayoutPair::kTN ? p.k : p.m; }
std::int64_t ldb_of(const Problem& p) { return p.k; }  // B is column-major in both layouts
std::int64_t ldd_of(const Problem& p) { return p.n; }

// The operands of problem `p` in buffer set `s` (no workspace).
Operands operands_of(const Problem& p, const Buffers& buf, int s) {
  Operands op;
  op.m = p.m;
  op.n = p.n;
  op.k = p.k;
  op.a = buf.a_of(s);
  op.lda = lda_of(p);
  op.b = buf.b_of(s);
  op.ldb = ldb_of(p);
  op.d = buf.d_of(s);
  op.ldd = ldd_of(p);
  return op;
}

template <class T>
void fill(void* p, std::size_t n, std::uint64_t seed, cudaStream_t stream) {
  fill_uniform_kernel<T><<<1024, 256, 0, stream>>>(static_cast<T*>(p), n, seed);
  CHECK_CUDA(cudaGetLastError());
}

// Allocates and fills the input sets; false (and a message) if the GPU's memory is too small.
bool make_buffers(const Problem& p, std::size_t l2_bytes, std::uint64_t seed, cudaStream_t stream,
                  Buffers* buf, std::string* why) {
  buf->elems_a = std::size_t(p.m) * p.k;
  buf->elems_b = std::size_t(p.k) * p.n;
  buf->elems_d = std::size_t(p.m) * p.n;
  const std::size_t set_bytes = 2 * (buf->elems_a + buf->elems_b + buf->elems_d);
  int sets = int(std::ceil(kL2Factor * double(l2_bytes) / double(set_bytes)));
  sets = std::clamp(sets, 1, 1024);
  std::size_t free_bytes = 0, total_bytes = 0;
  CHECK_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::size_t ref_bytes = 4 * buf->elems_d;
  const std::size_t reserve = std::size_t(1) << 30;  // cuBLAS workspace, the runtime, slack
  if (free_bytes < ref_bytes + set_bytes + reserve) {
    *why = "needs " + std::to_string((ref_bytes + set_bytes) >> 20) + " MiB, " +
           std::to_string(free_bytes >> 20) + " MiB free";
    return false;
  }
  sets = int(std::min<std::size_t>(sets, (free_bytes - ref_bytes - reserve) / set_bytes));
  buf->sets = sets;
  CHECK_CUDA(cudaMalloc(&buf->a, 2 * buf->elems_a * sets));
  CHECK_CUDA(cudaMalloc(&buf->b, 2 * buf->elems_b * sets));
  CHECK_CUDA(cudaMalloc(&buf->d, 2 * buf->elems_d * sets));
  CHECK_CUDA(cudaMalloc(&buf->ref, ref_bytes));
  if (p.dtype == DType::kF16) {
    fill<__half>(buf->a, buf->elems_a * sets, seed * 2, stream);
    fill<__half>(buf->b, buf->elems_b * sets, seed * 2 + 1, stream);
  } else {
    fill<__nv_bfloat16>(buf->a, buf->elems_a * sets, seed * 2, stream);
    fill<__nv_bfloat16>(buf->b, buf->elems_b * sets, seed * 2 + 1, stream);
  }
  CHECK_CUDA(cudaMemsetAsync(buf->d, 0xFF, 2 * buf->elems_d * sets, stream));
  return true;
}

// ---- cuBLAS ----------------------------------------------------------------------------------

// D (m x n, row-major) = A * B through cuBLAS, which is column-major: it computes
// D^T (n x m, column-major, ld = n) = B^T * A^T. B is column-major k x n, so B^T is op T on it;
// A^T is A itself as stored when A is row-major (TN: op N) and op T when A is column-major (NN).
cublasStatus_t cublas_gemm(cublasHandle_t handle, const Problem& p, const void* a, const void* b,
                           void* d, cudaDataType_t d_type) {
  const float one = 1.0f, zero = 0.0f;
  const cudaDataType_t ab_type = p.dtype == DType::kF16 ? CUDA_R_16F : CUDA_R_16BF;
  const cublasOperation_t op_a = p.layout == LayoutPair::kTN ? CUBLAS_OP_N : CUBLAS_OP_T;
  return cublasGemmEx(handle, CUBLAS_OP_T, op_a, p.n, p.m, p.k, &one, b, ab_type,
                      int(ldb_of(p)), a, ab_type, int(lda_of(p)), &zero, d, d_type,
                      int(ldd_of(p)), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

// ---- The compiled configurations -------------------------------------------------------------

std::vector<TilepipeKernel> all_kernels() {
  std::vector<TilepipeKernel> kernels;
  add_f16_tn_sweep_a(kernels);
  add_f16_tn_sweep_b(kernels);
  add_candidate_kernels(kernels);
  return kernels;
}

std::vector<AutoKernel> all_auto_kernels() {
  std::vector<AutoKernel> kernels;
  add_auto_kernels(kernels);
  return kernels;
}

const AutoKernel* find_auto_kernel(const std::vector<AutoKernel>& kernels, DType d, LayoutPair l) {
  for (const auto& k : kernels)
    if (k.dtype == d && k.layout == l) return &k;
  return nullptr;
}

const TilepipeKernel* find_kernel(const std::vector<TilepipeKernel>& kernels, DType d,
                                  LayoutPair l, const TileConfig& c) {
  for (const auto& k : kernels)
    if (k.dtype == d && k.layout == l && k.config == c) return &k;
  return nullptr;
}

// Every candidate, and GemmAuto, must be compiled for every data type and layout; returns how
// many are not.
int missing_candidates(const std::vector<TilepipeKernel>& kernels,
                       const std::vector<AutoKernel>& autos) {
  int missing = 0;
  for (DType d : {DType::kF16, DType::kBF16})
    for (LayoutPair l : {LayoutPair::kTN, LayoutPair::kNN}) {
      for (const auto& c : kCandidateConfigs)
        if (!find_kernel(kernels, d, l, c)) {
          std::fprintf(stderr, "[bench] candidate %s is not compiled for %s %s\n",
                       c.name().c_str(), name_of(d), name_of(l));
          ++missing;
        }
      if (!find_auto_kernel(autos, d, l)) {
        std::fprintf(stderr, "[bench] GemmAuto is not compiled for %s %s\n", name_of(d), name_of(l));
        ++missing;
      }
    }
  return missing;
}

// --list: what is compiled (needs no GPU).
int list_kernels() {
  const std::vector<TilepipeKernel> kernels = all_kernels();
  std::printf("%-5s %-3s %-22s %7s %11s\n", "dtype", "lay", "config", "threads", "smem bytes");
  for (const auto& k : kernels)
    std::printf("%-5s %-3s %-22s %7d %11zu\n", name_of(k.dtype), name_of(k.layout),
                k.config.name().c_str(), k.threads, k.smem_bytes);
  std::printf("%zu GemmMultistage instantiations\n", kernels.size());
  const std::vector<AutoKernel> autos = all_auto_kernels();
  for (const auto& a : autos) {
    // What the heuristic would choose on an H200 (132 SMs) for two shapes, as a smoke test.
    Operands skinny, square;
    skinny.m = 16; skinny.n = 4096; skinny.k = 4096;
    square.m = square.n = square.k = 4096;
    std::printf("%-5s %-3s auto: 16x4096x4096 -> %s, 4096^3 -> %s (on 132 SMs)\n", name_of(a.dtype),
                name_of(a.layout), a.select(skinny, 132).name().c_str(),
                a.select(square, 132).name().c_str());
  }
  std::printf("%zu GemmAuto instantiations\n", autos.size());
  return missing_candidates(kernels, autos) ? 1 : 0;
}

// ---- The benchmark ---------------------------------------------------------------------------

class Bench {
 public:
  explicit Bench(const Options& o)
      : o_(o), stream_(make_stream()), timer_(stream_, o) {
    CHECK_CUDA(cudaGetDeviceProperties(&prop_, 0));
    CHECK_CUBLAS(cublasCreate(&cublas_));
    CHECK_CUBLAS(cublasSetStream(cublas_, stream_));
    CHECK_CUDA(cudaMalloc(&sums_, 2 * sizeof(double) + sizeof(unsigned long long)));
    kernels_ = all_kernels();
    autos_ = all_auto_kernels();
    if (int missing = missing_candidates(kernels_, autos_))
      std::fprintf(stderr, "[bench] warning: %d candidate configurations are not compiled\n", missing);
  }
  ~Bench() {
    cudaFree(sums_);
    cublasDestroy(cublas_);
    cudaStreamDestroy(stream_);
  }

  // run_problem in run order (sweep first); tables in problem order.
  int run_all() {
    std::fprintf(stderr, "[bench] %s, sm_%d%d, %d SMs, L2 %d MiB, %zu kernels compiled\n",
                 prop_.name, prop_.major, prop_.minor, prop_.multiProcessorCount,
                 prop_.l2CacheSize >> 20, kernels_.size());
    // Configurations with GemmMultistage's default tile run the Hopper tier where the device
    // runs sm_90a code: their names are the Ampere tile's, their kernels GemmSm90's.
    int device = 0;
    if (cudaGetDevice(&device) == cudaSuccess && tilepipe::hopper_tier_available(device)) {
      std::string hopper;
      for (const TilepipeKernel& k : kernels_)
        if (k.hopper_tier && k.dtype == DType::kF16 && k.layout == LayoutPair::kTN)
          hopper += " " + k.config.name();
      std::fprintf(stderr, "[bench] Hopper tier (TMA + wgmma, GemmSm90: 128x256x64 tile up to 4 "
                           "stages, 128x128x64 above) runs these configurations:%s\n", hopper.c_str());
    }
    for (DType d : {DType::kF16, DType::kBF16}) {
      peak_[int(d)] = measure_mma_peak(d, 20, stream_);
      std::fprintf(stderr, "[bench] mma.sync m16n8k16 %s peak: %.1f TFLOP/s (median %.3f ms of %d runs)\n",
                   name_of(d), peak_[int(d)].tflops, peak_[int(d)].median_ms, peak_[int(d)].runs);
    }
    const std::vector<Problem> problems = make_problems();
    std::fprintf(stderr, "[bench] %zu problems\n", problems.size());
    std::uint64_t seed = 1;
    for (const Problem& p : run_order_) run_problem(p, seed++);
    // Again at the end: the clock of a shared GPU drifts, and the ratios to the peak are only as
    // good as the peak is for the whole run.
    for (DType d : {DType::kF16, DType::kBF16}) {
      peak_end_[int(d)] = measure_mma_peak(d, 20, stream_);
      std::fprintf(stderr, "[bench] mma.sync m16n8k16 %s peak at the end: %.1f TFLOP/s\n",
                   name_of(d), peak_end_[int(d)].tflops);
    }
    print_tables(problems);
    if (!o_.json_path.empty()) write_json();
    int failures = 0;
    for (const Record& r : records_) failures += r.verified ? 0 : 1;
    if (failures)
      std::fprintf(stderr, "[bench] %d results FAILED verification or did not run\n", failures);
    return failures ? 3 : 0;
  }

 private:
  // -- problem list ---------------------------------------------------------------------------
  std::vector<int> square_sizes() const {
    return o_.quick ? std::vector<int>{1024, 4096} : std::vector<int>{512, 1024, 2048, 4096, 8192, 16384};
  }
  std::vector<int> sweep_sizes() const {
    if (!o_.sweep) return {};
    return o_.quick ? std::vector<int>{4096} : std::vector<int>{4096, 2048, 8192};  // 4096 first
  }
  bool is_sweep(const Problem& p) const {
    if (!p.is_f16_tn() || p.group != "square") return false;
    const auto s = sweep_sizes();
    return std::find(s.begin(), s.end(), p.m) != s.end();
  }
  bool selected(const Problem& p) const {
    if (o_.filters.empty()) return true;
    for (const auto& f : o_.filters)
      if (p.key().find(f) != std::string::npos) return true;
    return false;
  }

  // Problems in table order; run_problem is called in run order (the f16 TN sweep first, so that
  // its best configuration is known for the rest).
  std::vector<Problem> make_problems() {
    const std::vector<int> ms = o_.quick ? std::vector<int>{16, 1024} : std::vector<int>{16, 128, 1024, 8192};
    const std::vector<std::pair<int, int>> nks =
        o_.quick ? std::vector<std::pair<int, int>>{{4096, 4096}}
                 : std::vector<std::pair<int, int>>{{4096, 4096}, {14336, 4096}, {4096, 14336}};
    std::vector<Problem> all;
    for (DType d : {DType::kF16, DType::kBF16})
      for (LayoutPair l : {LayoutPair::kTN, LayoutPair::kNN}) {
        for (int s : square_sizes()) all.push_back({"square", s, s, s, d, l});
        for (const auto& [n, k] : nks)
          for (int m : ms) all.push_back({"model", m, n, k, d, l});
      }
    std::vector<Problem> selected_problems;
    for (const auto& p : all)
      if (selected(p)) selected_problems.push_back(p);
    // Run order: sweep problems first, in sweep_sizes() order.
    std::vector<Problem> order;
    for (int s : sweep_sizes())
      for (const auto& p : selected_problems)
        if (is_sweep(p) && p.m == s) order.push_back(p);
    for (const auto& p : selected_problems)
      if (!is_sweep(p)) order.push_back(p);
    run_order_ = order;
    return selected_problems;
  }

  const TilepipeKernel* find(DType d, LayoutPair l, const TileConfig& c) const {
    return find_kernel(kernels_, d, l, c);
  }

  // The tilepipe configurations timed on problem p.
  std::vector<const TilepipeKernel*> plan(const Problem& p) const {
    std::vector<const TilepipeKernel*> out;
    auto add = [&](const TileConfig& c) {
      const TilepipeKernel* k = find(p.dtype, p.layout, c);
      if (k && std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
    };
    if (is_sweep(p)) {
      for (const auto& k : kernels_)
        if (k.dtype == p.dtype && k.layout == p.layout) out.push_back(&k);
      return out;
    }
    add(kDefaultConfig);
    if (p.is_f16_tn() && p.group == "square")  // the plot's lines: the default at s2..s6
      for (const TileConfig& c : kDefaultConfigsByStages) add(c);
    if (p.flops() < kHugeFlops)
      for (const auto& c : kCandidateConfigs) add(c);
    if (has_best_sweep_) add(best_sweep_);
    return out;
  }

  // -- one problem ----------------------------------------------------------------------------
  void run_problem(const Problem& p, std::uint64_t seed) {
    Buffers buf;
    std::string why;
    if (!make_buffers(p, std::size_t(prop_.l2CacheSize), seed, stream_, &buf, &why)) {
      std::fprintf(stderr, "[bench] %s: skipped (%s)\n", p.key().c_str(), why.c_str());
      return;
    }
    // The reference: cuBLAS with f32 output, on set 0.
    CHECK_CUBLAS(cublas_gemm(cublas_, p, buf.a_of(0), buf.b_of(0), buf.ref, CUDA_R_32F));
    CHECK_CUDA(cudaStreamSynchronize(stream_));
    const cudaDataType_t d_type = p.dtype == DType::kF16 ? CUDA_R_16F : CUDA_R_16BF;

    // Every configuration of the problem (cuBLAS, the compiled tilepipe ones, GemmAuto) is
    // verified once, then all are timed in kRounds rounds, each taking its turn in every round,
    // so that a change of the GPU's clock during the problem moves all of them alike.
    struct Entry {
      Record r;
      Launch launch;
    };
    std::vector<Entry> entries;
    // cuBLAS, timed with the output in the input type.
    {
      Record r;
      r.problem = p;
      r.cublas = true;
      Launch launch = [&, d_type](int s) -> std::string {
        const cublasStatus_t st = cublas_gemm(cublas_, p, buf.a_of(s), buf.b_of(s), buf.d_of(s), d_type);
        return st == CUBLAS_STATUS_SUCCESS ? "" : std::string("cublasGemmEx: ") + cublasGetStatusString(st);
      };
      entries.push_back({r, launch});
    }
    // tilepipe.
    for (const TilepipeKernel* k : plan(p)) {
      Record r;
      r.problem = p;
      r.config = k->config;
      r.smem_bytes = k->smem_bytes;
      r.threads = k->threads;
      r.resources = resources_of(k);
      Launch launch = [&, k](int s) -> std::string {
        Operands op = operands_of(p, buf, s);
        const tilepipe::Status st = k->run(op, stream_);
        return st ? "" : st.message();
      };
      entries.push_back({r, launch});
    }
    // GemmAuto: the heuristic's choice, with a workspace of the size it asks for.
    void* workspace = nullptr;
    if (const AutoKernel* ak = find_auto_kernel(autos_, p.dtype, p.layout)) {
      Operands shape;
      shape.m = p.m;
      shape.n = p.n;
      shape.k = p.k;
      const AutoChoice choice = ak->select(shape, prop_.multiProcessorCount);
      Record r;
      r.problem = p;
      r.is_auto = true;
      r.config = choice.config;
      r.split_k = choice.split_k;
      r.workspace_bytes = choice.workspace_bytes;
      r.auto_hopper = choice.hopper;
      // Shared memory, threads and registers of the chosen tile's ordinary kernel, when the
      // benchmark compiles that configuration too (with split-K another kernel runs first; on
      // the Hopper tier, none of the table's kernels runs).
      if (const TilepipeKernel* k = choice.hopper ? nullptr : find(p.dtype, p.layout, choice.config)) {
        r.smem_bytes = k->smem_bytes;
        r.threads = k->threads;
        r.resources = resources_of(k);
      }
      if (choice.workspace_bytes > 0) CHECK_CUDA(cudaMalloc(&workspace, choice.workspace_bytes));
      Launch launch = [&, ak, choice](int s) -> std::string {
        Operands op = operands_of(p, buf, s);
        op.workspace = workspace;
        op.workspace_bytes = choice.workspace_bytes;
        const tilepipe::Status st = ak->run(op, stream_);
        return st ? "" : st.message();
      };
      entries.push_back({r, launch});
    }

    for (Entry& e : entries) verify(e.r, e.launch, buf);
    // One more turn per round, the last of a forward round and the first of a backward one: the
    // register-only mma.sync kernel, i.e. the peak at the clock the GPU keeps while this problem
    // is measured (the start-of-run peak may be ~10% off by then).
    const MmaPeakKernel& peak_kernel = p.dtype == DType::kF16 ? peak_f16_ : peak_bf16_;
    const std::size_t turns = entries.size() + 1;
    const Launch peak_launch = [&](int) -> std::string {
      peak_kernel.launch(stream_);
      return "";
    };
    std::vector<std::vector<float>> samples(turns);
    const int min_runs_per_round = (o_.min_runs + kRounds - 1) / kRounds;
    for (int round = 0; round < kRounds; ++round) {
      // Forward in even rounds, backward in odd ones: no configuration is always timed first or
      // last (a configuration that always followed the others ran ~6% slow, entry 10).
      for (std::size_t t = 0; t < turns; ++t) {
        const std::size_t i = round % 2 == 0 ? t : turns - 1 - t;
        if (i == entries.size()) {
          std::string error;
          if (!timer_.time(peak_launch, 1, o_.target_ms / kRounds, min_runs_per_round, &samples[i], &error))
            std::fprintf(stderr, "[bench] peak in turns: %s\n", error.c_str());
          CHECK_CUDA(cudaGetLastError());
          continue;
        }
        Record& r = entries[i].r;
        if (!r.error.empty()) continue;
        std::string error;
        if (!timer_.time(entries[i].launch, buf.sets, o_.target_ms / kRounds, min_runs_per_round,
                         &samples[i], &error)) {
          r.error = error;
          r.verified = false;
        }
        CHECK_CUDA(cudaGetLastError());
      }
    }
    const Timing peak_timing = Timer::summarize(samples[entries.size()]);
    const double peak_now = peak_kernel.flops() / (peak_timing.median_ms * 1e-3) / 1e12;
    std::fprintf(stderr, "[bench] %-24s mma.sync peak in turns %.1f TFLOP/s\n", p.key().c_str(), peak_now);
    for (std::size_t i = 0; i < entries.size(); ++i) {
      entries[i].r.peak_now = peak_now;
      finish(entries[i].r, samples[i]);
    }
    CHECK_CUDA(cudaStreamSynchronize(stream_));
    if (workspace) cudaFree(workspace);
    buf.release();
    if (is_sweep(p)) update_best_sweep(p);
  }

  KernelResources resources_of(const TilepipeKernel* k) {
    auto it = resources_.find(k);
    if (it == resources_.end()) it = resources_.emplace(k, k->resources()).first;
    return it->second;
  }

  // Verifies one configuration once, on set 0 with D poisoned; a failure to run sets r.error.
  void verify(Record& r, const Launch& launch, const Buffers& buf) {
    const Problem& p = r.problem;
    r.sets = buf.sets;
    CHECK_CUDA(cudaMemsetAsync(buf.d_of(0), 0xFF, 2 * buf.elems_d, stream_));  // NaN
    std::string error = launch(0);
    if (error.empty()) {
      CHECK_CUDA(cudaGetLastError());
      CHECK_CUDA(cudaMemsetAsync(sums_, 0, 2 * sizeof(double) + sizeof(unsigned long long), stream_));
      auto* nonfinite = reinterpret_cast<unsigned long long*>(sums_ + 2);
      const int blocks = prop_.multiProcessorCount * 8;
      if (p.dtype == DType::kF16)
        compare_kernel<<<blocks, 256, 0, stream_>>>(static_cast<const __half*>(buf.d_of(0)), buf.ref,
                                                    buf.elems_d, sums_, nonfinite);
      else
        compare_kernel<<<blocks, 256, 0, stream_>>>(static_cast<const __nv_bfloat16*>(buf.d_of(0)),
                                                    buf.ref, buf.elems_d, sums_, nonfinite);
      CHECK_CUDA(cudaGetLastError());
      double sums[2];
      CHECK_CUDA(cudaMemcpyAsync(sums, sums_, sizeof(sums), cudaMemcpyDeviceToHost, stream_));
      CHECK_CUDA(cudaMemcpyAsync(&r.nonfinite, nonfinite, sizeof(r.nonfinite), cudaMemcpyDeviceToHost, stream_));
      CHECK_CUDA(cudaStreamSynchronize(stream_));
      r.rel_error = sums[1] > 0 ? std::sqrt(sums[0] / sums[1]) : std::sqrt(sums[0]);
      r.verified = r.nonfinite == 0 && r.rel_error < kVerifyThreshold;
    } else {
      r.error = error;
      r.verified = false;
    }
    CHECK_CUDA(cudaGetLastError());
  }

  // The statistics of a configuration's timed runs (all rounds); appends the record.
  void finish(Record& r, const std::vector<float>& samples) {
    const Problem& p = r.problem;
    if (r.error.empty()) {
      const Timing t = Timer::summarize(samples);
      r.median_ms = t.median_ms;
      r.min_ms = t.min_ms;
      r.max_ms = t.max_ms;
      r.q1_ms = t.q1_ms;
      r.q3_ms = t.q3_ms;
      r.runs = t.runs;
      r.tflops = p.flops() / (t.median_ms * 1e-3) / 1e12;
    }
    std::fprintf(stderr, "[bench] %-24s %-22s %8.4f ms %7.1f TFLOP/s  err %.2e  %s%s%s\n",
                 p.key().c_str(), r.config_name().c_str(), r.median_ms, r.tflops, r.rel_error,
                 r.verified ? "ok" : "FAILED", r.error.empty() ? "" : ": ", r.error.c_str());
    records_.push_back(r);
  }

  void update_best_sweep(const Problem& p) {
    if (has_best_sweep_ && best_sweep_from_ == 4096) return;  // 4096's best is the one used
    const Record* best = best_tilepipe(p);
    if (!best) return;
    best_sweep_ = best->config;
    best_sweep_from_ = p.m;
    has_best_sweep_ = true;
    std::fprintf(stderr, "[bench] best f16 TN configuration at %s: %s (%.1f TFLOP/s)\n",
                 p.shape().c_str(), best_sweep_.name().c_str(), best->tflops);
  }

  // -- lookups on the results ----------------------------------------------------------------
  static bool same_problem(const Problem& a, const Problem& b) {
    return a.m == b.m && a.n == b.n && a.k == b.k && a.dtype == b.dtype && a.layout == b.layout;
  }
  const Record* cublas_of(const Problem& p) const {
    for (const auto& r : records_)
      if (r.cublas && same_problem(r.problem, p)) return &r;
    return nullptr;
  }
  const Record* tilepipe_of(const Problem& p, const TileConfig& c) const {
    for (const auto& r : records_)
      if (r.is_fixed_config() && r.config == c && same_problem(r.problem, p)) return &r;
    return nullptr;
  }
  const Record* auto_of(const Problem& p) const {
    for (const auto& r : records_)
      if (r.is_auto && same_problem(r.problem, p)) return &r;
    return nullptr;
  }
  // The fastest verified fixed configuration (GemmAuto's result is reported on its own).
  const Record* best_tilepipe(const Problem& p) const {
    const Record* best = nullptr;
    for (const auto& r : records_)
      if (r.is_fixed_config() && r.verified && same_problem(r.problem, p) && (!best || r.tflops > best->tflops))
        best = &r;
    return best;
  }
  double peak_of(DType d) const { return peak_[int(d)].tflops; }
  double ratio_cublas(const Record& r) const {
    const Record* c = cublas_of(r.problem);
    return c && c->tflops > 0 ? r.tflops / c->tflops : NAN;
  }
  double ratio_peak(const Record& r) const { return r.tflops / peak_of(r.problem.dtype); }
  static double ratio_peak_now(const Record& r) { return r.tflops / r.peak_now; }

  // -- output ---------------------------------------------------------------------------------
  static std::string fmt(const char* f, double x) {
    if (std::isnan(x)) return "-";
    char buf[64];
    std::snprintf(buf, sizeof(buf), f, x);
    return buf;
  }

  std::string date_utc() const {
    char buf[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    return buf;
  }

  void print_tables(const std::vector<Problem>& problems) const {
    int runtime = 0, driver = 0, cublas_version = 0;
    cudaRuntimeGetVersion(&runtime);
    cudaDriverGetVersion(&driver);
    cublasGetVersion(cublas_, &cublas_version);
    std::printf("\n# tilepipe gemm_bench: %s (sm_%d%d, %d SMs, L2 %d MiB), %s\n", prop_.name,
                prop_.major, prop_.minor, prop_.multiProcessorCount, prop_.l2CacheSize >> 20,
                date_utc().c_str());
    std::printf("# CUDA runtime %d, driver %d, cuBLAS %d. TFLOP/s = 2*M*N*K / median time.\n",
                runtime, driver, cublas_version);
    std::printf("\nmma.sync m16n8k16 peak (register-only microbenchmark): f16 %.1f TFLOP/s, bf16 %.1f TFLOP/s "
                "(at the end of the run: %.1f, %.1f)\n",
                peak_of(DType::kF16), peak_of(DType::kBF16), peak_end_[int(DType::kF16)].tflops,
                peak_end_[int(DType::kBF16)].tflops);

    // Sweep tables: tiles x stages, at each sweep size.
    for (int s : {2048, 4096, 8192}) {
      const Problem* sp = nullptr;
      for (const auto& p : problems)
        if (is_sweep(p) && p.m == s) sp = &p;
      if (!sp) continue;
      const Record* c = cublas_of(*sp);
      std::printf("\nf16 TN %s sweep, TFLOP/s (cuBLAS %s; mma.sync peak %.0f, in turns %.0f; * = fastest, "
                  "! = failed verification)\n",
                  sp->shape().c_str(), c ? fmt("%.1f", c->tflops).c_str() : "-", peak_of(DType::kF16),
                  c ? c->peak_now : NAN);
      std::printf("%-20s %5s %4s", "tile / warp tile", "warps", "regs");
      for (int st = 2; st <= 6; ++st) std::printf(" %8s", ("s" + std::to_string(st)).c_str());
      std::printf("   blocks/SM s2..s6\n");
      const Record* best = best_tilepipe(*sp);
      std::vector<TileConfig> tiles;
      for (const auto& k : kernels_)
        if (k.dtype == sp->dtype && k.layout == sp->layout &&
            std::none_of(tiles.begin(), tiles.end(), [&](const TileConfig& t) { return t.same_tile(k.config); }))
          tiles.push_back(k.config);
      for (const auto& t : tiles) {
        const std::string name = t.tile_name() + "/w" + std::to_string(t.warp_m) + "x" + std::to_string(t.warp_n);
        std::string occupancy;
        int regs = 0;
        std::printf("%-20s %5d", name.c_str(), t.warps());
        std::string cells;
        for (int st = 2; st <= 6; ++st) {
          TileConfig c2 = t;
          c2.stages = st;
          const Record* r = tilepipe_of(*sp, c2);
          std::string cell = "-";
          if (r) cell = fmt("%.1f", r->tflops) + (!r->verified ? "!" : (r == best ? "*" : ""));
          cells += " " + std::string(cell.size() < 8 ? 8 - cell.size() : 0, ' ') + cell;
          occupancy += r ? " " + std::to_string(r->resources.blocks_per_sm) : " -";
          if (r) regs = std::max(regs, r->resources.registers);
        }
        std::printf(" %4d%s  %s\n", regs, cells.c_str(), occupancy.c_str());
      }
    }

    // Summary: one row per problem.
    std::printf("\nAll problems, TFLOP/s. default = %s (GemmMultistage<4>: on an sm_90a device, its Hopper tier); best = fastest verified fixed tilepipe configuration timed on that problem;\n"
                "auto = tilepipe::GemmAuto (heuristic tile and split-K), with the configuration it chose.\n"
                "/peak = ratio to the mma.sync peak at the start of the run; /now = ratio to the peak timed in turns\n"
                "with the problem's configurations (the same clock).\n",
                kDefaultConfig.name().c_str());
    std::printf("%-5s %-3s %-18s %8s %6s | %8s %6s %6s %5s | %-22s %8s %6s %6s %5s | %-28s %8s %6s %6s | %s\n",
                "dtype", "lay", "M x N x K", "cuBLAS", "peak@", "default", "/cublas", "/peak", "/now", "best",
                "TFLOP/s", "/cublas", "/peak", "/now", "auto", "TFLOP/s", "/cublas", "/best", "check");
    for (const auto& p : problems) {
      const Record* c = cublas_of(p);
      if (!c) continue;
      const Record* d = tilepipe_of(p, kDefaultConfig);
      const Record* b = best_tilepipe(p);
      const Record* a = auto_of(p);
      int timed = 0, failed = c->verified ? 0 : 1;
      for (const auto& r : records_)
        if (!r.cublas && same_problem(r.problem, p)) {
          ++timed;
          failed += r.verified ? 0 : 1;
        }
      const std::string check = failed ? "FAILED " + std::to_string(failed) : "ok";
      const double auto_best = a && b && b->tflops > 0 ? a->tflops / b->tflops : NAN;
      std::printf("%-5s %-3s %-18s %8s %6s | %8s %6s %6s %5s | %-22s %8s %6s %6s %5s | %-28s %8s %6s %6s | %s (%d configs)\n",
                  name_of(p.dtype), name_of(p.layout), p.shape().c_str(), fmt("%.1f", c->tflops).c_str(),
                  fmt("%.0f", c->peak_now).c_str(),
                  d ? (fmt("%.1f", d->tflops) + (d->verified ? "" : "!")).c_str() : "-",
                  d ? fmt("%.2f", ratio_cublas(*d)).c_str() : "-",
                  d ? fmt("%.2f", ratio_peak(*d)).c_str() : "-",
                  d ? fmt("%.2f", ratio_peak_now(*d)).c_str() : "-",
                  b ? b->config.name().c_str() : "-", b ? fmt("%.1f", b->tflops).c_str() : "-",
                  b ? fmt("%.2f", ratio_cublas(*b)).c_str() : "-",
                  b ? fmt("%.2f", ratio_peak(*b)).c_str() : "-",
                  b ? fmt("%.2f", ratio_peak_now(*b)).c_str() : "-",
                  a ? a->auto_choice().name().c_str() : "-",
                  a ? (fmt("%.1f", a->tflops) + (a->verified ? "" : "!")).c_str() : "-",
                  a ? fmt("%.2f", ratio_cublas(*a)).c_str() : "-", fmt("%.2f", auto_best).c_str(),
                  check.c_str(), timed);
    }
    // The issue's target: GemmAuto at >= 0.5 x cuBLAS on every problem.
    int below = 0, with_auto = 0;
    double worst = INFINITY;
    const Record* worst_record = nullptr;
    for (const auto& p : problems)
      if (const Record* a = auto_of(p)) {
        ++with_auto;
        const double ratio = a->verified ? ratio_cublas(*a) : 0.0;
        if (!(ratio >= 0.5)) ++below;
        if (ratio < worst) {
          worst = ratio;
          worst_record = a;
        }
      }
    if (worst_record)
      std::printf("\nauto: %d of %d problems below 0.5 x cuBLAS; lowest %.2f x cuBLAS at %s (%s)\n", below,
                  with_auto, worst, worst_record->problem.key().c_str(), worst_record->config_name().c_str());
    std::fflush(stdout);
  }

  static std::string json_string(const std::string& s) {
    std::string out = "\"";
    for (char ch : s) {
      if (ch == '"' || ch == '\\') out += '\\';
      if (static_cast<unsigned char>(ch) < 0x20) continue;
      out += ch;
    }
    return out + "\"";
  }
  static std::string json_number(double x) {
    if (!std::isfinite(x)) return "null";
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.6g", x);
    return buf;
  }

  void write_json() const {
    std::FILE* f = std::fopen(o_.json_path.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "[bench] cannot write %s\n", o_.json_path.c_str());
      return;
    }
    int runtime = 0, driver = 0, cublas_version = 0;
    cudaRuntimeGetVersion(&runtime);
    cudaDriverGetVersion(&driver);
    cublasGetVersion(cublas_, &cublas_version);
    std::fprintf(f, "{\n  \"schema\": \"tilepipe-gemm-bench/3\",\n");
    std::fprintf(f, "  \"date\": %s,\n", json_string(date_utc()).c_str());
    std::fprintf(f, "  \"command\": %s,\n", json_string(o_.command_line).c_str());
    std::fprintf(f,
                 "  \"device\": {\"name\": %s, \"cc\": \"%d.%d\", \"sms\": %d, \"l2_bytes\": %d, "
                 "\"memory_bytes\": %zu, \"smem_optin_bytes\": %zu, \"cuda_runtime\": %d, "
                 "\"cuda_driver\": %d, \"cublas\": %d},\n",
                 json_string(prop_.name).c_str(), prop_.major, prop_.minor, prop_.multiProcessorCount,
                 prop_.l2CacheSize, prop_.totalGlobalMem, prop_.sharedMemPerBlockOptin, runtime, driver,
                 cublas_version);
    std::fprintf(f,
                 "  \"method\": {\"timing\": \"CUDA events around each run; runs launched back to back "
                 "behind a spin kernel; the configurations of a problem and the mma.sync peak kernel take turns over %d rounds, "
                 "forward in even rounds and backward in odd ones\", "
                 "\"statistic\": \"median\", \"rounds\": %d, \"warmup_runs\": %d, "
                 "\"min_runs\": %d, \"max_runs\": %d, \"target_ms\": %s, \"settle_ms\": %s, \"l2_factor\": %s, "
                 "\"verify\": \"relative Frobenius error vs cuBLAS f32 output\", "
                 "\"verify_threshold\": %s, \"inputs\": \"uniform [-1, 1)\"},\n",
                 kRounds, kRounds, kWarmupRuns, o_.min_runs, o_.max_runs, json_number(o_.target_ms).c_str(),
                 json_number(o_.settle_ms).c_str(),
                 json_number(kL2Factor).c_str(), json_number(kVerifyThreshold).c_str());
    std::fprintf(f, "  \"peak\": {");
    for (DType d : {DType::kF16, DType::kBF16}) {
      const PeakResult& pk = peak_[int(d)];
      std::fprintf(f,
                   "%s\"%s\": {\"tflops\": %s, \"tflops_end\": %s, \"median_ms\": %s, \"runs\": %d, "
                   "\"blocks\": %d, \"threads_per_block\": %d, \"chains_per_warp\": %d, \"iterations\": %d}",
                   d == DType::kF16 ? "" : ", ", name_of(d), json_number(pk.tflops).c_str(),
                   json_number(peak_end_[int(d)].tflops).c_str(),
                   json_number(pk.median_ms).c_str(), pk.runs, pk.blocks, pk.threads_per_block,
                   pk.chains_per_warp, pk.iterations);
    }
    std::fprintf(f, "},\n");
    std::fprintf(f, "  \"default_config\": %s,\n", json_string(kDefaultConfig.name()).c_str());
    std::fprintf(f, "  \"default_configs_by_stages\": {");
    for (std::size_t i = 0; i < std::size(kDefaultConfigsByStages); ++i)
      std::fprintf(f, "%s\"%d\": %s", i ? ", " : "", kDefaultConfigsByStages[i].stages,
                   json_string(kDefaultConfigsByStages[i].name()).c_str());
    std::fprintf(f, "},\n");
    std::fprintf(f, "  \"best_sweep_config\": %s,\n",
                 has_best_sweep_ ? json_string(best_sweep_.name()).c_str() : "null");
    std::fprintf(f, "  \"records\": [\n");
    for (std::size_t i = 0; i < records_.size(); ++i) {
      const Record& r = records_[i];
      const Problem& p = r.problem;
      std::fprintf(f,
                   "    {\"group\": \"%s\", \"m\": %d, \"n\": %d, \"k\": %d, \"dtype\": \"%s\", "
                   "\"layout\": \"%s\", \"kernel\": \"%s\", \"config\": %s, ",
                   p.group.c_str(), p.m, p.n, p.k, name_of(p.dtype), name_of(p.layout),
                   r.cublas ? "cublas" : r.is_auto ? "tilepipe-auto" : "tilepipe",
                   json_string(r.config_name()).c_str());
      if (!r.cublas)
        std::fprintf(f,
                     "\"tile\": [%d, %d, %d], \"warp\": [%d, %d], \"stages\": %d, \"default\": %s, "
                     "\"split_k\": %d, \"workspace_bytes\": %zu, "
                     "\"threads\": %d, \"smem_bytes\": %zu, \"registers\": %d, \"blocks_per_sm\": %d, ",
                     r.config.tile_m, r.config.tile_n, r.config.tile_k, r.config.warp_m,
                     r.config.warp_n, r.config.stages, r.is_default() ? "true" : "false", r.split_k,
                     r.workspace_bytes, r.threads, r.smem_bytes, r.resources.registers,
                     r.resources.blocks_per_sm);
      if (r.is_auto)
        std::fprintf(f, "\"auto_config\": %s, ", json_string(r.auto_choice().name()).c_str());
      std::fprintf(f,
                   "\"ms\": %s, \"ms_min\": %s, \"ms_q1\": %s, \"ms_q3\": %s, \"ms_max\": %s, "
                   "\"runs\": %d, \"sets\": %d, "
                   "\"tflops\": %s, \"ratio_cublas\": %s, \"ratio_peak\": %s, \"peak_now_tflops\": %s, "
                   "\"ratio_peak_now\": %s, \"rel_error\": %s, "
                   "\"nonfinite\": %llu, \"verified\": %s, \"error\": %s}%s\n",
                   json_number(r.median_ms).c_str(), json_number(r.min_ms).c_str(),
                   json_number(r.q1_ms).c_str(), json_number(r.q3_ms).c_str(),
                   json_number(r.max_ms).c_str(), r.runs, r.sets, json_number(r.tflops).c_str(),
                   json_number(ratio_cublas(r)).c_str(), json_number(ratio_peak(r)).c_str(),
                   json_number(r.peak_now).c_str(), json_number(ratio_peak_now(r)).c_str(),
                   json_number(r.rel_error).c_str(), r.nonfinite, r.verified ? "true" : "false",
                   json_string(r.error).c_str(), i + 1 < records_.size() ? "," : "");
    }
    std::fprintf(f, "  ]\n}\n");
    std::fclose(f);
    std::fprintf(stderr, "[bench] wrote %s (%zu records)\n", o_.json_path.c_str(), records_.size());
  }

 private:
  static cudaStream_t make_stream() {
    cudaStream_t s = nullptr;
    CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    return s;
  }

  const Options& o_;
  cudaStream_t stream_;
  Timer timer_;  // owns the events of the timed runs
  cudaDeviceProp prop_{};
  cublasHandle_t cublas_ = nullptr;
  double* sums_ = nullptr;  // err2, ref2, then the non-finite count
  std::vector<TilepipeKernel> kernels_;
  std::vector<AutoKernel> autos_;
  std::map<const TilepipeKernel*, KernelResources> resources_;
  MmaPeakKernel peak_f16_{DType::kF16, kPeakTurnIterations};  // timed in turns with each problem
  MmaPeakKernel peak_bf16_{DType::kBF16, kPeakTurnIterations};
  PeakResult peak_[2];      // measured before the problems
  PeakResult peak_end_[2];  // and after them
  std::vector<Problem> run_order_;
  std::vector<Record> records_;
  TileConfig best_sweep_{};
  int best_sweep_from_ = 0;
  bool has_best_sweep_ = false;
};

void usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--quick] [--json PATH] [--filter S1,S2,...] [--runs N] [--target-ms T]\n"
               "          [--settle-ms S] [--no-sweep] [--list]\n"
               "  --quick        a few sizes (squares 1024 and 4096, two model shapes), sweep at 4096 only\n"
               "  --json PATH    also write every measurement to PATH (scripts/plot_bench.py plots it)\n"
               "  --filter LIST  only problems whose key (dtype/layout/MxNxK, e.g. f16/tn/4096x4096x4096)\n"
               "                 contains one of the comma-separated strings\n"
               "  --runs N       at least N timed runs per configuration (default 20)\n"
               "  --target-ms T  more runs, up to 200, until they take about T ms of GPU time (default 100)\n"
               "  --settle-ms S  before each turn's timed runs, about S ms of untimed runs of the same\n"
               "                 configuration, so the clock settles to its power draw (default 0)\n"
               "  --no-sweep     skip the f16 TN tile x stage sweep\n"
               "  --list         list the compiled configurations and exit\n",
               argv0);
}

}  // namespace
}  // namespace tilepipe_bench

int main(int argc, char** argv) {
  using namespace tilepipe_bench;
  Options o;
  for (int i = 0; i < argc; ++i) o.command_line += (i ? " " : "") + std::string(argv[i]);
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        usage(argv[0]);
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--quick") o.quick = true;
    else if (arg == "--no-sweep") o.sweep = false;
    else if (arg == "--list") o.list = true;
    else if (arg == "--json") o.json_path = value();
    else if (arg == "--runs") o.min_runs = std::max(1, std::atoi(value().c_str()));
    else if (arg == "--target-ms") o.target_ms = std::max(0.0, std::atof(value().c_str()));
    else if (arg == "--settle-ms") o.settle_ms = std::max(0.0, std::atof(value().c_str()));
    else if (arg == "--filter") {
      const std::string list = value();
      std::size_t start = 0;
      while (start <= list.size()) {
        const std::size_t comma = std::min(list.find(',', start), list.size());
        if (comma > start) o.filters.push_back(list.substr(start, comma - start));
        start = comma + 1;
      }
    } else if (arg == "-h" || arg == "--help") {
      usage(argv[0]);
      return 0;
    } else {
      usage(argv[0]);
      return 2;
    }
  }
  o.max_runs = std::max(o.max_runs, o.min_runs);

  if (o.list) return list_kernels();
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::fprintf(stderr, "gemm_bench: no CUDA device found; this benchmark needs an sm_80+ GPU\n");
    return 1;
  }
  Bench bench(o);
  return bench.run_all();
}
