// f32 A, B and D (table "f32" of the report): GemmMultistage's f32 default tile
// (DefaultF32TileConfig, 128 x 128 x 32, 64 x 32 warps, 3 stages) under both f32 maths, tf32 on
// the tensor cores and SIMT f32 on the CUDA cores, TN and NN: four kernels, no sweep, and tf32
// again with 4 stages (its own column of the f32 table). On an sm_90a
// build tf32 TN also compiles GemmSm90<float> (128x256 tile, 32-float k slots, 3 stages), which
// GemmMultistage runs on a device that runs sm_90a code, for tf32 NN on a K-major copy of A that
// it makes first in the workspace the benchmark gives it (inside the timed call).
#include "kernel_table.cuh"

namespace tilepipe_bench {
namespace {

template <LayoutPair L, class Math, int S = 3>
void add_f32(std::vector<TilepipeKernel>& out) {
  using Tile = tilepipe::DefaultF32TileConfig<Math>;
  add_kernel<DType::kF32, L, Tile::Tile::kM, Tile::Tile::kN, Tile::Tile::kK, Tile::Warp::kM,
             Tile::Warp::kN, S, Math>(out);
}

}  // namespace

void add_f32_kernels(std::vector<TilepipeKernel>& out) {
  add_f32<LayoutPair::kTN, tilepipe::MathTF32>(out);
  add_f32<LayoutPair::kTN, tilepipe::MathSimtF32>(out);
  add_f32<LayoutPair::kNN, tilepipe::MathTF32>(out);
  add_f32<LayoutPair::kNN, tilepipe::MathSimtF32>(out);
  // tf32 with 4 stages (performance log, entry 25): the Hopper tier's 128 x 256 ring of 4 x 48 KB,
  // as f16's default has (and the Ampere tile's 4 x 32 KB); after the 3-stage rows, which the f32
  // table's "tf32" column shows.
  add_f32<LayoutPair::kTN, tilepipe::MathTF32, 4>(out);
  add_f32<LayoutPair::kNN, tilepipe::MathTF32, 4>(out);
}

}  // namespace tilepipe_bench
