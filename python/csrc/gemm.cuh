#pragma once
// The GEMM behind the operators: tilepipe::GemmAuto with an output operator whose bias and
// activation are chosen at run time. `run_layouts<AB, D, LA, LB>` runs one instantiation;
// setup.py generates a file per instantiation (element types x layouts of A and B), so that they
// compile in parallel, and gemm.cu picks one.
//
// torch.utils.cpp_extension compiles .cu files with -D__CUDA_NO_HALF_OPERATORS__ and friends,
// which matter only to code that includes the torch headers; these files include none.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <tilepipe/gemm/gemm_auto.cuh>

#include "gemm.h"

namespace tilepipe_torch {

// GELU and SiLU evaluate erff, tanhf or expf. Inlined, the epilogue would carry all three for
// each of its elements and compile about 7 times slower (sm_80); as a call on the path that
// needs it, the common cases (none, ReLU) stay a select. ptxas does not serialize the Hopper
// tier's wgmma over it: the call comes after the mainloop's last wait.
__device__ __noinline__ inline float smooth_activation(float v, Activation activation) {
  switch (activation) {
    case Activation::kGelu: return tilepipe::GeluErf{}(v, 0, 0);
    case Activation::kGeluTanh: return tilepipe::GeluTanh{}(v, 0, 0);
    default: return tilepipe::Silu{}(v, 0, 0);
  }
}

// D = act(v + bias[col]). One instantiation serves every bias type and activation: the choice is
// a uniform branch per element in the epilogue, not another kernel to compile. The bias is read
// in its own type (the input's, or f32), so that no conversion kernel runs before the GEMM.
struct BiasActivation {
  const void* bias = nullptr;  // N values, or null
  DType bias_type = DType::kF32;
  Activation activation = Activation::kNone;

  __device__ float operator()(float v, int row, int col) const {
    if (bias != nullptr) {
      if (bias_type == DType::kF32) v += static_cast<const float*>(bias)[col];
      else if (bias_type == DType::kF16) v += __half2float(static_cast<const __half*>(bias)[col]);
      else v += __bfloat162float(static_cast<const __nv_bfloat16*>(bias)[col]);
    }
    if (activation == Activation::kNone) return v;
    if (activation == Activation::kRelu) return tilepipe::Relu{}(v, row, col);
    return smooth_activation(v, activation);
  }
};

template <class AB, class D, tilepipe::Layout LA, tilepipe::Layout LB>
using Gemm = tilepipe::GemmAuto<AB, D, LA, LB, BiasActivation, /*AnyAlignment=*/true>;

//! GemmAuto's arguments for `p`.
template <class AB, class D, tilepipe::Layout LA, tilepipe::Layout LB>
typename Gemm<AB, D, LA, LB>::Arguments arguments(const Problem& p) {
  typename Gemm<AB, D, LA, LB>::Arguments args;
  args.m = p.m;
  args.n = p.n;
  args.k = p.k;
  args.batch_count = p.batch;
  args.a = static_cast<const AB*>(p.a.data);
  args.lda = p.a.ld;
  args.batch_stride_a = p.a.batch_stride;
  args.b = static_cast<const AB*>(p.b.data);
  args.ldb = p.b.ld;
  args.batch_stride_b = p.b.batch_stride;
  args.d = static_cast<D*>(p.d_data);
  args.ldd = p.ldd;
  args.batch_stride_d = p.batch_stride_d;
  args.layout_cd = tilepipe::Layout::kRowMajor;
  args.output_op = BiasActivation{p.bias, p.bias_type, p.activation};
  args.workspace = p.workspace;
  args.workspace_bytes = p.workspace_bytes;
  return args;
}

//! Runs `p` (A and B of type AB in layouts LA and LB, D of type D) through GemmAuto.
template <class AB, class D, tilepipe::Layout LA, tilepipe::Layout LB>
tilepipe::Status run_layouts(const Problem& p, cudaStream_t stream) {
  return Gemm<AB, D, LA, LB>::run(arguments<AB, D, LA, LB>(p), stream);
}

//! GemmAuto's workspace for `p` on the current device.
template <class AB, class D, tilepipe::Layout LA, tilepipe::Layout LB>
std::size_t workspace_layouts(const Problem& p) {
  return Gemm<AB, D, LA, LB>::workspace_size(arguments<AB, D, LA, LB>(p));
}

}  // namespace tilepipe_torch

// An explicit instantiation (`prefix` empty) or its declaration (`prefix` extern) of the GEMM for
// one pair of element types and one pair of layouts (kRowMajor or kColumnMajor).
#define TILEPIPE_TORCH_INSTANCE(prefix, AB, D, LA, LB)                                  \
  prefix template tilepipe::Status                                                      \
  tilepipe_torch::run_layouts<AB, D, tilepipe::Layout::LA, tilepipe::Layout::LB>(       \
      const tilepipe_torch::Problem&, cudaStream_t);                                    \
  prefix template std::size_t                                                           \
  tilepipe_torch::workspace_layouts<AB, D, tilepipe::Layout::LA, tilepipe::Layout::LB>( \
      const tilepipe_torch::Problem&);

// Every instance, each as X(AB, D, LA, LB): setup.py generates one file for each (the same list).
#define TILEPIPE_TORCH_LAYOUTS(X, AB, D) \
  X(AB, D, kRowMajor, kRowMajor)         \
  X(AB, D, kRowMajor, kColumnMajor)      \
  X(AB, D, kColumnMajor, kRowMajor)      \
  X(AB, D, kColumnMajor, kColumnMajor)
#define TILEPIPE_TORCH_INSTANCES(X)                       \
  TILEPIPE_TORCH_LAYOUTS(X, __half, __half)               \
  TILEPIPE_TORCH_LAYOUTS(X, __half, float)                \
  TILEPIPE_TORCH_LAYOUTS(X, __nv_bfloat16, __nv_bfloat16) \
  TILEPIPE_TORCH_LAYOUTS(X, __nv_bfloat16, float)
