// The tables on stdout and the JSON file (report.cuh).
#include "report.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <iterator>
#include <string>
#include <vector>

#include "timer.cuh"
#include "verify.cuh"

namespace tilepipe_bench {
namespace {

std::string fmt(const char* f, double x) {
  if (std::isnan(x)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof(buf), f, x);
  return buf;
}

std::string date_utc() {
  char buf[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buf;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    if (static_cast<unsigned char>(ch) < 0x20) continue;
    out += ch;
  }
  return out + "\"";
}

std::string json_number(double x) {
  if (!std::isfinite(x)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.6g", x);
  return buf;
}

// GemmAuto / cuBLAS over every problem, over the irregular group, and over the others.
struct AutoSummaries {
  AutoSummary all, irregular, regular;
};

AutoSummaries auto_summaries(const Results& res) {
  return {res.auto_summary([](const Problem&) { return true; }),
          res.auto_summary([](const Problem& p) { return p.group == "irregular"; }),
          res.auto_summary([](const Problem& p) { return p.group != "irregular"; })};
}

// "worst 0.81 (f16/tn/1x4096x4096), geomean 1.01" (", 2 failed" where GemmAuto failed), or "-".
std::string summary_text(const AutoSummary& s) {
  if (s.problems == 0) return "-";
  return "worst " + fmt("%.2f", s.worst) + " (" + s.worst_key + "), geomean " +
         fmt("%.2f", s.geomean) + (s.failed ? ", " + std::to_string(s.failed) + " failed" : "");
}

// The run's one-line verdict on GemmAuto, last on stdout and in the JSON.
std::string summary_line(const AutoSummaries& s) {
  return "summary: GemmAuto / cuBLAS over " + std::to_string(s.all.problems) +
         " problems: " + summary_text(s.all) + "; irregular (" +
         std::to_string(s.irregular.problems) + "): " + summary_text(s.irregular) + "; regular (" +
         std::to_string(s.regular.problems) + "): " + summary_text(s.regular);
}

std::string summary_json(const AutoSummary& s) {
  return "{\"problems\": " + std::to_string(s.problems) +
         ", \"failed\": " + std::to_string(s.failed) + ", \"worst\": " + json_number(s.worst) +
         ", \"worst_problem\": " + (s.worst_key.empty() ? "null" : json_string(s.worst_key)) +
         ", \"geomean\": " + json_number(s.geomean) + "}";
}

// tilepipe against each peer: one row per problem, one group of columns per peer (cuBLAS first),
// each the peer's fastest verified configuration and tilepipe's default and best over it.
void print_peer_table(const Results& res, const std::vector<Problem>& problems) {
  const std::vector<std::string> peers = res.peers();
  std::printf(
      "\nAgainst the peers, TFLOP/s: each peer's fastest verified configuration timed on the "
      "problem;\n"
      "default/ and best/ = tilepipe's default and best configuration over it (above 1: tilepipe "
      "is faster).\n");
  std::printf("%-5s %-3s %-18s | %8s %8s %6s", "dtype", "lay", "M x N x K", "cuBLAS", "default/",
              "best/");
  for (const auto& peer : peers)
    std::printf(" | %-30s %8s %8s %6s", peer.c_str(), "TFLOP/s", "default/", "best/");
  std::printf("\n");
  for (const auto& p : problems) {
    const Record* c = res.cublas_of(p);
    if (!c || p.dtype == DType::kF32) continue;  // f32: its own table
    const Record* d = res.tilepipe_of(p, kDefaultConfig);
    const Record* b = res.best_tilepipe(p);
    auto over = [](const Record* r, const Record* peer) {
      return r && r->verified && peer && peer->tflops > 0 ? fmt("%.2f", r->tflops / peer->tflops)
                                                          : "-";
    };
    const Record* cv = c->verified ? c : nullptr;
    std::printf("%-5s %-3s %-18s | %8s %8s %6s", name_of(p.dtype), name_of(p.layout),
                p.shape().c_str(), cv ? fmt("%.1f", cv->tflops).c_str() : "-", over(d, cv).c_str(),
                over(b, cv).c_str());
    for (const auto& peer : peers) {
      const Record* r = res.best_peer(p, peer);
      std::printf(" | %-30s %8s %8s %6s", r ? r->peer_config.c_str() : "-",
                  r ? fmt("%.1f", r->tflops).c_str() : "-", over(d, r).c_str(), over(b, r).c_str());
    }
    std::printf("\n");
  }
}

// f32 inputs: each of tilepipe's two maths over cuBLAS's path of the same precision.
void print_f32_table(const Results& res, const std::vector<Problem>& problems) {
  std::printf(
      "\nf32 A, B and D, TFLOP/s: full f32 (tilepipe MathSimtF32, FFMA, over cuBLAS SGEMM, "
      "CUBLAS_COMPUTE_32F) and tf32 (tilepipe MathTF32 over cuBLAS CUBLAS_COMPUTE_32F_FAST_TF32); "
      "err = relative Frobenius error against SGEMM's result; ! = failed verification. tf32 "
      "runs on the Hopper tier (wgmma; NN after a K-major copy of A, timed with it) where the "
      "[bench] Hopper tier line lists it, else on mma.sync. tf32 has 3 stages, tf32-s4 4.\n");
  std::printf("%-3s %-18s | %11s %8s %5s %8s | %11s %8s %5s %8s %8s %5s\n", "lay", "M x N x K",
              "cublas-f32", "simt", "/cub", "err", "cublas-tf32", "tf32", "/cub", "err", "tf32-s4",
              "/cub");
  auto tflops = [](const Record* r) {
    return r ? fmt("%.1f", r->tflops) + (r->verified ? "" : "!") : std::string("-");
  };
  auto over = [](const Record* r, const Record* c) {
    return r && r->verified && c && c->verified && c->tflops > 0
               ? fmt("%.2f", r->tflops / c->tflops)
               : "-";
  };
  auto err = [](const Record* r) { return r ? fmt("%.1e", r->rel_error) : std::string("-"); };
  for (const auto& p : problems) {
    if (p.dtype != DType::kF32) continue;
    const Record* c32 = res.cublas_of(p);
    const Record* ctf = res.cublas_of(p, /*tf32=*/true);
    const Record* simt = res.tilepipe_of(p, MathKind::kSimtF32);
    // The f32 default tile under MathTF32 with `stages` stages (configs_f32.cu: 3 and 4).
    auto tf32_of = [&](int stages) -> const Record* {
      for (const Record& r : res.records)
        if (r.is_fixed_config() && r.config.math == MathKind::kTF32 && r.config.stages == stages &&
            same_problem(r.problem, p))
          return &r;
      return nullptr;
    };
    const Record* tf32 = tf32_of(3);
    const Record* tf32_s4 = tf32_of(4);
    std::printf("%-3s %-18s | %11s %8s %5s %8s | %11s %8s %5s %8s %8s %5s\n", name_of(p.layout),
                p.shape().c_str(), tflops(c32).c_str(), tflops(simt).c_str(),
                over(simt, c32).c_str(), err(simt).c_str(), tflops(ctf).c_str(),
                tflops(tf32).c_str(), over(tf32, ctf).c_str(), err(tf32).c_str(),
                tflops(tf32_s4).c_str(), over(tf32_s4, ctf).c_str());
  }
}

}  // namespace

void print_tables(const Results& res, const RunInfo& run) {
  const std::vector<Problem>& problems = run.problems->problems();
  const cudaDeviceProp& prop = run.prop;
  int runtime = 0, driver = 0;
  const int cublas_version = run.cublas_version;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  std::printf("\n# tilepipe gemm_bench: %s (sm_%d%d, %d SMs, L2 %d MiB), %s\n", prop.name,
              prop.major, prop.minor, prop.multiProcessorCount, prop.l2CacheSize >> 20,
              date_utc().c_str());
  std::printf("# CUDA runtime %d, driver %d, cuBLAS %d. TFLOP/s = 2*M*N*K / median time.\n",
              runtime, driver, cublas_version);
  std::printf(
      "\nmma.sync m16n8k16 peak (register-only microbenchmark): f16 %.1f TFLOP/s, bf16 %.1f "
      "TFLOP/s "
      "(at the end of the run: %.1f, %.1f)\n",
      res.peak_of(DType::kF16), res.peak_of(DType::kBF16), res.peak_end[int(DType::kF16)].tflops,
      res.peak_end[int(DType::kBF16)].tflops);

  // Sweep tables: tiles x stages, at each sweep size.
  for (int s : {2048, 4096, 8192}) {
    const Problem* sp = nullptr;
    for (const auto& p : problems)
      if (run.problems->is_sweep(p) && p.m == s) sp = &p;
    if (!sp) continue;
    const Record* c = res.cublas_of(*sp);
    std::printf(
        "\nf16 TN %s sweep, TFLOP/s (cuBLAS %s; mma.sync peak %.0f, in turns %.0f; * = fastest, "
        "! = failed verification)\n",
        sp->shape().c_str(), c ? fmt("%.1f", c->tflops).c_str() : "-", res.peak_of(DType::kF16),
        c ? c->peak_now : NAN);
    std::printf("%-20s %5s %4s", "tile / warp tile", "warps", "regs");
    for (int st = 2; st <= 6; ++st) std::printf(" %8s", ("s" + std::to_string(st)).c_str());
    std::printf("   blocks/SM s2..s6\n");
    const Record* best = res.best_tilepipe(*sp);
    std::vector<TileConfig> tiles;
    for (const auto& k : *run.kernels)
      if (k.dtype == sp->dtype && k.layout == sp->layout &&
          std::none_of(tiles.begin(), tiles.end(),
                       [&](const TileConfig& t) { return t.same_tile(k.config); }))
        tiles.push_back(k.config);
    for (const auto& t : tiles) {
      const std::string name =
          t.tile_name() + "/w" + std::to_string(t.warp_m) + "x" + std::to_string(t.warp_n);
      std::string occupancy;
      int regs = 0;
      std::printf("%-20s %5d", name.c_str(), t.warps());
      std::string cells;
      for (int st = 2; st <= 6; ++st) {
        TileConfig c2 = t;
        c2.stages = st;
        const Record* r = res.tilepipe_of(*sp, c2);
        std::string cell = "-";
        if (r) cell = fmt("%.1f", r->tflops) + (!r->verified ? "!" : (r == best ? "*" : ""));
        cells += " " + std::string(cell.size() < 8 ? 8 - cell.size() : 0, ' ') + cell;
        occupancy += r ? " " + std::to_string(r->resources.blocks_per_sm) : " -";
        if (r) regs = std::max(regs, r->resources.registers);
      }
      std::printf(" %4d%s  %s\n", regs, cells.c_str(), occupancy.c_str());
    }
  }

  // The other peers, where the build has any (TILEPIPE_BENCH_CUTLASS).
  if (!res.peers().empty()) print_peer_table(res, problems);
  if (std::any_of(problems.begin(), problems.end(),
                  [](const Problem& p) { return p.dtype == DType::kF32; }))
    print_f32_table(res, problems);

  // Summary: one row per problem.
  std::printf(
      "\nAll problems, TFLOP/s. default = %s (GemmMultistage<4>: on an sm_90a device, its Hopper "
      "tier); best = fastest verified fixed tilepipe configuration timed on that problem;\n"
      "auto = tilepipe::GemmAuto (heuristic tile and split-K), with the configuration it chose.\n"
      "/peak = ratio to the mma.sync peak at the start of the run; /now = ratio to the peak timed "
      "in turns\n"
      "with the problem's configurations (the same clock). check: failed verifications, the "
      "configurations timed besides cuBLAS, and those whose own checks refused the problem "
      "(skipped).\n",
      kDefaultConfig.name().c_str());
  std::printf(
      "%-5s %-3s %-18s %8s %6s | %8s %6s %6s %5s | %-22s %8s %6s %6s %5s | %-28s %8s %6s %6s | "
      "%s\n",
      "dtype", "lay", "M x N x K", "cuBLAS", "peak@", "default", "/cublas", "/peak", "/now", "best",
      "TFLOP/s", "/cublas", "/peak", "/now", "auto", "TFLOP/s", "/cublas", "/best", "check");
  for (const auto& p : problems) {
    const Record* c = res.cublas_of(p);
    if (!c || p.dtype == DType::kF32) continue;  // f32: its own table
    const Record* d = res.tilepipe_of(p, kDefaultConfig);
    const Record* b = res.best_tilepipe(p);
    const Record* a = res.auto_of(p);
    int timed = 0, skipped = 0, failed = c->verified ? 0 : 1;
    for (const auto& r : res.records)
      if (!r.cublas && same_problem(r.problem, p)) {
        if (r.is_skipped()) {
          ++skipped;
          continue;
        }
        ++timed;
        failed += r.verified ? 0 : 1;
      }
    const std::string check = (failed ? "FAILED " + std::to_string(failed) : "ok") + " (" +
                              std::to_string(timed) + " configs" +
                              (skipped ? ", " + std::to_string(skipped) + " refused" : "") + ")";
    const double auto_best = a && b && b->tflops > 0 ? a->tflops / b->tflops : NAN;
    std::printf(
        "%-5s %-3s %-18s %8s %6s | %8s %6s %6s %5s | %-22s %8s %6s %6s %5s | %-28s %8s %6s %6s | "
        "%s\n",
        name_of(p.dtype), name_of(p.layout), p.shape().c_str(), fmt("%.1f", c->tflops).c_str(),
        fmt("%.0f", c->peak_now).c_str(),
        d ? (fmt("%.1f", d->tflops) + (d->verified ? "" : "!")).c_str() : "-",
        d ? fmt("%.2f", res.ratio_cublas(*d)).c_str() : "-",
        d ? fmt("%.2f", res.ratio_peak(*d)).c_str() : "-",
        d ? fmt("%.2f", res.ratio_peak_now(*d)).c_str() : "-", b ? b->config.name().c_str() : "-",
        b ? fmt("%.1f", b->tflops).c_str() : "-",
        b ? fmt("%.2f", res.ratio_cublas(*b)).c_str() : "-",
        b ? fmt("%.2f", res.ratio_peak(*b)).c_str() : "-",
        b ? fmt("%.2f", res.ratio_peak_now(*b)).c_str() : "-", a ? a->auto_name.c_str() : "-",
        a ? (fmt("%.1f", a->tflops) + (a->verified ? "" : "!")).c_str() : "-",
        a ? fmt("%.2f", res.ratio_cublas(*a)).c_str() : "-", fmt("%.2f", auto_best).c_str(),
        check.c_str());
  }
  // The issue's target: GemmAuto at >= 0.5 x cuBLAS on every problem.
  int below = 0, with_auto = 0;
  double worst = INFINITY;
  const Record* worst_record = nullptr;
  for (const auto& p : problems)
    if (const Record* a = res.auto_of(p)) {
      ++with_auto;
      const double ratio = a->verified ? res.ratio_cublas(*a) : 0.0;
      if (!(ratio >= 0.5)) ++below;
      if (ratio < worst) {
        worst = ratio;
        worst_record = a;
      }
    }
  if (worst_record)
    std::printf("\nauto: %d of %d problems below 0.5 x cuBLAS; lowest %.2f x cuBLAS at %s (%s)\n",
                below, with_auto, worst, worst_record->problem.key().c_str(),
                worst_record->config_name().c_str());
  std::printf("\n%s\n", summary_line(auto_summaries(res)).c_str());
  std::fflush(stdout);
}

void write_json(const Results& res, const RunInfo& run) {
  const Options& o = *run.options;
  const cudaDeviceProp& prop = run.prop;
  std::FILE* f = std::fopen(o.json_path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "[bench] cannot write %s\n", o.json_path.c_str());
    return;
  }
  int runtime = 0, driver = 0;
  const int cublas_version = run.cublas_version;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  // Schema 4: the peers (top-level "peers", their records' "kernel", "ratio_peers"). Schema 5:
  // the group "irregular", records' "skipped" (why the kernel refused the problem, else null),
  // and "summary" (GemmAuto / cuBLAS: the text's summary line, and its numbers).
  std::fprintf(f, "{\n  \"schema\": \"tilepipe-gemm-bench/5\",\n");
  std::fprintf(f, "  \"date\": %s,\n", json_string(date_utc()).c_str());
  std::fprintf(f, "  \"command\": %s,\n", json_string(o.command_line).c_str());
  std::fprintf(f,
               "  \"device\": {\"name\": %s, \"cc\": \"%d.%d\", \"sms\": %d, \"l2_bytes\": %d, "
               "\"memory_bytes\": %zu, \"smem_optin_bytes\": %zu, \"cuda_runtime\": %d, "
               "\"cuda_driver\": %d, \"cublas\": %d},\n",
               json_string(prop.name).c_str(), prop.major, prop.minor, prop.multiProcessorCount,
               prop.l2CacheSize, prop.totalGlobalMem, prop.sharedMemPerBlockOptin, runtime, driver,
               cublas_version);
  std::fprintf(
      f,
      "  \"method\": {\"timing\": \"CUDA events around each run; runs launched back to back "
      "behind a spin kernel; the configurations of a problem and the mma.sync peak kernel take "
      "turns over %d rounds, "
      "each round in its own order, shuffled with a seed of the problem's\", "
      "\"statistic\": \"median\", \"rounds\": %d, \"warmup_runs\": %d, "
      "\"min_runs\": %d, \"max_runs\": %d, \"target_ms\": %s, \"settle_ms\": %s, \"l2_factor\": "
      "%s, "
      "\"verify\": \"relative Frobenius error vs cuBLAS f32 output\", "
      "\"verify_threshold\": %s, \"inputs\": \"uniform [-1, 1)\"},\n",
      kRounds, kRounds, kWarmupRuns, o.min_runs, o.max_runs, json_number(o.target_ms).c_str(),
      json_number(o.settle_ms).c_str(), json_number(kL2Factor).c_str(),
      json_number(kVerifyThreshold).c_str());
  std::fprintf(f, "  \"peak\": {");
  for (DType d : {DType::kF16, DType::kBF16}) {
    const PeakResult& pk = res.peak[int(d)];
    std::fprintf(
        f,
        "%s\"%s\": {\"tflops\": %s, \"tflops_end\": %s, \"median_ms\": %s, \"runs\": %d, "
        "\"blocks\": %d, \"threads_per_block\": %d, \"chains_per_warp\": %d, \"iterations\": %d}",
        d == DType::kF16 ? "" : ", ", name_of(d), json_number(pk.tflops).c_str(),
        json_number(res.peak_end[int(d)].tflops).c_str(), json_number(pk.median_ms).c_str(),
        pk.runs, pk.blocks, pk.threads_per_block, pk.chains_per_warp, pk.iterations);
  }
  std::fprintf(f, "},\n");
  std::fprintf(f, "  \"default_config\": %s,\n", json_string(kDefaultConfig.name()).c_str());
  std::fprintf(f, "  \"default_configs_by_stages\": {");
  for (std::size_t i = 0; i < std::size(kDefaultConfigsByStages); ++i)
    std::fprintf(f, "%s\"%d\": %s", i ? ", " : "", kDefaultConfigsByStages[i].stages,
                 json_string(kDefaultConfigsByStages[i].name()).c_str());
  std::fprintf(f, "},\n");
  std::fprintf(f, "  \"best_sweep_config\": %s,\n",
               res.has_best_sweep ? json_string(res.best_sweep.name()).c_str() : "null");
  const std::vector<std::string> peers = res.peers();
  std::fprintf(f, "  \"peers\": [");
  for (std::size_t i = 0; i < peers.size(); ++i)
    std::fprintf(f, "%s%s", i ? ", " : "", json_string(peers[i]).c_str());
  std::fprintf(f, "],\n");
  const AutoSummaries sums = auto_summaries(res);
  std::fprintf(f,
               "  \"summary\": {\"line\": %s, \"all\": %s, \"irregular\": %s, \"regular\": %s},\n",
               json_string(summary_line(sums)).c_str(), summary_json(sums.all).c_str(),
               summary_json(sums.irregular).c_str(), summary_json(sums.regular).c_str());
  std::fprintf(f, "  \"records\": [\n");
  for (std::size_t i = 0; i < res.records.size(); ++i) {
    const Record& r = res.records[i];
    const Problem& p = r.problem;
    std::fprintf(f,
                 "    {\"group\": \"%s\", \"m\": %d, \"n\": %d, \"k\": %d, \"dtype\": \"%s\", "
                 "\"layout\": \"%s\", \"kernel\": \"%s\", \"config\": %s, ",
                 p.group.c_str(), p.m, p.n, p.k, name_of(p.dtype), name_of(p.layout),
                 r.cublas      ? "cublas"
                 : r.is_auto   ? "tilepipe-auto"
                 : r.is_peer() ? r.peer.c_str()
                               : "tilepipe",
                 json_string(r.config_name()).c_str());
    if (r.is_peer()) std::fprintf(f, "\"workspace_bytes\": %zu, ", r.workspace_bytes);
    else if (!r.cublas)
      std::fprintf(
          f,
          "\"tile\": [%d, %d, %d], \"warp\": [%d, %d], \"stages\": %d, \"default\": %s, "
          "\"split_k\": %d, \"workspace_bytes\": %zu, "
          "\"threads\": %d, \"smem_bytes\": %zu, \"registers\": %d, \"blocks_per_sm\": %d, ",
          r.config.tile_m, r.config.tile_n, r.config.tile_k, r.config.warp_m, r.config.warp_n,
          r.config.stages, r.is_default() ? "true" : "false", r.split_k, r.workspace_bytes,
          r.threads, r.smem_bytes, r.resources.registers, r.resources.blocks_per_sm);
    if (r.is_auto) std::fprintf(f, "\"auto_config\": %s, ", json_string(r.auto_name).c_str());
    if (!r.is_peer()) {
      // Over the fastest verified configuration of each peer on the problem.
      std::fprintf(f, "\"ratio_peers\": {");
      for (std::size_t j = 0; j < peers.size(); ++j)
        std::fprintf(f, "%s%s: %s", j ? ", " : "", json_string(peers[j]).c_str(),
                     json_number(res.ratio_peer(r, peers[j])).c_str());
      std::fprintf(f, "}, ");
    }
    std::fprintf(
        f,
        "\"ms\": %s, \"ms_min\": %s, \"ms_q1\": %s, \"ms_q3\": %s, \"ms_max\": %s, "
        "\"runs\": %d, \"sets\": %d, "
        "\"tflops\": %s, \"ratio_cublas\": %s, \"ratio_peak\": %s, \"peak_now_tflops\": %s, "
        "\"ratio_peak_now\": %s, \"rel_error\": %s, "
        "\"nonfinite\": %llu, \"verified\": %s, \"error\": %s, \"skipped\": %s}%s\n",
        json_number(r.median_ms).c_str(), json_number(r.min_ms).c_str(),
        json_number(r.q1_ms).c_str(), json_number(r.q3_ms).c_str(), json_number(r.max_ms).c_str(),
        r.runs, r.sets, json_number(r.tflops).c_str(), json_number(res.ratio_cublas(r)).c_str(),
        json_number(res.ratio_peak(r)).c_str(), json_number(r.peak_now).c_str(),
        json_number(res.ratio_peak_now(r)).c_str(), json_number(r.rel_error).c_str(), r.nonfinite,
        r.verified ? "true" : "false", json_string(r.error).c_str(),
        r.is_skipped() ? json_string(r.skipped).c_str() : "null",
        i + 1 < res.records.size() ? "," : "");
  }
  std::fprintf(f, "  ]\n}\n");
  std::fclose(f);
  std::fprintf(stderr, "[bench] wrote %s (%zu records)\n", o.json_path.c_str(), res.records.size());
}

}  // namespace tilepipe_bench
