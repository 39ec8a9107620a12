#pragma once
//! \file
//! What gemm_bench writes: the tables on stdout (the sweep tables, one summary row per problem,
//! then GemmAuto's summary line, last) and, with --json, every measurement for
//! scripts/plot_bench.py.

#include <cuda_runtime.h>

#include <vector>

#include "bench_common.cuh"
#include "options.hpp"
#include "problems.cuh"
#include "results.cuh"

namespace tilepipe_bench {

//! What the report says about the run besides its results.
struct RunInfo {
  const Options* options = nullptr;
  cudaDeviceProp prop{};
  int cublas_version = 0;
  const ProblemSet* problems = nullptr;
  const std::vector<TilepipeKernel>* kernels = nullptr;  //!< the sweep tables' rows
};

void print_tables(const Results& res, const RunInfo& run);
void write_json(const Results& res, const RunInfo& run);

}  // namespace tilepipe_bench
