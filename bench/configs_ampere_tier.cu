// The default's tile on the Ampere tier. GemmMultistage<..., S> with its default tile runs the
// Hopper tier on an sm_90a device (the "default" rows and their stage rows), so without this file
// the tables would have no mma.sync kernel of that tile there, while CUTLASS's SM80 peer has its
// 256 x 128 x 64 / 3 stages, its best NN configuration at 4096^3 and 8192^3. These kernels are
// the same instantiations run with `run_on(GemmTier::kAmpere, ...)`, registered as the peer
// "tilepipe-ampere" (peers.cuh) so that they get a column of their own, for the comparison of
// like with like; on a device without the Hopper tier the default rows are already these kernels,
// and the peer does not run.
#include <string>
#include <vector>

#include <tilepipe/gemm/kernel_sm90.cuh>

#include "kernel_table.cuh"
#include "peers.cuh"

namespace tilepipe_bench {
namespace {

// GemmMultistage<..., S>'s default policy, as the benchmark names configurations.
template <int S>
inline constexpr TileConfig kDefault = config_of<tilepipe::DefaultGemmPolicy<S>>();

template <DType D, LayoutPair L, int S>
using DefaultTileGemm = GemmOf<D, L, kDefault<S>.tile_m, kDefault<S>.tile_n, kDefault<S>.tile_k,
                               kDefault<S>.warp_m, kDefault<S>.warp_n, S, tilepipe::MathDefault>;

template <DType D, LayoutPair L, int S>
std::string run_ampere(const Operands& op, cudaStream_t stream) {
  const tilepipe::Status s =
      DefaultTileGemm<D, L, S>::run_on(tilepipe::GemmTier::kAmpere, arguments_of<D>(op), stream);
  return s ? "" : s.message();
}

template <DType D, LayoutPair L, int S>
std::string refuses_ampere(const Operands& op) {
  const tilepipe::Status s = DefaultTileGemm<D, L, S>::can_implement(arguments_of<D>(op));
  return s ? "" : s.message();
}

std::size_t no_workspace(const Operands&) { return 0; }

// Only where the default rows run the Hopper tier (an sm_90 device running this build's sm_90a
// code); elsewhere they are these kernels already.
bool hopper_device(const cudaDeviceProp&) {
  int device = 0;
  return cudaGetDevice(&device) == cudaSuccess && tilepipe::hopper_tier_available(device);
}

template <DType D, LayoutPair L, int S>
void add(std::vector<PeerKernel>& out) {
  constexpr TileConfig c = kDefault<S>;
  static_assert(DefaultTileGemm<D, L, S>::kHasHopperTier,
                "configs_ampere_tier.cu: the default tile at these stages has no Hopper tier; "
                "its plain rows already run the Ampere tier");
  if constexpr (kRingBytes<D, c.tile_m, c.tile_n, c.tile_k, S> <= kMaxRingBytes)
    out.push_back(PeerKernel{"tilepipe-ampere", c.name(), D, L, &hopper_device, &no_workspace,
                             &refuses_ampere<D, L, S>, &run_ampere<D, L, S>});
}

template <DType D, LayoutPair L>
void add_stages(std::vector<PeerKernel>& out) {
  add<D, L, 3>(out);  // CUTLASS's SM80 peer's best NN stages with this tile
  add<D, L, 4>(out);  // the default's own stages
}

void add_ampere_tier_kernels(std::vector<PeerKernel>& out) {
  add_stages<DType::kF16, LayoutPair::kTN>(out);
  add_stages<DType::kF16, LayoutPair::kNN>(out);
  add_stages<DType::kBF16, LayoutPair::kTN>(out);
  add_stages<DType::kBF16, LayoutPair::kNN>(out);
}

const PeerRegistrar registrar(&add_ampere_tier_kernels);

}  // namespace
}  // namespace tilepipe_bench
