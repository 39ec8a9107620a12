#pragma once
//! \file
//! MultistageMainloop: the collectives composed into the multistage GEMM mainloop. One
//! schedule, written once, for any stage count.

#include <cstdint>
#include <type_traits>

#include "../block/async_tile_loader.cuh"
#include "../block/smem_ring_buffer.cuh"
#include "../block/transposing_tile_loader.cuh"
#include "../layout/tile_shape.cuh"
#include "../numeric/element_traits.cuh"
#include "../trace/trace.cuh"
#include "../warp/byte_fragment_loader.cuh"
#include "../warp/fragment_transform.cuh"
#include "../warp/warp_math.cuh"
#include "gemm_policy.cuh"
#include "tile_copy.cuh"

namespace tilepipe {

namespace detail {
//! A mainloop's stage: a k-tile of A and one of B, and for a MixedInput what its transform stages
//! with them (`b_staged`).
template <class TileA, class TileB, class TransformB, int TileN, int TileK>
struct MainloopStage {
  struct type {
    TileA a;
    TileB b;
    typename TransformB::template Staged<TileN, TileK> b_staged;
  };
};
template <class TileA, class TileB, int TileN, int TileK>
struct MainloopStage<TileA, TileB, NoTransformB, TileN, TileK> {
  struct type {
    TileA a;
    TileB b;
  };
};

//! A MixedInput mainloop's registers of one k-tile (ByteFragmentLoaderA / B); none otherwise.
template <class LoaderA, class LoaderB, class TransformB>
struct MixedInputRegisters {
  struct type {
    typename LoaderA::Fragment a;                          // (k-blocks) mma A fragments
    typename LoaderB::Fragment b;                          // (n8 tiles, k-blocks) stored bytes
    typename TransformB::Param param[LoaderB::Fragment::kTiles];  // (n8 tiles)
  };
};
template <class LoaderA, class LoaderB>
struct MixedInputRegisters<LoaderA, LoaderB, NoTransformB> {
  struct type {};
};
}  // namespace detail

//! Block-scope mainloop: `acc += A[m0 : m0 + TileM, :] * B[:, n0 : n0 + TileN]` over all of K,
//! for the warp tile of the calling warp.
//!
//! \tparam Element  `__half` or `__nv_bfloat16`; `float` under MathTF32 or MathSimtF32; or, for a
//!                  1-byte B (int8, fp8 e4m3) converted on load, `MixedInput<ElementA, TransformB>`
//!                  (warp/fragment_transform.cuh: A row-major, B column-major, 16-byte copies,
//!                  a k-tile of 64 or 128)
//! \tparam LayoutA  global layout of A (M x K)
//! \tparam LayoutB  global layout of B (K x N)
//! \tparam Policy   a `GemmPolicy` (tiles, stages and math: `Policy::Math` picks the fragment
//!                  loader, the MMA and the accumulators: warp/warp_math.cuh)
//! \tparam AnyAlignment  false: A, B and their leading dimensions are 16-byte aligned; true: they
//!                   are aligned only to their element, and each operand's copy width is a
//!                   run-time argument (the copy policies of tile_copy.cuh)
//!
//! The accumulators enter and leave `operator()` in mma.sync's layout (`Accumulators`, whatever
//! the math); in between, the warp MMA updates them in its working layout, which this class takes
//! them into and back out of itself (`Mma::start` / `Mma::finish`: warp/warp_mma.cuh, where they
//! do nothing, and warp/simt_warp_mma.cuh, where an M-contiguous A keeps other rows), so that
//! nothing built on it sees that layout.
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
template <class ElementT, Layout LayoutA, Layout LayoutB, class Policy, bool AnyAlignment = false>
class MultistageMainloop {
  static_assert(detail::HasStages<Policy>::value,
                "MultistageMainloop: Policy must be a GemmPolicy (a tile with a stage count), e.g. "
                "TileConfig<...>::WithStages<4>");
  using Operands = detail::OperandTypes<ElementT>;

 public:
  using Element = typename Operands::A;  //!< A's element, and the MMA's
  using ElementB = typename Operands::B;  //!< B's element in memory (A's unless MixedInput)
  using TransformB = typename Operands::TransformB;
  //! Whether B's fragments are converted after their load (a MixedInput element argument).
  static constexpr bool kTransformsB = Operands::kTransformsB;
  static constexpr Layout kLayoutA = LayoutA;
  static constexpr Layout kLayoutB = LayoutB;
  using Tile = typename Policy::Tile;
  using Warp = typename Policy::Warp;
  static constexpr int kStages = Policy::kStages;
  static constexpr int kThreads = Policy::kThreads;
  static constexpr bool kAnyAlignment = AnyAlignment;
  using Copy = TileCopyOf<AnyAlignment>;  //!< how k-tiles are copied (tile_copy.cuh)
  //! A's and B's order in global memory (`smem_order_of` their layouts), in which the tile
  //! loaders read them.
  static constexpr SmemOrder kOrderA = smem_order_of(Operand::kA, LayoutA);
  static constexpr SmemOrder kOrderB = smem_order_of(Operand::kB, LayoutB);

  using Math = typename Policy::Math;
  //! The order their tiles are kept in shared memory: the global one, except where the warp math
  //! asks for another (WarpMath::stored_order: the SIMT product keeps NN's B N-contiguous), which
  //! the tile loader then copies transposed.
  static constexpr SmemOrder kStoredA =
      WarpMath<Element, Math>::stored_order(Operand::kA, kOrderA, kOrderB);
  static constexpr SmemOrder kStoredB =
      WarpMath<Element, Math>::stored_order(Operand::kB, kOrderA, kOrderB);
  static_assert(!kTransformsB || (LayoutA == Layout::kRowMajor && LayoutB == Layout::kColumnMajor),
                "MultistageMainloop: a MixedInput B is loaded K-contiguous, so A must be row-major "
                "and B column-major (N x K with K contiguous, as PyTorch stores Linear.weight)");
  static_assert(!kTransformsB || (!AnyAlignment && sizeof(ElementB) == 1 &&
                                  std::is_same_v<Math, MathDefault> && is_mma_m16n8k16_input_v<Element>),
                "MultistageMainloop: a MixedInput needs f16 or bf16 A, a 1-byte B, MathDefault and "
                "16-byte copies (AnyAlignment = false)");
  static_assert(!kTransformsB || Tile::kK == 64 || Tile::kK == 128,
                "MultistageMainloop: a MixedInput's k-tile must be 64 or 128 deep: a lane loads "
                "one or two 16-byte chunks of each column's k-tile of B (ByteKOrder)");
  //! ldmatrix for B stored as A; for a MixedInput, 128-bit loads of a whole k-tile of B's stored
  //! bytes and of A in the same k order (warp/byte_fragment_loader.cuh).
  using FragmentLoaderA = std::conditional_t<
      kTransformsB, ByteFragmentLoaderA<Element, Tile::kM, Tile::kK, Warp::kM>,
      typename WarpMath<Element, Math>::template FragmentLoader<Operand::kA, kStoredA, Tile::kM,
                                                                 Tile::kK, Warp::kM>>;
  using FragmentLoaderB = std::conditional_t<
      kTransformsB, ByteFragmentLoaderB<ElementB, Tile::kN, Tile::kK, Warp::kN>,
      typename WarpMath<Element, Math>::template FragmentLoader<Operand::kB, kStoredB, Tile::kN,
                                                                 Tile::kK, Warp::kN>>;
  using TileA = typename FragmentLoaderA::Tile;  // (TileM, TileK) or (TileK, TileM)
  using TileB = typename FragmentLoaderB::Tile;  // (TileN, TileK) or (TileK, TileN)
  //! 16-byte copies of a tile kept in its global order; 4-byte copies, transposed, of one that
  //! is not (the loader's rows and columns are the global tile's).
  using LoaderA = std::conditional_t<kStoredA == kOrderA,
                                     AsyncTileLoader<Element, TileA::kRows, TileA::kCols, kThreads>,
                                     TransposingTileLoader<TileA::kCols, TileA::kRows, kThreads>>;
  using LoaderB = std::conditional_t<kStoredB == kOrderB,
                                     AsyncTileLoader<ElementB, TileB::kRows, TileB::kCols, kThreads>,
                                     TransposingTileLoader<TileB::kCols, TileB::kRows, kThreads>>;
  static_assert(std::is_same_v<typename LoaderA::Tile, TileA> && std::is_same_v<typename LoaderB::Tile, TileB>,
                "MultistageMainloop: the tile loaders must fill the fragment loaders' shared tiles");
  using Mma = typename WarpMath<Element, Math>::template Mma<Warp::kM, Warp::kN, kStoredA>;
  //! The accumulators operator() takes and returns, in mma.sync's layout for every math.
  using Accumulators = typename Mma::Accumulators;
  //! A's and B's fragments of one k-block as the MMA takes them (after the transform, if any).
  using FragmentA = std::conditional_t<kTransformsB, typename Mma::FragmentA,
                                       typename FragmentLoaderA::Fragment>;
  using FragmentB = std::conditional_t<kTransformsB, typename Mma::FragmentB,
                                       typename FragmentLoaderB::Fragment>;

  //! One stage of the ring: a k-tile of A and one of B (and, for a MixedInput, what the
  //! transform stages with it: `b_staged`, e.g. the k-tile's scales).
  using Stage = typename detail::MainloopStage<TileA, TileB, TransformB, Tile::kN, Tile::kK>::type;
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
  //! Requirements (debug builds check them): `a`, `b` and the leading dimensions in bytes are
  //! multiples of 16, because tiles move as 16-byte vectors; with `AnyAlignment`, multiples of
  //! `copy_bytes_a` / `copy_bytes_b` instead (16, 8, 4, or 2 for 16-bit elements), which the
  //! other mainloop ignores. A MixedInput's transform is `transform_b`, called with the GEMM's
  //! k, which is `k_origin` plus the k of this call (split-K gives each slice its origin).
  TILEPIPE_DEVICE void operator()(Accumulators& acc, const Element* a, std::int64_t lda,
                                  const ElementB* b, std::int64_t ldb, int m, int n, int k,
                                  int block_m0, int block_n0, int copy_bytes_a = 16,
                                  int copy_bytes_b = 16, const TransformB& transform_b = {},
                                  int k_origin = 0) {
    copy_bytes_a = Copy::copy_bytes(copy_bytes_a);
    copy_bytes_b = Copy::copy_bytes(copy_bytes_b);
    detail::check_copy_alignment(a, lda, copy_bytes_a, b, ldb, copy_bytes_b);
    Context ctx{make_loader<LoaderA, kOrderA>(a, lda, m, k, thread_),
                make_loader<LoaderB, kOrderB>(b, ldb, n, k, thread_),
                FragmentLoaderA(thread_ % 32, warp_m0()),
                FragmentLoaderB(thread_ % 32, warp_n0()),
                Ring(storage_),
                {},
                {},
                block_m0,
                block_n0,
                copy_bytes_a,
                copy_bytes_b,
                transform_b,
                k_origin,
                warp_n0() + thread_ % 32 / 4,
                thread_,
                {}};
    const int k_tiles = (k + Tile::kK - 1) / Tile::kK;
    // The ring receives the partial k-tile (K's residue) first, so every later k-tile is whole
    // in K: iterations t < refill_end refill the ring with whole k-tiles. A block whose rows of
    // A and columns of B all lie inside the matrix issues them unpredicated (interior); an edge
    // block masks the rows and columns outside the matrix with masks computed once, here. The
    // narrow copy policy checks every chunk of every k-tile instead.
    const bool block_inside =
        Copy::kInteriorPath && block_m0 + Tile::kM <= m && block_n0 + Tile::kN <= n;
    const int refill_end = k_tiles - (kStages - 1);

    // ---- Accumulators: the warp MMA updates them in its working layout, from its `start` here
    // to its `finish` after the drain (SimtWarpMma keeps other rows of an M-contiguous A, so that
    // its fragments load as vectors); outside this call they are in mma.sync's layout, whatever
    // the caller does with them next (epilogue, split-K slice, stream-K partial). ----
    const int lane = thread_ % 32;
    WorkingAccumulators work = Mma::start(acc, lane);
    prologue(ctx, k_tiles);
    int t = 0;
    if constexpr (Copy::kInteriorPath) {
      if (block_inside)
        for (; t < refill_end; ++t) k_tile_iteration<true>(ctx, work, t, k_tiles, EdgeMasks{});
    }
    // After the interior iterations (an edge block has none), so the masks are not live in them.
    const EdgeMasks masks = edge_masks(ctx);
    for (; t < k_tiles; ++t) k_tile_iteration<false>(ctx, work, t, k_tiles, masks);
    drain(ctx);
    acc = Mma::finish(work, lane);
  }

 private:
  // The accumulators the MMA updates between its `start` and `finish`.
  using WorkingAccumulators = typename Mma::WorkingAccumulators;

  // Everything one call of operator() works with, shared by its phases.
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
    const TransformB& transform_b;   // MixedInput: B's transform (a kernel parameter, read in
                                     // place), the GEMM's k of this call's k = 0, and this
    int k_origin, lane_col;          // lane's column of n8 tile 0 in the block tile
    int thread;                      // threadIdx.x
    // MixedInput: the current k-tile's fragments in registers, loaded at its first k-block:
    // A's (k-blocks, mma registers), B's stored bytes (n8 tiles, k-blocks) and each n8 tile's
    // transform parameter.
    typename detail::MixedInputRegisters<FragmentLoaderA, FragmentLoaderB, TransformB>::type k_tile;
  };

  // The loader of an operand, viewed in storage terms (rows strided, columns contiguous):
  // `mn` is the operand's M (or N) extent.
  template <class Loader, SmemOrder Order, class T>
  TILEPIPE_DEVICE static Loader make_loader(const T* p, std::int64_t ld, int mn, int k, int thread) {
    constexpr bool kKContig = Order == SmemOrder::kKContiguous;
    return Loader(MatrixView<const T>{p, kKContig ? mn : k, kKContig ? k : mn, ld}, thread);
  }

  // A's and B's fragments of k-block `kb` from `stage` into register buffer `buf`. For a
  // MixedInput, k-block 0 loads the transform's parameters of the k-tile, and k-blocks 0 and 4
  // each load a 64-deep half of the k-tile (A and B's stored bytes, 128-bit loads) into registers
  // (a half at a time: a whole k-tile of 128 held the bf16 kernel's registers past what ptxas
  // gave it on sm_80); every k-block then converts its B bytes at once, so the conversion runs a
  // k-block ahead of the mma that needs it.
  TILEPIPE_DEVICE static void load_fragments(Context& c, int buf, const Stage& stage, int kb) {
    if constexpr (kTransformsB) {
      auto& r = c.k_tile;
      if (kb % 4 == 0) {
        c.frag_a.load(r.a, stage.a, kb / 4);
        c.frag_b.load(r.b, stage.b, kb / 4);
      }
      if (kb == 0) {
        TILEPIPE_UNROLL
        for (int ni = 0; ni < FragmentB::kTiles; ++ni)
          r.param[ni] = c.transform_b.param(stage.b_staged, c.lane_col + MmaShape::kN * ni,
                                            ByteKOrder<Tile::kK>::half_of(c.thread % 32));
      }
      c.fa[buf] = r.a.kb[kb];
      TILEPIPE_UNROLL
      for (int ni = 0; ni < FragmentB::kTiles; ++ni)
        c.transform_b(c.fb[buf].x[ni], r.b.x[ni][kb], r.param[ni]);
    } else {
      c.frag_a.load(c.fa[buf], stage.a, kb);
      c.frag_b.load(c.fb[buf], stage.b, kb);
    }
  }
  // MixedInput: the transform's share of k-tile `k_tile`, issued with the k-tile's copies.
  TILEPIPE_DEVICE static void stage_transform(Context& c, int k_tile) {
    if constexpr (kTransformsB)
      c.transform_b.template stage<Tile::kN, Tile::kK, kThreads>(c.ring.write_stage().b_staged,
                                                       c.k_origin + k_tile * Tile::kK, c.block_n0, c.thread);
    else
      (void)k_tile;
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
    stage_transform(c, k_tile);
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
    if (kb == 0) stage_transform(c, k_tile);
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
      load_fragments(c, 0, c.ring.read_stage(), 0);
    }
  }

  // ---- Main loop, one k-tile t: k-block kb. The fragments of kb + 1 are loaded while the
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
  // copies in every iteration it runs; the other masks the copies of an edge block with `m`, and
  // refills only while tiles are left (the last S - 1 iterations of every block commit empty
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
        c.ring.consumer_wait();  // tile t + 1 has landed; every warp has its last fragments of tile t
        if (kInterior || t + 1 < k_tiles) trace::record(trace::Event::kWaitDone, t + 1);
      }
      if (kInterior || !last_k_block || t + 1 < k_tiles) {  // interior: tile t + 1 always exists
        const Stage& stage = c.ring.read_stage();  // tile t, or tile t + 1 at the last k-block
        const int next_kb = last_k_block ? 0 : kb + 1;
        load_fragments(c, (kb + 1) % 2, stage, next_kb);
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
