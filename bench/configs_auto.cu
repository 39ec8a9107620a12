// tilepipe::GemmAuto, the configuration heuristic with split-K, for every data type and layout
// of the benchmark: its tile configurations (the Ampere tier's three, the Small one with split-K,
// Medium's narrow kernel for unaligned operands, and the Hopper tier's three) in one translation
// unit.
#include <tilepipe/gemm/gemm_heuristic.cuh>

#include "kernel_table.cuh"

namespace tilepipe_bench {
namespace {

// Any alignment: the irregular problems' odd leading dimensions run the Hopper tier on copies, or
// Medium's narrow kernel.
template <DType D, LayoutPair L>
using AutoOf =
    tilepipe::GemmAuto<ElementOf<D>, ElementOf<D>, kLayoutA<L>, tilepipe::Layout::kColumnMajor,
                       tilepipe::Identity, /*AnyAlignment=*/true>;

template <DType D, LayoutPair L>
AutoChoice select_auto(const Operands& op, int sm_count) {
  using Auto = AutoOf<D, L>;
  using Tile = tilepipe::GemmAutoConfig::Tile;
  const auto args = arguments_of<D>(op);
  // GemmSm90 takes every Large problem where it runs (unaligned A or B on copies), so the Large
  // tier is given, not checked (`op` may hold only the shape: --list).
  const bool hopper = Auto::Hopper::available();
  const tilepipe::GemmAutoConfig c = Auto::select(
      args, sm_count, hopper ? tilepipe::GemmTier::kHopper : tilepipe::GemmTier::kAmpere);
  AutoChoice out;
  switch (c.tile) {
    case Tile::kLarge:
      out.config = hopper ? hopper_config_of<tilepipe::GemmAutoHopperLargeConfig>()
                          : config_of<tilepipe::GemmAutoLargePolicy>();
      break;
    case Tile::kMedium: out.config = config_of<tilepipe::GemmAutoMediumPolicy>(); break;
    case Tile::kSmall: out.config = config_of<tilepipe::GemmAutoSmallPolicy>(); break;
    case Tile::kHopper64x128:
      out.config = hopper_config_of<tilepipe::GemmAutoHopper64x128Config>();
      break;
    case Tile::kHopper64x64:
      out.config = hopper_config_of<tilepipe::GemmAutoHopper64x64Config>();
      break;
    default: out.tile_name = c.name(); break;  // a tile without a TileConfig here: GemmAuto's name
  }
  out.split_k = c.split_k;
  out.hopper = (c.tile == Tile::kLarge && hopper) || c.hopper_only();
  if (c.stream_k > 0) out.suffix += ",streamK=" + std::to_string(c.stream_k);
  if (!Auto::Medium::vector_aligned(args))
    out.suffix += c.tile == Tile::kLarge && hopper ? ",copies" : ",narrow";
  return out;
}

template <DType D, LayoutPair L>
std::size_t workspace_auto(const Operands& op) {
  return AutoOf<D, L>::workspace_size(arguments_of<D>(op));
}

template <DType D, LayoutPair L>
tilepipe::Status run_auto(const Operands& op, cudaStream_t stream) {
  return AutoOf<D, L>::run(arguments_of<D>(op), stream);
}

template <DType D, LayoutPair L>
void add(std::vector<AutoKernel>& out) {
  out.push_back(AutoKernel{D, L, &select_auto<D, L>, &workspace_auto<D, L>, &run_auto<D, L>});
}

}  // namespace

void add_auto_kernels(std::vector<AutoKernel>& out) {
  add<DType::kF16, LayoutPair::kTN>(out);
  add<DType::kF16, LayoutPair::kNN>(out);
  add<DType::kBF16, LayoutPair::kTN>(out);
  add<DType::kBF16, LayoutPair::kNN>(out);
}

}  // namespace tilepipe_bench
