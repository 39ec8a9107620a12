// Stream-K (GemmMultistageStreamK, gemm/stream_k.cuh) for the candidate configurations
// (kCandidateConfigs) on f16 TN, the Ampere tier. They register as the peer "tilepipe-streamk"
// (peers.cuh), so that every problem times them next to the same configurations without stream-K,
// the tables show the fastest of them in a column of its own, and the JSON keeps every one: the
// ratio "edge / 4096^3 of the same configuration" reads off records whose "config" is the same,
// with and without the "streamK/" prefix. Each runs on as many blocks as fit on the device at once
// (GemmMultistage::stream_k_blocks) with the workspace it asks for.
#include <string>
#include <vector>

#include "kernel_table.cuh"
#include "peers.cuh"

namespace tilepipe_bench {
namespace {

constexpr DType kD = DType::kF16;
constexpr LayoutPair kL = LayoutPair::kTN;

template <int TM, int TN, int TK, int WM, int WN, int S>
using StreamKGemm = tilepipe::GemmMultistage<ElementOf<kD>, ElementOf<kD>, kLayoutA<kL>,
                                             tilepipe::Layout::kColumnMajor, S, tilepipe::Identity,
                                             tilepipe::TileConfig<TM, TN, TK, WM, WN>,
                                             /*SplitK=*/false, /*AnyAlignment=*/false,
                                             /*StreamK=*/true>;

// The arguments of `op` on the blocks that fit at once (asked of the device once per program).
template <int TM, int TN, int TK, int WM, int WN, int S>
tilepipe::GemmArguments<ElementOf<kD>, ElementOf<kD>> stream_k_arguments(const Operands& op) {
  using Gemm = StreamKGemm<TM, TN, TK, WM, WN, S>;
  static const int blocks = [] {
    int b = 0;
    return Gemm::stream_k_blocks(b) ? b : 0;
  }();
  auto args = arguments_of<kD>(op);
  args.stream_k = blocks;
  return args;
}

template <int TM, int TN, int TK, int WM, int WN, int S>
std::size_t stream_k_workspace(const Operands& op) {
  return StreamKGemm<TM, TN, TK, WM, WN, S>::workspace_size(
      stream_k_arguments<TM, TN, TK, WM, WN, S>(op));
}

template <int TM, int TN, int TK, int WM, int WN, int S>
std::string refuses_stream_k(const Operands& op) {
  const tilepipe::Status s = StreamKGemm<TM, TN, TK, WM, WN, S>::can_implement(
      stream_k_arguments<TM, TN, TK, WM, WN, S>(op));
  return s ? "" : s.message();
}

template <int TM, int TN, int TK, int WM, int WN, int S>
std::string run_stream_k(const Operands& op, cudaStream_t stream) {
  const auto args = stream_k_arguments<TM, TN, TK, WM, WN, S>(op);
  if (args.stream_k <= 0) return "GemmMultistage::stream_k_blocks failed";
  const tilepipe::Status s = StreamKGemm<TM, TN, TK, WM, WN, S>::run(args, stream);
  return s ? "" : s.message();
}

bool any_device(const cudaDeviceProp&) { return true; }  // the Ampere tier runs on every sm_80+

template <int TM, int TN, int TK, int WM, int WN, int S>
void add(std::vector<PeerKernel>& out) {
  if constexpr (kRingBytes<kD, TM, TN, TK, S> <= kMaxRingBytes)
    out.push_back(
        PeerKernel{"tilepipe-streamk", "streamK/" + TileConfig{TM, TN, TK, WM, WN, S}.name(), kD,
                   kL, &any_device, &stream_k_workspace<TM, TN, TK, WM, WN, S>,
                   &refuses_stream_k<TM, TN, TK, WM, WN, S>, &run_stream_k<TM, TN, TK, WM, WN, S>});
}

void add_stream_k_kernels(std::vector<PeerKernel>& out) {
  //      tile: M    N    K   warp: M   N  stages
  add<256, 128, 32, 64, 64, 4>(out);  // the portable default
  add<128, 128, 32, 64, 64, 4>(out);
  add<128, 128, 32, 64, 64, 3>(out);
  add<256, 128, 32, 64, 64, 3>(out);
  add<128, 256, 64, 64, 64, 3>(out);
  add<64, 64, 64, 32, 32, 3>(out);
  add<64, 64, 64, 32, 32, 4>(out);
}

const PeerRegistrar registrar(&add_stream_k_kernels);

}  // namespace
}  // namespace tilepipe_bench
