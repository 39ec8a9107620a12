// The candidate configurations (kCandidateConfigs) for the data types and layouts that get no
// full sweep: bf16 TN, f16 NN and bf16 NN. gemm_bench checks at start-up that this list and
// kCandidateConfigs agree.
#include "kernel_table.cuh"

namespace tilepipe_bench {
namespace {

template <DType D, LayoutPair L>
void add_candidates(std::vector<TilepipeKernel>& out) {
  //               tile: M    N    K   warp: M   N  stages
  constexpr TileConfig def = kDefaultConfig;
  if constexpr (!(def == TileConfig{256, 128, 32, 64, 64, 4}))  // the default (sm_90-only builds)
    add_kernel<D, L, def.tile_m, def.tile_n, def.tile_k, def.warp_m, def.warp_n, def.stages>(out);
  add_kernel<D, L, 256, 128, 32, 64, 64, 4>(out);  // the portable default
  add_kernel<D, L, 128, 128, 32, 64, 64, 4>(out);  // the default before 256x128x32
  add_kernel<D, L, 128, 128, 32, 64, 64, 3>(out);
  add_kernel<D, L, 256, 128, 32, 64, 64, 3>(out);
  add_kernel<D, L, 128, 256, 64, 64, 64, 3>(out);
  add_kernel<D, L, 64, 64, 64, 32, 32, 3>(out);
  add_kernel<D, L, 64, 64, 64, 32, 32, 4>(out);
}

}  // namespace

void add_candidate_kernels(std::vector<TilepipeKernel>& out) {
  add_candidates<DType::kBF16, LayoutPair::kTN>(out);
  add_candidates<DType::kF16, LayoutPair::kNN>(out);
  add_candidates<DType::kBF16, LayoutPair::kNN>(out);
}

}  // namespace tilepipe_bench
