#pragma once
//! \file
//! GemmKernel: one output tile per thread block, a mainloop then an epilogue, over a grid of
//! (tiles, K slices, batches). The provided GEMMs instantiate it; a new mainloop, epilogue or
//! tile order is a new template argument, not a new kernel.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "../detail/macros.cuh"
#include "../layout/tile_raster.cuh"
#include "../status.cuh"
#include "split_k.cuh"

namespace tilepipe {

//! The kernel's body.
//!
//! \tparam Mainloop  a block-scope mainloop (`MultistageMainloop`)
//! \tparam Epilogue  a block-scope epilogue of its accumulators (`StagedEpilogue`)
//! \tparam Raster    the order of output tiles over `blockIdx.x` (`GroupedRaster<8>`)
//! \tparam kSliceK   whether `blockIdx.y` selects a slice of K (split-K's partial products);
//!                   without it the kernel has no slice arithmetic at all
template <class Mainloop, class Epilogue, class Raster, bool kSliceK = false>
struct GemmKernel {
  using Element = typename Mainloop::Element;
  using ElementB = typename Mainloop::ElementB;
  using Tile = typename Mainloop::Tile;
  static constexpr int kThreads = Mainloop::kThreads;

  //! The mainloop's ring, reused by the epilogue once the ring has drained.
  union SharedStorage {
    typename Mainloop::SharedStorage mainloop;
    typename Epilogue::SharedStorage epilogue;
  };
  static constexpr std::size_t kSharedBytes = sizeof(SharedStorage);

  struct Params {
    const Element* a;
    const ElementB* b;
    std::int64_t lda, ldb;
    std::int64_t batch_stride_a, batch_stride_b, batch_stride_c, batch_stride_d;
    int k;
    int tiles_m, tiles_n;
    SplitKSlices slices;          //!< with kSliceK: where each slice of K begins and ends
    std::int64_t slice_stride_d;  //!< with kSliceK: elements between the D of consecutive slices
    typename Epilogue::Params epilogue;  //!< D, C, alpha, beta, the output operator, m and n
    int copy_bytes_a = 16, copy_bytes_b = 16;  //!< a narrow mainloop's copy widths (16, 8, 4, 2)
    typename Mainloop::TransformB transform_b;  //!< a MixedInput mainloop's B transform
  };

  TILEPIPE_DEVICE void operator()(const Params& p, SharedStorage& storage) const {
    const TileCoord tile = Raster::tile_of(blockIdx.x, p.tiles_m, p.tiles_n);
    const int block_m0 = tile.m * Tile::kM;
    const int block_n0 = tile.n * Tile::kN;
    const std::int64_t batch = blockIdx.z;

    // This block's slice of K (all of it without kSliceK). Moving A and B to the slice's first k
    // is a pointer offset: k is A's column and B's row.
    int k0 = 0, k_len = p.k;
    if constexpr (kSliceK) {
      k0 = p.slices.begin(blockIdx.y);
      k_len = p.slices.extent(blockIdx.y);
    }
    const std::int64_t a_k0 = Mainloop::kLayoutA == Layout::kRowMajor ? k0 : k0 * p.lda;
    const std::int64_t b_k0 = Mainloop::kLayoutB == Layout::kRowMajor ? k0 * p.ldb : k0;

    Mainloop mainloop(storage.mainloop, threadIdx.x);
    typename Mainloop::Accumulators acc;
    acc.clear();
    mainloop(acc, p.a + batch * p.batch_stride_a + a_k0, p.lda,
             p.b + batch * p.batch_stride_b + b_k0, p.ldb, p.epilogue.m, p.epilogue.n, k_len,
             block_m0, block_n0, p.copy_bytes_a, p.copy_bytes_b, p.transform_b, k0);

    // The mainloop has drained its ring, so the epilogue may reuse the same shared memory.
    typename Epilogue::Params ep = p.epilogue;
    ep.d += batch * p.batch_stride_d;
    if constexpr (kSliceK) ep.d += blockIdx.y * p.slice_stride_d;
    if (ep.beta != 0.0f) ep.c += batch * p.batch_stride_c;
    Epilogue epilogue(storage.epilogue, threadIdx.x);
    epilogue(acc, ep, block_m0, block_n0, mainloop.warp_m0(), mainloop.warp_n0());
  }
};

//! The `__global__` entry of a GemmKernel: a one-dimensional block of `Kernel::kThreads`
//! threads, `Kernel::kSharedBytes` of dynamic shared memory.
template <class Kernel>
__global__ void __launch_bounds__(Kernel::kThreads) gemm_kernel(const typename Kernel::Params params) {
  extern __shared__ __align__(128) unsigned char smem[];
  Kernel{}(params, *reinterpret_cast<typename Kernel::SharedStorage*>(smem));
}

namespace detail {
//! Launches the GEMM kernel `K` (GemmKernel, StreamKGemmKernel) on `stream` over `grid`, opting in
//! to its dynamic shared memory above the default 48 KB. A failure is reported as
//! "`who`: `what` failed: ..." (or cudaFuncSetAttribute's).
template <class K>
Status launch_gemm_kernel_on(const typename K::Params& p, dim3 grid, const char* who,
                             const char* what, cudaStream_t stream) {
  auto kernel = gemm_kernel<K>;
  const auto failed = [&](const char* call, cudaError_t e) {
    return Status::error(Status::Code::kCudaError, std::string(who) + ": " + call + " failed: " +
                                                       cudaGetErrorString(e));
  };
  if (K::kSharedBytes > 48 * 1024) {
    const cudaError_t e = cudaFuncSetAttribute(
        kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(K::kSharedBytes));
    if (e != cudaSuccess) return failed("cudaFuncSetAttribute", e);
  }
  kernel<<<grid, K::kThreads, K::kSharedBytes, stream>>>(p);
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? Status::success() : failed(what, e);
}

//! Launches GemmKernel `K` over (`p.tiles_m * p.tiles_n` tiles, `slices`, `batches`); see
//! launch_gemm_kernel_on.
template <class K>
Status launch_gemm_kernel(const typename K::Params& p, int slices, int batches, const char* who,
                          const char* what, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(p.tiles_m) * static_cast<unsigned>(p.tiles_n),
                  static_cast<unsigned>(slices), static_cast<unsigned>(batches));
  return launch_gemm_kernel_on<K>(p, grid, who, what, stream);
}

//! The device checks of a GEMM built from GemmKernel: device `device` is sm_80 or newer
//! (`major`.`minor`: cp.async, mma.sync m16n8k16), and its opt-in limit of shared memory per
//! block, `smem_optin`, holds the kernel's `shared_bytes`. Messages start with `who`.
inline Status check_gemm_kernel_device(const char* who, int device, int major, int minor,
                                       std::size_t shared_bytes, int smem_optin) {
  if (major < 8)
    return Status::error(Status::Code::kUnsupportedDevice,
                         std::string(who) + ": device " + std::to_string(device) + " is sm_" +
                             std::to_string(major) + std::to_string(minor) +
                             "; tilepipe needs sm_80 or newer (cp.async, mma.sync m16n8k16)");
  if (smem_optin < 0 || static_cast<std::size_t>(smem_optin) < shared_bytes)
    return Status::error(Status::Code::kInsufficientResources,
                         std::string(who) + ": this configuration needs " +
                             std::to_string(shared_bytes) + " bytes of shared memory per block; " +
                             "device " + std::to_string(device) + " allows " +
                             std::to_string(smem_optin) + "; use fewer stages");
  return Status::success();
}
}  // namespace detail

}  // namespace tilepipe
