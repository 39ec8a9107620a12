#pragma once
//! \file
//! Qualifier macros shared by every tilepipe header.
//!
//! `layout/` headers must compile with a plain host C++17 compiler (they are unit-tested
//! on machines without a GPU), so the CUDA qualifiers collapse to nothing there.

#if defined(__CUDACC__)
#  define TILEPIPE_HOST_DEVICE __host__ __device__ __forceinline__
#  define TILEPIPE_DEVICE __device__ __forceinline__
#else
#  define TILEPIPE_HOST_DEVICE inline
#  define TILEPIPE_DEVICE inline
#endif

//! True in the device compilation pass for an architecture that has cp.async, ldmatrix and
//! mma.sync m16n8k16 (sm_80 and newer).
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 800)
#  define TILEPIPE_ARCH_SM80_PLUS 1
#else
#  define TILEPIPE_ARCH_SM80_PLUS 0
#endif

//! Unroll hint for device code; nothing in a host compilation (where g++ would warn about it).
#if defined(__CUDA_ARCH__)
#  define TILEPIPE_UNROLL _Pragma("unroll")
#else
#  define TILEPIPE_UNROLL
#endif
