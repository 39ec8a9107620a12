#pragma once
//! \file
//! Shared memory one thread block may use on the architecture being compiled (the opt-in
//! maximum of dynamic shared memory, CUDA C++ Programming Guide, "Technical Specifications").
//! In the host pass no architecture is known, so it is the largest of the supported ones; the
//! device pass of each target tightens it, so an oversized configuration fails to compile for
//! the targets it does not fit.

namespace tilepipe::detail {

#if defined(__CUDA_ARCH__)
#  if __CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 870
inline constexpr int kMaxSmemBytesPerBlock = 163 * 1024;  // A100, Orin
#  elif __CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 890 || __CUDA_ARCH__ >= 1200
inline constexpr int kMaxSmemBytesPerBlock = 99 * 1024;   // consumer Ampere/Ada/Blackwell
#  else
inline constexpr int kMaxSmemBytesPerBlock = 227 * 1024;  // Hopper, datacenter Blackwell
#  endif
#else
inline constexpr int kMaxSmemBytesPerBlock = 227 * 1024;
#endif

}  // namespace tilepipe::detail
