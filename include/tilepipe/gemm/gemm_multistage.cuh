#pragma once
//! \file
//! The provided GEMM's front door, `D = op(alpha * A * B + beta * C)`: it chooses a tier per call.
//! The tiers are complete GEMMs of their own with the same arguments: GemmSm80 (gemm_sm80.cuh:
//! cp.async, ldmatrix, mma.sync on any sm_80+ GPU; the narrow kernel, split-K, stream-K) and
//! GemmSm90 (gemm_sm90.cuh: TMA, mbarriers, wgmma; an sm_90 GPU and a build for `90a`).
//! GemmTiered names its options (GemmOptions); GemmMultistage is the same with bools.

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <type_traits>

#include "../status.cuh"
#include "gemm_options.cuh"
#include "gemm_sm80.cuh"
#include "gemm_tier.cuh"
#include "hopper_tier.cuh"

namespace tilepipe {

//! A complete GEMM, batched, that runs on the Hopper tier where it can and on the Ampere tier
//! elsewhere, from one binary.
//!
//! \tparam ElementAB  `__half` or `__nv_bfloat16`; `float` with a MathTF32 or MathSimtF32 tile
//! \tparam ElementD   `__half`, `__nv_bfloat16` or `float` (C and D)
//! \tparam LayoutA    layout of A (M x K); \tparam LayoutB layout of B (K x N)
//! \tparam Stages     shared-memory ring depth (2..6 where it fits)
//! \tparam OutputOp   what is done to each element before it is stored (output_ops.cuh)
//! \tparam Tile       the Ampere tier's TileConfig (tile_configs.cuh); its math (MathDefault
//!                    unless given) says how A and B are multiplied
//! \tparam Options    GemmOptions: split-K, stream-K, no narrow kernel (gemm_options.cuh)
//!
//! **Tiers.** With the default `Tile`, or float A and B with `DefaultF32TileConfig<MathTF32>`, and
//! 2..6 stages, a call runs on the Hopper tier (GemmSm90 with the same `Stages` and its own tile)
//! when the current device runs this program's `sm_90a` code, the call neither splits K nor asks
//! for stream-K (which run only on 16-byte aligned arguments and are ignored on others), and the
//! workspace holds whatever the tier must copy first (below); otherwise on the Ampere tier.
//! `tier(args)` says which. tf32 inputs are not rounded on the Hopper tier (wgmma reads the f32
//! bits).
//!
//! **Copies in the workspace.** The Hopper tier first copies an operand that it cannot read as
//! given into `args.workspace` (`workspace_size(args)` bytes, checked like split-K's; asked for
//! whatever the current device, since the arguments' checks need none): tf32 A column-major or
//! B row-major K-major, because wgmma reads tf32 only K-major; and f16 or bf16 A or B that is
//! not 16-byte aligned (K or M odd, say) with lines 16 bytes apart, because TMA needs that. A
//! call that needs a copy and has no workspace runs on the Ampere tier (for unaligned operands,
//! its narrow kernel, much slower on a Hopper GPU). C and D are never copied: a D that is not
//! 16-byte aligned (N odd, say) is written from the registers, with no workspace.
template <class ElementAB, class ElementD, Layout LayoutA, Layout LayoutB, int Stages = 4,
          class OutputOp = Identity, class Tile = DefaultTileConfig<Stages>,
          class Options = GemmOptions<>>
class GemmTiered
    : public GemmSm80<ElementAB, ElementD, LayoutA, LayoutB, Stages, OutputOp, Tile, Options> {
  using Sm80 = GemmSm80<ElementAB, ElementD, LayoutA, LayoutB, Stages, OutputOp, Tile, Options>;

 public:
  using Arguments = typename Sm80::Arguments;
  //! The Ampere tier (whose kernels, checks and workspace rules this class also offers).
  using AmpereGemm = Sm80;
  //! Whether this instantiation has a Hopper tier: 2..6 stages, and the default tile, or float A
  //! and B with `DefaultF32TileConfig<MathTF32>`.
  static constexpr bool kHasHopperTier = (std::is_same_v<Tile, DefaultTileConfig<Stages>> ||
                                          std::is_same_v<Tile, DefaultF32TileConfig<MathTF32>>) &&
                                         Stages >= 2 && Stages <= 6;
  using HopperTier = detail::HopperTier<ElementAB, ElementD, LayoutA, LayoutB, Stages, OutputOp>;
  static constexpr bool kCopyA = kHasHopperTier && HopperTier::kCopyA;
  static constexpr bool kCopyB = kHasHopperTier && HopperTier::kCopyB;
  //! The Hopper tier's GEMM (`void` without one); for float, always A row-major and B
  //! column-major, reading the K-major copies where A or B are not.
  using HopperGemm = std::conditional_t<kHasHopperTier, typename HopperTier::Gemm, void>;

  //! The tier `run(args)` takes on the current device (for arguments `can_implement` accepts).
  static GemmTier tier(const Arguments& args) {
    if constexpr (kHasHopperTier) {
      typename HopperTier::Params p{};
      if (hopper_params(p, args)) return GemmTier::kHopper;
    }
    return GemmTier::kAmpere;
  }

  //! Bytes of workspace `run` needs for `args`: the Ampere tier's for split-K and stream-K, else
  //! the Hopper tier's copies' (and GemmSm90's own) where it would make them, whatever the current
  //! device.
  static std::size_t workspace_size(const Arguments& args) {
    if constexpr (kHasHopperTier)
      if (copies_operands(args)) return HopperTier::workspace_layout(for_hopper(args)).bytes;
    return Sm80::workspace_size(args);
  }

  //! The device-free checks of both tiers. On failure the message names the argument.
  static Status check_arguments(const Arguments& a) {
    Status s = Sm80::check_arguments(a);
    if (s && copies_operands(a) && a.workspace != nullptr)
      s = detail::GemmArgumentChecks<LayoutA, LayoutB>::check_workspace(
          a, workspace_size(a), HopperTier::kCopyWhat, HopperTier::kCopyPurpose);
    return s;
  }

  //! `check_arguments`, then the current device.
  static Status can_implement(const Arguments& args) {
    const Status s = check_arguments(args);
    return s ? Sm80::check_device() : s;
  }

  //! Checks the arguments and launches on `stream`, on the Hopper tier where it can run them
  //! (see `tier`), else on the Ampere tier. Returns the first error; launches nothing then.
  static Status run(const Arguments& args, cudaStream_t stream = nullptr) {
    Status s = can_implement(args);
    if (!s) return s;
    if constexpr (kHasHopperTier) {
      typename HopperTier::Params p{};
      if (!is_empty(args) && hopper_params(p, args))
        return HopperTier::launch(p, for_hopper(args), stream);
    }
    return Sm80::launch(args, stream);
  }

  //! `run` on the caller's choice of tier (to compare the tiers, or to test one): fails, saying
  //! why, where that tier cannot run `args` on the current device.
  static Status run_on(GemmTier t, const Arguments& args, cudaStream_t stream = nullptr) {
    Status s = can_implement(args);
    if (!s || t == GemmTier::kAmpere) return s ? Sm80::launch(args, stream) : s;
    if constexpr (kHasHopperTier) {
      typename HopperTier::Params p{};
      s = hopper_params(p, args);
      return !s || is_empty(args) ? s : HopperTier::launch(p, for_hopper(args), stream);
    } else {
      return Status::error(Status::Code::kInvalidArgument,
                           "GemmMultistage: this instantiation has no Hopper tier (it needs "
                           "2..6 stages and f16 or bf16 A and B with the default Tile, whose "
                           "math is MathDefault, or float A and B with "
                           "DefaultF32TileConfig<MathTF32>)");
    }
  }

 private:
  static bool is_empty(const Arguments& a) { return a.m == 0 || a.n == 0 || a.batch_count == 0; }

  // `a` as the Hopper tier runs it: for arguments that are not 16-byte aligned, split_k and
  // stream_k are ignored, as the narrow kernel ignores them.
  static Arguments for_hopper(const Arguments& a) {
    if (Sm80::kernel_for(a) != Sm80Kernel::kNarrow) return a;
    Arguments h = a;
    h.split_k = 1;
    h.stream_k = 0;
    return h;
  }

  // Whether the Hopper tier would copy A or B of `a`: an operand to copy, and the Ampere tier's
  // data-parallel or narrow kernel as the alternative (not split-K or stream-K; arguments that
  // are not 16-byte aligned only with the narrow kernel compiled in, else they are refused).
  static bool copies_operands(const Arguments& a) {
    if constexpr (kHasHopperTier) {
      const Sm80Kernel k = Sm80::kernel_for(a);
      return ((k == Sm80Kernel::kDataParallel && Sm80::vector_aligned(a)) ||
              k == Sm80Kernel::kNarrow) &&
             HopperTier::copies(for_hopper(a));
    } else {
      return false;
    }
  }

  // The Hopper tier's parameters for `args` (accepted by can_implement), if it takes them: only
  // where the Ampere tier would run its data-parallel or narrow kernel. Otherwise the reason.
  template <class HopperParams>
  static Status hopper_params(HopperParams& p, const Arguments& a) {
    const auto refuse = [](const std::string& why) {
      return Status::error(Status::Code::kInvalidArgument, "GemmMultistage: " + why);
    };
    switch (Sm80::kernel_for(a)) {
      case Sm80Kernel::kStreamK:
        return refuse("stream_k = " + std::to_string(a.stream_k) +
                      " runs on the Ampere tier here (GemmSm90 runs stream-K on the Hopper tier)");
      case Sm80Kernel::kSplitK:
        return refuse("split_k = " + std::to_string(a.split_k) +
                      " runs on the Ampere tier here (GemmSm90 splits K on the Hopper tier)");
      case Sm80Kernel::kNarrow:  // HopperTier::params says what it cannot take
      case Sm80Kernel::kDataParallel: break;
    }
    return HopperTier::params(p, for_hopper(a));
  }
};

//! The provided GEMM with its options as bools (GemmTiered with GemmOptions): `SplitK` compiles
//! split-K in, `AnyAlignment` the narrow kernel (arguments that are not 16-byte aligned; without
//! it they are refused), `StreamK` stream-K. Each is one more kernel to compile.
template <class ElementAB, class ElementD, Layout LayoutA, Layout LayoutB, int Stages = 4,
          class OutputOp = Identity, class Tile = DefaultTileConfig<Stages>, bool SplitK = false,
          bool AnyAlignment = true, bool StreamK = false>
using GemmMultistage = GemmTiered<ElementAB, ElementD, LayoutA, LayoutB, Stages, OutputOp, Tile,
                                  detail::GemmOptionsOf<SplitK, AnyAlignment, StreamK>>;

//! GemmMultistage with split-K compiled in.
template <class ElementAB, class ElementD, Layout LayoutA, Layout LayoutB, int Stages = 4,
          class OutputOp = Identity, class Tile = DefaultTileConfig<Stages>,
          bool AnyAlignment = true>
using GemmMultistageSplitK = GemmMultistage<ElementAB, ElementD, LayoutA, LayoutB, Stages, OutputOp,
                                            Tile, true, AnyAlignment>;

//! GemmMultistage with stream-K compiled in.
template <class ElementAB, class ElementD, Layout LayoutA, Layout LayoutB, int Stages = 4,
          class OutputOp = Identity, class Tile = DefaultTileConfig<Stages>,
          bool AnyAlignment = true>
using GemmMultistageStreamK = GemmMultistage<ElementAB, ElementD, LayoutA, LayoutB, Stages,
                                             OutputOp, Tile, false, AnyAlignment, true>;

}  // namespace tilepipe
