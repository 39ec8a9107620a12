#pragma once
//! \file
//! The configurations compiled into gemm_bench (the configs_*.cu tables, and the peers' kernels of
//! peers.cuh), how to find one, and `--list`, which prints them without a GPU.

#include <vector>

#include "bench_common.cuh"
#include "peers.cuh"

namespace tilepipe_bench {

//! Every compiled GemmMultistage instantiation: the f16 TN sweep, then the candidates.
std::vector<TilepipeKernel> all_kernels();
//! GemmAuto for every data type and layout.
std::vector<AutoKernel> all_auto_kernels();
//! The optional peers' kernels that this build compiled (TILEPIPE_BENCH_CUTLASS); none without.
std::vector<PeerKernel> all_peer_kernels();

const TilepipeKernel* find_kernel(const std::vector<TilepipeKernel>& kernels, DType d, LayoutPair l,
                                  const TileConfig& c);
const AutoKernel* find_auto_kernel(const std::vector<AutoKernel>& kernels, DType d, LayoutPair l);

//! Every candidate, and GemmAuto, must be compiled for every data type and layout; returns how
//! many are not (and names them on stderr).
int missing_candidates(const std::vector<TilepipeKernel>& kernels,
                       const std::vector<AutoKernel>& autos);

//! --list: what is compiled (needs no GPU). Returns the exit status: 1 if a candidate is missing,
//! or if a peer that the build compiled has no kernel.
int list_kernels();

}  // namespace tilepipe_bench
