// f16 TN sweep, first half: the 128 x 128 x 32 default tile and its 8-warp neighbours, each at
// every stage count from 2 to 6 (GemmMultistage instantiations are spread over a few files so
// that the build compiles them in parallel).
#include "kernel_table.cuh"

namespace tilepipe_bench {

void add_f16_tn_sweep_a(std::vector<TilepipeKernel>& out) {
  constexpr DType D = DType::kF16;
  constexpr LayoutPair L = LayoutPair::kTN;
  //                    tile: M    N    K   warp: M   N
  add_stages_2_to_6<D, L, 128, 128, 32, 64, 64>(out);  // 4 warps, 16 KB a stage
  add_stages_2_to_6<D, L, 128, 256, 32, 64, 64>(out);  // 8 warps, 24 KB a stage
  add_stages_2_to_6<D, L, 256, 128, 32, 64, 64>(out);  // 8 warps, 24 KB a stage
}

}  // namespace tilepipe_bench
