#pragma once
//! \file
//! GemmMultistage: D = alpha * A * B + beta * C on tensor cores (mma.sync), built from
//! MultistageMainloop and LinearCombinationEpilogue, with its host-side launcher. With
//! `split_k > 1` it cuts K into slices computed by separate thread blocks and sums them in a
//! second kernel (split_k_reduce.cuh).

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "../epilogue/linear_combination.cuh"
#include "../layout/tile_raster.cuh"
#include "../mainloop/multistage_mainloop.cuh"
#include "default_policy.cuh"
#include "split_k_reduce.cuh"
#include "status.cuh"

namespace tilepipe {

//! Problem description for GemmMultistage. Sizes and leading dimensions are in elements; a
//! matrix's leading dimension is the distance between its rows (row-major) or columns
//! (column-major). Batch strides are the distances between consecutive problems (0 broadcasts
//! an input).
//!
//! Split-K (a GemmMultistage with `SplitK = true`): with `split_k > 1`, K is cut into up to
//! `split_k` slices of whole k-tiles (`GemmMultistage::split_k_slices` says how many; none is
//! ever empty), each computed by its own thread blocks into an f32 `workspace`, and a second
//! kernel sums the slices in a fixed order (so the result is deterministic) and writes
//! `D = alpha * sum + beta * C`. It gives problems whose output has too few tiles to fill the
//! GPU more thread blocks. The workspace must hold `GemmMultistage::workspace_size(args)` bytes
//! (0 when the slices come to one, e.g. when K fits in one k-tile: then no workspace is needed
//! and the ordinary kernel runs), be 16-byte aligned and overlap none of A, B, C and D; GEMMs
//! that may run at the same time need workspaces of their own.
template <class ElementAB, class ElementD>
struct GemmArguments {
  int m = 0, n = 0, k = 0;
  const ElementAB* a = nullptr;  //!< M x K
  const ElementAB* b = nullptr;  //!< K x N
  const ElementD* c = nullptr;   //!< M x N, read only when beta != 0
  ElementD* d = nullptr;         //!< M x N
  std::int64_t lda = 0, ldb = 0, ldc = 0, ldd = 0;
  float alpha = 1.0f;
  float beta = 0.0f;
  Layout layout_cd = Layout::kRowMajor;  //!< layout of C and D
  int batch_count = 1;
  std::int64_t batch_stride_a = 0, batch_stride_b = 0, batch_stride_c = 0, batch_stride_d = 0;
  int split_k = 1;                 //!< slices of K (1: no split-K)
  void* workspace = nullptr;       //!< f32 partial products, when split-K runs
  std::size_t workspace_bytes = 0; //!< size of `workspace`
};

namespace detail {

template <class Gemm>
__global__ void __launch_bounds__(Gemm::kThreads)
gemm_multistage_kernel(typename Gemm::Params params) {
  extern __shared__ __align__(128) unsigned char smem[];
  auto& storage = *reinterpret_cast<typename Gemm::SharedStorage*>(smem);

  const TileCoord tile = Gemm::Raster::tile_of(blockIdx.x, params.tiles_m, params.tiles_n);
  const int block_m0 = tile.m * Gemm::Policy::Tile::kM;
  const int block_n0 = tile.n * Gemm::Policy::Tile::kN;
  const std::int64_t batch = blockIdx.z;

  typename Gemm::Mainloop mainloop(storage.mainloop, threadIdx.x);
  typename Gemm::Mainloop::Accumulators acc;
  acc.clear();
  mainloop(acc, params.a + batch * params.batch_stride_a, params.lda,
           params.b + batch * params.batch_stride_b, params.ldb, params.epilogue.m,
           params.epilogue.n, params.k, block_m0, block_n0);

  // The mainloop has drained its ring, so the epilogue may reuse the same shared memory.
  typename Gemm::Epilogue::Params ep = params.epilogue;
  ep.d += batch * params.batch_stride_d;
  if (ep.beta != 0.0f) ep.c += batch * params.batch_stride_c;
  typename Gemm::Epilogue epilogue(storage.epilogue, threadIdx.x);
  epilogue(acc, ep, block_m0, block_n0, mainloop.warp_m0(), mainloop.warp_n0());
}

//! The split-K half of GemmMultistage that does not depend on D's type, so that the partial
//! kernel is shared by GEMMs that differ only in D.
template <class ElementAB, Layout LayoutA, Layout LayoutB, class Policy, class RasterT>
struct SplitKPartial {
  using Mainloop = MultistageMainloop<ElementAB, LayoutA, LayoutB, Policy>;
  using Raster = RasterT;
  static constexpr Layout kLayoutA = LayoutA;
  static constexpr Layout kLayoutB = LayoutB;
  static constexpr int kThreads = Policy::kThreads;
  static constexpr std::size_t kSharedBytes = sizeof(typename Mainloop::SharedStorage);

  //! What the partial kernel receives.
  struct Params {
    const ElementAB* a;
    const ElementAB* b;
    std::int64_t lda, ldb;
    std::int64_t batch_stride_a, batch_stride_b;
    float* workspace;
    std::int64_t ldw, slab_elements;  //!< see SplitKWorkspace
    int m, n;
    SplitKSlices slices;              //!< where each slice of K begins and ends
    int tiles_m, tiles_n;
    int batch_count;
    bool row_major;                   //!< the workspace's orientation: D's
  };
};

//! Split-K, first kernel: block (tile, slice, batch) computes the product of its tile over its
//! slice of K with the ordinary mainloop and stores the f32 accumulators into the workspace slab
//! of (slice, batch). Grid: (tiles, slices, batches).
template <class Partial>
__global__ void __launch_bounds__(Partial::kThreads)
gemm_split_k_partial_kernel(const typename Partial::Params p) {
  using Mainloop = typename Partial::Mainloop;
  using Tile = typename Mainloop::Tile;
  using Accumulators = typename Mainloop::Accumulators;
  extern __shared__ __align__(128) unsigned char smem[];
  auto& storage = *reinterpret_cast<typename Mainloop::SharedStorage*>(smem);

  const TileCoord tile = Partial::Raster::tile_of(blockIdx.x, p.tiles_m, p.tiles_n);
  const int block_m0 = tile.m * Tile::kM;
  const int block_n0 = tile.n * Tile::kN;
  const int slice = blockIdx.y;
  const std::int64_t batch = blockIdx.z;
  // The slice's K range (never empty, see split_k_slices).
  const int k0 = p.slices.begin(slice);
  const int k_len = p.slices.extent(slice);
  // Moving A and B to the slice's first k is a pointer offset: k is A's column and B's row.
  const std::int64_t a_k0 = Partial::kLayoutA == Layout::kRowMajor ? k0 : k0 * p.lda;
  const std::int64_t b_k0 = Partial::kLayoutB == Layout::kRowMajor ? k0 * p.ldb : k0;

  Mainloop mainloop(storage, threadIdx.x);
  Accumulators acc;
  acc.clear();
  mainloop(acc, p.a + batch * p.batch_stride_a + a_k0, p.lda, p.b + batch * p.batch_stride_b + b_k0,
           p.ldb, p.m, p.n, k_len, block_m0, block_n0);

  float* ws = p.workspace + (slice * std::int64_t(p.batch_count) + batch) * p.slab_elements;
  const int row0 = block_m0 + mainloop.warp_m0();
  const int col0 = block_n0 + mainloop.warp_n0();
  const int lane = threadIdx.x % 32;
  if (p.row_major) {
    // Registers {0, 1} and {2, 3} of an m16n8 tile are two adjacent columns: one 8-byte store
    // each. The column is even and ldw a multiple of 4, so the pair is aligned and stays inside
    // the slab's row; its second column may be padding, which is never read.
    TILEPIPE_UNROLL
    for (int mi = 0; mi < Accumulators::kTilesM; ++mi) {
      TILEPIPE_UNROLL
      for (int ni = 0; ni < Accumulators::kTilesN; ++ni) {
        TILEPIPE_UNROLL
        for (int half = 0; half < 2; ++half) {
          const int r = row0 + Accumulators::row_of(lane, mi, 2 * half);
          const int c = col0 + Accumulators::col_of(lane, ni, 2 * half);
          if (r < p.m && c < p.n)
            *reinterpret_cast<float2*>(ws + r * p.ldw + c) =
                make_float2(acc.x[mi][ni][2 * half], acc.x[mi][ni][2 * half + 1]);
        }
      }
    }
  } else {
    acc.for_each(lane, [&](int r, int c, float v) {
      r += row0;
      c += col0;
      if (r < p.m && c < p.n) ws[c * p.ldw + r] = v;
    });
  }
}

inline std::string describe(const char* name, std::int64_t value) {
  return std::string(name) + " = " + std::to_string(value);
}

}  // namespace detail

//! A complete GEMM: `D = alpha * A * B + beta * C`, batched, with f32 accumulation.
//!
//! \tparam ElementAB  `__half` or `__nv_bfloat16` (A and B)
//! \tparam ElementD   `__half`, `__nv_bfloat16` or `float` (C and D)
//! \tparam LayoutA    layout of A (M x K)
//! \tparam LayoutB    layout of B (K x N)
//! \tparam Stages     shared-memory pipeline depth (2..6 where it fits)
//! \tparam Policy     tile configuration; the default suits large problems
//!
//! \code
//! using Gemm = tilepipe::GemmMultistage<__half, __half, tilepipe::Layout::kRowMajor,
//!                                       tilepipe::Layout::kColumnMajor>;
//! Gemm::Arguments args;
//! args.m = m; args.n = n; args.k = k;
//! args.a = a; args.lda = k; args.b = b; args.ldb = k; args.d = d; args.ldd = n;
//! tilepipe::Status s = Gemm::run(args, stream);
//! if (!s) std::fprintf(stderr, "%s\n", s.message().c_str());
//! \endcode
//!
//! Split-K (for problems with few output tiles and a long K) is compiled in only with
//! `SplitK = true` (`GemmMultistageSplitK`), because it adds a second GEMM kernel to every
//! instantiation, which almost doubles its compile time. Then set `args.split_k` and give
//! `workspace_size(args)` bytes of device memory as `args.workspace` / `args.workspace_bytes`;
//! `run` launches two kernels: the partial products of the K slices, then their sum in a fixed
//! order with the epilogue. With one effective slice (`split_k == 1`, the default) it launches
//! exactly the kernel it always has, with either value of `SplitK`.
template <class ElementAB, class ElementD, Layout LayoutA, Layout LayoutB, int Stages = 4,
          class PolicyT = DefaultGemmPolicy<Stages>, bool SplitK = false>
class GemmMultistage {
  static_assert(PolicyT::kStages == Stages,
                "GemmMultistage: the policy's stage count must equal the Stages argument");

 public:
  using Policy = PolicyT;
  using Arguments = GemmArguments<ElementAB, ElementD>;
  using Mainloop = MultistageMainloop<ElementAB, LayoutA, LayoutB, Policy>;
  //! Its staging buffer overlaps the ring, so it may be as large as the ring without growing the
  //! kernel's shared memory.
  using Epilogue =
      LinearCombinationEpilogue<ElementD, Policy, sizeof(typename Mainloop::SharedStorage)>;
  using Raster = GroupedRaster<8>;
  static constexpr int kThreads = Policy::kThreads;
  static constexpr Layout kLayoutA = LayoutA;
  static constexpr Layout kLayoutB = LayoutB;
  //! Whether `run` can split K (`args.split_k > 1`); without it such arguments are refused.
  static constexpr bool kSplitK = SplitK;

  //! The kernel's shared memory: the mainloop's ring, reused by the epilogue's staging tile.
  union SharedStorage {
    typename Mainloop::SharedStorage mainloop;
    typename Epilogue::SharedStorage epilogue;
  };
  static constexpr std::size_t kSharedBytes = sizeof(SharedStorage);
  //! Largest M, N or K: tile coordinates are `int`, element offsets 64-bit, so a matrix may hold
  //! more than 2^31 elements but no extent may come within a few tiles of 2^31.
  static constexpr int kMaxExtent = 0x7FFFFFFF - 4096;

  //! What the kernel receives.
  struct Params {
    const ElementAB* a;
    const ElementAB* b;
    std::int64_t lda, ldb;
    std::int64_t batch_stride_a, batch_stride_b, batch_stride_c, batch_stride_d;
    int k;
    int tiles_m, tiles_n;
    typename Epilogue::Params epilogue;
  };

  //! Checks `args` against everything the kernel relies on, and the current device. On failure
  //! the status's message names the offending argument.
  static Status can_implement(const Arguments& args) {
    Status s = check_arguments(args);
    if (!s) return s;
    return check_device();
  }

  //! The K slices that `args.split_k` gives for this configuration's k-tile depth: how many
  //! actually run (`min(split_k, k-tiles)`, so none is empty; 1 when K fits in one k-tile or is
  //! 0) and where each begins. See `tilepipe::split_k_slices`.
  static SplitKSlices split_k_slices(const Arguments& args) {
    return tilepipe::split_k_slices(args.k, args.split_k, Policy::Tile::kK);
  }

  //! Bytes of workspace `run` needs for `args`: 0 unless split-K runs (more than one effective
  //! slice, see `split_k_slices`); then `slices x batches x M x N` floats (N or M rounded up to 4).
  static std::size_t workspace_size(const Arguments& args) {
    if (args.m <= 0 || args.n <= 0 || args.batch_count <= 0) return 0;
    const SplitKSlices slices = split_k_slices(args);
    if (slices.count <= 1) return 0;
    return workspace_layout(args, slices.count).bytes();
  }

  //! Checks the arguments and launches on `stream`. Returns the first error; launches nothing then.
  static Status run(const Arguments& args, cudaStream_t stream = nullptr) {
    Status s = can_implement(args);
    if (!s) return s;
    if (args.m == 0 || args.n == 0 || args.batch_count == 0) return Status::success();
    if constexpr (SplitK) {
      const SplitKSlices slices = split_k_slices(args);
      if (slices.count > 1) return run_split_k(args, slices, stream);
    }
    auto kernel = detail::gemm_multistage_kernel<GemmMultistage>;
    s = allow_shared_memory(kernel, kSharedBytes, "cudaFuncSetAttribute");
    if (!s) return s;
    const Params params = make_params(args);
    const dim3 grid(static_cast<unsigned>(params.tiles_m) * static_cast<unsigned>(params.tiles_n),
                    1, static_cast<unsigned>(args.batch_count));
    kernel<<<grid, kThreads, kSharedBytes, stream>>>(params);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return cuda_error("the GemmMultistage kernel launch", e);
    return Status::success();
  }

 private:
  using SplitKPartial = detail::SplitKPartial<ElementAB, LayoutA, LayoutB, Policy, Raster>;

  static SplitKWorkspace workspace_layout(const Arguments& a, int slices) {
    return SplitKWorkspace::make(a.m, a.n, a.layout_cd, slices, a.batch_count);
  }

  // Split-K: the partial kernel over (tiles, slices, batches), then the reduction. The
  // arguments have been checked.
  static Status run_split_k(const Arguments& args, SplitKSlices slices, cudaStream_t stream) {
    auto kernel = detail::gemm_split_k_partial_kernel<SplitKPartial>;
    constexpr std::size_t kPartialSmem = SplitKPartial::kSharedBytes;
    const Status s = allow_shared_memory(kernel, kPartialSmem, "cudaFuncSetAttribute (split-K)");
    if (!s) return s;
    const SplitKWorkspace ws = workspace_layout(args, slices.count);
    typename SplitKPartial::Params p;
    p.a = args.a;
    p.b = args.b;
    p.lda = args.lda;
    p.ldb = args.ldb;
    p.batch_stride_a = args.batch_stride_a;
    p.batch_stride_b = args.batch_stride_b;
    p.workspace = static_cast<float*>(args.workspace);
    p.ldw = ws.ld;
    p.slab_elements = ws.slab_elements;
    p.m = args.m;
    p.n = args.n;
    p.slices = slices;
    p.tiles_m = (args.m + Policy::Tile::kM - 1) / Policy::Tile::kM;
    p.tiles_n = (args.n + Policy::Tile::kN - 1) / Policy::Tile::kN;
    p.batch_count = args.batch_count;
    p.row_major = args.layout_cd == Layout::kRowMajor;
    const dim3 grid(static_cast<unsigned>(p.tiles_m) * static_cast<unsigned>(p.tiles_n),
                    static_cast<unsigned>(slices.count), static_cast<unsigned>(args.batch_count));
    kernel<<<grid, kThreads, kPartialSmem, stream>>>(p);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return cuda_error("the split-K partial kernel launch", e);

    detail::SplitKReduceParams<ElementD> r;
    r.workspace = p.workspace;
    r.d = args.d;
    r.c = args.c;
    r.ldd = args.ldd;
    r.ldc = args.ldc;
    r.ldw = ws.ld;
    r.slab_elements = ws.slab_elements;
    r.slice_elements = ws.slab_elements * args.batch_count;
    r.batch_stride_c = args.batch_stride_c;
    r.batch_stride_d = args.batch_stride_d;
    r.outer = args.layout_cd == Layout::kRowMajor ? args.m : args.n;
    r.inner = args.layout_cd == Layout::kRowMajor ? args.n : args.m;
    r.slices = slices.count;
    r.alpha = args.alpha;
    r.beta = args.beta;
    e = detail::launch_split_k_reduce(r, args.batch_count, stream);
    if (e != cudaSuccess) return cuda_error("the split-K reduction kernel launch", e);
    return Status::success();
  }

  static Status invalid(const std::string& msg) {
    return Status::error(Status::Code::kInvalidArgument, "GemmMultistage: " + msg);
  }
  // Lets `kernel` launch with `bytes` of dynamic shared memory: above the default 48 KB a kernel
  // must opt in.
  template <class Kernel>
  static Status allow_shared_memory(Kernel kernel, std::size_t bytes, const char* what) {
    if (bytes <= 48 * 1024) return Status::success();
    const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               static_cast<int>(bytes));
    return e == cudaSuccess ? Status::success() : cuda_error(what, e);
  }

  static Status cuda_error(const char* what, cudaError_t e) {
    return Status::error(Status::Code::kCudaError, std::string("GemmMultistage: ") + what +
                                                       " failed: " + cudaGetErrorString(e));
  }

  // Rows (outer extent) and columns (contiguous extent) of an r x c matrix in a layout.
  static std::int64_t outer(Layout l, int rows, int cols) { return l == Layout::kRowMajor ? rows : cols; }
  static std::int64_t inner(Layout l, int rows, int cols) { return l == Layout::kRowMajor ? cols : rows; }

  // Checks one matrix: pointer, alignment, leading dimension; `what` is its name.
  template <class T>
  static Status check_matrix(const char* name, const T* ptr, const char* ld_name, std::int64_t ld,
                             Layout l, int rows, int cols, bool must_exist) {
    constexpr std::int64_t kAlignElems = 16 / sizeof(T);
    const std::string where = std::string(name) + " (" + std::to_string(rows) + " x " +
                              std::to_string(cols) + ", " +
                              (l == Layout::kRowMajor ? "row-major" : "column-major") + ")";
    if (must_exist && ptr == nullptr) return invalid(std::string(name) + " is a null pointer");
    if (ptr != nullptr && reinterpret_cast<std::uintptr_t>(ptr) % 16 != 0)
      return invalid(std::string(name) + " is not 16-byte aligned");
    const std::int64_t min_ld = inner(l, rows, cols);
    if (ld < (min_ld > 1 ? min_ld : 1))
      return invalid(detail::describe(ld_name, ld) + " is smaller than the " +
                     (l == Layout::kRowMajor ? "row length" : "column length") + " of " + where);
    if (ld % kAlignElems != 0)
      return invalid(detail::describe(ld_name, ld) + " is not a multiple of 16 bytes (" +
                     std::to_string(kAlignElems) + " elements) for " + where);
    return Status::success();
  }

  static Status check_arguments_impl(const Arguments& a) {
    if (a.m < 0) return invalid(detail::describe("m", a.m) + " is negative");
    if (a.n < 0) return invalid(detail::describe("n", a.n) + " is negative");
    if (a.k < 0) return invalid(detail::describe("k", a.k) + " is negative");
    if (a.batch_count < 0) return invalid(detail::describe("batch_count", a.batch_count) + " is negative");
    if (a.split_k < 1)
      return invalid(detail::describe("split_k", a.split_k) + " is less than 1 (1 runs without split-K)");
    // Tile coordinates are 32-bit (element offsets are 64-bit): keep `extent + tile` in range.
    if (a.m > kMaxExtent) return invalid(detail::describe("m", a.m) + " exceeds " + std::to_string(kMaxExtent) + ", the largest extent GemmMultistage supports");
    if (a.n > kMaxExtent) return invalid(detail::describe("n", a.n) + " exceeds " + std::to_string(kMaxExtent) + ", the largest extent GemmMultistage supports");
    if (a.k > kMaxExtent) return invalid(detail::describe("k", a.k) + " exceeds " + std::to_string(kMaxExtent) + ", the largest extent GemmMultistage supports");
    if (a.batch_count > 65535)
      return invalid(detail::describe("batch_count", a.batch_count) + " exceeds 65535, the grid's z limit");
    const std::int64_t tiles = std::int64_t((a.m + Policy::Tile::kM - 1) / Policy::Tile::kM) *
                               ((a.n + Policy::Tile::kN - 1) / Policy::Tile::kN);
    if (tiles > 0x7FFFFFFF) return invalid("m x n needs more thread blocks than a grid holds");
    if (a.m == 0 || a.n == 0 || a.batch_count == 0) return Status::success();  // nothing to do

    const bool reads_ab = a.k > 0;
    const bool reads_c = a.beta != 0.0f;
    // With K == 0, A and B are never read (D = beta * C): their arguments don't matter.
    Status s;
    if (reads_ab) s = check_matrix("A", a.a, "lda", a.lda, LayoutA, a.m, a.k, true);
    if (s && reads_ab) s = check_matrix("B", a.b, "ldb", a.ldb, LayoutB, a.k, a.n, true);
    if (s) s = check_matrix("D", a.d, "ldd", a.ldd, a.layout_cd, a.m, a.n, true);
    if (s && reads_c) s = check_matrix("C", a.c, "ldc", a.ldc, a.layout_cd, a.m, a.n, true);
    if (!s) return s;

    // Batch strides keep every problem's first element 16-byte aligned.
    struct Stride { const char* name; std::int64_t value; std::int64_t align; bool used; };
    const Stride strides[] = {
        {"batch_stride_a", a.batch_stride_a, 16 / std::int64_t(sizeof(ElementAB)), reads_ab},
        {"batch_stride_b", a.batch_stride_b, 16 / std::int64_t(sizeof(ElementAB)), reads_ab},
        {"batch_stride_c", a.batch_stride_c, 16 / std::int64_t(sizeof(ElementD)), reads_c},
        {"batch_stride_d", a.batch_stride_d, 16 / std::int64_t(sizeof(ElementD)), true}};
    if (a.batch_count > 1) {
      for (const Stride& st : strides) {
        if (!st.used) continue;
        if (st.value < 0) return invalid(detail::describe(st.name, st.value) + " is negative");
        if (st.value % st.align != 0)
          return invalid(detail::describe(st.name, st.value) + " is not a multiple of 16 bytes (" +
                         std::to_string(st.align) + " elements)");
      }
      // Problems must not overlap in D: each batch's D spans (outer - 1) * ldd + inner elements.
      const std::int64_t span = (outer(a.layout_cd, a.m, a.n) - 1) * a.ldd + inner(a.layout_cd, a.m, a.n);
      if (a.batch_stride_d < span)
        return invalid(detail::describe("batch_stride_d", a.batch_stride_d) +
                       " makes the D matrices of consecutive batches overlap (each spans " +
                       std::to_string(span) + " elements)");
    }
    s = check_aliasing(a, reads_ab, reads_c);
    if (!s) return s;
    return check_split_k(a, reads_ab, reads_c);
  }

  // With more than one effective slice: the grid, and the workspace's size, alignment and
  // separateness from every matrix.
  static Status check_split_k(const Arguments& a, bool reads_ab, bool reads_c) {
    const SplitKSlices slices = split_k_slices(a);
    if (slices.count <= 1) return Status::success();
    const std::string what = detail::describe("split_k", a.split_k) + " (" +
                             std::to_string(slices.count) + " slices of K = " + std::to_string(a.k) + ")";
    if (!SplitK)
      return invalid(what + " needs split-K, which this GemmMultistage is compiled without; use "
                            "GemmMultistage<..., Policy, /*SplitK=*/true> (GemmMultistageSplitK)");
    if (slices.count > 65535)
      return invalid(what + " needs more slices than the grid's y limit of 65535");
    const std::size_t needed = workspace_size(a);
    if (a.workspace == nullptr)
      return invalid(what + " needs a workspace of " + std::to_string(needed) +
                     " bytes (workspace_size(args)), but workspace is a null pointer");
    if (a.workspace_bytes < needed)
      return invalid("workspace_bytes = " + std::to_string(a.workspace_bytes) + " is less than the " +
                     std::to_string(needed) + " bytes that " + what + " needs (workspace_size(args))");
    if (reinterpret_cast<std::uintptr_t>(a.workspace) % 16 != 0)
      return invalid("workspace is not 16-byte aligned");
    const auto first = reinterpret_cast<std::uintptr_t>(a.workspace);
    const Range w{first, first + needed};
    if (w.overlaps(range_of(a.d, a.layout_cd, a.ldd, a.m, a.n, a.batch_count, a.batch_stride_d)))
      return invalid("the split-K workspace overlaps D in memory");
    if (reads_c && w.overlaps(range_of(a.c, a.layout_cd, a.ldc, a.m, a.n, a.batch_count, a.batch_stride_c)))
      return invalid("the split-K workspace overlaps C in memory");
    if (reads_ab) {
      if (w.overlaps(range_of(a.a, LayoutA, a.lda, a.m, a.k, a.batch_count, a.batch_stride_a)))
        return invalid("the split-K workspace overlaps A in memory");
      if (w.overlaps(range_of(a.b, LayoutB, a.ldb, a.k, a.n, a.batch_count, a.batch_stride_b)))
        return invalid("the split-K workspace overlaps B in memory");
    }
    return Status::success();
  }

  // Byte range [first, last) that a matrix covers over all batches.
  struct Range {
    std::uintptr_t first, last;
    bool overlaps(const Range& o) const { return first < o.last && o.first < last; }
  };
  template <class T>
  static Range range_of(const T* p, Layout l, std::int64_t ld, int rows, int cols, int batches,
                        std::int64_t stride) {
    const std::int64_t elems = (outer(l, rows, cols) - 1) * ld + inner(l, rows, cols) +
                               std::int64_t(batches - 1) * stride;
    const auto first = reinterpret_cast<std::uintptr_t>(p);
    return Range{first, first + static_cast<std::uintptr_t>(elems) * sizeof(T)};
  }

  // D is written while A, B and C are read by other blocks: it must not share memory with A or
  // B. C may be D itself (an in-place update), element for element, but may not overlap it
  // otherwise.
  static Status check_aliasing(const Arguments& a, bool reads_ab, bool reads_c) {
    const Range d = range_of(a.d, a.layout_cd, a.ldd, a.m, a.n, a.batch_count, a.batch_stride_d);
    if (reads_ab) {
      if (d.overlaps(range_of(a.a, LayoutA, a.lda, a.m, a.k, a.batch_count, a.batch_stride_a)))
        return invalid("D overlaps A in memory; write D to a separate buffer");
      if (d.overlaps(range_of(a.b, LayoutB, a.ldb, a.k, a.n, a.batch_count, a.batch_stride_b)))
        return invalid("D overlaps B in memory; write D to a separate buffer");
    }
    if (reads_c) {
      const bool same = static_cast<const void*>(a.c) == static_cast<const void*>(a.d) &&
                        a.ldc == a.ldd && (a.batch_count <= 1 || a.batch_stride_c == a.batch_stride_d);
      if (!same && d.overlaps(range_of(a.c, a.layout_cd, a.ldc, a.m, a.n, a.batch_count, a.batch_stride_c)))
        return invalid("C overlaps D without being the same matrix (same pointer, ldc == ldd, same "
                       "batch stride); in-place updates must be exact");
    }
    return Status::success();
  }

  static Status check_device() {
    int device = 0;
    cudaError_t e = cudaGetDevice(&device);
    if (e != cudaSuccess) return cuda_error("cudaGetDevice", e);
    int major = 0, minor = 0, smem_optin = 0;
    e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
    if (e == cudaSuccess)
      e = cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
    if (e != cudaSuccess) return cuda_error("cudaDeviceGetAttribute", e);
    return check_device_properties(device, major, minor, smem_optin);
  }

 public:
  //! The device part of `can_implement`, from the properties of device `device` (separate so
  //! that it can be tested without such a device).
  static Status check_device_properties(int device, int major, int minor, int smem_optin) {
    if (major < 8)
      return Status::error(Status::Code::kUnsupportedDevice,
                           "GemmMultistage: device " + std::to_string(device) + " is sm_" +
                               std::to_string(major) + std::to_string(minor) +
                               "; tilepipe needs sm_80 or newer (cp.async, mma.sync m16n8k16)");
    if (smem_optin < 0 || static_cast<std::size_t>(smem_optin) < kSharedBytes)
      return Status::error(Status::Code::kInsufficientResources,
                           "GemmMultistage: this configuration needs " + std::to_string(kSharedBytes) +
                               " bytes of shared memory per block; device " + std::to_string(device) +
                               " allows " + std::to_string(smem_optin) + "; use fewer stages");
    return Status::success();
  }

  //! The argument part of `can_implement` (no device is queried).
  static Status check_arguments(const Arguments& a) { return check_arguments_impl(a); }

 private:
  static Params make_params(const Arguments& a) {
    Params p;
    p.a = a.a;
    p.b = a.b;
    p.lda = a.lda;
    p.ldb = a.ldb;
    p.batch_stride_a = a.batch_stride_a;
    p.batch_stride_b = a.batch_stride_b;
    p.batch_stride_c = a.batch_stride_c;
    p.batch_stride_d = a.batch_stride_d;
    p.k = a.k;
    p.tiles_m = (a.m + Policy::Tile::kM - 1) / Policy::Tile::kM;
    p.tiles_n = (a.n + Policy::Tile::kN - 1) / Policy::Tile::kN;
    p.epilogue.d = a.d;
    p.epilogue.c = a.c;
    p.epilogue.ldd = a.ldd;
    p.epilogue.ldc = a.ldc;
    p.epilogue.alpha = a.alpha;
    p.epilogue.beta = a.beta;
    p.epilogue.layout = a.layout_cd;
    p.epilogue.m = a.m;
    p.epilogue.n = a.n;
    return p;
  }
};

//! GemmMultistage with split-K compiled in (see GemmMultistage's `SplitK`).
template <class ElementAB, class ElementD, Layout LayoutA, Layout LayoutB, int Stages = 4,
          class Policy = DefaultGemmPolicy<Stages>>
using GemmMultistageSplitK = GemmMultistage<ElementAB, ElementD, LayoutA, LayoutB, Stages, Policy,
                                            /*SplitK=*/true>;

}  // namespace tilepipe
