#pragma once
//! \file
//! How gemm_bench times one turn of one configuration: warm-up runs, optional settling runs, then
//! timed runs queued back to back behind a spin kernel, each bracketed by its own CUDA events.

#include <cuda_runtime.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "options.hpp"

namespace tilepipe_bench {

constexpr int kWarmupRuns = 3;
// Rounds in which the configurations of one problem take turns, each round in an order of its
// own (Bench::run_problem).
constexpr int kRounds = 8;

//! One launch of the configuration being measured on input set `set`; returns "" or an error.
using Launch = std::function<std::string(int set)>;

//! Median, quartiles and extremes of a configuration's timed runs.
struct Timing {
  double median_ms = NAN, min_ms = NAN, max_ms = NAN, q1_ms = NAN, q3_ms = NAN;
  int runs = 0;
};

class Timer {
 public:
  //! Events for up to `o.max_runs` timed runs; settles for `o.settle_ms` before each turn.
  Timer(cudaStream_t stream, const Options& o);
  ~Timer();
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  //! Warm-up runs (which also estimate the time of one run), then back-to-back timed runs behind
  //! a spin kernel, about `target_ms` of them and at least `min_runs`; run i is bracketed by
  //! events i and i+1. Input sets rotate across all runs. The times are appended to `samples`.
  bool time(const Launch& launch, int sets, double target_ms, int min_runs,
            std::vector<float>* samples, std::string* error);

  //! Median and quartiles of a set of run times.
  static Timing summarize(std::vector<float> ms);

 private:
  cudaStream_t stream_;
  const Options& o_;
  std::vector<cudaEvent_t> events_;
};

}  // namespace tilepipe_bench
