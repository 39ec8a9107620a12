#pragma once
//! \file
//! GemmKernelSm90's `__global__` function (gemm_kernel_sm90) and its `entry`, defined out of the
//! class so that kernel_sm90.cuh stays the kernel's roles. Included by that header; not meant to
//! be included alone.

#include "kernel_sm90.cuh"

namespace tilepipe {

//! The `__global__` entry of a GemmKernelSm90: `Kernel::kThreads` threads, one block per SM
//! (`__launch_bounds__(n, 1)` gives setmaxnreg the register cap it needs), in clusters of
//! `Kernel::kClusterM` blocks along x, `Kernel::kSharedBytes` of dynamic shared memory. The tensor
//! maps travel in the parameter, which must stay in parameter memory (`__grid_constant__`).
template <class Kernel>
__global__ void __launch_bounds__(Kernel::kThreads, 1)
    gemm_kernel_sm90(const __grid_constant__ typename Kernel::Params params) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ unsigned char smem[];
  // Aligned by an offset from `smem`, not by rounding an integer: a pointer derived from the
  // shared array keeps its state space, so the compiler writes through it with STS rather than
  // generic stores (the epilogue's staging).
  const auto misalignment = static_cast<unsigned>(__cvta_generic_to_shared(smem)) & 1023u;
  auto* storage =
      reinterpret_cast<typename Kernel::SharedStorage*>(smem + ((1024u - misalignment) & 1023u));
  Kernel{}(params, *storage);
#endif
}

template <class Mainloop, class Epilogue, class Raster, class KBlockOp, class Grouped>
auto GemmKernelSm90<Mainloop, Epilogue, Raster, KBlockOp, Grouped>::entry() -> Entry {
  return gemm_kernel_sm90<GemmKernelSm90>;
}

}  // namespace tilepipe
