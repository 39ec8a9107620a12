// tilepipe_torch::run_gemm and workspace_size: the instance for the problem's element types and
// layouts. Each instance is compiled in a file of its own, which setup.py generates.

#include <utility>

#include "gemm.cuh"

#define TILEPIPE_TORCH_EXTERN(AB, D, LA, LB, Op) TILEPIPE_TORCH_INSTANCE(extern, AB, D, LA, LB, Op)
TILEPIPE_TORCH_INSTANCES(TILEPIPE_TORCH_EXTERN)

namespace tilepipe_torch {

namespace {

using tilepipe::Layout;
using tilepipe::Status;

template <class AB_, class D_, Layout LA_, Layout LB_, class Op_>
struct Instance {
  using AB = AB_;
  using D = D_;
  using Op = Op_;
  static constexpr Layout kLA = LA_, kLB = LB_;
};

// f(Instance<...>{}) for p's layouts, with A and B of type AB, D of type D, and operator Op. Both
// column-major does not come here: ops.cpp copies A to row-major first.
template <class AB, class D, class Op, class F>
auto with_layouts(const Problem& p, F&& f) {
  const bool a_row = p.a.layout == Layout::kRowMajor, b_row = p.b.layout == Layout::kRowMajor;
  if (a_row && b_row) return f(Instance<AB, D, Layout::kRowMajor, Layout::kRowMajor, Op>{});
  if (a_row) return f(Instance<AB, D, Layout::kRowMajor, Layout::kColumnMajor, Op>{});
  return f(Instance<AB, D, Layout::kColumnMajor, Layout::kRowMajor, Op>{});
}

// With D of A's type, the Identity operator where there is neither a bias nor an activation.
template <class AB, class F>
auto with_operator(const Problem& p, F&& f) {
  if (p.bias == nullptr && p.activation == Activation::kNone)
    return with_layouts<AB, AB, tilepipe::Identity>(p, f);
  return with_layouts<AB, AB, BiasActivation<AB>>(p, f);
}

// f(Instance<...>{}) for p's element types, layouts and operator; `invalid` where there is none
// (ops.cpp checks the types, and copies A where both would be column-major, first).
template <class F, class R>
R with_instance(const Problem& p, F&& f, R invalid) {
  if (p.a.layout == Layout::kColumnMajor && p.b.layout == Layout::kColumnMajor) return invalid;
  const bool f32_out = p.d == DType::kF32;
  if (p.ab == DType::kF16 && f32_out)
    return with_layouts<__half, float, BiasActivation<__half>>(p, f);
  if (p.ab == DType::kF16 && p.d == DType::kF16) return with_operator<__half>(p, f);
  if (p.ab == DType::kBF16 && f32_out)
    return with_layouts<__nv_bfloat16, float, BiasActivation<__nv_bfloat16>>(p, f);
  if (p.ab == DType::kBF16 && p.d == DType::kBF16) return with_operator<__nv_bfloat16>(p, f);
  return invalid;
}

}  // namespace

Status run_gemm(const Problem& p, cudaStream_t stream) {
  return with_instance(
      p,
      [&](auto i) {
        using I = decltype(i);
        return run_layouts<typename I::AB, typename I::D, I::kLA, I::kLB, typename I::Op>(p,
                                                                                          stream);
      },
      Status::error(Status::Code::kInvalidArgument,
                    "no GEMM instance for these types and layouts (A and B f16 or bf16, D the "
                    "same or f32, A and B not both column-major)"));
}

std::size_t workspace_size(const Problem& p) {
  return with_instance(
      p,
      [&](auto i) {
        using I = decltype(i);
        return workspace_layouts<typename I::AB, typename I::D, I::kLA, I::kLB, typename I::Op>(p);
      },
      std::size_t{0});
}

bool hopper_tier_available(int device) { return tilepipe::hopper_tier_available(device); }

}  // namespace tilepipe_torch
