// tilepipe_torch::run_grouped_mm: the grouped GEMM instance for the problem's types and B's
// layout. Each instance is compiled in a file of its own, which setup.py generates.

#include "grouped_mm.cuh"

#define TILEPIPE_TORCH_GROUPED_EXTERN(AB, D, LB) TILEPIPE_TORCH_GROUPED_INSTANCE(extern, AB, D, LB)
TILEPIPE_TORCH_GROUPED_INSTANCES(TILEPIPE_TORCH_GROUPED_EXTERN)

namespace tilepipe_torch {

namespace {

template <class AB, class D>
tilepipe::Status with_layout(const GroupedMmProblem& p, cudaStream_t stream) {
  if (p.layout_b == tilepipe::Layout::kRowMajor)
    return run_grouped<AB, D, tilepipe::Layout::kRowMajor>(p, stream);
  return run_grouped<AB, D, tilepipe::Layout::kColumnMajor>(p, stream);
}

}  // namespace

tilepipe::Status run_grouped_mm(const GroupedMmProblem& p, cudaStream_t stream) {
  if (p.ab == DType::kBF16 && p.d == DType::kBF16)
    return with_layout<__nv_bfloat16, __nv_bfloat16>(p, stream);
  if (p.ab == DType::kF16 && p.d == DType::kF16) return with_layout<__half, __half>(p, stream);
  if (p.ab == DType::kBF16 && p.d == DType::kF32)
    return with_layout<__nv_bfloat16, float>(p, stream);
  return tilepipe::Status::error(tilepipe::Status::Code::kInvalidArgument,
                                 "no grouped GEMM instance for these types (bf16 -> bf16, "
                                 "f16 -> f16, bf16 -> f32)");
}

}  // namespace tilepipe_torch
