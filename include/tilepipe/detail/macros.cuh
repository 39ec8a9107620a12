#pragma once
//! \file
//! Qualifier macros shared by every tilepipe header.
//!
//! `layout/` headers must compile with a plain host C++17 compiler (they are unit-tested
//! on machines without a GPU), so the CUDA qualifiers collapse to nothing there.

#if defined(__CUDACC__)
#define TILEPIPE_HOST_DEVICE __host__ __device__ __forceinline__
#define TILEPIPE_DEVICE __device__ __forceinline__
#else
#define TILEPIPE_HOST_DEVICE inline
#define TILEPIPE_DEVICE inline
#endif

// Every device pass must be for sm_80 or newer: the collectives are made of cp.async, ldmatrix
// and mma.sync m16n8k16. Refusing here, rather than trapping at run time, catches a build for an
// older target however tilepipe was brought in (add_subdirectory, find_package, a bare -I).
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ < 800)
#error \
    "tilepipe needs sm_80 or newer (cp.async, ldmatrix, mma.sync m16n8k16): remove the older targets from the build (CMAKE_CUDA_ARCHITECTURES, or nvcc's -arch / -gencode)."
#endif

//! Unroll hint for device code; nothing in a host compilation (where g++ would warn about it).
#if defined(__CUDA_ARCH__)
#define TILEPIPE_UNROLL _Pragma("unroll")
#else
#define TILEPIPE_UNROLL
#endif
