// w8a16_bench: tilepipe::GemmMixedInput (f16 activations x int8 weights with groups of 128; also
// fp8 e4m3 weights, "e4m3") against the f16 GEMMs it replaces, tilepipe::GemmAuto and cuBLAS
// (cublasGemmEx, f32 compute), at decode shapes: M in {1, 16, 128} x N = K in {4096, 14336}, A
// row-major, B column-major (PyTorch's Linear.weight), D row-major f16.
//
//   w8a16_bench [--runs N] [--split-k-reduction auto|cluster|workspace]
//
// Method: enough input sets (A, B, scales, D) that one pass over them covers 3x the L2, used in
// turn, so that B comes from memory as in a model's forward pass; per configuration 5 warm-up
// runs, then N timed runs (default 200) each bracketed by its own CUDA events; the median is
// reported, in microseconds. Every configuration is first checked once: W8A16 against cuBLAS on
// the dequantized weights (relative Frobenius error < 1e-2), GemmAuto against cuBLAS.
// W8A16 runs with GemmMixedInput::split_k_for's factor ("rule") and with each split of 1 to 16
// ("best" names the fastest; with --split-k-reduction cluster, splits of up to 8); e4m3 with the
// rule's factor. --split-k-reduction sets GemmMixedInput's split_k_reduction (default auto: the
// cluster reduction on sm_90 for up to 8 slices, else the workspace's). Exit status: 0 if every
// check passed, 3 if one did not, 1 on a CUDA error, 2 on usage.

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include <tilepipe/gemm/gemm_heuristic.cuh>
#include <tilepipe/gemm/gemm_mixed_input.cuh>

namespace {

using tilepipe::Layout;
using W8A16 = tilepipe::GemmMixedInput<__half, std::int8_t, __half>;
using E4M3 = tilepipe::GemmMixedInput<__half, __nv_fp8_e4m3, __half>;
using Auto = tilepipe::GemmAuto<__half, __half, Layout::kRowMajor, Layout::kColumnMajor,
                                tilepipe::Identity, /*AnyAlignment=*/false>;
constexpr int kGroup = 128;

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "w8a16_bench: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// Deterministic pseudo-random inputs, drawn on the device: A and the f16 B uniform in [-1, 1),
// int8 B over -128 .. 127, scales in [1/512, 1/256) so that dequantized weights are about as
// large as the f16 ones.
__device__ std::uint32_t hash(std::uint64_t i, std::uint32_t seed) {
  std::uint64_t x = i * 0x9E3779B97F4A7C15ull + seed;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  return static_cast<std::uint32_t>(x >> 16);
}
__global__ void fill_f16(__half* p, std::int64_t n, std::uint32_t seed, float lo, float width) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    p[i] = __float2half(lo + width * (hash(i, seed) & 0xFFFF) / 65536.0f);
}
__global__ void fill_s8(std::int8_t* p, std::int64_t n, std::uint32_t seed) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    p[i] = static_cast<std::int8_t>(hash(i, seed) & 0xFF);
}
// B (N x K, K contiguous) dequantized to f16: b * scale[k / group][n]; the same bytes read as
// int8 or as e4m3 (NaN patterns read as zero).
template <class Stored>
__global__ void dequantize(__half* out, const std::int8_t* b, const __half* scale, int n, int k) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
       i < std::int64_t(n) * k; i += std::int64_t(gridDim.x) * blockDim.x) {
    const int col = static_cast<int>(i / k), kk = static_cast<int>(i % k);
    float v = b[i];
    if constexpr (std::is_same_v<Stored, __nv_fp8_e4m3>) {
      __nv_fp8_e4m3 e;
      e.__x = static_cast<__nv_fp8_storage_t>(b[i]);
      v = (b[i] & 0x7F) == 0x7F ? 0.0f : float(e);
    }
    out[i] = __float2half(v * __half2float(scale[std::int64_t(kk / kGroup) * n + col]));
  }
}
// The int8 bytes as e4m3 weights: NaN patterns (S.1111.111) become zeros.
__global__ void clear_e4m3_nans(std::int8_t* p, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    if ((p[i] & 0x7F) == 0x7F) p[i] = 0;
}

struct Sets {
  std::vector<__half*> a, b16, scale, d;
  std::vector<std::int8_t*> b8;
};

double rel_error(const __half* d, const __half* ref, std::int64_t n) {
  std::vector<__half> x(n), y(n);
  check_cuda(cudaMemcpy(x.data(), d, n * 2, cudaMemcpyDeviceToHost), "copy D");
  check_cuda(cudaMemcpy(y.data(), ref, n * 2, cudaMemcpyDeviceToHost), "copy reference");
  double num = 0, den = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double a = __half2float(x[i]), b = __half2float(y[i]);
    if (!std::isfinite(a)) return INFINITY;
    num += (a - b) * (a - b);
    den += b * b;
  }
  return std::sqrt(num / (den > 0 ? den : 1));
}

// Median time in microseconds of `runs` runs of `launch(set)`, sets in turn.
double time_us(const std::function<void(int)>& launch, int sets, int runs) {
  for (int i = 0; i < 5; ++i) launch(i % sets);
  std::vector<cudaEvent_t> ev(runs + 1);
  for (auto& e : ev) check_cuda(cudaEventCreate(&e), "cudaEventCreate");
  check_cuda(cudaEventRecord(ev[0]), "cudaEventRecord");
  for (int i = 0; i < runs; ++i) {
    launch(i % sets);
    check_cuda(cudaEventRecord(ev[i + 1]), "cudaEventRecord");
  }
  check_cuda(cudaEventSynchronize(ev[runs]), "timed runs");
  std::vector<float> ms(runs);
  for (int i = 0; i < runs; ++i)
    check_cuda(cudaEventElapsedTime(&ms[i], ev[i], ev[i + 1]), "elapsed");
  for (auto& e : ev) cudaEventDestroy(e);
  std::nth_element(ms.begin(), ms.begin() + runs / 2, ms.end());
  return 1000.0 * ms[runs / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 200;
  using tilepipe::SplitKReduction;
  SplitKReduction reduction = SplitKReduction::kAuto;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
      runs = std::max(1, std::atoi(argv[++i]));
    else if (std::strcmp(argv[i], "--split-k-reduction") == 0 && i + 1 < argc) {
      const std::string r = argv[++i];
      if (r == "auto") reduction = SplitKReduction::kAuto;
      else if (r == "cluster") reduction = SplitKReduction::kCluster;
      else if (r == "workspace") reduction = SplitKReduction::kWorkspace;
      else {
        std::fprintf(stderr, "w8a16_bench: --split-k-reduction auto, cluster or workspace\n");
        return 2;
      }
    } else {
      std::fprintf(stderr,
                   "usage: w8a16_bench [--runs N] [--split-k-reduction auto|cluster|workspace]\n");
      return 2;
    }
  }
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, 0),
             "no CUDA device (this benchmark needs an sm_80+ GPU)");
  cublasHandle_t cublas;
  if (cublasCreate(&cublas) != CUBLAS_STATUS_SUCCESS) return 1;
  std::printf(
      "w8a16_bench on %s (%d SMs), median of %d runs, microseconds; group %d; split-K "
      "reduction %s\n",
      prop.name, prop.multiProcessorCount, runs, kGroup, tilepipe::to_string(reduction).c_str());
  std::printf("%6s %6s %6s | %9s %9s | %9s %5s %9s %5s | %8s %8s | %9s\n", "M", "N", "K", "cuBLAS",
              "auto", "w8a16", "split", "best", "split", "vs cuBLAS", "vs auto", "e4m3");

  int status = 0;
  const int ms_[] = {1, 16, 128};
  const int nks[] = {4096, 14336};
  for (const int nk : nks) {
    const int n = nk, k = nk;
    // Sets of B (f16, the larger) covering 3x the L2, at least 2.
    const std::int64_t b16_bytes = std::int64_t(n) * k * 2;
    const int sets =
        std::max<std::int64_t>(2, (3 * std::int64_t(prop.l2CacheSize) + b16_bytes - 1) / b16_bytes);
    for (const int m : ms_) {
      Sets s;
      for (int i = 0; i < sets; ++i) {
        __half *a, *b16, *scale, *d;
        std::int8_t* b8;
        check_cuda(cudaMalloc(&a, std::int64_t(m) * k * 2), "cudaMalloc A");
        check_cuda(cudaMalloc(&b16, b16_bytes), "cudaMalloc B");
        check_cuda(cudaMalloc(&b8, std::int64_t(n) * k), "cudaMalloc B int8");
        check_cuda(cudaMalloc(&scale, std::int64_t(k / kGroup) * n * 2), "cudaMalloc scale");
        check_cuda(cudaMalloc(&d, std::int64_t(m) * n * 2), "cudaMalloc D");
        fill_f16<<<1024, 256>>>(a, std::int64_t(m) * k, 11 + i, -1.0f, 2.0f);
        fill_f16<<<1024, 256>>>(b16, std::int64_t(n) * k, 23 + i, -1.0f / 64, 2.0f / 64);
        fill_s8<<<1024, 256>>>(b8, std::int64_t(n) * k, 37 + i);
        clear_e4m3_nans<<<1024, 256>>>(b8, std::int64_t(n) * k);  // so that e4m3 can read them too
        fill_f16<<<1024, 256>>>(scale, std::int64_t(k / kGroup) * n, 41 + i, 1.0f / 512,
                                1.0f / 512);
        s.a.push_back(a);
        s.b16.push_back(b16);
        s.b8.push_back(b8);
        s.scale.push_back(scale);
        s.d.push_back(d);
      }
      check_cuda(cudaDeviceSynchronize(), "fill");
      __half* ref;
      check_cuda(cudaMalloc(&ref, std::int64_t(m) * n * 2), "cudaMalloc reference");

      const float one = 1.0f, zero = 0.0f;
      auto cublas_run = [&](const __half* b, const __half* a, __half* d) {
        cublasGemmEx(cublas, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, b, CUDA_R_16F, k, a,
                     CUDA_R_16F, k, &zero, d, CUDA_R_16F, n, CUBLAS_COMPUTE_32F,
                     CUBLAS_GEMM_DEFAULT);
      };
      const double t_cublas =
          time_us([&](int i) { cublas_run(s.b16[i], s.a[i], s.d[i]); }, sets, runs);

      // GemmAuto f16, with its workspace.
      tilepipe::GemmArguments<__half, __half> fa;
      fa.m = m;
      fa.n = n;
      fa.k = k;
      fa.lda = k;
      fa.ldb = k;
      fa.ldd = n;
      fa.a = s.a[0];
      fa.b = s.b16[0];
      fa.d = s.d[0];
      const std::size_t auto_ws = Auto::workspace_size(fa);
      void* ws_auto = nullptr;
      if (auto_ws > 0) check_cuda(cudaMalloc(&ws_auto, auto_ws), "cudaMalloc auto workspace");
      fa.workspace = ws_auto;
      fa.workspace_bytes = auto_ws;
      auto auto_run = [&](int i) {
        tilepipe::GemmArguments<__half, __half> x = fa;
        x.a = s.a[i];
        x.b = s.b16[i];
        x.d = s.d[i];
        const tilepipe::Status st = Auto::run(x);
        if (!st) {
          std::fprintf(stderr, "w8a16_bench: GemmAuto: %s\n", st.what());
          std::exit(1);
        }
      };
      auto_run(0);
      cublas_run(s.b16[0], s.a[0], ref);
      check_cuda(cudaDeviceSynchronize(), "GemmAuto check");
      const double e_auto = rel_error(s.d[0], ref, std::int64_t(m) * n);
      const double t_auto = time_us(auto_run, sets, runs);

      // W8A16 with each split factor; checked against cuBLAS on the dequantized set 0.
      W8A16::Arguments wa;
      wa.m = m;
      wa.n = n;
      wa.k = k;
      wa.lda = k;
      wa.ldb = k;
      wa.ldd = n;
      wa.group = kGroup;
      wa.split_k_reduction = reduction;
      const int rule = W8A16::split_k_for(wa, prop.multiProcessorCount);
      __half* deq = s.b16[0];  // set 0's f16 B becomes the dequantized int8 B, then e4m3 B
      dequantize<std::int8_t><<<1024, 256>>>(deq, s.b8[0], s.scale[0], n, k);
      cublas_run(deq, s.a[0], ref);
      double t_rule = 0, t_best = INFINITY, e_w8 = 0;
      int best = 1;
      for (int split = 1; split <= 16; split *= 2) {
        wa.split_k = split;
        if (reduction == SplitKReduction::kCluster &&
            W8A16::split_k_slices(wa).count > W8A16::kMaxClusterSlices)
          continue;
        wa.a = s.a[0];
        wa.b = s.b8[0];
        wa.scale = s.scale[0];
        wa.d = s.d[0];
        const std::size_t bytes = W8A16::workspace_size(wa);
        void* ws = nullptr;
        if (bytes > 0) check_cuda(cudaMalloc(&ws, bytes), "cudaMalloc workspace");
        wa.workspace = ws;
        wa.workspace_bytes = bytes;
        auto run = [&](int i) {
          W8A16::Arguments x = wa;
          x.a = s.a[i];
          x.b = s.b8[i];
          x.scale = s.scale[i];
          x.d = s.d[i];
          const tilepipe::Status st = W8A16::run(x);
          if (!st) {
            std::fprintf(stderr, "w8a16_bench: GemmMixedInput: %s\n", st.what());
            std::exit(1);
          }
        };
        check_cuda(cudaMemset(s.d[0], 0xFF, std::int64_t(m) * n * 2), "poison D");
        run(0);
        check_cuda(cudaDeviceSynchronize(), "GemmMixedInput check");
        e_w8 = std::max(e_w8, rel_error(s.d[0], ref, std::int64_t(m) * n));
        const double t = time_us(run, sets, runs);
        if (split == rule) t_rule = t;
        if (t < t_best) {
          t_best = t;
          best = split;
        }
        cudaFree(ws);
      }
      // e4m3 weights (the same bytes), the rule's split.
      dequantize<__nv_fp8_e4m3><<<1024, 256>>>(deq, s.b8[0], s.scale[0], n, k);
      cublas_run(deq, s.a[0], ref);
      E4M3::Arguments ea;
      ea.m = m;
      ea.n = n;
      ea.k = k;
      ea.lda = k;
      ea.ldb = k;
      ea.ldd = n;
      ea.group = kGroup;
      ea.split_k = rule;
      ea.split_k_reduction = reduction;
      const std::size_t e_bytes = E4M3::workspace_size(ea);
      void* ws_e4m3 = nullptr;
      if (e_bytes > 0) check_cuda(cudaMalloc(&ws_e4m3, e_bytes), "cudaMalloc workspace");
      ea.workspace = ws_e4m3;
      ea.workspace_bytes = e_bytes;
      auto e4m3_run = [&](int i) {
        E4M3::Arguments x = ea;
        x.a = s.a[i];
        x.b = reinterpret_cast<const __nv_fp8_e4m3*>(s.b8[i]);
        x.scale = s.scale[i];
        x.d = s.d[i];
        const tilepipe::Status st = E4M3::run(x);
        if (!st) {
          std::fprintf(stderr, "w8a16_bench: GemmMixedInput e4m3: %s\n", st.what());
          std::exit(1);
        }
      };
      check_cuda(cudaMemset(s.d[0], 0xFF, std::int64_t(m) * n * 2), "poison D");
      e4m3_run(0);
      check_cuda(cudaDeviceSynchronize(), "GemmMixedInput e4m3 check");
      const double e_e4m3 = rel_error(s.d[0], ref, std::int64_t(m) * n);
      const double t_e4m3 = time_us(e4m3_run, sets, runs);
      cudaFree(ws_e4m3);

      const bool ok = e_w8 < 1e-2 && e_auto < 1e-2 && e_e4m3 < 1e-2;
      if (!ok) status = 3;
      std::printf("%6d %6d %6d | %9.2f %9.2f | %9.2f %5d %9.2f %5d | %7.2fx %7.2fx | %9.2f%s\n", m,
                  n, k, t_cublas, t_auto, t_rule, rule, t_best, best, t_cublas / t_rule,
                  t_auto / t_rule, t_e4m3, ok ? "" : "  CHECK FAILED");
      if (!ok)
        std::printf("  relative errors: w8a16 %.3g, auto %.3g, e4m3 %.3g\n", e_w8, e_auto, e_e4m3);
      std::fflush(stdout);

      cudaFree(ws_auto);
      cudaFree(ref);
      for (int i = 0; i < sets; ++i) {
        cudaFree(s.a[i]);
        cudaFree(s.b16[i]);
        cudaFree(s.b8[i]);
        cudaFree(s.scale[i]);
        cudaFree(s.d[i]);
      }
    }
  }
  cublasDestroy(cublas);
  return status;
}
