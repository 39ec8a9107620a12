#pragma once
//! \file
//! MultistageMainloop: the collectives composed into the multistage GEMM mainloop. One
//! schedule, written once, for any stage count.

#include <type_traits>

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

    // Share `kb` (of one per k-block) of k-tile `k_tile`'s copies; whole tiles inside the matrix.
    auto issue_share = [&](Ring& ring, int k_tile, int kb) {
      constexpr int kShares = FragmentLoaderA::kKBlocks;
      const int k0 = k_tile * Tile::kK;
      load_a.load_interior(ring.write_stage().a, a_k_contig ? block_m0 : k0,
                           a_k_contig ? k0 : block_m0, ring.pipeline(), kb, kShares);
      load_b.load_interior(ring.write_stage().b, b_k_contig ? block_n0 : k0,
                           b_k_contig ? k0 : block_n0, ring.pipeline(), kb, kShares);
    };

    Ring ring(storage_);
    const int lane = thread_ % 32;
    const FragmentLoaderA frag_a(lane, warp_m0());
    const FragmentLoaderB frag_b(lane, warp_n0());
    const Mma mma;
    const int k_tiles = (k + Tile::kK - 1) / Tile::kK;

    // ---- Prologue: put Stages - 1 k-tiles in flight, one committed group per tile, then wait
    // for tile 0 and load its first k-block of fragments. ----
    TILEPIPE_UNROLL
    for (int t = 0; t < kStages - 1; ++t) {
      ring.producer_acquire();
      if (t < k_tiles) issue_tile(ring, t);
      ring.producer_commit();
    }
    typename FragmentLoaderA::Fragment fa[2];  // register double buffer over k-blocks
    typename FragmentLoaderB::Fragment fb[2];
    if (k_tiles > 0) {
      ring.consumer_wait();
      frag_a.load(fa[0], ring.read_stage().a, 0);
      frag_b.load(fb[0], ring.read_stage().b, 0);
    }

    // ---- Main loop: k-tile t, k-block kb. The fragments of kb + 1 are loaded while the tensor
    // cores work on kb; at the last k-block that is the first k-block of tile t + 1, so the wait
    // for tile t + 1 comes before the last mma of tile t rather than after it.
    // Group count: before the wait in iteration t, the groups of tiles 0 .. t + S - 1 are
    // committed (one per prologue step and one per iteration, empty past the last tile), so
    // waiting until at most S - 2 are in flight means tile t + 1 has landed for this thread; the
    // barrier in consumer_wait makes it so for every thread.
    // Slot reuse: in iteration t, tile t + S - 1 is loaded into the slot of tile t - 1. Every
    // warp read tile t - 1 for the last time before the barrier of iteration t - 1's last
    // k-block, so that barrier orders all those reads before these writes.
    // Two versions of one iteration: the steady one, while the tile to refill is a whole tile
    // inside the matrix, issues its copies unpredicated and spread over the k-blocks (straight-
    // line code the compiler interleaves with the mma); the general one handles the rest. ----
    auto k_tile_iteration = [&](int t, auto steady) {
      constexpr bool kSteady = decltype(steady)::value;
      TILEPIPE_UNROLL
      for (int kb = 0; kb < FragmentLoaderA::kKBlocks; ++kb) {
        const bool last_k_block = kb + 1 == FragmentLoaderA::kKBlocks;
        if constexpr (kSteady) {
          // This k-block's share of tile t + S - 1's copies; commit before the wait below.
          if (kb == 0) ring.producer_acquire();
          issue_share(ring, t + kStages - 1, kb);
          if (last_k_block) ring.producer_commit();
        } else if (kb == 0) {
          // Refill the slot of tile t - 1, and commit before this iteration's wait (below or,
          // with one k-block per tile, right here) so that the group count holds.
          ring.producer_acquire();
          if (t + kStages - 1 < k_tiles) issue_tile(ring, t + kStages - 1);
          ring.producer_commit();
        }
        if (last_k_block) {
          ring.consumer_release();
          ring.consumer_wait();  // tile t + 1 has landed; every warp has its last fragments of tile t
        }
        if (kSteady || !last_k_block || t + 1 < k_tiles) {  // steady: tile t + 1 always exists
          const Stage& stage = ring.read_stage();  // tile t, or tile t + 1 at the last k-block
          const int next_kb = last_k_block ? 0 : kb + 1;
          frag_a.load(fa[(kb + 1) % 2], stage.a, next_kb);
          frag_b.load(fb[(kb + 1) % 2], stage.b, next_kb);
        }
        mma(acc, fa[kb % 2], fb[kb % 2]);
      }
      if constexpr (FragmentLoaderA::kKBlocks % 2 == 1) {
        // An odd number of k-blocks left tile t + 1's first fragments in buffer 1.
        fa[0] = fa[1];
        fb[0] = fb[1];
      }
    };
    // Steady iterations: the block's rows of A and columns of B lie inside the matrix and tile
    // t + S - 1 is a whole k-tile.
    const int k_whole_tiles = k / Tile::kK;
    const bool block_inside = block_m0 + Tile::kM <= m && block_n0 + Tile::kN <= n;
    const int steady_end = block_inside ? k_whole_tiles - (kStages - 1) : 0;
    int t = 0;
    for (; t < steady_end; ++t) k_tile_iteration(t, std::true_type{});
    for (; t < k_tiles; ++t) k_tile_iteration(t, std::false_type{});
    // Nothing is in flight but empty groups; make the ring's memory reusable for the epilogue.
    ring.drain();
  }

 private:
  SharedStorage& storage_;
  int thread_;
};

}  // namespace tilepipe
