// The benchmark's run: problems in run order, each verified and timed in turns (bench.cuh).
#include "bench.cuh"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <random>
#include <string>

#include <tilepipe/gemm/kernel_sm90.cuh>

#include "catalog.cuh"
#include "check.cuh"
#include "peer_cublas.cuh"
#include "report.cuh"

namespace tilepipe_bench {

Bench::Bench(const Options& o) : o_(o), problems_(o), stream_(make_stream()), timer_(stream_, o) {
  CHECK_CUDA(cudaGetDeviceProperties(&prop_, 0));
  CHECK_CUBLAS(cublasCreate(&cublas_));
  CHECK_CUBLAS(cublasSetStream(cublas_, stream_));
  kernels_ = all_kernels();
  autos_ = all_auto_kernels();
  peers_ = all_peer_kernels();
  if (int missing = missing_candidates(kernels_, autos_))
    std::fprintf(stderr, "[bench] warning: %d candidate configurations are not compiled\n",
                 missing);
}

Bench::~Bench() {
  cublasDestroy(cublas_);
  cudaStreamDestroy(stream_);
}

cudaStream_t Bench::make_stream() {
  cudaStream_t s = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return s;
}

// run_problem in run order (sweep first); tables in problem order.
int Bench::run_all() {
  std::fprintf(stderr, "[bench] %s, sm_%d%d, %d SMs, L2 %d MiB, %zu kernels compiled\n", prop_.name,
               prop_.major, prop_.minor, prop_.multiProcessorCount, prop_.l2CacheSize >> 20,
               kernels_.size());
  // Configurations with GemmMultistage's default tile, and f32 under MathTF32, run the Hopper
  // tier where the device runs sm_90a code: their names are the Ampere tile's, their kernels
  // GemmSm90's (for f32 the tf32 rows of the f32 table; NN after a K-major copy of A, timed with
  // it).
  int device = 0;
  if (cudaGetDevice(&device) == cudaSuccess && tilepipe::hopper_tier_available(device)) {
    std::string hopper;
    for (const TilepipeKernel& k : kernels_)
      if (k.hopper_tier &&
          ((k.dtype == DType::kF16 && k.layout == LayoutPair::kTN) || k.dtype == DType::kF32))
        hopper +=
            std::string(" ") + name_of(k.dtype) + " " + name_of(k.layout) + " " + k.config.name();
    std::fprintf(stderr,
                 "[bench] Hopper tier (TMA + wgmma, GemmSm90: 128x256 tile up to 4 stages, "
                 "128x128 above; k 64 a slot, 32 for f32 as tf32) runs these "
                 "configurations:%s\n",
                 hopper.c_str());
  }
  if (!peers_.empty()) {
    std::string runs, skipped;
    for (const PeerKernel& k : peers_) {
      std::string& list = k.runs_on(prop_) ? runs : skipped;
      if (list.find(k.peer) == std::string::npos)
        list += std::string(list.empty() ? "" : ", ") + k.peer;
    }
    std::fprintf(stderr, "[bench] peers: %s%s%s\n", runs.empty() ? "none" : runs.c_str(),
                 skipped.empty() ? "" : "; not on this device: ", skipped.c_str());
  }
  for (DType d : {DType::kF16, DType::kBF16}) {
    PeakResult& peak = results_.peak[int(d)];
    peak = measure_mma_peak(d, 20, stream_);
    std::fprintf(stderr,
                 "[bench] mma.sync m16n8k16 %s peak: %.1f TFLOP/s (median %.3f ms of %d runs)\n",
                 name_of(d), peak.tflops, peak.median_ms, peak.runs);
  }
  std::fprintf(stderr, "[bench] %zu problems\n", problems_.problems().size());
  std::uint64_t seed = 1;
  for (const Problem& p : problems_.run_order()) run_problem(p, seed++);
  // Again at the end: the clock of a shared GPU drifts, and the ratios to the peak are only as
  // good as the peak is for the whole run.
  for (DType d : {DType::kF16, DType::kBF16}) {
    results_.peak_end[int(d)] = measure_mma_peak(d, 20, stream_);
    std::fprintf(stderr, "[bench] mma.sync m16n8k16 %s peak at the end: %.1f TFLOP/s\n", name_of(d),
                 results_.peak_end[int(d)].tflops);
  }
  RunInfo run;
  run.options = &o_;
  run.prop = prop_;
  cublasGetVersion(cublas_, &run.cublas_version);
  run.problems = &problems_;
  run.kernels = &kernels_;
  print_tables(results_, run);
  if (!o_.json_path.empty()) write_json(results_, run);
  int failures = 0, skipped = 0;
  for (const Record& r : results_.records) {
    skipped += r.is_skipped() ? 1 : 0;
    failures += r.verified || r.is_skipped() ? 0 : 1;
  }
  if (skipped)
    std::fprintf(stderr, "[bench] %d configurations refused their problem (skipped: see above)\n",
                 skipped);
  if (failures)
    std::fprintf(stderr, "[bench] %d results FAILED verification or did not run\n", failures);
  return failures ? 3 : 0;
}

std::vector<const TilepipeKernel*> Bench::plan(const Problem& p) const {
  std::vector<const TilepipeKernel*> out;
  auto add = [&](const TileConfig& c) {
    const TilepipeKernel* k = find_kernel(kernels_, p.dtype, p.layout, c);
    if (k && std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
  };
  if (problems_.is_sweep(p) || p.dtype == DType::kF32) {  // f32: its few kernels, all of them
    for (const auto& k : kernels_)
      if (k.dtype == p.dtype && k.layout == p.layout) out.push_back(&k);
    return out;
  }
  add(kDefaultConfig);
  if (p.is_f16_tn() && p.group == "square")  // the plot's lines: the default at s2..s6
    for (const TileConfig& c : kDefaultConfigsByStages) add(c);
  if (p.flops() < kHugeFlops)
    for (const auto& c : kCandidateConfigs) add(c);
  if (results_.has_best_sweep) add(results_.best_sweep);
  return out;
}

void Bench::run_problem(const Problem& p, std::uint64_t seed) {
  Buffers buf;
  std::string why;
  if (!make_buffers(p, std::size_t(prop_.l2CacheSize), seed, stream_, &buf, &why)) {
    std::fprintf(stderr, "[bench] %s: skipped (%s)\n", p.key().c_str(), why.c_str());
    return;
  }
  // The reference: cuBLAS with f32 output (and for f32 inputs, SGEMM's full f32), on set 0.
  CHECK_CUBLAS(cublas_gemm(cublas_, p, buf.a_of(0), buf.b_of(0), buf.ref, CUDA_R_32F));
  CHECK_CUDA(cudaStreamSynchronize(stream_));
  const cudaDataType_t d_type = cuda_type_of(p.dtype);

  // Every configuration of the problem (cuBLAS, the compiled tilepipe ones, GemmAuto, the other
  // peers') is verified once, then all are timed in kRounds rounds, each taking its turn in every
  // round, so that a change of the GPU's clock during the problem moves all of them alike.
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
      const cublasStatus_t st =
          cublas_gemm(cublas_, p, buf.a_of(s), buf.b_of(s), buf.d_of(s), d_type);
      return st == CUBLAS_STATUS_SUCCESS
                 ? ""
                 : std::string("cublasGemmEx: ") + cublasGetStatusString(st);
    };
    entries.push_back({r, launch});
  }
  // For f32 inputs, cuBLAS's tf32 GEMM too: the peer of tilepipe's MathTF32, as SGEMM is of
  // MathSimtF32.
  if (p.dtype == DType::kF32) {
    Record r;
    r.problem = p;
    r.cublas = true;
    r.cublas_tf32 = true;
    Launch launch = [&, d_type](int s) -> std::string {
      const cublasStatus_t st = cublas_gemm(cublas_, p, buf.a_of(s), buf.b_of(s), buf.d_of(s),
                                            d_type, CUBLAS_COMPUTE_32F_FAST_TF32);
      return st == CUBLAS_STATUS_SUCCESS
                 ? ""
                 : std::string("cublasGemmEx (tf32): ") + cublasGetStatusString(st);
    };
    entries.push_back({r, launch});
  }
  // tilepipe, each with the workspace it asks for (tf32 NN: the K-major copy of A, made inside
  // the timed call); a configuration whose checks refuse the problem is skipped, with the reason.
  std::vector<void*> workspaces;
  for (const TilepipeKernel* k : plan(p)) {
    Record r;
    r.problem = p;
    r.config = k->config;
    r.smem_bytes = k->smem_bytes;
    r.threads = k->threads;
    r.resources = resources_of(k);
    r.workspace_bytes = k->workspace_size(operands_of(p, buf, 0));
    void* workspace = nullptr;
    if (r.workspace_bytes > 0) {
      CHECK_CUDA(cudaMalloc(&workspace, r.workspace_bytes));
      workspaces.push_back(workspace);
    }
    Operands checked = operands_of(p, buf, 0);
    checked.workspace = workspace;
    checked.workspace_bytes = r.workspace_bytes;
    if (const tilepipe::Status st = k->can_implement(checked); !st) r.skipped = st.message();
    Launch launch = [&, k, workspace, bytes = r.workspace_bytes](int s) -> std::string {
      Operands op = operands_of(p, buf, s);
      op.workspace = workspace;
      op.workspace_bytes = bytes;
      const tilepipe::Status st = k->run(op, stream_);
      return st ? "" : st.message();
    };
    entries.push_back({r, launch});
  }
  // GemmAuto: the heuristic's choice for the operands (unaligned ones run Medium's narrow kernel),
  // with the workspace GemmAuto::workspace_size asks for on this device, allocated here, outside
  // the timed runs (every input set has set 0's alignment: kSetAlignment).
  void* auto_workspace = nullptr;
  if (const AutoKernel* ak = find_auto_kernel(autos_, p.dtype, p.layout)) {
    const Operands op0 = operands_of(p, buf, 0);
    const AutoChoice choice = ak->select(op0, prop_.multiProcessorCount);
    Record r;
    r.problem = p;
    r.is_auto = true;
    r.config = choice.config;
    r.split_k = choice.split_k;
    r.auto_name = choice.name();
    r.workspace_bytes = ak->workspace_size(op0);
    // Shared memory, threads and registers of the chosen tile's ordinary kernel, when the
    // benchmark compiles that configuration too and it takes these operands (with split-K another
    // kernel runs first; on the Hopper tier, or for unaligned operands, none of the table's).
    const TilepipeKernel* k =
        choice.hopper ? nullptr : find_kernel(kernels_, p.dtype, p.layout, choice.config);
    if (k && k->can_implement(op0)) {
      r.smem_bytes = k->smem_bytes;
      r.threads = k->threads;
      r.resources = resources_of(k);
    }
    if (r.workspace_bytes > 0) CHECK_CUDA(cudaMalloc(&auto_workspace, r.workspace_bytes));
    Launch launch = [&, ak, bytes = r.workspace_bytes](int s) -> std::string {
      Operands op = operands_of(p, buf, s);
      op.workspace = auto_workspace;
      op.workspace_bytes = bytes;
      const tilepipe::Status st = ak->run(op, stream_);
      return st ? "" : st.message();
    };
    entries.push_back({r, launch});
  }
  // The other peers' kernels (peers.cuh) that run on this device, each with the workspace it
  // asks for; those that refuse the problem are skipped, with the reason.
  std::vector<void*> peer_workspaces;
  for (const PeerKernel& k : peers_) {
    if (k.dtype != p.dtype || k.layout != p.layout || !k.runs_on(prop_)) continue;
    Record r;
    r.problem = p;
    r.peer = k.peer;
    r.peer_config = k.config;
    r.workspace_bytes = k.workspace_size(operands_of(p, buf, 0));
    void* peer_workspace = nullptr;
    if (r.workspace_bytes > 0) {
      CHECK_CUDA(cudaMalloc(&peer_workspace, r.workspace_bytes));
      peer_workspaces.push_back(peer_workspace);
    }
    Operands checked = operands_of(p, buf, 0);
    checked.workspace = peer_workspace;
    checked.workspace_bytes = r.workspace_bytes;
    r.skipped = k.refuses(checked);
    Launch launch = [&, peer = &k, peer_workspace,
                     bytes = r.workspace_bytes](int s) -> std::string {
      Operands op = operands_of(p, buf, s);
      op.workspace = peer_workspace;
      op.workspace_bytes = bytes;
      return peer->run(op, stream_);
    };
    entries.push_back({r, launch});
  }

  for (Entry& e : entries) verify(e.r, e.launch, buf);
  // One more turn per round: the register-only mma.sync kernel, i.e. the peak at the clock the
  // GPU keeps while this problem is measured (the start-of-run peak may be ~10% off by then). f32
  // problems take bf16's turn for the same schedule, but report no peak: f32's paths have other
  // ceilings.
  const MmaPeakKernel& peak_kernel = p.dtype == DType::kF16 ? peak_f16_ : peak_bf16_;
  const std::size_t turns = entries.size() + 1;
  const Launch peak_launch = [&](int) -> std::string {
    peak_kernel.launch(stream_);
    return "";
  };
  std::vector<std::vector<float>> samples(turns);
  const int min_runs_per_round = (o_.min_runs + kRounds - 1) / kRounds;
  // Every round takes the turns in an order of its own, shuffled with a seed of the problem's
  // (the same orders in every run). Under a power cap a configuration runs faster after lighter
  // kernels than after heavy ones, so in a fixed order, or a fixed order and its reverse, a
  // configuration whose neighbours are always light is always favoured: the default and GemmAuto,
  // one kernel, measured 0.91-1.00 of each other at 4096^3 and 8192^3 that way (performance log,
  // entries 10 and 36).
  std::vector<std::size_t> order(turns);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::uint32_t order_seed = 2166136261u;  // FNV-1a of the problem's key
  for (const char c : p.key())
    order_seed = (order_seed ^ static_cast<unsigned char>(c)) * 16777619u;
  std::mt19937 rng(order_seed);
  for (int round = 0; round < kRounds; ++round) {
    std::shuffle(order.begin(), order.end(), rng);
    for (const std::size_t i : order) {
      if (i == entries.size()) {
        std::string error;
        if (!timer_.time(peak_launch, 1, o_.target_ms / kRounds, min_runs_per_round, &samples[i],
                         &error))
          std::fprintf(stderr, "[bench] peak in turns: %s\n", error.c_str());
        CHECK_CUDA(cudaGetLastError());
        continue;
      }
      Record& r = entries[i].r;
      if (!r.error.empty() || r.is_skipped()) continue;
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
  std::fprintf(stderr, "[bench] %-24s mma.sync peak in turns %.1f TFLOP/s\n", p.key().c_str(),
               peak_now);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    entries[i].r.peak_now = p.dtype == DType::kF32 ? NAN : peak_now;
    finish(entries[i].r, samples[i]);
  }
  CHECK_CUDA(cudaStreamSynchronize(stream_));
  if (auto_workspace) cudaFree(auto_workspace);
  for (void* w : workspaces) cudaFree(w);
  for (void* w : peer_workspaces) cudaFree(w);
  buf.release();
  if (problems_.is_sweep(p)) update_best_sweep(p);
}

KernelResources Bench::resources_of(const TilepipeKernel* k) {
  auto it = resources_.find(k);
  if (it == resources_.end()) it = resources_.emplace(k, k->resources()).first;
  return it->second;
}

void Bench::verify(Record& r, const Launch& launch, const Buffers& buf) {
  if (r.is_skipped()) return;
  r.sets = buf.sets;
  CHECK_CUDA(cudaMemsetAsync(buf.d_of(0), 0xFF, buf.elem_bytes * buf.elems_d, stream_));  // NaN
  std::string error = launch(0);
  if (error.empty()) {
    CHECK_CUDA(cudaGetLastError());
    const Comparison c = verifier_.compare(r.problem, buf, prop_.multiProcessorCount * 8, stream_);
    r.rel_error = c.rel_error;
    r.nonfinite = c.nonfinite;
    r.verified = c.passed();
  } else {
    r.error = error;
    r.verified = false;
  }
  CHECK_CUDA(cudaGetLastError());
}

void Bench::finish(Record& r, const std::vector<float>& samples) {
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
  if (r.is_skipped())
    std::fprintf(stderr, "[bench] %-24s %-22s skipped: %s\n", p.key().c_str(),
                 r.config_name().c_str(), r.skipped.c_str());
  else
    std::fprintf(stderr, "[bench] %-24s %-22s %8.4f ms %7.1f TFLOP/s  err %.2e  %s%s%s\n",
                 p.key().c_str(), r.config_name().c_str(), r.median_ms, r.tflops, r.rel_error,
                 r.verified ? "ok" : "FAILED", r.error.empty() ? "" : ": ", r.error.c_str());
  results_.records.push_back(r);
}

void Bench::update_best_sweep(const Problem& p) {
  if (results_.has_best_sweep && results_.best_sweep_from == 4096)
    return;  // 4096's best is the one used
  const Record* best = results_.best_tilepipe(p);
  if (!best) return;
  results_.best_sweep = best->config;
  results_.best_sweep_from = p.m;
  results_.has_best_sweep = true;
  std::fprintf(stderr, "[bench] best f16 TN configuration at %s: %s (%.1f TFLOP/s)\n",
               p.shape().c_str(), results_.best_sweep.name().c_str(), best->tflops);
}

}  // namespace tilepipe_bench
