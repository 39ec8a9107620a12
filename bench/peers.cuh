#pragma once
//! \file
//! Other libraries' GEMM kernels, timed next to tilepipe's on the same problems, inputs and
//! method, and verified the same way. cuBLAS is the reference and has its own file
//! (peer_cublas.cuh); the optional peers are CUTLASS's kernels (TILEPIPE_BENCH_CUTLASS):
//!
//! - `cutlass-sm80` (peer_cutlass_sm80.cu): CUTLASS 2.x's multistage `cutlass::gemm::device::Gemm`
//!   (cp.async, mma.sync), the Ampere-class counterpart of tilepipe's Ampere tier;
//! - `cutlass-sm90` (peer_cutlass_sm90.cu): CUTLASS 3.x's TMA warp-specialized kernels, cooperative
//!   and ping-pong, from its collective builders; compiled for sm_90a only, run on sm_90 only.
//!
//! The peer translation units include CUTLASS and nothing of tilepipe's kernels; this header is all
//! the rest of the benchmark sees of them.
//!
//! tilepipe's stream-K kernels (configs_stream_k.cu) register here too, as `tilepipe-streamk`: a
//! column of their own in the tables, next to the data-parallel configurations they are measured
//! against, with the workspace each asks for; and, as `tilepipe-ampere` (configs_ampere_tier.cu),
//! the default tile on the Ampere tier where the default rows run the Hopper tier.

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <vector>

#include "bench_common.cuh"

namespace tilepipe_bench {

//! One compiled kernel of another library.
struct PeerKernel {
  //! Its column in the tables: the peer's name ("cutlass-sm80", "cutlass-sm90"); the tables show
  //! the fastest verified configuration of each peer and tilepipe's ratio to it.
  const char* peer;
  //! The configuration, e.g. "128x256x64/w64x64/s3" (tile, warp tile, stages) or
  //! "coop/128x256x64/c2x1x1/s4" (schedule, tile, cluster, stages).
  std::string config;
  DType dtype;
  LayoutPair layout;
  //! Whether it can run on the device (e.g. sm_90a code needs an sm_90 device).
  bool (*runs_on)(const cudaDeviceProp& prop);
  //! The device workspace it needs for these operands (bytes, 0 for most).
  std::size_t (*workspace_size)(const Operands& op);
  //! Why its own argument check refuses these operands (with their workspace), "" if it takes
  //! them: e.g. leading dimensions that are not multiples of its vector width. The benchmark
  //! skips such a problem, with the reason, rather than count a failure.
  std::string (*refuses)(const Operands& op);
  //! Checks the arguments and launches on the stream, alpha = 1, beta = 0, with
  //! `op.workspace`; returns "" or what went wrong.
  std::string (*run)(const Operands& op, cudaStream_t stream);
};

//! The peers' kernels that the program holds: each peer translation unit adds its own at start-up,
//! through a PeerRegistrar (catalog.cuh's all_peer_kernels() returns them sorted).
std::vector<PeerKernel>& peer_registry();

struct PeerRegistrar {
  explicit PeerRegistrar(void (*add)(std::vector<PeerKernel>& out)) { add(peer_registry()); }
};

//! A peer's source is compiled once per part, so that a full build spreads its kernels over
//! several compiler processes: part 0..3 holds f16 TN, f16 NN, bf16 TN, bf16 NN (CMake defines
//! TILEPIPE_BENCH_CUTLASS_PART).
constexpr DType dtype_of_part(int part) { return part < 2 ? DType::kF16 : DType::kBF16; }
constexpr LayoutPair layout_of_part(int part) {
  return part % 2 == 0 ? LayoutPair::kTN : LayoutPair::kNN;
}

}  // namespace tilepipe_bench
