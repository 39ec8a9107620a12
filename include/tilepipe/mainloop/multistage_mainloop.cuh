#pragma once
//! \file
//! MultistageMainloop: the collectives composed into the multistage GEMM mainloop. One
//! schedule, written once, for any stage count.

#include "../block/async_tile_loader.cuh"
#include "../block/smem_ring_buffer.cuh"
#include "../layout/tile_shape.cuh"
#include "../warp/fragment_loader.cuh"
#include "../warp/warp_mma.cuh"
#include "gemm_policy.cuh"

namespace tilepipe {

//! Block-scope mainloop: `acc += A[m0 : m0 + TileM, :] * B[:, n0 : n0 + TileN]` over all of K,
//! for the warp tile of the calling warp.
//!
//! \tparam Element  `__half` or `__nv_bfloat16`
//! \tparam LayoutA  global layout of A (M x K)
//! \tparam LayoutB  global layout of B (K x N)
//! \tparam Policy   a `GemmPolicy` (tiles and stages)
//!
//! All `Policy::kThreads` threads of the block call `operator()`. Rows of A and columns of B past
//! the matrix, and k past K, arrive as zeros, so edge tiles need no special handling by the
//! caller: accumulators outside D are simply never stored.
//!
//! \code
//! using Mainloop = tilepipe::MultistageMainloop<__half, tilepipe::Layout::kRowMajor,
//!                                               tilepipe::Layout::kColumnMajor,
//!                                               tilepipe::GemmPolicy<128, 128, 32, 64, 64, 4>>;
//! extern __shared__ unsigned char smem[];
//! Mainloop mainloop(*reinterpret_cast<Mainloop::SharedStorage*>(smem), threadIdx.x);
//! Mainloop::Accumulators acc;
//! acc.clear();
//! mainloop(acc, a, lda, b, ldb, m, n, k, block_m0, block_n0);
//! \endcode
template <class Element, Layout LayoutA, Layout LayoutB, class Policy>
class MultistageMainloop {
 public:
  using Tile = typename Policy::Tile;
  using Warp = typename Policy::Warp;
  static constexpr int kStages = Policy::kStages;
  static constexpr int kThreads = Policy::kThreads;
  static constexpr SmemOrder kOrderA = smem_order_of(Operand::kA, LayoutA);
  static constexpr SmemOrder kOrderB = smem_order_of(Operand::kB, LayoutB);

  using FragmentLoaderA =
      FragmentLoader<Element, Operand::kA, kOrderA, Tile::kM, Tile::kK, Warp::kM>;
  using FragmentLoaderB =
      FragmentLoader<Element, Operand::kB, kOrderB, Tile::kN, Tile::kK, Warp::kN>;
  using TileA = typename FragmentLoaderA::Tile;  // (TileM, TileK) or (TileK, TileM)
  using TileB = typename FragmentLoaderB::Tile;  // (TileN, TileK) or (TileK, TileN)
  using LoaderA = AsyncTileLoader<Element, TileA::kRows, TileA::kCols, kThreads>;
  using LoaderB = AsyncTileLoader<Element, TileB::kRows, TileB::kCols, kThreads>;
  using Mma = WarpMma<Element, Warp::kM, Warp::kN>;
  using Accumulators = typename Mma::Accumulators;

  //! One stage of the ring: a k-tile of A and one of B.
  struct Stage {
    TileA a;
    TileB b;
  };
  using Ring = SmemRingBuffer<Stage, kStages>;
  using SharedStorage = typename Ring::SharedStorage;  // (STAGES) x (A tile, B tile)

  //! `thread` is `threadIdx.x` (the block is one-dimensional with `kThreads` threads).
  TILEPIPE_DEVICE MultistageMainloop(SharedStorage& storage, int thread)
      : storage_(storage), thread_(thread) {}

  //! Row (M) and column (N) offsets of the calling warp's tile within the block tile.
  TILEPIPE_DEVICE int warp_m0() const { return thread_ / 32 / Policy::kWarpsN * Warp::kM; }
  TILEPIPE_DEVICE int warp_n0() const { return thread_ / 32 % Policy::kWarpsN * Warp::kN; }

  //! acc += A(block_m0 .., 0 .. k) * B(0 .. k, block_n0 ..). `a` and `b` point to the first
  //! element of A and B, in `LayoutA` / `LayoutB` with leading dimensions `lda` / `ldb`.
  TILEPIPE_DEVICE void operator()(Accumulators& acc, const Element* a, std::int64_t lda,
                                  const Element* b, std::int64_t ldb, int m, int n, int k,
                                  int block_m0, int block_n0) {
    // Views in storage terms (rows strided, columns contiguous) and where the block's tiles start.
    const bool a_k_contig = kOrderA == SmemOrder::kKContiguous;
    const bool b_k_contig = kOrderB == SmemOrder::kKContiguous;
    const LoaderA load_a(MatrixView<const Element>{a, a_k_contig ? m : k, a_k_contig ? k : m, lda},
                         thread_);
    const LoaderB load_b(MatrixView<const Element>{b, b_k_contig ? n : k, b_k_contig ? k : n, ldb},
                         thread_);
    auto issue_tile = [&](Ring& ring, int k_tile) {
      const int k0 = k_tile * Tile::kK;
      load_a.load(ring.write_stage().a, a_k_contig ? block_m0 : k0, a_k_contig ? k0 : block_m0,
                  ring.pipeline());
      load_b.load(ring.write_stage().b, b_k_contig ? block_n0 : k0, b_k_contig ? k0 : block_n0,
                  ring.pipeline());
    };

    Ring ring(storage_);
    const int lane = thread_ % 32;
    const FragmentLoaderA frag_a(lane, warp_m0());
    const FragmentLoaderB frag_b(lane, warp_n0());
    const Mma mma;
    const int k_tiles = (k + Tile::kK - 1) / Tile::kK;

    // ---- Prologue: put Stages - 1 k-tiles in flight, one committed group per tile. ----
    TILEPIPE_UNROLL
    for (int t = 0; t < kStages - 1; ++t) {
      ring.producer_acquire();
      if (t < k_tiles) issue_tile(ring, t);
      ring.producer_commit();
    }

    // ---- Main loop. Invariant at the top of iteration t: the groups of k-tiles t .. t+S-2 are
    // committed (empty groups past the last tile), so waiting until at most S-2 are in flight
    // means tile t has landed for this thread; the barrier in consumer_wait makes it so for every
    // thread, and also means every warp is done with tile t-1, whose slot is refilled with tile
    // t+S-1 before tile t is computed. The commit happens every iteration, even with nothing left
    // to load, so the count of groups stays right through the drain. ----
    typename FragmentLoaderA::Fragment fa[2];  // register double buffer over k-blocks
    typename FragmentLoaderB::Fragment fb[2];
    for (int t = 0; t < k_tiles; ++t) {
      ring.consumer_wait();
      ring.producer_acquire();
      if (t + kStages - 1 < k_tiles) issue_tile(ring, t + kStages - 1);
      ring.producer_commit();

      const Stage& stage = ring.read_stage();
      frag_a.load(fa[0], stage.a, 0);
      frag_b.load(fb[0], stage.b, 0);
      TILEPIPE_UNROLL
      for (int kb = 0; kb < FragmentLoaderA::kKBlocks; ++kb) {
        // Load k-block kb+1 while the tensor cores work on kb.
        if (kb + 1 < FragmentLoaderA::kKBlocks) {
          frag_a.load(fa[(kb + 1) % 2], stage.a, kb + 1);
          frag_b.load(fb[(kb + 1) % 2], stage.b, kb + 1);
        }
        mma(acc, fa[kb % 2], fb[kb % 2]);
      }
      ring.consumer_release();
    }
    // Nothing is in flight but empty groups; make the ring's memory reusable for the epilogue.
    ring.drain();
  }

 private:
  SharedStorage& storage_;
  int thread_;
};

}  // namespace tilepipe
