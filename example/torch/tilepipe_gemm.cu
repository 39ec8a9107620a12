// tilepipe_torch::run_gemm: the pair of element types; each pair's GEMMs are compiled in a file
// of their own (gemm_<ab>_<d>.cu).

#include "tilepipe_gemm.cuh"

namespace tilepipe_torch {

using tilepipe::Status;

// Instantiated in gemm_<ab>_<d>.cu, not here.
extern template Status run_typed<__half, __half>(const Problem&, cudaStream_t);
extern template Status run_typed<__half, float>(const Problem&, cudaStream_t);
extern template Status run_typed<__nv_bfloat16, __nv_bfloat16>(const Problem&, cudaStream_t);
extern template Status run_typed<__nv_bfloat16, float>(const Problem&, cudaStream_t);

Status run_gemm(const Problem& p, cudaStream_t stream) {
  const bool f32_out = p.d == DType::kF32;
  if (p.ab == DType::kF16 && (f32_out || p.d == DType::kF16))
    return f32_out ? run_typed<__half, float>(p, stream) : run_typed<__half, __half>(p, stream);
  if (p.ab == DType::kBF16 && (f32_out || p.d == DType::kBF16))
    return f32_out ? run_typed<__nv_bfloat16, float>(p, stream)
                   : run_typed<__nv_bfloat16, __nv_bfloat16>(p, stream);
  return Status::error(Status::Code::kInvalidArgument,
                       "A and B must be f16 or bf16, and D the same or f32");
}

bool hopper_tier_available(int device) { return tilepipe::hopper_tier_available(device); }

}  // namespace tilepipe_torch
