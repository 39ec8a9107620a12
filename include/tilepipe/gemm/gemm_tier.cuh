#pragma once
//! \file
//! GemmTier: which set of instructions a call of the provided GEMM runs on.

namespace tilepipe {

//! Which set of instructions a GEMM call runs on.
enum class GemmTier {
  kAmpere,  //!< cp.async + ldmatrix + mma.sync (GemmSm80)
  kHopper,  //!< TMA + mbarrier ring + wgmma (GemmSm90)
};

inline const char* to_string(GemmTier t) { return t == GemmTier::kHopper ? "hopper" : "ampere"; }

}  // namespace tilepipe
