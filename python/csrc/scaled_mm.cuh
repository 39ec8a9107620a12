#pragma once
// The FP8 GEMM behind tilepipe.scaled_mm: tilepipe::GemmFp8Sm90 with the tile and schedule
// tilepipe::Fp8ScheduleHeuristic picks for the current device. `run_fp8<AB, D, Scaling>` runs one
// instantiation (its three tiles); setup.py generates a file per instantiation (fp8 type x output
// type x scale mode), so that they compile in parallel, and scaled_mm.cu picks one.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <tilepipe/gemm/gemm_fp8.cuh>

#include "gemm.h"

namespace tilepipe_torch {

template <class AB, class D, tilepipe::Fp8Scaling Scaling, class Config>
using Fp8Gemm = tilepipe::GemmFp8Sm90<AB, D, Scaling, tilepipe::Identity, Config>;
template <class AB, class D>
using Fp8Arguments = tilepipe::GemmFp8Arguments<AB, D, tilepipe::Identity>;

//! GemmFp8Sm90's arguments for `p`, with the measured tile (`tile`) and schedule for the current
//! device.
template <class AB, class D, tilepipe::Fp8Scaling Scaling>
Fp8Arguments<AB, D> fp8_arguments(const ScaledMmProblem& p, tilepipe::Fp8Tile& tile) {
  Fp8Arguments<AB, D> args;
  args.m = p.m;
  args.n = p.n;
  args.k = p.k;
  args.a = static_cast<const AB*>(p.a);
  args.b = static_cast<const AB*>(p.b);
  args.d = static_cast<D*>(p.d_data);
  args.lda = p.lda;
  args.ldb = p.ldb;
  args.ldd = p.ldd;
  args.scale_a = p.scale_a;
  args.scale_b = p.scale_b;
  args.ld_scale_a = p.ld_scale_a;
  args.ld_scale_b = p.ld_scale_b;
  tile = tilepipe::Fp8Tile::k128x128;
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) == cudaSuccess &&
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) == cudaSuccess) {
    const tilepipe::GemmFp8Schedule s =
        tilepipe::Fp8ScheduleHeuristic::select(p.m, p.n, p.k, sms, Scaling);
    args.split_k = s.split_k;
    args.stream_k = s.stream_k;
    tile = s.tile;
  }
  args.workspace = p.workspace;
  args.workspace_bytes = p.workspace_bytes;
  return args;
}

//! Calls `f(args, config)` with `p`'s arguments and a value of the chosen tile's configuration.
template <class AB, class D, tilepipe::Fp8Scaling Scaling, class F>
auto with_fp8_tile(const ScaledMmProblem& p, F&& f) {
  tilepipe::Fp8Tile tile{};
  const auto args = fp8_arguments<AB, D, Scaling>(p, tile);
  if (tile == tilepipe::Fp8Tile::k64x256Split)
    return f(args, tilepipe::Fp8DecodeTile256SplitConfig{});
  // The 192-wide and 64 x 64 tiles: tensorwise and row-wise only (the heuristic never picks them
  // block-wise).
  if constexpr (Scaling != tilepipe::Fp8Scaling::kBlockwise) {
    if (tile == tilepipe::Fp8Tile::k128x192) return f(args, tilepipe::Fp8Tile192Config{});
    if (tile == tilepipe::Fp8Tile::k64x192) return f(args, tilepipe::Fp8DecodeTile192Config{});
    if (tile == tilepipe::Fp8Tile::k64x64) return f(args, tilepipe::Fp8DecodeTile64Config{});
    if (tile == tilepipe::Fp8Tile::k64x64Interleaved)
      return f(args, tilepipe::Fp8DecodeTile64KInterleavedConfig{});
  }
  switch (tile) {
    case tilepipe::Fp8Tile::k128x256: return f(args, tilepipe::Fp8WideTileConfig{});
    case tilepipe::Fp8Tile::k64x128: return f(args, tilepipe::Fp8DecodeTileConfig{});
    default: return f(args, tilepipe::Fp8TileConfig{});
  }
}

template <class AB, class D, tilepipe::Fp8Scaling Scaling>
tilepipe::Status run_fp8(const ScaledMmProblem& p, cudaStream_t stream) {
  return with_fp8_tile<AB, D, Scaling>(p, [stream](const auto& args, auto config) {
    return Fp8Gemm<AB, D, Scaling, decltype(config)>::run(args, stream);
  });
}

template <class AB, class D, tilepipe::Fp8Scaling Scaling>
std::size_t fp8_workspace(const ScaledMmProblem& p) {
  return with_fp8_tile<AB, D, Scaling>(p, [](const auto& args, auto config) {
    return Fp8Gemm<AB, D, Scaling, decltype(config)>::workspace_size(args);
  });
}

}  // namespace tilepipe_torch

// An explicit instantiation (`prefix` empty) or its declaration (`prefix` extern) of the FP8 GEMM
// for one fp8 type, one output type and one scale mode (kTensorwise, kRowwise, kBlockwise).
#define TILEPIPE_TORCH_FP8_INSTANCE(prefix, AB, D, S)                                        \
  prefix template tilepipe::Status tilepipe_torch::run_fp8<AB, D, tilepipe::Fp8Scaling::S>(  \
      const tilepipe_torch::ScaledMmProblem&, cudaStream_t);                                 \
  prefix template std::size_t tilepipe_torch::fp8_workspace<AB, D, tilepipe::Fp8Scaling::S>( \
      const tilepipe_torch::ScaledMmProblem&);

// Every instance, as X(AB, D, S): setup.py generates one file for each (the same list).
#define TILEPIPE_TORCH_FP8_MODES(X, AB, D) \
  X(AB, D, kTensorwise)                    \
  X(AB, D, kRowwise)                       \
  X(AB, D, kBlockwise)
#define TILEPIPE_TORCH_FP8_OUTPUTS(X, AB)        \
  TILEPIPE_TORCH_FP8_MODES(X, AB, __nv_bfloat16) \
  TILEPIPE_TORCH_FP8_MODES(X, AB, __half)        \
  TILEPIPE_TORCH_FP8_MODES(X, AB, float)
#define TILEPIPE_TORCH_FP8_INSTANCES(X)        \
  TILEPIPE_TORCH_FP8_OUTPUTS(X, __nv_fp8_e4m3) \
  TILEPIPE_TORCH_FP8_OUTPUTS(X, __nv_fp8_e5m2)
