// gemm_bench: tilepipe::GemmMultistage against cuBLAS and against the mma.sync ceiling, in one run.
//
//   gemm_bench [--quick] [--json PATH] [--filter S1,S2,...] [--runs N] [--target-ms T]
//              [--settle-ms S] [--no-sweep] [--list]
//
// 1. Measures the mma.sync m16n8k16 f32-accumulate peak (f16 and bf16) with a register-only
//    microbenchmark (mma_peak.cu).
// 2. For every problem (problems.cuh: square M = N = K from 512 to 16384; the model shapes M in
//    {16, 128, 1024, 8192} x (N, K) in {(4096, 4096), (14336, 4096), (4096, 14336)}; the edge
//    problem 1000 x 3000 x 4104; for f16 and bf16, TN and NN; and the irregular group: decode with
//    M from 1 to 128, few tiles with long K, odd sizes and leading dimensions, partial last waves),
//    times cuBLAS (cublasGemmEx, f32 compute, D in the input type) and a set of GemmMultistage
//    configurations: the whole tile x stage sweep for f16 TN at 2048, 4096 and 8192; elsewhere the
//    default (DefaultGemmPolicy<4>: 256x128x64 in a build for sm_90 only, else 256x128x32), the
//    candidates of kCandidateConfigs, the best configuration of the f16 TN sweep at 4096, and for
//    f16 TN squares DefaultGemmPolicy<S> for S = 2..6. At 16384^3 only the default, the best of the
//    sweep and (f16 TN) the defaults of every stage count.
//    On every problem also "auto": tilepipe::GemmAuto (any alignment), whose heuristic picks the
//    tile and the split-K factor (with a workspace); its choice is in the summary and the JSON.
//    A kernel whose own checks refuse a problem (odd leading dimensions) is skipped, with the
//    reason; cuBLAS and GemmAuto run every problem. Where the default runs the Hopper tier, the
//    default tile at 3 and 4 stages on the Ampere tier too, as the peer column "tilepipe-ampere"
//    (configs_ampere_tier.cu).
//    f32 A, B and D at the squares 2048 and 4096, TN and NN: tilepipe's f32 default tile under
//    MathTF32 and MathSimtF32 against cuBLAS's tf32 GEMM (CUBLAS_COMPUTE_32F_FAST_TF32) and SGEMM
//    (CUBLAS_COMPUTE_32F, also the reference), in a table of their own.
// 3. Prints a table per sweep size, the f32 table, one summary table and, LAST on stdout, the
//    summary line: GemmAuto's worst ratio to cuBLAS (and where) and the geometric mean of the
//    ratios, over every problem, the irregular group and the rest. Writes a JSON file (--json),
//    the summary included, that scripts/plot_bench.py turns into a plot. Progress goes to stderr.
//
// Method (docs/performance.md says more): inputs uniform in [-1, 1) drawn on the device; enough
// input sets (A, B, D) that one pass over them covers 3x the L2, used in turn; each configuration
// is first run once on poisoned output and checked against a cuBLAS f32-output reference (relative
// Frobenius error < 1e-2, no NaN/Inf); then the configurations of the problem take turns over 8
// rounds (each round in its own order, shuffled with a seed of the problem's), each turn 3 warm-up
// runs and an eighth of the timed runs (about 100 ms of GPU time in all, 3 to 200 per turn)
// launched back to back behind a short spin kernel (so that the launches queue up and the GPU
// never waits for the host), each bracketed by its own CUDA events; the median of all of a
// configuration's runs is reported. Taking turns matters on a shared GPU, whose clock can step by
// ~10% within a run: it moves every configuration of a problem alike. The peak is measured at the
// start and at the end of the run, and also takes a turn in every round of every problem ("/now":
// the ratio at the same clock).
//
// Exit status: 0 if every result verified, 3 if any did not, 1 on a CUDA/cuBLAS error, 2 on usage.
//
// Where each part lives:
//   options.cpp      the command line
//   problems.cu      the problem list, run order, buffers and the rotated input sets
//   catalog.cu       the compiled configurations (configs_*.cu) and --list
//   bench.cu         the run: each problem's configurations verified, then timed in turns
//   timer.cu         one turn: warm-up, settling, timed runs behind a spin kernel
//   verify.cu        the comparison with the cuBLAS f32 reference
//   peer_cublas.cu   cuBLAS
//   mma_peak.cu      the mma.sync ceiling
//   report.cu        the tables and the JSON (results.cuh: what a run found)

#include <cuda_runtime.h>

#include <cstdio>

#include "bench.cuh"
#include "catalog.cuh"
#include "options.hpp"

int main(int argc, char** argv) {
  using namespace tilepipe_bench;
  Options o;
  if (const int status = parse_options(argc, argv, o); status >= 0) return status;

  if (o.list) return list_kernels();
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::fprintf(stderr, "gemm_bench: no CUDA device found; this benchmark needs an sm_80+ GPU\n");
    return 1;
  }
  Bench bench(o);
  return bench.run_all();
}
