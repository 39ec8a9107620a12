#pragma once
//! \file
//! GemmAuto: the provided GEMM with its tile configuration and split-K factor chosen per problem
//! by GemmAutoHeuristic (gemm_auto_heuristic.cuh), so that small and skinny problems are not run
//! with a tile made for large ones. Arguments that are not 16-byte aligned run, on a device with
//! the Hopper tier and where the rule picks the Large tile, that tile on pitched copies of A or B
//! in the workspace (HopperOnCopies); otherwise the Medium configuration's narrow kernel, without
//! split-K: only Medium is compiled with one, so GemmAuto adds one kernel, not three, for them;
//! `GemmAuto<..., AnyAlignment = false>` compiles none and refuses such arguments.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "gemm_auto_heuristic.cuh"
#include "gemm_multistage.cuh"
#include "launch.cuh"
#include "tile_configs.cuh"

namespace tilepipe {

namespace detail {
//! The GemmMultistage of a GemmAuto candidate policy: its tile, its stages.
template <class ElementAB, class ElementD, Layout LayoutA, Layout LayoutB, class OutputOp,
          class Policy, bool SplitK = false, bool AnyAlignment = false>
using GemmOfPolicy = GemmMultistage<ElementAB, ElementD, LayoutA, LayoutB, Policy::kStages,
                                    OutputOp, typename Policy::Config, SplitK, AnyAlignment>;
}  // namespace detail

//! A GEMM that picks its tile configuration and split-K factor per problem
//! (GemmAutoHeuristic), from three GemmMultistage instantiations.
//!
//! \tparam ElementAB  `__half` or `__nv_bfloat16` (A and B)
//! \tparam ElementD   `__half`, `__nv_bfloat16` or `float` (C and D)
//! \tparam LayoutA    layout of A (M x K)
//! \tparam LayoutB    layout of B (K x N)
//! \tparam OutputOp   the output operator (output_ops.cuh), as for GemmMultistage
//! \tparam AnyAlignment  compile Medium's narrow kernel in, for arguments that are not 16-byte
//!                    aligned (as GemmMultistage's `AnyAlignment`)
//!
//! The arguments are GemmMultistage's; `args.split_k` and `args.stream_k` are ignored (the
//! heuristic sets them), and `args.workspace` / `args.workspace_bytes` must hold
//! `workspace_size(args)` bytes, which is 0 unless the heuristic splits K (the Small tile on the
//! Ampere tier) or runs stream-K (the Hopper tier's tiles).
//!
//! \code
//! using Gemm = tilepipe::GemmAuto<__half, __half, tilepipe::Layout::kRowMajor,
//!                                 tilepipe::Layout::kColumnMajor>;
//! Gemm::Arguments args;  // m, n, k, a, b, d, ...
//! std::size_t bytes = Gemm::workspace_size(args);   // for the current device
//! void* ws = nullptr;
//! if (bytes) cudaMalloc(&ws, bytes);
//! args.workspace = ws; args.workspace_bytes = bytes;
//! tilepipe::Status s = Gemm::run(args, stream);
//! \endcode
template <class ElementAB, class ElementD, Layout LayoutA, Layout LayoutB,
          class OutputOp = Identity, bool AnyAlignment = true>
class GemmAuto {
 public:
  using Arguments = GemmArguments<ElementAB, ElementD, OutputOp>;
  using Config = GemmAutoConfig;
  using Heuristic = GemmAutoHeuristic;
  using Large =
      detail::GemmOfPolicy<ElementAB, ElementD, LayoutA, LayoutB, OutputOp, GemmAutoLargePolicy>;
  using Medium =
      detail::GemmOfPolicy<ElementAB, ElementD, LayoutA, LayoutB, OutputOp, GemmAutoMediumPolicy,
                           /*SplitK=*/false, AnyAlignment>;
  using Small =
      detail::GemmOfPolicy<ElementAB, ElementD, LayoutA, LayoutB, OutputOp, GemmAutoSmallPolicy,
                           /*SplitK=*/true>;
  //! What the Large configuration runs on a device that runs the Hopper tier.
  using Hopper = GemmSm90<ElementAB, ElementD, LayoutA, LayoutB, GemmAutoHopperLargeConfig::kStages,
                          OutputOp, GemmAutoHopperLargeConfig>;
  //! The Hopper tier's tiles for smaller problems.
  using Hopper64x128 =
      GemmSm90<ElementAB, ElementD, LayoutA, LayoutB, GemmAutoHopper64x128Config::kStages, OutputOp,
               GemmAutoHopper64x128Config>;
  using Hopper64x64 =
      GemmSm90<ElementAB, ElementD, LayoutA, LayoutB, GemmAutoHopper64x64Config::kStages, OutputOp,
               GemmAutoHopper64x64Config>;
  //! What the Large configuration runs for arguments that are not 16-byte aligned on a device
  //! that runs the Hopper tier: `Hopper` on pitched copies of A or B where they need one
  //! (hopper_tier.cuh), with a D that is not aligned written from the registers.
  using HopperOnCopies = detail::HopperTier<ElementAB, ElementD, LayoutA, LayoutB,
                                            GemmAutoHopperLargeConfig::kStages, OutputOp>;
  static constexpr Layout kLayoutA = LayoutA;
  static constexpr Layout kLayoutB = LayoutB;

  //! The tier `run(args)` takes on the current device (for arguments `can_implement` accepts).
  static GemmTier tier(const Arguments& args) {
    int sms = 0;
    if (!current_sm_count(&sms)) return GemmTier::kAmpere;
    const Arguments a = with_split(args, 1);
    switch (select(args, sms).tile) {
      case Config::Tile::kLarge:
        return on_copies(a) || takes<Hopper>(a) ? GemmTier::kHopper : GemmTier::kAmpere;
      case Config::Tile::kHopper64x128:
        return takes<Hopper64x128>(a) ? GemmTier::kHopper : GemmTier::kAmpere;
      case Config::Tile::kHopper64x64:
        return takes<Hopper64x64>(a) ? GemmTier::kHopper : GemmTier::kAmpere;
      default: return GemmTier::kAmpere;
    }
  }

  //! The configuration `run` uses for `args` on a GPU with `sm_count` SMs where the Large
  //! configuration runs on tier `large_tier` (no device needed): the heuristic's; for arguments
  //! that are not 16-byte aligned, its Large choice on the Hopper tier, else Medium.
  static Config select(const Arguments& args, int sm_count, GemmTier large_tier) {
    if (AnyAlignment && !Medium::vector_aligned(args)) {
      // On the Hopper tier the problems that take its Large tile run it on copies; the others
      // (small M or N, where copying the operands would cost more than it saves) the narrow
      // kernel.
      if (large_tier == GemmTier::kHopper) {
        const Config c = Heuristic::select(args.m, args.n, args.k, args.batch_count, sm_count,
                                           GemmTier::kHopper);
        if (c.tile == Config::Tile::kLarge) return c;
      }
      return Config{Config::Tile::kMedium, 1};
    }
    return Heuristic::select(args.m, args.n, args.k, args.batch_count, sm_count, large_tier);
  }
  //! The same, with the Large configuration's tier on the current device for `args`.
  static Config select(const Arguments& args, int sm_count) {
    return select(args, sm_count, large_tier(args));
  }
  //! The tier the Large configuration takes for `args` on the current device.
  static GemmTier large_tier(const Arguments& args) {
    const Arguments a = with_split(args, 1);
    if (AnyAlignment && !Medium::vector_aligned(a))
      return unaligned_on_hopper(a) ? GemmTier::kHopper : GemmTier::kAmpere;
    return Hopper::can_implement(a) ? GemmTier::kHopper : GemmTier::kAmpere;
  }

  //! Bytes of workspace `run` needs for `args` on a GPU with `sm_count` SMs.
  static std::size_t workspace_size(const Arguments& args, int sm_count) {
    return workspace_size(args, select(args, sm_count));
  }
  //! Bytes of workspace `run` needs for `args` on the current device (0 if it cannot be queried:
  //! `run` then reports the error).
  static std::size_t workspace_size(const Arguments& args) {
    int sms = 0;
    if (!current_sm_count(&sms)) return 0;
    return workspace_size(args, sms);
  }
  //! Bytes of workspace configuration `config` needs for `args`.
  static std::size_t workspace_size(const Arguments& args, const Config& config) {
    const Arguments a = with_split(args, config);
    switch (config.tile) {
      case Config::Tile::kSmall: return Small::workspace_size(a);
      case Config::Tile::kLarge:
        if (on_copies(a)) return HopperOnCopies::workspace_layout(a).bytes;
        return config.stream_k > 0 ? Hopper::workspace_size(a) : 0;
      // Where the Hopper tier cannot run them, these run as the Small tile with the same split.
      case Config::Tile::kHopper64x128:
        return std::max(Hopper64x128::workspace_size(a), Small::workspace_size(a));
      case Config::Tile::kHopper64x64:
        return std::max(Hopper64x64::workspace_size(a), Small::workspace_size(a));
      default: return 0;
    }
  }

  //! Checks `args` for the configuration chosen on the current device (see GemmMultistage).
  static Status can_implement(const Arguments& args) {
    int sms = 0;
    Status s = current_sm_count(&sms);
    if (!s) return s;
    return can_implement(args, select(args, sms));
  }
  //! Checks `args` for configuration `config`. A Hopper-only tile the Hopper tier cannot run
  //! here is checked as what `run` then runs: the Small tile with the same split.
  static Status can_implement(const Arguments& args, const Config& config) {
    if (!valid(config)) return invalid_config(config);
    const Arguments a = with_split(args, config);
    switch (config.tile) {
      case Config::Tile::kLarge:
        if (on_copies(a)) {
          typename HopperOnCopies::Params p{};
          return HopperOnCopies::params(p, a);
        }
        return can_implement_hopper<Hopper, Large>(a);
      case Config::Tile::kMedium: return Medium::can_implement(a);
      case Config::Tile::kSmall: return Small::can_implement(a);
      case Config::Tile::kHopper64x128: return can_implement_hopper<Hopper64x128, Small>(a);
      case Config::Tile::kHopper64x64: return can_implement_hopper<Hopper64x64, Small>(a);
    }
    return invalid_config(config);
  }

  //! Chooses the configuration for the current device and runs it on `stream`. The choice needs
  //! only whether the Hopper tier takes the arguments; the tensor maps are encoded (once) only
  //! when a Hopper-tier tile runs.
  static Status run(const Arguments& args, cudaStream_t stream = nullptr) {
    int sms = 0;
    Status s = current_sm_count(&sms);
    if (!s) return s;
    return run(args, select(args, sms), stream);
  }
  //! Runs configuration `config` (e.g. one chosen earlier by `select`) on `stream`. Where the
  //! Hopper tier cannot run it (another GPU, or TMA cannot address the operands), the Large tile
  //! runs on the Ampere tier, and the Hopper-only tiles run as the Small tile with the same split.
  static Status run(const Arguments& args, const Config& config, cudaStream_t stream = nullptr) {
    if (!valid(config)) return invalid_config(config);
    const Arguments a = with_split(args, config);
    switch (config.tile) {
      case Config::Tile::kLarge:
        if (on_copies(a)) {
          typename HopperOnCopies::Params p{};
          const Status s = HopperOnCopies::params(p, a);
          return s ? HopperOnCopies::launch(p, a, stream) : s;
        }
        return run_on_hopper<Hopper, Large>(a, stream);
      case Config::Tile::kMedium: return Medium::run(a, stream);
      case Config::Tile::kSmall: return Small::run(a, stream);
      case Config::Tile::kHopper64x128: return run_on_hopper<Hopper64x128, Small>(a, stream);
      case Config::Tile::kHopper64x64: return run_on_hopper<Hopper64x64, Small>(a, stream);
    }
    return invalid_config(config);
  }

  //! The current device's SM count.
  static Status current_sm_count(int* sm_count) {
    detail::DeviceInfo dev;
    const Status s = detail::current_device_info(dev, "GemmAuto");
    *sm_count = dev.sms;
    return s;
  }

 private:
  // Whether the Hopper tier runs arguments that are not 16-byte aligned on copies (f16 and bf16 on
  // an sm_90a device; tf32 A and B must be aligned).
  static bool unaligned_on_hopper(const Arguments&) {
    return !std::is_same_v<ElementAB, float> && Hopper::available();
  }
  // Whether the Large configuration runs `a` on the Hopper tier on copies.
  static bool on_copies(const Arguments& a) {
    return AnyAlignment && !Medium::vector_aligned(a) && unaligned_on_hopper(a);
  }

  // Whether the Hopper tier's GEMM `H` runs `args` here (its checks, then its tensor maps).
  template <class H>
  static bool takes(const Arguments& args, typename H::Params* params = nullptr) {
    typename H::Params p{};
    if (!H::can_implement(args) || !H::make_params(p, args)) return false;
    if (params) *params = p;
    return true;
  }
  // The checks of what `run_on_hopper<H, Fallback>(args)` runs.
  template <class H, class Fallback>
  static Status can_implement_hopper(const Arguments& args) {
    if (H::can_implement(args)) return Status::success();
    const Status s = hopper_workspace_error<H>(args);
    return s ? Fallback::can_implement(with_split(args, args.split_k)) : s;
  }
  // `H` where the Hopper tier takes `args` (one tensor-map encode), else `Fallback` with the same
  // split and no stream-K. Where the Hopper tier would take the arguments but for the workspace,
  // the workspace's error: a slower kernel would hide the caller's mistake.
  template <class H, class Fallback>
  static Status run_on_hopper(const Arguments& args, cudaStream_t stream) {
    typename H::Params p{};
    if (takes<H>(args, &p)) return H::launch(p, stream);
    const Status s = hopper_workspace_error<H>(args);
    return s ? Fallback::run(with_split(args, args.split_k), stream) : s;
  }
  // `H::can_implement(args)`'s error where only split-K's or stream-K's workspace keeps `H` from
  // `args`.
  template <class H>
  static Status hopper_workspace_error(const Arguments& args) {
    if ((args.stream_k == 0 && args.split_k <= 1) || !takes<H>(with_split(args, 1)))
      return Status::success();
    return H::can_implement(args);
  }
  static Arguments with_split(const Arguments& args, int split_k) {
    Arguments a = args;
    a.split_k = split_k;
    a.stream_k = 0;
    return a;
  }
  static Arguments with_split(const Arguments& args, const Config& config) {
    Arguments a = with_split(args, config.split_k);
    a.stream_k = config.stream_k;
    return a;
  }
  // The Small tile and the Hopper tier's 64-row tiles split K; the Hopper tier's tiles run
  // stream-K; no tile both.
  static bool valid(const Config& c) {
    if (c.split_k < 1 || c.stream_k < 0 || (c.split_k > 1 && c.stream_k > 0)) return false;
    if (c.split_k > 1 && c.tile != Config::Tile::kSmall && !c.hopper_only()) return false;
    return c.stream_k == 0 || c.tile == Config::Tile::kLarge || c.hopper_only();
  }
  static Status invalid_config(const Config& config) {
    return Status::error(Status::Code::kInvalidArgument,
                         "GemmAuto: configuration " + config.name() +
                             " is not one GemmAuto runs (the Small tile and the Hopper tier's "
                             "64-row tiles split K, the Hopper tier's tiles run stream-K)");
  }
};

}  // namespace tilepipe
