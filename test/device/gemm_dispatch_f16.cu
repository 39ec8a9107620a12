// The GemmMultistage instantiations of gemm_dispatch.cuh with __half inputs.

#include "gemm_dispatch.cuh"

void tptest::add_configs_f16(std::vector<GemmConfig>& out) {
  using tilepipe::Layout;
  add_layouts<__half, __half>(out);
  add_layouts<__half, float>(out);
  add_fused_config<__half, __half, Layout::kColumnMajor, Layout::kColumnMajor, 4, false>(out);
  // Row-major A, column-major B at 2 stages is also add_layouts' split-K configuration.
  add_fused_config<__half, float, Layout::kRowMajor, Layout::kColumnMajor, 2, true>(out);
}
