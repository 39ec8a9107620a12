#pragma once
// The GEMM behind the PyTorch binding: tilepipe::GemmMultistage with an output operator whose
// bias and activation are chosen at run time. `run_typed<AB, D>` picks the instantiation for the
// layouts of A and B; gemm_<ab>_<d>.cu instantiate it, one file per pair of element types so
// that they compile in parallel, and tilepipe_gemm.cu picks the pair.
//
// torch.utils.cpp_extension compiles .cu files with -D__CUDA_NO_HALF_OPERATORS__ and friends,
// which matter only to code that includes the torch headers; these files include none.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <tilepipe/gemm/gemm_multistage.cuh>

#include "tilepipe_gemm.h"

namespace tilepipe_torch {

// GELU and SiLU evaluate erff, tanhf or expf. Inlined, the epilogue would carry all three for
// each of its elements and compile about 7 times slower (sm_80); as a call on the path that
// needs it, the common cases (none, ReLU) stay a select.
__device__ __noinline__ inline float smooth_activation(float v, Activation activation) {
  switch (activation) {
    case Activation::kGelu: return tilepipe::GeluErf{}(v, 0, 0);
    case Activation::kGeluTanh: return tilepipe::GeluTanh{}(v, 0, 0);
    default: return tilepipe::Silu{}(v, 0, 0);
  }
}

// D = act(v + bias[col]). One instantiation serves every bias and activation: the choice is a
// uniform branch per element in the epilogue, not another kernel to compile.
struct BiasActivation {
  const float* bias = nullptr;  // N values, or null
  Activation activation = Activation::kNone;

  __device__ float operator()(float v, int row, int col) const {
    if (bias != nullptr) v += bias[col];
    if (activation == Activation::kNone) return v;
    if (activation == Activation::kRelu) return tilepipe::Relu{}(v, row, col);
    return smooth_activation(v, activation);
  }
};

template <class AB, class D, tilepipe::Layout LA, tilepipe::Layout LB>
tilepipe::Status run_layouts(const Problem& p, cudaStream_t stream) {
  // Without the narrow kernel (AnyAlignment = false): the extension asks for 16-byte aligned
  // operands (tilepipe_torch.cpp), so it would never run, and it would lengthen the JIT build.
  using Gemm = tilepipe::GemmMultistage<AB, D, LA, LB, /*Stages=*/4, BiasActivation,
                                        tilepipe::DefaultTileConfig<4>, /*SplitK=*/false,
                                        /*AnyAlignment=*/false>;
  typename Gemm::Arguments args;
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
  args.output_op = BiasActivation{p.bias, p.activation};
  return Gemm::run(args, stream);
}

//! `p` with A and B of type AB and D of type D, in the instantiation for p's layouts.
template <class AB, class D>
tilepipe::Status run_typed(const Problem& p, cudaStream_t stream) {
  using tilepipe::Layout;
  const bool a_row = p.a.layout == Layout::kRowMajor, b_row = p.b.layout == Layout::kRowMajor;
  if (a_row && b_row) return run_layouts<AB, D, Layout::kRowMajor, Layout::kRowMajor>(p, stream);
  if (a_row) return run_layouts<AB, D, Layout::kRowMajor, Layout::kColumnMajor>(p, stream);
  if (b_row) return run_layouts<AB, D, Layout::kColumnMajor, Layout::kRowMajor>(p, stream);
  return run_layouts<AB, D, Layout::kColumnMajor, Layout::kColumnMajor>(p, stream);
}

}  // namespace tilepipe_torch
