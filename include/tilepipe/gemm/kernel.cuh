#pragma once
//! \file
//! GemmKernel: one output tile per thread block, a mainloop then an epilogue, over a grid of
//! (tiles, K slices, batches). The provided GEMMs instantiate it; a new mainloop, epilogue or
//! tile order is a new template argument, not a new kernel.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../arch/cluster.cuh"
#include "../detail/macros.cuh"
#include "../layout/tile_raster.cuh"
#include "launch.cuh"
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
    typename Epilogue::Params epilogue;         //!< D, C, alpha, beta, the output operator, m and n
    int copy_bytes_a = 16, copy_bytes_b = 16;   //!< a narrow mainloop's copy widths (16, 8, 4, 2)
    typename Mainloop::TransformB transform_b;  //!< a MixedInput mainloop's B transform
  };

  //! Its `__global__` function (gemm_kernel, or gemm_cluster_kernel with kCluster), for
  //! KernelLauncher.
  using Entry = void (*)(const Params);
  static Entry entry();

  //! The grid over (tiles, slices with kSliceK, `batches`), in clusters of a tile's slices with
  //! kCluster.
  static LaunchShape shape(const Params& p, int batches) {
    const unsigned slices = kSliceK ? static_cast<unsigned>(p.slices.count) : 1u;
    LaunchShape s{dim3(static_cast<unsigned>(p.tiles_m) * static_cast<unsigned>(p.tiles_n), slices,
                       static_cast<unsigned>(batches))};
    if constexpr (kCluster) s.cluster = dim3(1, slices, 1);
    return s;
  }

  //! Where a tile sits (tile_origin): an edge tile moves back inside D, so that the mainloop
  //! loads it as an inner tile rather than masking every k-tile's copies, by a
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
__global__ void __launch_bounds__(Kernel::kThreads)
    gemm_kernel(const typename Kernel::Params params) {
  extern __shared__ __align__(128) unsigned char smem[];
  Kernel{}(params, *reinterpret_cast<typename Kernel::SharedStorage*>(smem));
}

//! The `__global__` entry of a GemmKernel whose slices are summed across a cluster
//! (SliceReduction::kCluster): as gemm_kernel, launched in clusters of (1, slices, 1) blocks
//! (KernelLauncher). Clusters exist from sm_90 on: compiled for an older target the kernel is
//! empty, and it is launched only where the device runs code of it compiled for sm_90 or newer
//! (KernelLauncher::compiled_arch).
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
template <class Args, class = void>
struct HasBatches : std::false_type {};
template <class Args>
struct HasBatches<Args, std::void_t<decltype(Args::batch_count)>> : std::true_type {};

//! The fields of a GEMM kernel's Params (GemmKernel, StreamKGemmKernel) that come straight from
//! arguments `a` for tiles of `tile_m x tile_n`: A, B, K, the tile counts, and the batch strides
//! where the arguments have batches. D, C and the rest are the caller's.
template <class P, class Args>
P operand_params(const Args& a, int tile_m, int tile_n) {
  P p{};
  p.a = a.a;
  p.b = a.b;
  p.lda = a.lda;
  p.ldb = a.ldb;
  if constexpr (HasBatches<Args>::value) {
    p.batch_stride_a = a.batch_stride_a;
    p.batch_stride_b = a.batch_stride_b;
    p.batch_stride_c = a.batch_stride_c;
    p.batch_stride_d = a.batch_stride_d;
  }
  p.k = a.k;
  p.tiles_m = (a.m + tile_m - 1) / tile_m;
  p.tiles_n = (a.n + tile_n - 1) / tile_n;
  return p;
}
}  // namespace detail

template <class Mainloop, class Epilogue, class Raster, SliceReduction kReduction>
auto GemmKernel<Mainloop, Epilogue, Raster, kReduction>::entry() -> Entry {
  if constexpr (kCluster) return gemm_cluster_kernel<GemmKernel>;
  else return gemm_kernel<GemmKernel>;
}

}  // namespace tilepipe
