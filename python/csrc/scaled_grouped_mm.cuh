#pragma once
// The FP8 grouped GEMM behind tilepipe.scaled_grouped_mm: tilepipe::GemmGroupedFp8Sm90 with its
// default tile for the scale mode. `run_scaled_grouped<AB, D, Scaling>` runs one instantiation;
// setup.py generates a file per instantiation (scale mode), so that they compile in parallel, and
// scaled_grouped_mm.cu picks one.

#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <tilepipe/gemm/gemm_grouped_fp8.cuh>

#include "gemm.h"

namespace tilepipe_torch {

template <class AB, class D, tilepipe::Fp8Scaling Scaling>
tilepipe::Status run_scaled_grouped(const ScaledGroupedMmProblem& p, cudaStream_t stream) {
  using Gemm = tilepipe::GemmGroupedFp8Sm90<AB, D, Scaling>;
  typename Gemm::Arguments args;
  args.form = p.masked ? tilepipe::GroupedForm::kMasked : tilepipe::GroupedForm::kContiguous;
  args.groups = p.groups;
  args.m = p.m;
  args.n = p.n;
  args.k = p.k;
  args.offs = p.masked ? nullptr : p.sizes;
  args.counts = p.masked ? p.sizes : nullptr;
  args.a = static_cast<const AB*>(p.a);
  args.lda = p.lda;
  args.batch_stride_a = p.batch_stride_a;
  args.b = static_cast<const AB*>(p.b);
  args.ldb = p.ldb;
  args.batch_stride_b = p.batch_stride_b;
  args.d = static_cast<D*>(p.d_data);
  args.ldd = p.ldd;
  args.batch_stride_d = p.batch_stride_d;
  args.scale_a = p.scale_a;
  args.scale_b = p.scale_b;
  args.ld_scale_a = p.ld_scale_a;
  args.ld_scale_b = p.ld_scale_b;
  args.workspace = p.claims;
  args.workspace_bytes = p.claims != nullptr ? Gemm::workspace_size(args) : 0;
  return Gemm::run(args, stream);
}

}  // namespace tilepipe_torch

// An explicit instantiation (`prefix` empty) or its declaration (`prefix` extern) of the FP8
// grouped GEMM for one scale mode (e4m3 -> bf16).
#define TILEPIPE_TORCH_SCALED_GROUPED_INSTANCE(prefix, MODE)                                    \
  prefix template tilepipe::Status                                                              \
  tilepipe_torch::run_scaled_grouped<__nv_fp8_e4m3, __nv_bfloat16, tilepipe::Fp8Scaling::MODE>( \
      const tilepipe_torch::ScaledGroupedMmProblem&, cudaStream_t);

// Every instance, as X(MODE): setup.py generates one file for each (the same list).
#define TILEPIPE_TORCH_SCALED_GROUPED_INSTANCES(X) X(kTensorwise) X(kRowwise) X(kBlockwise)
