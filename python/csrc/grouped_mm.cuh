#pragma once
// The grouped GEMM behind tilepipe.grouped_mm and tilepipe.grouped_mm_masked:
// tilepipe::GemmGroupedSm90 with its default tile. `run_grouped<AB, D, LayoutB>` runs one
// instantiation; setup.py generates a file per instantiation (input type x output type x B's
// layout), so that they compile in parallel, and grouped_mm.cu picks one.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <tilepipe/gemm/gemm_grouped.cuh>

#include "gemm.h"

namespace tilepipe_torch {

template <class AB, class D, tilepipe::Layout LayoutB>
tilepipe::Status run_grouped(const GroupedMmProblem& p, cudaStream_t stream) {
  using Gemm = tilepipe::GemmGroupedSm90<AB, D, LayoutB>;
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
  args.workspace = p.claims;
  args.workspace_bytes = p.claims != nullptr ? Gemm::workspace_size(args) : 0;
  return Gemm::run(args, stream);
}

}  // namespace tilepipe_torch

// An explicit instantiation (`prefix` empty) or its declaration (`prefix` extern) of the grouped
// GEMM for one input type, one output type and one layout of B (kColumnMajor: [G, N, K]).
#define TILEPIPE_TORCH_GROUPED_INSTANCE(prefix, AB, D, LB)                                   \
  prefix template tilepipe::Status tilepipe_torch::run_grouped<AB, D, tilepipe::Layout::LB>( \
      const tilepipe_torch::GroupedMmProblem&, cudaStream_t);

// Every instance, as X(AB, D, LB): setup.py generates one file for each (the same list).
#define TILEPIPE_TORCH_GROUPED_LAYOUTS(X, AB, D) \
  X(AB, D, kColumnMajor)                         \
  X(AB, D, kRowMajor)
#define TILEPIPE_TORCH_GROUPED_INSTANCES(X)                       \
  TILEPIPE_TORCH_GROUPED_LAYOUTS(X, __nv_bfloat16, __nv_bfloat16) \
  TILEPIPE_TORCH_GROUPED_LAYOUTS(X, __half, __half)               \
  TILEPIPE_TORCH_GROUPED_LAYOUTS(X, __nv_bfloat16, float)
