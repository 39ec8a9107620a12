#pragma once
//! \file
//! PersistentSm90: the host side that every GEMM on the persistent Hopper kernel
//! (GemmKernelSm90) shares: how many clusters fit at once, how the work is cut (data-parallel,
//! split-K, stream-K), where a launch's partial tiles and arrival counters go in the workspace,
//! and the launch itself. GemmSm90 and GemmFp8Sm90 are this plus their own arguments.

#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "../status.cuh"
#include "launch.cuh"
#include "split_k.cuh"

namespace tilepipe {
namespace detail {

//! An epoch no earlier call in this process returned (until 2^32 calls; never 0), for the arrival
//! counters of a launch's partial tiles (WarpgroupPartials). It starts from the clock, so that a
//! workspace that another process left counters in is unlikely to hold the same epoch either.
inline std::uint32_t next_epoch() {
  static std::atomic<std::uint32_t> epoch{static_cast<std::uint32_t>(
      std::chrono::steady_clock::now().time_since_epoch().count() * 2654435761u)};
  std::uint32_t e = 0;
  while (e == 0) e = epoch.fetch_add(1, std::memory_order_relaxed) + 1;
  return e;
}

}  // namespace detail

//! \tparam Kernel  a GemmKernelSm90
template <class Kernel>
struct PersistentSm90 {
  using Scheduler = typename Kernel::Scheduler;
  using Params = typename Kernel::Params;
  static constexpr int kClusterM = Kernel::kClusterM;
  static constexpr int kTileK = Kernel::kTileK;

  //! How an `m x n x k` GEMM of `batches` batches is cut on `workers` persistent workers
  //! (clusters): data-parallel, split-K (`split_k > 1`) or stream-K (`stream_k > 0` blocks,
  //! `stream_k / kClusterM` workers, at least one).
  static Scheduler schedule(int m, int n, int batches, int k, int split_k, int stream_k,
                            int workers) {
    const int im = Kernel::items_m(m), in = Kernel::items_n(n);
    const int kt = Kernel::k_tiles(k);
    if (stream_k > 0) {
      const int sk = stream_k / kClusterM;
      return Scheduler::stream_k(im, in, batches, kt, sk > 0 ? sk : 1);
    }
    if (split_k > 1)
      return Scheduler::split_k(im, in, batches, kt, split_k_slices(k, split_k, kTileK).count,
                                workers);
    return Scheduler::data_parallel(im, in, batches, kt, workers);
  }

  //! Clusters of the kernel that fit on the current device at once (at least one, or an error
  //! naming `who`).
  static Status resident_clusters(int& clusters, const char* who) {
    clusters = 0;
    Status s = KernelLauncher<Kernel>::resident_clusters(dim3(kClusterM, 1, 1), &clusters, who);
    if (!s) return s;
    if (clusters <= 0)
      return Status::error(Status::Code::kUnsupportedDevice,
                           std::string(who) + ": no cluster of " + std::to_string(kClusterM) +
                               " blocks of this kernel fits on the current device");
    return Status::success();
  }

  //! Split-K whose units all fit on the device at once in clusters of `splits` blocks (at most
  //! 8) sums each tile's pieces in its cluster (WarpgroupPartials::sum_in_cluster) where the
  //! kernel can: one unit per block, the pieces' slots ordered by a cluster barrier rather than
  //! counted in by device-scope atomics. Sets `p.work` and `p.cluster_k` so then, and leaves them
  //! otherwise; the sums are the same bits.
  static Status reduce_in_clusters(Params& p, int m, int n, int batches, int k, const char* who) {
    if constexpr (Kernel::kReducesInCluster) {
      const int splits = p.work.splits();
      if (p.work.kind() != Decomposition::kSplitK || splits > 8) return Status::success();
      const long long units = p.work.items() * splits;
      int clusters = 0;
      const Status s = KernelLauncher<Kernel>::resident_clusters(
          dim3(static_cast<unsigned>(splits), 1, 1), &clusters, who);
      if (!s) return s;
      if (units > static_cast<long long>(clusters) * splits) return Status::success();
      p.work = Scheduler::split_k(Kernel::items_m(m), Kernel::items_n(n), batches,
                                  Kernel::k_tiles(k), splits, static_cast<int>(units));
      p.cluster_k = splits;
    } else {
      (void)p, (void)m, (void)n, (void)batches, (void)k, (void)who;
    }
    return Status::success();
  }

  //! Points `p`'s arrival counters and partial tiles into `workspace` where `p.work` cuts tiles
  //! into pieces (the caller has checked its size: `Kernel::workspace_bytes(p.work)`), with an
  //! epoch new to the counters, so that they need no clearing.
  static void attach_workspace(Params& p, void* workspace) {
    if (Kernel::workspace_bytes(p.work) == 0) return;
    auto* base = static_cast<unsigned char*>(workspace);
    p.counters = reinterpret_cast<std::uint64_t*>(base);
    p.epoch = detail::next_epoch();
    p.partials = reinterpret_cast<float*>(base + Kernel::counter_bytes(p.work));
  }

  //! Launches the kernel for `p`: one cluster of `kClusterM` blocks per worker of `p.work`, or
  //! clusters of `p.cluster_k` (one block per worker).
  static Status launch(const Params& p, cudaStream_t stream, const char* who) {
    if (p.work.items() == 0) return Status::success();
    const dim3 cluster(static_cast<unsigned>(kClusterM * p.cluster_k), 1, 1);
    const auto blocks = static_cast<unsigned>(p.work.workers() * kClusterM);
    return KernelLauncher<Kernel>::launch(p, {dim3(blocks), cluster}, stream, who);
  }
};

}  // namespace tilepipe
