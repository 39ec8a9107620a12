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

#include <type_traits>

#include <tilepipe/gemm/gemm_auto.cuh>

#include "gemm.h"

namespace tilepipe_torch {

// GELU (erf) needs erff, whose inlined code for each element of the epilogue doubled the compile
// time of an instance: it is a call, on the path that needs it.
__device__ __noinline__ inline float gelu_erf(float v) {
  return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
}

// A bias of type T (NoBias: none), read through the read-only path.
struct NoBias {};
template <class T>
__device__ __forceinline__ float bias_at(const T* bias, int col) {
  if constexpr (std::is_same_v<T, NoBias>) return 0.0f;
  else if constexpr (std::is_same_v<T, float>) return __ldg(bias + col);
  else if constexpr (std::is_same_v<T, __half>) return __half2float(__ldg(bias + col));
  else return __bfloat162float(__ldg(bias + col));
}

// v sigmoid(z), z = v (c0 + c1 v^2): GELU (tanh) is 0.5 v (1 + tanh(u)) = v sigmoid(2u) with
// u = sqrt(2 / pi) (v + 0.044715 v^3), SiLU is c0 = 1, c1 = 0. As v / (1 + e^-z) with the
// hardware's exp2 and reciprocal (relative errors near 2^-22; e^-z = inf gives 0 as it should),
// where tanhf and expf take tens of instructions each.
__device__ __forceinline__ float times_sigmoid(float v, float c0, float c1) {
  return __fdividef(v, 1.0f + __expf(-v * (c0 + c1 * v * v)));
}

// The operators BiasActivation::dispatch chooses, each without a branch: bias then nothing,
// ReLU, or v sigmoid(z).
template <class B>
struct BiasOnly {
  const B* bias;
  __device__ float operator()(float v, int, int col) const { return v + bias_at(bias, col); }
};
template <class B>
struct BiasRelu {
  const B* bias;
  __device__ float operator()(float v, int, int col) const {
    return fmaxf(v + bias_at(bias, col), 0.0f);
  }
};
template <class B>
struct BiasSigmoid {
  const B* bias;
  float c0, c1;
  __device__ float operator()(float v, int, int col) const {
    return times_sigmoid(v + bias_at(bias, col), c0, c1);
  }
};

// D = act(v + bias[col]), the bias of the inputs' type AB or f32, or none. One operator serves
// every bias and activation, chosen at run time: per tile on the Hopper tier's staged path
// (dispatch, which hands the epilogue an operator of one choice: its loop runs without a branch
// per element, and the bias loads can move ahead), per element elsewhere (operator()). GELU
// (erf) stays per element everywhere: it is a call either way. The bias is read in its own type,
// so that no conversion kernel runs before the GEMM. With a branch per element, a bias cost a
// 4096^3 GEMM a third of its time (H200).
template <class AB>
struct BiasActivation {
  const void* bias = nullptr;  // N values, or null
  DType bias_type = DType::kF32;
  Activation activation = Activation::kNone;
  float c0 = 0.0f, c1 = 0.0f;  // z's coefficients for kGeluTanh and kSilu

  BiasActivation() = default;
  BiasActivation(const void* b, DType type, Activation act)
      : bias(b), bias_type(type), activation(act) {
    if (act == Activation::kGeluTanh) c0 = 1.5957691216057308f, c1 = 0.0713548162726009f;
    if (act == Activation::kSilu) c0 = 1.0f, c1 = 0.0f;
  }

  __device__ float operator()(float v, int, int col) const {
    if (bias != nullptr) {
      if (bias_type == DType::kF32) v += bias_at(static_cast<const float*>(bias), col);
      else v += bias_at(static_cast<const AB*>(bias), col);
    }
    switch (activation) {
      case Activation::kNone: return v;
      case Activation::kRelu: return fmaxf(v, 0.0f);
      case Activation::kGelu: return gelu_erf(v);
      default: return times_sigmoid(v, c0, c1);
    }
  }

  template <class F>
  __device__ void dispatch(F&& f) const {
    if (activation == Activation::kGelu) return f(*this);
    if (bias == nullptr) return with_bias(f, static_cast<const NoBias*>(nullptr));
    if (bias_type == DType::kF32) return with_bias(f, static_cast<const float*>(bias));
    return with_bias(f, static_cast<const AB*>(bias));
  }

 private:
  template <class F, class B>
  __device__ void with_bias(F& f, const B* b) const {
    // Without a bias or an activation the Identity instance runs (gemm.cu), not this operator:
    // that choice shares the per-element loop rather than compile one more.
    if constexpr (std::is_same_v<B, NoBias>)
      if (activation == Activation::kNone) return f(*this);
    if (activation == Activation::kNone) f(BiasOnly<B>{b});
    else if (activation == Activation::kRelu) f(BiasRelu<B>{b});
    else f(BiasSigmoid<B>{b, c0, c1});
  }
};

// The output operators: BiasActivation, and Identity for problems with neither (every gradient
// GEMM), where the epilogue then only converts and stores.
template <class Op>
Op output_op(const Problem& p) {
  if constexpr (std::is_same_v<Op, tilepipe::Identity>) return {};
  else return Op(p.bias, p.bias_type, p.activation);
}

template <class AB, class D, tilepipe::Layout LA, tilepipe::Layout LB, class Op>
using Gemm = tilepipe::GemmAuto<AB, D, LA, LB, Op, /*AnyAlignment=*/true>;

//! GemmAuto's arguments for `p`.
template <class AB, class D, tilepipe::Layout LA, tilepipe::Layout LB, class Op>
typename Gemm<AB, D, LA, LB, Op>::Arguments arguments(const Problem& p) {
  typename Gemm<AB, D, LA, LB, Op>::Arguments args;
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
  args.output_op = output_op<Op>(p);
  args.workspace = p.workspace;
  args.workspace_bytes = p.workspace_bytes;
  return args;
}

//! Runs `p` (A and B of type AB in layouts LA and LB, D of type D) through GemmAuto with `Op`.
template <class AB, class D, tilepipe::Layout LA, tilepipe::Layout LB, class Op>
tilepipe::Status run_layouts(const Problem& p, cudaStream_t stream) {
  return Gemm<AB, D, LA, LB, Op>::run(arguments<AB, D, LA, LB, Op>(p), stream);
}

//! GemmAuto's workspace for `p` on the current device.
template <class AB, class D, tilepipe::Layout LA, tilepipe::Layout LB, class Op>
std::size_t workspace_layouts(const Problem& p) {
  return Gemm<AB, D, LA, LB, Op>::workspace_size(arguments<AB, D, LA, LB, Op>(p));
}

}  // namespace tilepipe_torch

// An explicit instantiation (`prefix` empty) or its declaration (`prefix` extern) of the GEMM for
// one pair of element types, one pair of layouts (kRowMajor or kColumnMajor) and one operator.
#define TILEPIPE_TORCH_INSTANCE(prefix, AB, D, LA, LB, Op)                                  \
  prefix template tilepipe::Status                                                          \
  tilepipe_torch::run_layouts<AB, D, tilepipe::Layout::LA, tilepipe::Layout::LB, Op>(       \
      const tilepipe_torch::Problem&, cudaStream_t);                                        \
  prefix template std::size_t                                                               \
  tilepipe_torch::workspace_layouts<AB, D, tilepipe::Layout::LA, tilepipe::Layout::LB, Op>( \
      const tilepipe_torch::Problem&);

// Every instance, each as X(AB, D, LA, LB, Op): setup.py generates one file for each (the same
// list). Identity only where D is A's type (f32 results are rarer, and take BiasActivation); no
// instance for both column-major (ops.cpp copies A).
#define TILEPIPE_TORCH_LAYOUTS(X, AB, D, Op) \
  X(AB, D, kRowMajor, kRowMajor, Op)         \
  X(AB, D, kRowMajor, kColumnMajor, Op)      \
  X(AB, D, kColumnMajor, kRowMajor, Op)
#define TILEPIPE_TORCH_INSTANCES(X)                                                 \
  TILEPIPE_TORCH_LAYOUTS(X, __half, __half, tilepipe_torch::BiasActivation<__half>) \
  TILEPIPE_TORCH_LAYOUTS(X, __half, __half, tilepipe::Identity)                     \
  TILEPIPE_TORCH_LAYOUTS(X, __half, float, tilepipe_torch::BiasActivation<__half>)  \
  TILEPIPE_TORCH_LAYOUTS(X, __nv_bfloat16, __nv_bfloat16,                           \
                         tilepipe_torch::BiasActivation<__nv_bfloat16>)             \
  TILEPIPE_TORCH_LAYOUTS(X, __nv_bfloat16, __nv_bfloat16, tilepipe::Identity)       \
  TILEPIPE_TORCH_LAYOUTS(X, __nv_bfloat16, float, tilepipe_torch::BiasActivation<__nv_bfloat16>)
