// tilepipe_torch's GEMMs for f16 A and B and f16 D, in all four layouts (tilepipe_gemm.cuh).
#include "tilepipe_gemm.cuh"

template tilepipe::Status tilepipe_torch::run_typed<__half, __half>(const tilepipe_torch::Problem&,
                                                                    cudaStream_t);
