// tilepipe_torch::run_scaled_mm and scaled_mm_workspace_size: the FP8 instance for the problem's
// types and scale mode. Each instance is compiled in a file of its own, which setup.py generates.

#include "scaled_mm.cuh"

#define TILEPIPE_TORCH_FP8_EXTERN(AB, D, S) TILEPIPE_TORCH_FP8_INSTANCE(extern, AB, D, S)
TILEPIPE_TORCH_FP8_INSTANCES(TILEPIPE_TORCH_FP8_EXTERN)

namespace tilepipe_torch {

namespace {

using tilepipe::Fp8Scaling;

template <class AB_, class D_, Fp8Scaling S_>
struct Fp8Instance {
  using AB = AB_;
  using D = D_;
  static constexpr Fp8Scaling kScaling = S_;
};

template <class AB, class D, class F>
auto with_mode(const ScaledMmProblem& p, F&& f) {
  if (p.scaling == ScaleMode::kTensorwise) return f(Fp8Instance<AB, D, Fp8Scaling::kTensorwise>{});
  if (p.scaling == ScaleMode::kRowwise) return f(Fp8Instance<AB, D, Fp8Scaling::kRowwise>{});
  return f(Fp8Instance<AB, D, Fp8Scaling::kBlockwise>{});
}

template <class AB, class F, class R>
R with_output(const ScaledMmProblem& p, F&& f, R invalid) {
  if (p.d == DType::kBF16) return with_mode<AB, __nv_bfloat16>(p, f);
  if (p.d == DType::kF16) return with_mode<AB, __half>(p, f);
  if (p.d == DType::kF32) return with_mode<AB, float>(p, f);
  return invalid;
}

// f(Fp8Instance<...>{}) for p's types and scale mode; `invalid` where there is none (ops first
// check the types).
template <class F, class R>
R with_instance(const ScaledMmProblem& p, F&& f, R invalid) {
  if (p.ab == DType::kE4M3) return with_output<__nv_fp8_e4m3>(p, f, invalid);
  if (p.ab == DType::kE5M2) return with_output<__nv_fp8_e5m2>(p, f, invalid);
  return invalid;
}

}  // namespace

tilepipe::Status run_scaled_mm(const ScaledMmProblem& p, cudaStream_t stream) {
  return with_instance(
      p,
      [&](auto i) {
        using I = decltype(i);
        return run_fp8<typename I::AB, typename I::D, I::kScaling>(p, stream);
      },
      tilepipe::Status::error(tilepipe::Status::Code::kInvalidArgument,
                              "no FP8 GEMM instance for these types (A and B both e4m3 or both "
                              "e5m2, D bf16, f16 or f32)"));
}

std::size_t scaled_mm_workspace_size(const ScaledMmProblem& p) {
  return with_instance(
      p,
      [&](auto i) {
        using I = decltype(i);
        return fp8_workspace<typename I::AB, typename I::D, I::kScaling>(p);
      },
      std::size_t{0});
}

}  // namespace tilepipe_torch
