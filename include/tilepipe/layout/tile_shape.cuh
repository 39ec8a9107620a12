#pragma once
//! \file
//! Compile-time tile shapes and the storage orders of GEMM operands.

#include "../detail/macros.cuh"

namespace tilepipe {

//! Storage order of a matrix in global memory.
enum class Layout {
  kRowMajor,     //!< element (r, c) at `r * ld + c`
  kColumnMajor,  //!< element (r, c) at `c * ld + r`
};

//! Which GEMM operand a collective works on: A is M x K, B is K x N.
enum class Operand { kA, kB };

//! Which dimension of an operand's tile is contiguous in shared memory. It follows from the
//! global layout so that both global reads and shared writes are 16-byte vectors:
//! A row-major and B column-major are K-contiguous; the other two are MN-contiguous.
enum class SmemOrder {
  kKContiguous,   //!< stored as [MN][K]
  kMNContiguous,  //!< stored as [K][MN]
};

//! The shared-memory order of operand `Op` when it is stored in global memory as `L`.
TILEPIPE_HOST_DEVICE constexpr SmemOrder smem_order_of(Operand op, Layout l) {
  return (op == Operand::kA) == (l == Layout::kRowMajor) ? SmemOrder::kKContiguous
                                                         : SmemOrder::kMNContiguous;
}

//! An M x N x K extent: a block tile, a warp tile or an instruction shape.
template <int M, int N, int K>
struct GemmShape {
  static constexpr int kM = M;
  static constexpr int kN = N;
  static constexpr int kK = K;
};

//! The instruction shape of `mma.sync.m16n8k16`.
using MmaShape = GemmShape<16, 8, 16>;

//! Rows and columns of the shared-memory tile that holds a `TileMN x TileK` slice of an operand
//! stored in `Order`: rows are the strided dimension, columns the contiguous one.
template <SmemOrder Order, int TileMN, int TileK>
struct OperandTileExtent {
  static constexpr int kRows = Order == SmemOrder::kKContiguous ? TileMN : TileK;
  static constexpr int kCols = Order == SmemOrder::kKContiguous ? TileK : TileMN;
};

}  // namespace tilepipe
