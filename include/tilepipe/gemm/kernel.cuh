#pragma once
//! \file
//! GemmKernel: one output tile per thread block, a mainloop then an epilogue, over a grid of
//! (tiles, K slices, batches). The provided GEMMs instantiate it; a new mainloop, epilogue or
//! tile order is a new template argument, not a new kernel.

#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "../arch/cluster.cuh"
#include "../detail/macros.cuh"
#include "../layout/tile_raster.cuh"
#include "../status.cuh"
#include "split_k.cuh"

namespace tilepipe {

//! What a GemmKernel's `blockIdx.y` means, and how the slices of K it selects are summed.
enum class SliceReduction {
  //! No slices: the kernel has no slice arithmetic at all.
  kNone,
  //! `blockIdx.y` is a slice of K; its block writes the slice's partial products through the
  //! epilogue into a D of its own (`slice_stride_d` apart, split-K's workspace), and another
  //! kernel sums them (split_k.cuh).
  kWorkspace,
  //! `blockIdx.y` is a slice of K, and the slices of one output tile are one thread-block cluster
  //! of (1, slices, 1) blocks (sm_90 and newer): rank 0 adds the others' f32 accumulators, read
  //! from their shared memory, in slice order and runs the epilogue into D alone.
  kCluster,
};

//! The kernel's body.
//!
//! \tparam Mainloop    a block-scope mainloop (`MultistageMainloop`)
//! \tparam Epilogue    a block-scope epilogue of its accumulators (`StagedEpilogue`)
//! \tparam Raster      the order of output tiles over `blockIdx.x` (`GroupedRaster<8>`)
//! \tparam kReduction  whether `blockIdx.y` selects a slice of K (split-K), and how the slices are
//!                     summed (SliceReduction); kCluster needs sm_90 (gemm_cluster_kernel)
template <class Mainloop, class Epilogue, class Raster,
          SliceReduction kReduction = SliceReduction::kNone>
struct GemmKernel {
  using Element = typename Mainloop::Element;
  using ElementB = typename Mainloop::ElementB;
  using Tile = typename Mainloop::Tile;
  using Accumulators = typename Mainloop::Accumulators;
  static constexpr int kThreads = Mainloop::kThreads;
  static constexpr bool kSliceK = kReduction != SliceReduction::kNone;
  static constexpr bool kCluster = kReduction == SliceReduction::kCluster;
  //! The most slices (blocks of a cluster) kCluster reduces: the portable cluster size.
  static constexpr int kMaxClusterSlices = 8;

  //! With kCluster: a block's f32 accumulators, for rank 0 of its cluster to read. Quad `q` of
  //! thread `t` (its accumulators `j` = 0..3 of m16n8 tile `(q / kTilesN, q % kTilesN)`) is
  //! `quads[q][t]`: a warp's 16-byte stores and loads cover 512 consecutive bytes, which is
  //! conflict-free.
  struct ClusterPartials {
    static constexpr int kQuads = Accumulators::kTilesM * Accumulators::kTilesN;
    float4 quads[kQuads][kThreads];  // (TileM x TileN / 4 / kThreads, kThreads)
  };
  struct NoPartials {};

  //! The mainloop's ring, reused once the ring has drained by the epilogue (and, with kCluster,
  //! first by the partials).
  union SharedStorage {
    typename Mainloop::SharedStorage mainloop;
    typename Epilogue::SharedStorage epilogue;
    std::conditional_t<kCluster, ClusterPartials, NoPartials> partials;
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
    std::int64_t slice_stride_d;  //!< with kWorkspace: elements between the D of consecutive slices
    typename Epilogue::Params epilogue;  //!< D, C, alpha, beta, the output operator, m and n
    int copy_bytes_a = 16, copy_bytes_b = 16;  //!< a narrow mainloop's copy widths (16, 8, 4, 2)
    typename Mainloop::TransformB transform_b;  //!< a MixedInput mainloop's B transform
  };

  //! Where a tile sits (tile_origin): an edge tile moves back inside D, so that the mainloop
  //! loads it as an inner tile rather than masking every k-tile's copies (log entry 34), by a
  //! multiple of 16 bytes of the smallest of A's, B's and D's elements. Not with AnyAlignment,
  //! whose mainloop checks every copy anyway.
  static constexpr int kMoveGranule =
      Mainloop::kAnyAlignment ? 0 : move_granule<Element, ElementB, typename Epilogue::Element>();
  TILEPIPE_HOST_DEVICE static constexpr TileOrigin origin_of(TileCoord tile, int m, int n) {
    return tile_origin<Tile::kM, Tile::kN, kMoveGranule>(tile, m, n);
  }

  TILEPIPE_DEVICE void operator()(const Params& p, SharedStorage& storage) const {
    const TileOrigin at =
        origin_of(Raster::tile_of(blockIdx.x, p.tiles_m, p.tiles_n), p.epilogue.m, p.epilogue.n);
    const int block_m0 = at.m0;
    const int block_n0 = at.n0;  // (the skips follow from these after the mainloop)
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
    mainloop(acc,
             Mainloop::operands(p.a + batch * p.batch_stride_a + a_k0, p.lda,
                                p.b + batch * p.batch_stride_b + b_k0, p.ldb, p.copy_bytes_a,
                                p.copy_bytes_b, &p.transform_b),
             Mainloop::block_tile(p.epilogue.m, p.epilogue.n, k_len, block_m0, block_n0, k0));

    // The mainloop has drained its ring, so the epilogue (and the partials) may reuse the same
    // shared memory.
    if constexpr (kCluster) {
      if (!reduce_across_cluster(acc, storage, p.slices.count)) return;  // rank >= 1: done
    }
    typename Epilogue::Params ep = p.epilogue;
    ep.d += batch * p.batch_stride_d;
    if constexpr (kReduction == SliceReduction::kWorkspace) ep.d += blockIdx.y * p.slice_stride_d;
    if (ep.beta != 0.0f) ep.c += batch * p.batch_stride_c;
    Epilogue epilogue(storage.epilogue, threadIdx.x);
    epilogue(acc, ep, block_m0, block_n0, mainloop.warp_m0(), mainloop.warp_n0(),
             skipped_before(block_m0, Tile::kM), skipped_before(block_n0, Tile::kN));
    // Rank 0 arrived once it had read the others' partials; it leaves with them.
    if constexpr (kCluster) arch::cluster_wait();
  }

 private:
  // kCluster: the sum of the `slices` blocks' accumulators into rank 0's `acc`, in slice order
  // 0, 1, ..., slices - 1, as split_k_reduce_kernel adds its slabs (so both give the same f32
  // sums). The cluster is (1, slices, 1) over blockIdx.y, so a block's rank is its slice.
  // Every thread of every block calls it once the ring has drained. Returns whether this block is
  // rank 0, which then runs the epilogue and waits at the cluster barrier (cluster_wait) before
  // it exits; the other blocks have waited there already, their shared memory read.
  TILEPIPE_DEVICE static bool reduce_across_cluster(Accumulators& acc, SharedStorage& storage,
                                                    int slices) {
    static_assert(kThreads % 32 == 0, "GemmKernel: kCluster needs whole warps");
    constexpr int kTilesN = Accumulators::kTilesN;
    constexpr int kQuads = ClusterPartials::kQuads;
    float4(&quads)[kQuads][kThreads] = storage.partials.quads;
    const int t = threadIdx.x;
    const int rank = static_cast<int>(blockIdx.y);
    if (rank != 0) {
      TILEPIPE_UNROLL
      for (int q = 0; q < kQuads; ++q) {
        const int mi = q / kTilesN, ni = q % kTilesN;
        quads[q][t] = make_float4(acc.get(mi, ni, 0), acc.get(mi, ni, 1), acc.get(mi, ni, 2),
                                  acc.get(mi, ni, 3));
      }
    }
    // The partials are in place for rank 0: the other ranks release their stores (rank 0 has
    // none to release, and needs no fence on its path), rank 0 acquires them.
    if (rank != 0) arch::cluster_arrive();
    else arch::cluster_arrive_relaxed();
    arch::cluster_wait();
    if (rank != 0) {
      // Rank 0 reads this block's shared memory until it arrives again; this block has accessed
      // nothing since its release.
      arch::cluster_arrive_relaxed();
      arch::cluster_wait();
      return false;
    }
    for (int s = 1; s < slices; ++s) {
      const std::uint32_t remote = arch::map_shared_rank(&quads[0][t], static_cast<unsigned>(s));
      TILEPIPE_UNROLL
      for (int q = 0; q < kQuads; ++q) {
        const float4 f = arch::load_shared_cluster(remote + q * kThreads * 16u);  // quads[q][t]
        const int mi = q / kTilesN, ni = q % kTilesN;
        acc.set(mi, ni, 0, acc.get(mi, ni, 0) + f.x);
        acc.set(mi, ni, 1, acc.get(mi, ni, 1) + f.y);
        acc.set(mi, ni, 2, acc.get(mi, ni, 2) + f.z);
        acc.set(mi, ni, 3, acc.get(mi, ni, 3) + f.w);
      }
    }
    // Release: rank 0's loads above are done before the others may leave (and their shared
    // memory go to another block).
    arch::cluster_arrive();
    return true;
  }
};

//! The `__global__` entry of a GemmKernel: a one-dimensional block of `Kernel::kThreads`
//! threads, `Kernel::kSharedBytes` of dynamic shared memory.
template <class Kernel>
__global__ void __launch_bounds__(Kernel::kThreads) gemm_kernel(const typename Kernel::Params params) {
  extern __shared__ __align__(128) unsigned char smem[];
  Kernel{}(params, *reinterpret_cast<typename Kernel::SharedStorage*>(smem));
}

//! The `__global__` entry of a GemmKernel whose slices are summed across a cluster
//! (SliceReduction::kCluster): as gemm_kernel, launched in clusters of (1, slices, 1) blocks
//! (launch_gemm_cluster_kernel). Clusters exist from sm_90 on: compiled for an older target the
//! kernel is empty, and it is launched only where the device runs code of it compiled for sm_90
//! or newer (gemm_cluster_kernel_arch).
template <class Kernel>
__global__ void __launch_bounds__(Kernel::kThreads)
    gemm_cluster_kernel(const typename Kernel::Params params) {
  static_assert(Kernel::kCluster, "gemm_cluster_kernel: the kernel must reduce across a cluster");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(128) unsigned char smem[];
  Kernel{}(params, *reinterpret_cast<typename Kernel::SharedStorage*>(smem));
#endif
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

//! The launch of cluster GemmKernel `K` (SliceReduction::kCluster) over (`tiles` tiles,
//! `slices` slices) in clusters of (1, `slices`, 1) blocks, on `stream`; `cluster` describes the
//! clusters (the configuration points to it, so it must outlive it).
template <class K>
cudaLaunchConfig_t gemm_cluster_config(int tiles, int slices, cudaLaunchAttribute& cluster,
                                       cudaStream_t stream) {
  cluster = cudaLaunchAttribute{};
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = 1;
  cluster.val.clusterDim.y = static_cast<unsigned>(slices);
  cluster.val.clusterDim.z = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(tiles), static_cast<unsigned>(slices), 1);
  config.blockDim = dim3(K::kThreads);
  config.dynamicSmemBytes = K::kSharedBytes;
  config.stream = stream;
  config.attrs = &cluster;
  config.numAttrs = 1;
  return config;
}

//! The architecture (10 x major + minor, e.g. 90) that the code device `device` runs of
//! gemm_cluster_kernel<K> was compiled for: cudaFuncGetAttributes' binary version, or its PTX
//! version where that is lower (code JIT-compiled from older PTX, in a build without sm_90 code,
//! has the device's binary version but the PTX's `__CUDA_ARCH__`); 0 where the device has no code
//! of it. The kernel does its work only where this is 90 or more. Asked once per device, then
//! remembered.
template <class K>
int gemm_cluster_kernel_arch(int device) {
  static std::atomic<int> known[256];  // 0: not asked yet; else the architecture + 1
  if (device < 0 || device >= 256) return 0;
  const int k = known[device].load(std::memory_order_relaxed);
  if (k != 0) return k - 1;
  int arch = 0;
  cudaFuncAttributes attr{};
  if (cudaFuncGetAttributes(&attr, gemm_cluster_kernel<K>) == cudaSuccess)
    arch = attr.ptxVersion > 0 && attr.ptxVersion < attr.binaryVersion ? attr.ptxVersion
                                                                       : attr.binaryVersion;
  else
    (void)cudaGetLastError();  // no code for this device: leave no error behind for the caller
  known[device].store(arch + 1, std::memory_order_relaxed);
  return arch;
}

// Opts cluster kernel `kernel` (a gemm_cluster_kernel<K>) in to its dynamic shared memory above
// the default 48 KB. Done before each use of the pointer, by the function that uses it: each
// translation unit has its own copy of a kernel template, and the linker may take two functions
// that use it from different ones (see GemmSm90::launch).
template <class K>
cudaError_t set_cluster_kernel_shared_bytes(void (*kernel)(const typename K::Params)) {
  if (K::kSharedBytes <= 48 * 1024) return cudaSuccess;
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              static_cast<int>(K::kSharedBytes));
}

//! How many clusters of (1, `slices`, 1) blocks of cluster GemmKernel `K` fit on device `device`
//! (the current one) at once, into `*clusters` (cudaOccupancyMaxActiveClusters); asked once per
//! device and slice count, then remembered. Only for a device whose code of the kernel is sm_90
//! or newer (gemm_cluster_kernel_arch).
template <class K>
cudaError_t resident_gemm_clusters(int device, int slices, int* clusters) {
  static std::atomic<int> known[256][K::kMaxClusterSlices + 1];  // 0: not asked yet; else n + 1
  const bool cached = device >= 0 && device < 256 && slices >= 1 && slices <= K::kMaxClusterSlices;
  if (cached && (*clusters = known[device][slices].load(std::memory_order_relaxed) - 1) >= 0)
    return cudaSuccess;
  void (*const kernel)(const typename K::Params) = gemm_cluster_kernel<K>;
  cudaError_t e = set_cluster_kernel_shared_bytes<K>(kernel);
  if (e != cudaSuccess) return e;
  cudaLaunchAttribute cluster{};
  const cudaLaunchConfig_t config = gemm_cluster_config<K>(1, slices, cluster, nullptr);
  int n = 0;
  e = cudaOccupancyMaxActiveClusters(&n, reinterpret_cast<const void*>(kernel), &config);
  if (e != cudaSuccess) return e;
  if (cached) known[device][slices].store(n + 1, std::memory_order_relaxed);
  *clusters = n;
  return cudaSuccess;
}

//! Launches cluster GemmKernel `K` over (`p.tiles_m * p.tiles_n` tiles, `p.slices.count` slices)
//! in clusters of the slices of a tile, on `stream`, where `resident_gemm_clusters` found room. A
//! failure is reported as "`who`: `what` failed: ..." (or cudaFuncSetAttribute's).
template <class K>
Status launch_gemm_cluster_kernel(const typename K::Params& p, const char* who, const char* what,
                                  cudaStream_t stream) {
  const auto failed = [&](const char* call, cudaError_t e) {
    return Status::error(Status::Code::kCudaError, std::string(who) + ": " + call + " failed: " +
                                                       cudaGetErrorString(e));
  };
  void (*const kernel)(const typename K::Params) = gemm_cluster_kernel<K>;
  cudaError_t e = set_cluster_kernel_shared_bytes<K>(kernel);
  if (e != cudaSuccess) return failed("cudaFuncSetAttribute", e);
  cudaLaunchAttribute cluster{};
  const cudaLaunchConfig_t config =
      gemm_cluster_config<K>(p.tiles_m * p.tiles_n, p.slices.count, cluster, stream);
  e = cudaLaunchKernelEx(&config, kernel, p);
  return e == cudaSuccess ? Status::success() : failed(what, e);
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
