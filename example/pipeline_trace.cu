// Example: a picture of the pipeline. Built with TILEPIPE_TRACE, the GEMM's kernels record, for
// the first blocks, when each warp issued a k-tile's copies, when its wait for the k-tile
// returned and when its MMAs on it ended (trace/trace.cuh). This program runs
// GemmMultistage<f16, TN, Stages = 4> on each tier the device has, checks that the records are
// causal (no warp's wait for a k-tile returns before the k-tile's copies were issued, no MMAs end
// before their wait), prints where the time went, and with `--out PREFIX` writes
// PREFIX-<tier>.json (Chrome trace events: open in https://ui.perfetto.dev) and PREFIX-<tier>.png
// (one row per warp, k-tiles coloured by ring slot, stalls grey, copy issues as black ticks).
//
// Usage: pipeline_trace [M N K] [--out PREFIX]   (default 4096 4096 4096; 2 blocks traced)

#define TILEPIPE_TRACE
#include <tilepipe/tilepipe.cuh>
#include <tilepipe/trace/render.hpp>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <vector>

using Gemm = tilepipe::GemmMultistage<__half, __half, tilepipe::Layout::kRowMajor,
                                      tilepipe::Layout::kColumnMajor, /*Stages=*/4>;
namespace trace = tilepipe::trace;

__global__ void fill(__half* p, long long n, unsigned seed) {
  for (long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    p[i] = __float2half(static_cast<float>((i * 2654435761u + seed) % 7) - 3.0f);
}

// The causality of the records: every k-tile a warp waited for was issued (by some warp of the
// block) before the wait returned, and each kMmaDone(k) of a warp comes after its kWaitDone(k).
static int check_causality(const std::vector<trace::Record>& records) {
  std::map<std::pair<unsigned, unsigned>, std::uint64_t> issued;  // (block, k) -> first issue
  for (const trace::Record& r : records)
    if (r.event == unsigned(trace::Event::kLoadIssued)) {
      auto key = std::make_pair(r.block, r.k_tile);
      auto it = issued.find(key);
      if (it == issued.end() || r.time_ns < it->second) issued[key] = r.time_ns;
    }
  std::map<std::tuple<unsigned, unsigned, unsigned>, std::uint64_t> waited;  // (block, warp, k)
  int bad = 0;
  for (const trace::Record& r : records) {
    const auto key = std::make_tuple(r.block, r.warp, r.k_tile);
    if (r.event == unsigned(trace::Event::kWaitDone)) {
      waited[key] = r.time_ns;
      auto it = issued.find(std::make_pair(r.block, r.k_tile));
      if (it == issued.end() || it->second > r.time_ns) ++bad;  // computed on data never issued
    } else if (r.event == unsigned(trace::Event::kMmaDone)) {
      auto it = waited.find(key);
      if (it == waited.end() || it->second > r.time_ns) ++bad;  // MMAs before their wait
    }
  }
  return bad;
}

int main(int argc, char** argv) {
  int m = 4096, n = 4096, k = 4096;
  std::string out;
  std::vector<int> dims;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--out") == 0 && i + 1 < argc) out = argv[++i];
    else dims.push_back(std::atoi(argv[i]));
  }
  if (dims.size() == 3) {
    m = dims[0];
    n = dims[1];
    k = dims[2];
  } else if (!dims.empty() || m < 1 || n < 1 || k < 8 || k % 8 != 0) {
    std::fprintf(stderr, "usage: %s [M N K] [--out PREFIX]   (K a multiple of 8)\n", argv[0]);
    return 2;
  }
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    std::fprintf(stderr, "pipeline_trace: no CUDA device found\n");
    return 1;
  }
  __half *a, *b, *d;
  trace::Record* records;
  unsigned* count;
  constexpr unsigned kCapacity = 1u << 20;
  if (cudaMalloc(&a, sizeof(__half) * m * k) != cudaSuccess ||
      cudaMalloc(&b, sizeof(__half) * n * k) != cudaSuccess ||
      cudaMalloc(&d, sizeof(__half) * m * n) != cudaSuccess ||
      cudaMalloc(&records, sizeof(trace::Record) * kCapacity) != cudaSuccess ||
      cudaMalloc(&count, sizeof(unsigned)) != cudaSuccess) {
    std::fprintf(stderr, "pipeline_trace: cudaMalloc failed\n");
    return 1;
  }
  fill<<<1024, 256>>>(a, 1LL * m * k, 1);
  fill<<<1024, 256>>>(b, 1LL * n * k, 2);
  Gemm::Arguments args;
  args.m = m;
  args.n = n;
  args.k = k;
  args.a = a;
  args.lda = k;
  args.b = b;
  args.ldb = k;
  args.d = d;
  args.ldd = n;

  int failures = 0;
  for (tilepipe::GemmTier tier : {tilepipe::GemmTier::kHopper, tilepipe::GemmTier::kAmpere}) {
    const char* name = tilepipe::to_string(tier);
    if (tier == tilepipe::GemmTier::kHopper && Gemm::tier(args) != tier) {
      std::printf("pipeline_trace: %s tier: not on this device/build, skipped\n", name);
      continue;
    }
    (void)Gemm::run_on(tier, args);  // warm-up, untraced
    cudaMemset(count, 0, sizeof(unsigned));
    if (trace::attach(trace::DeviceBuffer{records, kCapacity, /*max_blocks=*/2, count}) !=
        cudaSuccess) {
      std::fprintf(stderr, "pipeline_trace: attach failed\n");
      return 1;
    }
    const tilepipe::Status s = Gemm::run_on(tier, args);
    const cudaError_t e = cudaDeviceSynchronize();
    trace::attach(trace::DeviceBuffer{});  // later launches record nothing
    if (!s || e != cudaSuccess) {
      std::fprintf(stderr, "pipeline_trace: %s tier: %s\n", name,
                   s ? cudaGetErrorString(e) : s.what());
      return 1;
    }
    unsigned n_records = 0;
    cudaMemcpy(&n_records, count, sizeof n_records, cudaMemcpyDeviceToHost);
    std::vector<trace::Record> host(n_records < kCapacity ? n_records : kCapacity);
    cudaMemcpy(host.data(), records, host.size() * sizeof(trace::Record), cudaMemcpyDeviceToHost);
    const int bad = host.empty() ? 1 : check_causality(host);
    failures += bad;
    std::printf(
        "pipeline_trace: %s tier, %dx%dx%d, %zu records of 2 blocks, %d causality violations: "
        "%s\n%s",
        name, m, n, k, host.size(), bad, bad == 0 ? "OK" : "FAILED",
        trace::summary(host, Gemm::kStages).c_str());
    if (!out.empty()) {
      const std::string json = trace::to_chrome_json(host, Gemm::kStages);
      const bool ok =
          trace::write_file(out + "-" + name + ".json",
                            std::vector<std::uint8_t>(json.begin(), json.end())) &&
          trace::write_file(out + "-" + name + ".png", trace::render_png(host, Gemm::kStages));
      std::printf("  %s %s-%s.json and .png\n", ok ? "wrote" : "could not write", out.c_str(),
                  name);
      if (!ok) ++failures;
    }
  }
  cudaFree(a);
  cudaFree(b);
  cudaFree(d);
  cudaFree(records);
  cudaFree(count);
  return failures == 0 ? 0 : 1;
}
