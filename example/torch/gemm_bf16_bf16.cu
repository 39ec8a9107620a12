// tilepipe_torch's GEMMs for bf16 A and B and bf16 D, in all four layouts (tilepipe_gemm.cuh).
#include "tilepipe_gemm.cuh"

template tilepipe::Status tilepipe_torch::run_typed<__nv_bfloat16, __nv_bfloat16>(
    const tilepipe_torch::Problem&, cudaStream_t);
