#pragma once
//! \file
//! The benchmark itself: for each problem, every configuration (cuBLAS, tilepipe's, GemmAuto, the
//! other peers') is verified once and then timed in turns, kRounds rounds of them, with the
//! mma.sync peak kernel taking a turn in each round; then the tables and the JSON (report.cuh).

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <vector>

#include "bench_common.cuh"
#include "options.hpp"
#include "peers.cuh"
#include "problems.cuh"
#include "results.cuh"
#include "timer.cuh"
#include "verify.cuh"

namespace tilepipe_bench {

// Iterations of one launch of the mma.sync peak kernel timed in turns (~0.4 ms on an H200).
constexpr int kPeakTurnIterations = 1024;

class Bench {
 public:
  //! Needs a GPU.
  explicit Bench(const Options& o);
  ~Bench();
  Bench(const Bench&) = delete;
  Bench& operator=(const Bench&) = delete;

  //! Every problem in run order, then the tables (and the JSON). Returns the exit status: 0 if
  //! every result verified, 3 if one did not.
  int run_all();

 private:
  // The tilepipe configurations timed on problem p.
  std::vector<const TilepipeKernel*> plan(const Problem& p) const;
  void run_problem(const Problem& p, std::uint64_t seed);
  KernelResources resources_of(const TilepipeKernel* k);
  // Verifies one configuration once, on set 0 with D poisoned; a failure to run sets r.error.
  // Skipped records (r.skipped: the kernel refused the problem) are not run.
  void verify(Record& r, const Launch& launch, const Buffers& buf);
  // The statistics of a configuration's timed runs (all rounds); appends the record.
  void finish(Record& r, const std::vector<float>& samples);
  void update_best_sweep(const Problem& p);
  static cudaStream_t make_stream();

  const Options& o_;
  ProblemSet problems_;
  cudaStream_t stream_;
  Timer timer_;  // owns the events of the timed runs
  cudaDeviceProp prop_{};
  cublasHandle_t cublas_ = nullptr;
  Verifier verifier_;
  std::vector<TilepipeKernel> kernels_;
  std::vector<AutoKernel> autos_;
  std::vector<PeerKernel> peers_;
  std::map<const TilepipeKernel*, KernelResources> resources_;
  MmaPeakKernel peak_f16_{DType::kF16, kPeakTurnIterations};  // timed in turns with each problem
  MmaPeakKernel peak_bf16_{DType::kBF16, kPeakTurnIterations};
  Results results_;
};

}  // namespace tilepipe_bench
