#pragma once
//! \file
//! How gemm_bench verifies a result: D of one run on input set 0 against the cuBLAS f32-output
//! reference, on the device, as a relative Frobenius error and a count of NaN/Inf.

#include <cuda_runtime.h>

#include "problems.cuh"

namespace tilepipe_bench {

// Relative Frobenius error: f16 and bf16 outputs, and f32 (whose tf32 kernels err by about 1e-3;
// SIMT f32 and cuBLAS's SGEMM reference agree to about 1e-6).
constexpr double kVerifyThreshold = 1e-2;

struct Comparison {
  double rel_error = 0;              //!< ||D - ref|| / ||ref||
  unsigned long long nonfinite = 0;  //!< NaN and Inf in D
  bool passed() const { return nonfinite == 0 && rel_error < kVerifyThreshold; }
};

//! Owns the device memory of the comparison's sums.
class Verifier {
 public:
  Verifier();
  ~Verifier();
  Verifier(const Verifier&) = delete;
  Verifier& operator=(const Verifier&) = delete;

  //! Compares D of set 0 (in p's data type) with `buf.ref`; waits for the result. `blocks` is the
  //! comparison kernel's grid.
  Comparison compare(const Problem& p, const Buffers& buf, int blocks, cudaStream_t stream);

 private:
  double* sums_ = nullptr;  // err2, ref2, then the non-finite count
};

}  // namespace tilepipe_bench
