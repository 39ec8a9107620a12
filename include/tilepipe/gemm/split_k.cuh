#pragma once
//! \file
//! Split-K for GemmMultistage: how K is cut into slices, how the f32 workspace of partial
//! products is laid out, and the kernel that sums the slices in a fixed order and writes
//! `D = op(alpha * sum + beta * C)` through the epilogue's output store.
//!
//! "Parallel split-K": K is cut into S slices of whole k-tiles (SplitKSlices). The thread block
//! of slice `s` and output tile `t` runs the ordinary GEMM kernel (gemm/kernel.cuh) over its slice
//! and stores its f32 accumulators, through the ordinary staged epilogue, into workspace slab `s`;
//! a second, elementwise kernel then adds the slabs in the order 0, 1, ..., S - 1 (so the result
//! does not depend on scheduling: it is bit-identical from run to run) and writes D.
//!
//! The slice arithmetic is plain host/device C++ so that it can be tested on the CPU.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include "../detail/macros.cuh"
#include "../epilogue/output_store.cuh"
#include "../layout/tile_shape.cuh"
#include "../status.cuh"
#include "launch.cuh"

namespace tilepipe {

//! How a GEMM's K is cut for split-K: `count` slices of whole k-tiles, as even as that allows
//! (the first `longer` slices have one k-tile more than the others), in order along K.
struct SplitKSlices {
  int count = 1;    //!< slices that run (1: no split-K)
  int k_tiles = 0;  //!< k-tiles in every slice, plus one in each of the first `longer`
  int longer = 0;   //!< slices with one more k-tile
  int tile_k = 1;   //!< depth of a k-tile
  int k = 0;        //!< the GEMM's K

  //! First k of slice `s`.
  TILEPIPE_HOST_DEVICE constexpr int begin(int s) const {
    return (s * k_tiles + (s < longer ? s : longer)) * tile_k;
  }
  //! K extent of slice `s`: whole k-tiles, but the last slice ends at K. Never 0 when K > 0.
  TILEPIPE_HOST_DEVICE constexpr int extent(int s) const {
    const int first = begin(s);
    const int end = first + (k_tiles + (s < longer ? 1 : 0)) * tile_k;
    return (end < k ? end : k) - first;
  }
};

//! The slices of `k` for `split_k` requested slices of k-tiles `tile_k` deep: every slice is a
//! whole number of k-tiles (the last one may end early, at K) and none is empty, so
//! `min(split_k, ceil(k / tile_k))` slices run; 1 when `split_k <= 1` or `k <= tile_k` (K = 0
//! included). E.g. 10 k-tiles in 4 slices: 3 + 3 + 2 + 2.
TILEPIPE_HOST_DEVICE constexpr SplitKSlices split_k_slices(int k, int split_k, int tile_k) {
  SplitKSlices s;
  s.k = k > 0 ? k : 0;
  s.tile_k = tile_k > 0 ? tile_k : 1;
  const int tiles = s.k / s.tile_k + (s.k % s.tile_k != 0 ? 1 : 0);
  s.count = split_k < 1 ? 1 : split_k < tiles ? split_k : tiles > 0 ? tiles : 1;
  s.k_tiles = tiles / s.count;
  s.longer = tiles % s.count;
  return s;
}

//! Where the partial products of split-K live: `slices x batches` slabs of f32, each an
//! `outer x ld` matrix in D's orientation (row-major D: `outer = M` rows of `N` columns;
//! column-major D: `outer = N` columns of `M` rows), slab `(s, b)` at element
//! `(s * batches + b) * slab_elements`. `ld` is the contiguous extent rounded up to 4 floats so
//! that every row of the slab starts 16-byte aligned; the padding elements may be written by the
//! partial kernel and are never read.
struct SplitKWorkspace {
  std::int64_t ld = 0;             //!< floats between consecutive rows (columns) of a slab
  std::int64_t slab_elements = 0;  //!< floats in one slab: outer * ld
  std::int64_t slices = 0;
  std::int64_t batches = 0;

  //! The layout for an `m x n` D in `layout_cd`, `slices` slices, `batches` batches.
  static constexpr SplitKWorkspace make(int m, int n, Layout layout_cd, int slices, int batches) {
    const std::int64_t outer = layout_cd == Layout::kRowMajor ? m : n;
    const std::int64_t inner = layout_cd == Layout::kRowMajor ? n : m;
    SplitKWorkspace w;
    w.ld = (inner + 3) / 4 * 4;
    w.slab_elements = outer * w.ld;
    w.slices = slices;
    w.batches = batches;
    return w;
  }

  //! Bytes of the whole workspace; saturates at the largest `std::size_t` instead of wrapping.
  constexpr std::size_t bytes() const {
    if (slab_elements <= 0 || slices <= 0 || batches <= 0) return 0;
    constexpr std::size_t kMax = std::numeric_limits<std::size_t>::max();
    const std::size_t factors[3] = {static_cast<std::size_t>(slab_elements),
                                    static_cast<std::size_t>(slices),
                                    static_cast<std::size_t>(batches)};
    std::size_t total = sizeof(float);
    for (const std::size_t f : factors) {
      if (total > kMax / f) return kMax;
      total *= f;
    }
    return total;
  }
};

namespace detail {

//! What the split-K reduction kernel receives. D (and C) are seen in their own orientation:
//! `outer` lines of `inner` contiguous elements, line `o` at `o * ldd` (`o * ldc`).
template <class ElementD, class OutputOp>
struct SplitKReduceParams {
  const float* workspace = nullptr;
  ElementD* d = nullptr;
  const ElementD* c = nullptr;
  std::int64_t ldd = 0, ldc = 0, ldw = 0;
  std::int64_t slab_elements = 0;   //!< workspace floats between consecutive batches
  std::int64_t slice_elements = 0;  //!< workspace floats between consecutive slices
  std::int64_t batch_stride_c = 0, batch_stride_d = 0;
  int outer = 0, inner = 0, slices = 1;
  float alpha = 1.0f, beta = 0.0f;
  OutputOp op{};
};

//! Threads per block of the reduction kernel.
inline constexpr int kSplitKReduceThreads = 256;

//! `D = op(alpha * (slab_0 + slab_1 + ... + slab_{S-1}) + beta * C)`, summed in that order in
//! f32. Each thread handles 16 bytes of D at a time (8 16-bit or 4 f32 elements), grid-stride
//! over the lines of one batch; `blockIdx.y` is the batch. Elements past `inner` of a line (the
//! slab's padding, and D's leading-dimension gap) are neither read nor written. `kRowMajor` is
//! D's layout: lines are rows when it is row-major, columns otherwise.
template <class ElementD, class OutputOp, bool kRowMajor>
__global__ void __launch_bounds__(kSplitKReduceThreads)
    split_k_reduce_kernel(const SplitKReduceParams<ElementD, OutputOp> p) {
  constexpr int kVector = kOutputVector<ElementD>;
  const std::int64_t batch = blockIdx.y;
  const float* ws = p.workspace + batch * p.slab_elements;
  ElementD* d = p.d + batch * p.batch_stride_d;
  const ElementD* c = p.beta != 0.0f ? p.c + batch * p.batch_stride_c : nullptr;
  const std::int64_t vectors_per_line = (p.inner + kVector - 1) / kVector;
  const std::int64_t vectors = vectors_per_line * p.outer;
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t v = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; v < vectors;
       v += stride) {
    const std::int64_t line = v / vectors_per_line;
    const int i0 = static_cast<int>(v - line * vectors_per_line) * kVector;
    const float* src = ws + line * p.ldw + i0;
    ElementD* dst = d + line * p.ldd + i0;
    const ElementD* src_c = c != nullptr ? c + line * p.ldc + i0 : nullptr;
    const int row = kRowMajor ? static_cast<int>(line) : i0;
    const int col = kRowMajor ? i0 : static_cast<int>(line);
    if (i0 + kVector <= p.inner) {
      // A whole vector: 16-byte loads of every slab (rows of a slab start 16-byte aligned and
      // i0 is a multiple of 4), a 16-byte load of C and a 16-byte store of D.
      constexpr int kQuads = kVector / 4;
      float4 sum[kQuads];
      TILEPIPE_UNROLL
      for (int q = 0; q < kQuads; ++q) sum[q] = *reinterpret_cast<const float4*>(src + 4 * q);
      // Several slabs' loads in flight per thread. (Unrolling the f32 case 4 times makes ptxas
      // for sm_90 squeeze the kernel into 32 registers and spill.)
      constexpr int kUnroll = kVector == 8 ? 4 : 2;
#pragma unroll kUnroll
      for (int s = 1; s < p.slices; ++s) {
        const float* slab = src + s * p.slice_elements;
        TILEPIPE_UNROLL
        for (int q = 0; q < kQuads; ++q) {
          const float4 f = *reinterpret_cast<const float4*>(slab + 4 * q);
          sum[q].x += f.x;
          sum[q].y += f.y;
          sum[q].z += f.z;
          sum[q].w += f.w;
        }
      }
      float x[kVector];
      TILEPIPE_UNROLL
      for (int q = 0; q < kQuads; ++q) {
        x[4 * q] = p.alpha * sum[q].x;
        x[4 * q + 1] = p.alpha * sum[q].y;
        x[4 * q + 2] = p.alpha * sum[q].z;
        x[4 * q + 3] = p.alpha * sum[q].w;
      }
      if (src_c != nullptr)
        store_output_vector<ElementD, kRowMajor, true>(x, dst, src_c, p.beta, p.op, row, col);
      else store_output_vector<ElementD, kRowMajor, false>(x, dst, src_c, p.beta, p.op, row, col);
    } else {
      // The end of a line: element by element, the same arithmetic in the same order.
      // (One element per store_output_elements call keeps the values in registers.)
      for (int e = 0; e < p.inner - i0; ++e) {
        float sum = src[e];
        for (int s = 1; s < p.slices; ++s) sum += src[s * p.slice_elements + e];
        const float x = p.alpha * sum;
        const int r = kRowMajor ? row : row + e, c_ = kRowMajor ? col + e : col;
        if (src_c != nullptr)
          store_output_elements<ElementD, kRowMajor, true>(&x, 1, dst + e, src_c + e, p.beta, p.op,
                                                           r, c_);
        else
          store_output_elements<ElementD, kRowMajor, false>(&x, 1, dst + e, src_c, p.beta, p.op, r,
                                                            c_);
      }
    }
  }
}

//! split_k_reduce_kernel as a kernel for KernelLauncher, D row-major or not.
template <class ElementD, class OutputOp, bool kRowMajor>
struct SplitKReduceKernel {
  using Params = SplitKReduceParams<ElementD, OutputOp>;
  using Entry = void (*)(const Params);
  static constexpr int kThreads = kSplitKReduceThreads;
  static constexpr std::size_t kSharedBytes = 0;
  static Entry entry() { return split_k_reduce_kernel<ElementD, OutputOp, kRowMajor>; }

  //! Enough blocks to cover a batch once, but no more than a few waves' worth on any GPU (the
  //! loop strides over the rest), for `batches` batches (at most 65535, the grid's y limit).
  static LaunchShape shape(const Params& p, int batches) {
    constexpr int kVector = kOutputVector<ElementD>;
    constexpr std::int64_t kMaxBlocks = 8192;
    const std::int64_t vectors = (std::int64_t(p.inner) + kVector - 1) / kVector * p.outer;
    std::int64_t blocks = (vectors + kThreads - 1) / kThreads;
    blocks = blocks > kMaxBlocks ? kMaxBlocks : blocks < 1 ? 1 : blocks;
    return {dim3(static_cast<unsigned>(blocks), static_cast<unsigned>(batches))};
  }
};

//! Split-K's second step for a GEMM whose arguments name C and D as GemmArguments does (`d`, `c`,
//! `ldd`, `ldc`, `layout_cd`, `m`, `n`, `alpha`, `beta`, `output_op`): the reduction of the
//! `slices` slabs of `workspace` (laid out as `ws`) into D, for `batches` batches of C and D
//! `batch_stride_c` / `batch_stride_d` elements apart, launched on `stream`.
template <class ElementD, class OutputOp, class Args>
Status reduce_split_k(const Args& args, const float* workspace, const SplitKWorkspace& ws,
                      int slices, int batches, std::int64_t batch_stride_c,
                      std::int64_t batch_stride_d, cudaStream_t stream, const std::string& who) {
  SplitKReduceParams<ElementD, OutputOp> r;
  r.workspace = workspace;
  r.d = args.d;
  r.c = args.c;
  r.ldd = args.ldd;
  r.ldc = args.ldc;
  r.ldw = ws.ld;
  r.slab_elements = ws.slab_elements;
  r.slice_elements = ws.slab_elements * batches;
  r.batch_stride_c = batch_stride_c;
  r.batch_stride_d = batch_stride_d;
  const bool row_major = args.layout_cd == Layout::kRowMajor;
  r.outer = row_major ? args.m : args.n;
  r.inner = row_major ? args.n : args.m;
  r.slices = slices;
  r.alpha = args.alpha;
  r.beta = args.beta;
  r.op = args.output_op;
  const std::string what = who + " (the split-K reduction)";
  using RowMajor = SplitKReduceKernel<ElementD, OutputOp, true>;
  using ColumnMajor = SplitKReduceKernel<ElementD, OutputOp, false>;
  return row_major
             ? KernelLauncher<RowMajor>::launch(r, RowMajor::shape(r, batches), stream, what)
             : KernelLauncher<ColumnMajor>::launch(r, ColumnMajor::shape(r, batches), stream, what);
}

//! Split-K in two launches: `PartialKernel` (a GemmKernel with SliceReduction::kWorkspace, whose
//! `p` holds everything but D) writes each slice's f32 partial products into `args.workspace`,
//! slab (slice, batch) at `(slice * batches + batch) * slab_elements` in D's orientation; then
//! the reduction sums the slabs in slice order into D.
template <class PartialKernel, class ElementD, class OutputOp, class Args>
Status run_split_k(typename PartialKernel::Params p, const Args& args, SplitKSlices slices,
                   int batches, std::int64_t batch_stride_c, std::int64_t batch_stride_d,
                   cudaStream_t stream, const std::string& who) {
  const SplitKWorkspace ws =
      SplitKWorkspace::make(args.m, args.n, args.layout_cd, slices.count, batches);
  float* workspace = static_cast<float*>(args.workspace);
  p.batch_stride_d = ws.slab_elements;
  p.slice_stride_d = ws.slab_elements * batches;
  p.slices = slices;
  p.epilogue = {workspace, nullptr, ws.ld, 0, 1.0f, 0.0f, args.layout_cd, args.m, args.n, {}};
  const Status s = KernelLauncher<PartialKernel>::launch(p, PartialKernel::shape(p, batches),
                                                         stream, who + " (the split-K partials)");
  if (!s) return s;
  return reduce_split_k<ElementD, OutputOp>(args, workspace, ws, slices.count, batches,
                                            batch_stride_c, batch_stride_d, stream, who);
}

}  // namespace detail
}  // namespace tilepipe
