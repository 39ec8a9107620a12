// tilepipe_torch::run_scaled_grouped_mm: the FP8 grouped GEMM instance for the problem's scale
// mode. Each instance is compiled in a file of its own, which setup.py generates.

#include "scaled_grouped_mm.cuh"

#define TILEPIPE_TORCH_SCALED_GROUPED_EXTERN(MODE) \
  TILEPIPE_TORCH_SCALED_GROUPED_INSTANCE(extern, MODE)
TILEPIPE_TORCH_SCALED_GROUPED_INSTANCES(TILEPIPE_TORCH_SCALED_GROUPED_EXTERN)

namespace tilepipe_torch {

tilepipe::Status run_scaled_grouped_mm(const ScaledGroupedMmProblem& p, cudaStream_t stream) {
  using tilepipe::Fp8Scaling;
  if (p.ab != DType::kE4M3 || p.d != DType::kBF16)
    return tilepipe::Status::error(tilepipe::Status::Code::kInvalidArgument,
                                   "no FP8 grouped GEMM instance for these types (e4m3 -> bf16)");
  switch (p.scaling) {
    case ScaleMode::kTensorwise:
      return run_scaled_grouped<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kTensorwise>(p, stream);
    case ScaleMode::kRowwise:
      return run_scaled_grouped<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kRowwise>(p, stream);
    default:
      return run_scaled_grouped<__nv_fp8_e4m3, __nv_bfloat16, Fp8Scaling::kBlockwise>(p, stream);
  }
}

}  // namespace tilepipe_torch
