// f16 TN sweep, second half: 64-deep k-tiles and the smaller tiles, each at every stage count
// from 2 to 6 whose ring fits 163 KB (kMaxRingBytes); the others are skipped at compile time.
#include "kernel_table.cuh"

namespace tilepipe_bench {

void add_f16_tn_sweep_b(std::vector<TilepipeKernel>& out) {
  constexpr DType D = DType::kF16;
  constexpr LayoutPair L = LayoutPair::kTN;
  //                    tile: M    N    K   warp: M   N
  add_stages_2_to_6<D, L, 128, 128, 64, 64, 64>(out);  // 4 warps, 32 KB a stage: s2..s5
  add_stages_2_to_6<D, L, 128, 256, 64, 64, 64>(out);  // 8 warps, 48 KB a stage: s2, s3
  add_stages_2_to_6<D, L, 256, 128, 64, 64, 64>(out);  // 8 warps, 48 KB a stage: s2, s3
  add_stages_2_to_6<D, L, 64, 128, 32, 32, 64>(out);   // 4 warps, 12 KB a stage
  add_stages_2_to_6<D, L, 64, 64, 64, 32, 32>(out);    // 4 warps, 16 KB a stage
}

}  // namespace tilepipe_bench
