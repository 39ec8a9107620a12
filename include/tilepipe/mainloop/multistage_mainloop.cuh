#pragma once
//! \file
//! MultistageMainloop: the collectives composed into the multistage GEMM mainloop. One schedule,
//! written once, for any stage count; what the element argument changes (the operands' loaders,
//! stage and fragments) is an OperandStaging, what the alignment changes a copy policy.

#include <cstdint>
#include <type_traits>

#include "../block/smem_ring_buffer.cuh"
#include "../layout/tile_shape.cuh"
#include "../trace/trace.cuh"
#include "gemm_policy.cuh"
#include "operand_staging.cuh"
#include "tile_copy.cuh"

namespace tilepipe {

//! Block-scope mainloop: `acc += A[m0 : m0 + TileM, :] * B[:, n0 : n0 + TileN]` over all of K,
//! for the warp tile of the calling warp.
//!
//! \tparam Element  `__half` or `__nv_bfloat16`; `float` under MathTF32 or MathSimtF32; or, for a
//!                  1-byte B (int8, fp8 e4m3) converted on load, `MixedInput<ElementA, TransformB>`
//!                  (operand_staging.cuh says what each one loads and stages)
//! \tparam LayoutA  global layout of A (M x K)
//! \tparam LayoutB  global layout of B (K x N)
//! \tparam Policy   a `GemmPolicy` (tiles, stages and math: `Policy::Math` picks the fragment
//!                  loader, the MMA and the accumulators: warp/warp_math.cuh)
//! \tparam AnyAlignment  false: A, B and their leading dimensions are 16-byte aligned; true: they
//!                   are aligned only to their element, and each operand's copy width is a
//!                   run-time argument (the copy policies of tile_copy.cuh)
//!
//! All `Policy::kThreads` threads of the block call `operator()`. Rows of A and columns of B past
//! the matrix, and k past K, arrive as zeros, so edge tiles need no special handling by the
//! caller: accumulators outside D are simply never stored. The accumulators enter and leave in
//! mma.sync's layout whatever the math (`Mma::start` / `Mma::finish` convert them).
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
template <class ElementT, Layout LayoutA, Layout LayoutB, class Policy, bool AnyAlignment = false>
class MultistageMainloop {
  static_assert(detail::HasStages<Policy>::value,
                "MultistageMainloop: Policy must be a GemmPolicy (a tile with a stage count), e.g. "
                "TileConfig<...>::WithStages<4>");
  using Staging = OperandStaging<ElementT, LayoutA, LayoutB, Policy>;

 public:
  using Element = typename Staging::Element;    //!< A's element, and the MMA's
  using ElementB = typename Staging::ElementB;  //!< B's element in memory (A's unless MixedInput)
  using TransformB = typename Staging::TransformB;
  static constexpr bool kTransformsB = Staging::kTransformsB;  //!< B converted after its load
  static constexpr Layout kLayoutA = LayoutA;
  static constexpr Layout kLayoutB = LayoutB;
  using Tile = typename Policy::Tile;
  using Warp = typename Policy::Warp;
  static constexpr int kStages = Policy::kStages;
  static constexpr int kThreads = Policy::kThreads;
  static constexpr bool kAnyAlignment = AnyAlignment;
  using Copy = TileCopyOf<AnyAlignment>;  //!< how k-tiles are copied (tile_copy.cuh)
  static_assert(!kTransformsB || !AnyAlignment,
                "MultistageMainloop: a MixedInput takes 16-byte copies only (AnyAlignment false)");
  static constexpr SmemOrder kOrderA = Staging::kOrderA;  //!< A's order in global memory
  static constexpr SmemOrder kOrderB = Staging::kOrderB;
  using Math = typename Policy::Math;
  static constexpr SmemOrder kStoredA = Staging::kStoredA;  //!< A's order in shared memory
  static constexpr SmemOrder kStoredB = Staging::kStoredB;
  using FragmentLoaderA = typename Staging::FragmentLoaderA;
  using FragmentLoaderB = typename Staging::FragmentLoaderB;
  using TileA = typename Staging::TileA;  // (TileM, TileK) or (TileK, TileM)
  using TileB = typename Staging::TileB;  // (TileN, TileK) or (TileK, TileN)
  using LoaderA = typename Staging::LoaderA;
  using LoaderB = typename Staging::LoaderB;
  static_assert(std::is_same_v<typename LoaderA::Tile, TileA> &&
                    std::is_same_v<typename LoaderB::Tile, TileB>,
                "MultistageMainloop: the tile loaders must fill the fragment loaders' tiles");
  using Mma = typename Staging::Mma;
  //! The accumulators operator() takes and returns, in mma.sync's layout for every math.
  using Accumulators = typename Mma::Accumulators;
  using FragmentA = typename Staging::FragmentA;  //!< A's fragments of a k-block, as the MMA's
  using FragmentB = typename Staging::FragmentB;
  using Stage = typename Staging::Stage;  //!< one slot of the ring: a k-tile of A and one of B
  using Ring = SmemRingBuffer<Stage, kStages>;
  using SharedStorage = typename Ring::SharedStorage;  // (STAGES) x (A tile, B tile)

  //! The block's operands: A and B from their first element, in `LayoutA` / `LayoutB`.
  struct Operands {
    const Element* a;
    std::int64_t lda;
    const ElementB* b;
    std::int64_t ldb;
    //! Each operand's copy width with AnyAlignment (16, 8, 4 or 2 bytes); 16 otherwise.
    int copy_bytes_a = 16;
    int copy_bytes_b = 16;
    //! A MixedInput's transform of B (a kernel parameter, read in place); nothing otherwise.
    const TransformB* transform_b = nullptr;
  };
  //! Where the block's tile sits in D and how far the problem extends.
  struct BlockTile {
    int m, n, k;             //!< D is m x n; this call multiplies over k
    int block_m0, block_n0;  //!< the tile's first row and column of D
    int k0 = 0;  //!< the GEMM's k at this call's k = 0 (split-K, stream-K), for the transform
  };
  //! Builders of the two, which tilepipe's kernels call rather than writing braces: a braced
  //! temporary in the kernel's frame changes nvcc 13.0's register numbering, and so the SASS.
  TILEPIPE_DEVICE static Operands operands(const Element* a, std::int64_t lda, const ElementB* b,
                                           std::int64_t ldb, int copy_bytes_a = 16,
                                           int copy_bytes_b = 16,
                                           const TransformB* transform_b = nullptr) {
    return Operands{a, lda, b, ldb, copy_bytes_a, copy_bytes_b, transform_b};
  }
  TILEPIPE_DEVICE static BlockTile block_tile(int m, int n, int k, int block_m0, int block_n0,
                                              int k0 = 0) {
    return BlockTile{m, n, k, block_m0, block_n0, k0};
  }

  //! `thread` is `threadIdx.x` (the block is one-dimensional with `kThreads` threads).
  TILEPIPE_DEVICE MultistageMainloop(SharedStorage& storage, int thread)
      : storage_(storage), thread_(thread) {}

  //! Row (M) and column (N) offsets of the calling warp's tile within the block tile.
  TILEPIPE_DEVICE int warp_m0() const { return thread_ / 32 / Policy::kWarpsN * Warp::kM; }
  TILEPIPE_DEVICE int warp_n0() const { return thread_ / 32 % Policy::kWarpsN * Warp::kN; }

  //! acc += A(block_m0 .., 0 .. k) * B(0 .. k, block_n0 ..) of `in`, for the tile `at`. Debug
  //! builds check that A, B and their leading dimensions in bytes are multiples of 16 (tiles move
  //! as 16-byte vectors), or with AnyAlignment of the operands' copy widths.
  TILEPIPE_DEVICE void operator()(Accumulators& acc, Operands in, BlockTile at) {
    const int copy_bytes_a = Copy::copy_bytes(in.copy_bytes_a);
    const int copy_bytes_b = Copy::copy_bytes(in.copy_bytes_b);
    detail::check_copy_alignment(in.a, in.lda, copy_bytes_a, in.b, in.ldb, copy_bytes_b);
    Context c{make_loader<LoaderA, kOrderA>(in.a, in.lda, at.m, at.k, thread_),
              make_loader<LoaderB, kOrderB>(in.b, in.ldb, at.n, at.k, thread_),
              FragmentLoaderA(thread_ % 32, warp_m0()),
              FragmentLoaderB(thread_ % 32, warp_n0()),
              Ring(storage_),
              {},
              {},
              at.block_m0,
              at.block_n0,
              copy_bytes_a,
              copy_bytes_b,
              in.transform_b,
              at.k0,
              warp_n0() + thread_ % 32 / 4,
              thread_,
              {}};
    const int k_tiles = (at.k + Tile::kK - 1) / Tile::kK;
    // The ring receives the partial k-tile (K's residue) first, so every later k-tile is whole
    // in K: iterations t < refill_end refill the ring with whole k-tiles. A block whose rows of
    // A and columns of B all lie inside the matrix issues them unpredicated (interior); an edge
    // block masks the rows and columns outside the matrix with masks computed once, here. The
    // narrow copy policy checks every chunk of every k-tile instead.
    const bool block_inside =
        Copy::kInteriorPath && at.block_m0 + Tile::kM <= at.m && at.block_n0 + Tile::kN <= at.n;
    const int refill_end = k_tiles - (kStages - 1);

    // The accumulators are in the warp MMA's working layout from `start` to `finish`.
    const int lane = thread_ % 32;
    WorkingAccumulators work = Mma::start(acc, lane);
    prologue(c, k_tiles);
    int t = 0;
    if constexpr (Copy::kInteriorPath) {
      if (block_inside)
        for (; t < refill_end; ++t) k_tile_iteration<true>(c, work, t, k_tiles, EdgeMasks{});
    }
    // After the interior iterations (an edge block has none), so the masks are not live in them.
    const EdgeMasks masks = edge_masks(c);
    for (; t < k_tiles; ++t) k_tile_iteration<false>(c, work, t, k_tiles, masks);
    drain(c);
    acc = Mma::finish(work, lane);
  }

  //! The same for operands and a tile given one by one, with 16-byte copies and K from 0.
  TILEPIPE_DEVICE void operator()(Accumulators& acc, const Element* a, std::int64_t lda,
                                  const ElementB* b, std::int64_t ldb, int m, int n, int k,
                                  int block_m0, int block_n0) {
    static_assert(!kTransformsB,
                  "MultistageMainloop: a MixedInput needs its transform of B: call "
                  "operator()(acc, operands(..., &transform_b), block_tile(...))");
    (*this)(acc, operands(a, lda, b, ldb), block_tile(m, n, k, block_m0, block_n0));
  }

 private:
  using WorkingAccumulators = typename Mma::WorkingAccumulators;

  // Everything one call of operator() works with, shared by its phases. (The members' order is
  // what nvcc numbers registers by: another order changes the kernels' SASS.)
  struct Context {
    LoaderA load_a;
    LoaderB load_b;
    FragmentLoaderA frag_a;
    FragmentLoaderB frag_b;
    Ring ring;
    FragmentA fa[2];  // register double buffer over k-blocks
    FragmentB fb[2];
    int block_m0, block_n0;
    int copy_bytes_a, copy_bytes_b;  // each operand's copy width (Copy::copy_bytes)
    const TransformB* transform_b;   // MixedInput: B's transform, the GEMM's k of this call's
    int k_origin, lane_col;          // k = 0, and this lane's column of n8 tile 0 in the tile
    int thread;                      // threadIdx.x
    typename Staging::KTileRegisters k_tile;  // MixedInput: the current k-tile's fragments
  };

  // The loader of an operand, viewed in storage terms (rows strided, columns contiguous):
  // `mn` is the operand's M (or N) extent.
  template <class Loader, SmemOrder Order, class T>
  TILEPIPE_DEVICE static Loader make_loader(const T* p, std::int64_t ld, int mn, int k,
                                            int thread) {
    constexpr bool kKContig = Order == SmemOrder::kKContiguous;
    return Loader(MatrixView<const T>{p, kKContig ? mn : k, kKContig ? k : mn, ld}, thread);
  }

  // Which of this thread's chunks of A and B lie inside the matrices, for every whole k-tile.
  struct EdgeMasks {
    typename LoaderA::EdgeMask a;
    typename LoaderB::EdgeMask b;
  };
  TILEPIPE_DEVICE static EdgeMasks edge_masks(const Context& c) {
    return {Copy::template edge_mask<kOrderA>(c.load_a, c.block_m0),
            Copy::template edge_mask<kOrderB>(c.load_b, c.block_n0)};
  }

  // ---- Copies: all of k-tile `k_tile` into the write stage (each chunk checked), or share `kb`
  // (one per k-block) of a whole k-tile, unpredicated (kInterior) or masked with `m`. ----
  TILEPIPE_DEVICE static void issue_tile(Context& c, int k_tile) {
    const int k0 = k_tile * Tile::kK;
    Stage& dst = c.ring.write_stage();
    Copy::template tile<kOrderA>(c.load_a, dst.a, c.block_m0, k0, c.ring.pipeline(),
                                 c.copy_bytes_a);
    Copy::template tile<kOrderB>(c.load_b, dst.b, c.block_n0, k0, c.ring.pipeline(),
                                 c.copy_bytes_b);
    Staging::stage_transform(c.transform_b, dst, c.k_origin + k0, c.block_n0, c.thread);
  }
  template <bool kInterior>
  TILEPIPE_DEVICE static void issue_share(Context& c, int k_tile, int kb, const EdgeMasks& m) {
    constexpr int kShares = FragmentLoaderA::kKBlocks;
    const int k0 = k_tile * Tile::kK;
    Stage& dst = c.ring.write_stage();
    Copy::template share<kInterior, kOrderA>(c.load_a, dst.a, c.block_m0, k0, m.a,
                                             c.ring.pipeline(), kb, kShares, c.copy_bytes_a);
    Copy::template share<kInterior, kOrderB>(c.load_b, dst.b, c.block_n0, k0, m.b,
                                             c.ring.pipeline(), kb, kShares, c.copy_bytes_b);
    if (kb == 0)
      Staging::stage_transform(c.transform_b, dst, c.k_origin + k0, c.block_n0, c.thread);
  }

  // ---- Prologue: put Stages - 1 tiles in flight, one committed group per tile, then wait for
  // tile 0 and load its first k-block of fragments. Tile 0 is the last k-tile, the one that K's
  // residue leaves partial; tile t > 0 is k-tile t - 1. ----
  TILEPIPE_DEVICE static void prologue(Context& c, int k_tiles) {
    TILEPIPE_UNROLL
    for (int t = 0; t < kStages - 1; ++t) {
      c.ring.producer_acquire();
      if (t < k_tiles) {
        issue_tile(c, t == 0 ? k_tiles - 1 : t - 1);
        trace::record(trace::Event::kLoadIssued, t);
      }
      c.ring.producer_commit();
    }
    if (k_tiles > 0) {
      c.ring.consumer_wait();
      trace::record(trace::Event::kWaitDone, 0);
      Staging::load_fragments(c, 0, c.ring.read_stage(), 0);
    }
  }

  // ---- Steady state, one k-tile t: k-block kb. The fragments of kb + 1 are loaded while the
  // tensor cores work on kb; at the last k-block that is the first k-block of tile t + 1, so the
  // wait for tile t + 1 comes before the last mma of tile t rather than after it.
  // Group count: before the wait in iteration t, the groups of tiles 0 .. t + S - 1 are
  // committed (one per prologue step and one per iteration, empty past the last tile), so
  // waiting until at most S - 2 are in flight means tile t + 1 has landed for this thread; the
  // barrier in consumer_wait makes it so for every thread.
  // Slot reuse: in iteration t, tile t + S - 1 is loaded into the slot of tile t - 1. Every
  // warp read tile t - 1 for the last time before the barrier of iteration t - 1's last
  // k-block, so that barrier orders all those reads before these writes.
  // Tile t + S - 1 is k-tile t + S - 2, always whole in K. Its copies are spread over the
  // k-blocks (straight-line code the compiler interleaves with the mma) and committed before the
  // wait. Two versions of one iteration: the interior one (kInterior) refills with unpredicated
  // copies in every iteration it runs; the edge one masks the copies of an edge block with `m`,
  // and refills only while tiles are left (the last S - 1 iterations of every block commit empty
  // groups). ----
  template <bool kInterior>
  TILEPIPE_DEVICE static void k_tile_iteration(Context& c, WorkingAccumulators& acc, int t,
                                               int k_tiles, const EdgeMasks& m) {
    const Mma mma;
    const bool refill = kInterior || t + kStages - 1 < k_tiles;
    TILEPIPE_UNROLL
    for (int kb = 0; kb < FragmentLoaderA::kKBlocks; ++kb) {
      const bool last_k_block = kb + 1 == FragmentLoaderA::kKBlocks;
      if (kb == 0) c.ring.producer_acquire();
      if (refill) issue_share<kInterior>(c, t + kStages - 2, kb, m);
      if (last_k_block) {
        c.ring.producer_commit();
        if (refill) trace::record(trace::Event::kLoadIssued, t + kStages - 1);
      }
      if (last_k_block) {
        c.ring.consumer_release();
        c.ring.consumer_wait();  // tile t + 1 has landed; every warp has its last of tile t
        if (kInterior || t + 1 < k_tiles) trace::record(trace::Event::kWaitDone, t + 1);
      }
      if (kInterior || !last_k_block || t + 1 < k_tiles) {  // interior: tile t + 1 always exists
        const Stage& stage = c.ring.read_stage();  // tile t, or tile t + 1 at the last k-block
        const int next_kb = last_k_block ? 0 : kb + 1;
        Staging::load_fragments(c, (kb + 1) % 2, stage, next_kb);
      }
      mma(acc, c.fa[kb % 2], c.fb[kb % 2]);
    }
    trace::record(trace::Event::kMmaDone, t);
    if constexpr (FragmentLoaderA::kKBlocks % 2 == 1) {
      // An odd number of k-blocks left tile t + 1's first fragments in buffer 1.
      c.fa[0] = c.fa[1];
      c.fb[0] = c.fb[1];
    }
  }

  // ---- Drain: nothing is in flight but empty groups; make the ring's memory reusable for the
  // epilogue. ----
  TILEPIPE_DEVICE static void drain(Context& c) { c.ring.drain(); }

  SharedStorage& storage_;
  int thread_;
};

}  // namespace tilepipe
