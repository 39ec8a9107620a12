// The GemmMultistage instantiations of gemm_dispatch.cuh with __nv_bfloat16 inputs.

#include "gemm_dispatch.cuh"

void tptest::add_configs_bf16(std::vector<GemmConfig>& out) {
  using tilepipe::Layout;
  add_layouts<__nv_bfloat16, __nv_bfloat16>(out);
  add_layouts<__nv_bfloat16, float>(out);
  add_fused_config<__nv_bfloat16, __nv_bfloat16, Layout::kRowMajor, Layout::kRowMajor, 4, false>(
      out);
  // Row-major A, column-major B at 3 stages is also add_layouts' split-K configuration.
  add_fused_config<__nv_bfloat16, float, Layout::kRowMajor, Layout::kColumnMajor, 3, true>(out);
}
