#pragma once
//! \file
//! What a run of gemm_bench found: one Record per configuration and problem (tilepipe's, GemmAuto,
//! cuBLAS and the other peers), the mma.sync peak at the start and the end, and the lookups and
//! ratios that the tables and the JSON report.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "bench_common.cuh"
#include "problems.cuh"

namespace tilepipe_bench {

struct Record {
  Problem problem;
  bool cublas = false;
  bool cublas_tf32 = false;  // f32 problems: cuBLAS with CUBLAS_COMPUTE_32F_FAST_TF32 (else SGEMM)
  bool is_auto = false;      // GemmAuto: `config` and `split_k` are what its heuristic chose
  std::string peer;          // another library's kernel (PeerKernel::peer, e.g. "cutlass-sm90")
  std::string peer_config;   // and its configuration (PeerKernel::config)
  TileConfig config{};       // tilepipe only
  int split_k = 1;
  std::size_t workspace_bytes = 0;  // GemmAuto's, tf32 NN's copy of A, a peer's
  std::string auto_name;            // GemmAuto's choice (AutoChoice::name)
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
  // Why the kernel's own argument check refused the problem (e.g. an odd leading dimension for a
  // kernel of 16-byte accesses): neither run nor counted as a failure.
  std::string skipped;

  std::string config_name() const {
    if (cublas) return cublas_tf32 ? "cublas-tf32" : "cublas";
    if (is_peer()) return peer_config;
    if (is_auto) return "auto(" + auto_name + ")";
    return config.name();
  }
  bool is_peer() const { return !peer.empty(); }
  // One of tilepipe's compiled configurations.
  bool is_fixed_config() const { return !cublas && !is_auto && !is_peer(); }
  bool is_default() const { return is_fixed_config() && config == kDefaultConfig; }
  bool is_skipped() const { return !skipped.empty(); }
};

//! GemmAuto over cuBLAS on a set of problems: those with a GemmAuto record and a verified cuBLAS
//! one (Results::auto_summary).
struct AutoSummary {
  int problems = 0;
  int failed = 0;         // where GemmAuto failed or did not run: ratio 0 for `worst`
  double worst = NAN;     // the lowest GemmAuto / cuBLAS
  std::string worst_key;  // its problem (Problem::key)
  double geomean = NAN;   // of the ratios of the problems GemmAuto passed
};

struct Results {
  PeakResult peak[2];      // measured before the problems, by DType (f16, bf16; none for f32)
  PeakResult peak_end[2];  // and after them
  std::vector<Record> records;
  // The f16 TN sweep's fastest configuration, timed on the other problems (4096's if it ran).
  TileConfig best_sweep{};
  int best_sweep_from = 0;
  bool has_best_sweep = false;

  // cuBLAS on p: its f32-compute GEMM (SGEMM for f32), or for f32 its tf32 one.
  const Record* cublas_of(const Problem& p, bool tf32 = false) const {
    for (const auto& r : records)
      if (r.cublas && r.cublas_tf32 == tf32 && same_problem(r.problem, p)) return &r;
    return nullptr;
  }
  // The fixed configuration of `math` on p, verified or not (the f32 table's tf32 and SIMT: one
  // each).
  const Record* tilepipe_of(const Problem& p, MathKind math) const {
    for (const auto& r : records)
      if (r.is_fixed_config() && r.config.math == math && same_problem(r.problem, p)) return &r;
    return nullptr;
  }
  const Record* tilepipe_of(const Problem& p, const TileConfig& c) const {
    for (const auto& r : records)
      if (r.is_fixed_config() && r.config == c && same_problem(r.problem, p)) return &r;
    return nullptr;
  }
  const Record* auto_of(const Problem& p) const {
    for (const auto& r : records)
      if (r.is_auto && same_problem(r.problem, p)) return &r;
    return nullptr;
  }
  // The fastest verified fixed configuration (GemmAuto's result is reported on its own).
  const Record* best_tilepipe(const Problem& p) const {
    const Record* best = nullptr;
    for (const auto& r : records)
      if (r.is_fixed_config() && r.verified && same_problem(r.problem, p) &&
          (!best || r.tflops > best->tflops))
        best = &r;
    return best;
  }
  // The fastest verified configuration of a peer ("cutlass-sm80", ...) on p.
  const Record* best_peer(const Problem& p, const std::string& name) const {
    const Record* best = nullptr;
    for (const auto& r : records)
      if (r.peer == name && r.verified && same_problem(r.problem, p) &&
          (!best || r.tflops > best->tflops))
        best = &r;
    return best;
  }
  // The peers timed in this run (besides cuBLAS), in the order they first ran.
  std::vector<std::string> peers() const {
    std::vector<std::string> names;
    for (const auto& r : records)
      if (r.is_peer() && std::find(names.begin(), names.end(), r.peer) == names.end())
        names.push_back(r.peer);
    return names;
  }
  // The mma.sync m16n8k16 peak: of f16 or bf16 (none for f32, whose paths have other ceilings).
  double peak_of(DType d) const { return d == DType::kF32 ? NAN : peak[int(d)].tflops; }
  // Over cuBLAS of the same precision: a tf32 configuration over cuBLAS's tf32 GEMM.
  double ratio_cublas(const Record& r) const {
    const Record* c = cublas_of(r.problem, r.config.math == MathKind::kTF32);
    return c && c->tflops > 0 ? r.tflops / c->tflops : NAN;
  }
  double ratio_peak(const Record& r) const { return r.tflops / peak_of(r.problem.dtype); }
  static double ratio_peak_now(const Record& r) { return r.tflops / r.peak_now; }
  // GemmAuto / cuBLAS over the problems that `selects` (a predicate on Problem) keeps.
  template <class Selects>
  AutoSummary auto_summary(Selects selects) const {
    AutoSummary s;
    double log_sum = 0;
    int passed = 0;
    for (const auto& r : records) {
      const Record* c = r.is_auto && selects(r.problem) ? cublas_of(r.problem) : nullptr;
      if (!c || !c->verified || !(c->tflops > 0)) continue;
      ++s.problems;
      const double ratio = r.verified ? r.tflops / c->tflops : 0.0;
      if (r.verified) {
        log_sum += std::log(ratio);
        ++passed;
      } else {
        ++s.failed;
      }
      if (s.worst_key.empty() || ratio < s.worst) {
        s.worst = ratio;
        s.worst_key = r.problem.key();
      }
    }
    if (passed) s.geomean = std::exp(log_sum / passed);
    return s;
  }
  // r's speed over the fastest verified configuration of a peer on r's problem.
  double ratio_peer(const Record& r, const std::string& name) const {
    const Record* b = best_peer(r.problem, name);
    return b && b->tflops > 0 ? r.tflops / b->tflops : NAN;
  }
};

}  // namespace tilepipe_bench
