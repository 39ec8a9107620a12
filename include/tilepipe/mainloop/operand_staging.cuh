#pragma once
//! \file
//! OperandStaging: what a multistage mainloop's element argument decides, one type per kind of
//! operands (as WarpMath is one per math): the tile loaders that fill a stage of the ring, what a
//! stage holds, and the warp's fragments and MMA that read it. A and B of one element type run
//! WarpMath's collectives for the policy's math; a `MixedInput` (warp/fragment_transform.cuh)
//! stages B's 1-byte elements and what its transform needs, and converts B in registers.

#include <type_traits>

#include "../block/async_tile_loader.cuh"
#include "../block/transposing_tile_loader.cuh"
#include "../layout/tile_shape.cuh"
#include "../numeric/element_traits.cuh"
#include "../warp/byte_fragment_loader.cuh"
#include "../warp/fragment_transform.cuh"
#include "../warp/warp_math.cuh"

namespace tilepipe {

//! A and B of `ElementT` (`__half`, `__nv_bfloat16`; `float` under MathTF32 or MathSimtF32), in
//! `LayoutA` / `LayoutB` in global memory, multiplied with `Policy::Math`.
template <class ElementT, Layout LayoutA, Layout LayoutB, class Policy>
struct OperandStaging {
  using Element = ElementT;   //!< A's element, and the MMA's
  using ElementB = ElementT;  //!< B's element in memory
  using TransformB = detail::NoTransformB;
  static constexpr bool kTransformsB = false;
  //! A's and B's order in global memory, in which the tile loaders read them.
  static constexpr SmemOrder kOrderA = smem_order_of(Operand::kA, LayoutA);
  static constexpr SmemOrder kOrderB = smem_order_of(Operand::kB, LayoutB);

  using Collectives = WarpMath<Element, typename Policy::Math>;
  //! The order their tiles are kept in shared memory: the global one, except where the warp math
  //! asks for another (WarpMath::stored_order: the SIMT product keeps NN's B N-contiguous), which
  //! the tile loader then copies transposed.
  static constexpr SmemOrder kStoredA = Collectives::stored_order(Operand::kA, kOrderA, kOrderB);
  static constexpr SmemOrder kStoredB = Collectives::stored_order(Operand::kB, kOrderA, kOrderB);
  using Tile = typename Policy::Tile;
  using Warp = typename Policy::Warp;
  using FragmentLoaderA =
      typename Collectives::template FragmentLoader<Operand::kA, kStoredA, Tile::kM, Tile::kK,
                                                    Warp::kM>;
  using FragmentLoaderB =
      typename Collectives::template FragmentLoader<Operand::kB, kStoredB, Tile::kN, Tile::kK,
                                                    Warp::kN>;
  using TileA = typename FragmentLoaderA::Tile;  // (TileM, TileK) or (TileK, TileM)
  using TileB = typename FragmentLoaderB::Tile;  // (TileN, TileK) or (TileK, TileN)
  //! 16-byte copies of a tile kept in its global order; 4-byte copies, transposed, of one that
  //! is not (the loader's rows and columns are the global tile's).
  using LoaderA =
      std::conditional_t<kStoredA == kOrderA,
                         AsyncTileLoader<Element, TileA::kRows, TileA::kCols, Policy::kThreads>,
                         TransposingTileLoader<TileA::kCols, TileA::kRows, Policy::kThreads>>;
  using LoaderB =
      std::conditional_t<kStoredB == kOrderB,
                         AsyncTileLoader<ElementB, TileB::kRows, TileB::kCols, Policy::kThreads>,
                         TransposingTileLoader<TileB::kCols, TileB::kRows, Policy::kThreads>>;
  using Mma = typename Collectives::template Mma<Warp::kM, Warp::kN, kStoredA>;
  using FragmentA = typename FragmentLoaderA::Fragment;
  using FragmentB = typename FragmentLoaderB::Fragment;

  //! One stage of the ring: a k-tile of A and one of B.
  struct Stage {
    TileA a;
    TileB b;
  };

  //! What B's transform copies with a k-tile: nothing here.
  TILEPIPE_DEVICE static void stage_transform(const TransformB*, Stage&, int, int, int) {}

  //! What the warp keeps of a k-tile between its k-blocks: nothing, fragments load per k-block.
  struct KTileRegisters {};

  //! A's and B's fragments of k-block `kb` of `stage` into register buffer `buf` of the
  //! mainloop's context `c` (its fragment loaders `frag_a`, `frag_b` and buffers `fa`, `fb`).
  template <class Context>
  TILEPIPE_DEVICE static void load_fragments(Context& c, int buf, const Stage& stage, int kb) {
    c.frag_a.load(c.fa[buf], stage.a, kb);
    c.frag_b.load(c.fb[buf], stage.b, kb);
  }
};

//! `MixedInput<ElementA, Transform>`: f16 or bf16 A, and B of a 1-byte `Transform::Stored`
//! converted by `Transform` after its load. A row-major and B column-major (both K-contiguous),
//! MathDefault, a k-tile of 64 or 128.
template <class ElementA, class Transform, Layout LayoutA, Layout LayoutB, class Policy>
struct OperandStaging<MixedInput<ElementA, Transform>, LayoutA, LayoutB, Policy> {
  static_assert(LayoutA == Layout::kRowMajor && LayoutB == Layout::kColumnMajor,
                "MultistageMainloop: a MixedInput B is loaded K-contiguous, so A must be row-major "
                "and B column-major (N x K with K contiguous, as PyTorch stores Linear.weight)");
  static_assert(sizeof(typename Transform::Stored) == 1 &&
                    std::is_same_v<typename Policy::Math, MathDefault> &&
                    is_mma_m16n8k16_input_v<ElementA>,
                "MultistageMainloop: a MixedInput needs f16 or bf16 A, a 1-byte B and MathDefault");
  using Tile = typename Policy::Tile;
  using Warp = typename Policy::Warp;
  static_assert(Tile::kK == 64 || Tile::kK == 128,
                "MultistageMainloop: a MixedInput's k-tile must be 64 or 128 deep: a lane loads "
                "one or two 16-byte chunks of each column's k-tile of B (ByteKOrder)");

  using Element = ElementA;
  using ElementB = typename Transform::Stored;
  using TransformB = Transform;
  static constexpr bool kTransformsB = true;
  static constexpr SmemOrder kOrderA = SmemOrder::kKContiguous;
  static constexpr SmemOrder kOrderB = SmemOrder::kKContiguous;
  static constexpr SmemOrder kStoredA = kOrderA;
  static constexpr SmemOrder kStoredB = kOrderB;
  //! 128-bit loads of a whole k-tile of B's stored bytes and of A in the same k order
  //! (warp/byte_fragment_loader.cuh).
  using FragmentLoaderA = ByteFragmentLoaderA<Element, Tile::kM, Tile::kK, Warp::kM>;
  using FragmentLoaderB = ByteFragmentLoaderB<ElementB, Tile::kN, Tile::kK, Warp::kN>;
  using TileA = typename FragmentLoaderA::Tile;  // (TileM, TileK)
  using TileB = typename FragmentLoaderB::Tile;  // (TileN, TileK) of stored bytes
  using LoaderA = AsyncTileLoader<Element, TileA::kRows, TileA::kCols, Policy::kThreads>;
  using LoaderB = AsyncTileLoader<ElementB, TileB::kRows, TileB::kCols, Policy::kThreads>;
  using Mma = typename WarpMath<Element, MathDefault>::template Mma<Warp::kM, Warp::kN, kStoredA>;
  //! A's and B's fragments of one k-block as the MMA takes them (B converted).
  using FragmentA = typename Mma::FragmentA;
  using FragmentB = typename Mma::FragmentB;

  //! One stage of the ring: a k-tile of A, one of B, and what the transform stages with them
  //! (e.g. the k-tile's scales).
  struct Stage {
    TileA a;
    TileB b;
    typename Transform::template Staged<Tile::kN, Tile::kK> b_staged;
  };

  //! The transform's share of the k-tile at GEMM k `k0` for the block's columns from `n0`, issued
  //! with the k-tile's copies into `dst` by every thread (`thread`) of the block.
  TILEPIPE_DEVICE static void stage_transform(const Transform* transform, Stage& dst, int k0,
                                              int n0, int thread) {
    transform->template stage<Tile::kN, Tile::kK, Policy::kThreads>(dst.b_staged, k0, n0, thread);
  }

  //! The current k-tile's fragments, loaded at its first k-block: A's (k-blocks, mma registers),
  //! B's stored bytes (n8 tiles, k-blocks) and each n8 tile's transform parameter.
  struct KTileRegisters {
    typename FragmentLoaderA::Fragment a;                                // (k-blocks)
    typename FragmentLoaderB::Fragment b;                                // (n8 tiles, k-blocks)
    typename Transform::Param param[FragmentLoaderB::Fragment::kTiles];  // (n8 tiles)
  };

  //! A's and B's fragments of k-block `kb` of `stage`, B converted, into register buffer `buf` of
  //! the mainloop's context `c`. k-block 0 loads the transform's parameters of the k-tile, and
  //! k-blocks 0 and 4 each a 64-deep half of the k-tile (A and B's stored bytes, 128-bit loads)
  //! into `c.k_tile`: a whole k-tile of 128 at once held the bf16 kernel's registers past ptxas's
  //! limit on sm_80. Each k-block's B is converted a k-block ahead of the mma that needs it.
  template <class Context>
  TILEPIPE_DEVICE static void load_fragments(Context& c, int buf, const Stage& stage, int kb) {
    KTileRegisters& r = c.k_tile;
    if (kb % 4 == 0) {
      c.frag_a.load(r.a, stage.a, kb / 4);
      c.frag_b.load(r.b, stage.b, kb / 4);
    }
    if (kb == 0) {
      TILEPIPE_UNROLL
      for (int ni = 0; ni < FragmentB::kTiles; ++ni)
        r.param[ni] = c.transform_b->param(stage.b_staged, c.lane_col + MmaShape::kN * ni,
                                           ByteKOrder<Tile::kK>::half_of(c.thread % 32));
    }
    c.fa[buf] = r.a.kb[kb];
    TILEPIPE_UNROLL
    for (int ni = 0; ni < FragmentB::kTiles; ++ni)
      (*c.transform_b)(c.fb[buf].x[ni], r.b.x[ni][kb], r.param[ni]);
  }
};

}  // namespace tilepipe
