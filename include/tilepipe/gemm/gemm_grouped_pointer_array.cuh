#pragma once
//! \file
//! GemmGroupedPointerArraySm90: the pointer-array form of the grouped GEMM (gemm_grouped.cuh):
//! `G` problems `D_g = output_op(alpha * A_g * B_g)` of one N and K whose A_g, B_g and D_g are
//! matrices of their own, with pointers, row counts `M_g` and leading dimensions in device arrays
//! that the host never reads. Two launches in one stream, both capturable in a CUDA graph:
//! - a preparing kernel (one block, a thread per group) checks each group, writes the group's
//!   row count (0 for a skipped group) and, from two tensor maps encoded on the host for the
//!   shared N and K, the group's own maps of A_g and B_g (`tensormap.replace` of the address, the
//!   rows and the strides, then a release fence) into the caller's workspace;
//! - the persistent GemmKernelSm90 walks every group's tiles (GroupedScheduler's table over those
//!   row counts); its producer acquires a group's maps where its group changes and copies A_g's
//!   and B_g's tiles through them, and each tile of D_g is written from the registers, rows past
//!   `M_g` and columns past N skipped.
//!
//! Safety with device-side sizes: the kernels cannot know how large the allocations are, so the
//! pointers, `M_g` and leading dimensions must describe real matrices. What they can tell is bad
//! is skipped and reported: a group with `M_g < 0` or `M_g > m`, or (with `M_g > 0`) a null or
//! misaligned pointer (A_g, B_g: 16 bytes, TMA's; D_g: its element's) or a leading dimension
//! below its line or past TMA's 2^40-byte stride (A_g's and B_g's: multiples of 16 bytes) has
//! no tile computed and its D_g is not written; `*status` (optional) is then 1 + the first such
//! group, else 0. With K = 0, A and B are not read (D_g = output_op(0)).

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "../arch/tma.cuh"
#include "../block/tma_tile_loader.cuh"
#include "../epilogue/output_ops.cuh"
#include "../epilogue/warpgroup_epilogue.cuh"
#include "../layout/tile_raster.cuh"
#include "../mainloop/warp_specialized_mainloop.cuh"
#include "../numeric/element_traits.cuh"
#include "../status.cuh"
#include "grouped_scheduler.cuh"
#include "kernel_sm90.cuh"
#include "launch.cuh"

namespace tilepipe {

//! GroupedScheduler over the row counts that the preparing kernel checked, with each group's
//! tensor maps of A and B and its D (GemmKernelSm90 loads and stores through them).
template <class ElementD, int TileM, int TileN, int ClusterM, class Raster, int MaxGroups>
struct GroupedPointerArrays : GroupedScheduler<TileM, TileN, ClusterM, Raster, MaxGroups>,
                              detail::PointerArrayTag {
  const CUtensorMap* maps = nullptr;  //!< `2 G` in global memory: A_g's at g, B_g's at G + g
  ElementD* const* d = nullptr;       //!< G pointers, on the device
  const std::int64_t* ldd = nullptr;  //!< G leading dimensions, on the device

  //! Group g's maps, acquired for this thread's copies unless g is `acquired` (then set to g).
  TILEPIPE_DEVICE TmaMaps maps_of(int g, int& acquired) const {
    const TmaMaps m{maps + g, maps + this->groups + g};
    if (g != acquired) {
      arch::tensor_map_acquire(m.a);
      arch::tensor_map_acquire(m.b);
      acquired = g;
    }
    return m;
  }
  TILEPIPE_DEVICE ElementD* d_of(int g) const { return d[g]; }
  TILEPIPE_DEVICE std::int64_t ldd_of(int g) const { return __ldg(ldd + g); }
};

//! The arguments of GemmGroupedPointerArraySm90; every array holds G entries on the device.
//! Leading dimensions in elements.
template <class ElementAB, class ElementD, class OutputOp = Identity>
struct GemmGroupedPointerArrayArguments {
  int groups = 0;    //!< G (1 .. kMaxGroups)
  int m = 0;         //!< the most rows of any group: a group of more is skipped (and reported)
  int n = 0, k = 0;  //!< every group's N and K
  const int* rows = nullptr;            //!< M_g (int32)
  const ElementAB* const* a = nullptr;  //!< A_g: `[M_g, K]` row-major
  const std::int64_t* lda = nullptr;
  const ElementAB* const* b = nullptr;  //!< B_g: `[N, K]` (LayoutB kColumnMajor) or `[K, N]`
  const std::int64_t* ldb = nullptr;
  ElementD* const* d = nullptr;  //!< D_g: `[M_g, N]` row-major
  const std::int64_t* ldd = nullptr;
  float alpha = 1.0f;
  int* status = nullptr;  //!< optional: 0, or 1 + the first group skipped as bad
  OutputOp output_op{};   //!< applied to every element of D_g, at its row and column in D_g
  //! `workspace_bytes(groups)` bytes on the device, 128-byte aligned, for the groups' tensor maps
  //! and row counts: the launches' until they finish (a captured graph's for its life).
  void* workspace = nullptr;
};

namespace detail {

//! The preparing kernel's parameter: the template maps and the arguments' arrays.
template <class ElementAB, class ElementD>
struct PointerArrayPrepareParams {
  CUtensorMap a, b;  //!< encoded on the host for the shared N and K (dummy address and strides)
  int groups, m, n, k;
  bool b_k_major;  //!< B_g's lines run along K (`[N, K]`)
  const int* rows;
  const ElementAB* const* ptr_a;
  const std::int64_t* lda;
  const ElementAB* const* ptr_b;
  const std::int64_t* ldb;
  ElementD* const* ptr_d;
  const std::int64_t* ldd;
  CUtensorMap* maps;  //!< the workspace's `2 G` maps
  int* rows_out;      //!< the workspace's G checked row counts
  int* status;
};

//! Whether a group's matrix at `ptr` with lines of `line` elements `ld` apart may be read or
//! written: non-null, aligned to `align` bytes, `ld` in `[max(line, 1), 2^40 bytes)`, and with
//! `align` 16 (TMA's) a multiple of 16 bytes.
template <class T>
TILEPIPE_DEVICE bool group_operand_ok(const T* ptr, std::int64_t ld, std::int64_t line,
                                      unsigned align) {
  constexpr std::int64_t kMaxLd = (kTensorMapMaxStride - 1) / static_cast<std::int64_t>(sizeof(T));
  return ptr != nullptr && reinterpret_cast<std::uintptr_t>(ptr) % align == 0 &&
         ld >= (line > 1 ? line : 1) && ld <= kMaxLd &&
         (align != 16 || (ld * static_cast<std::int64_t>(sizeof(T))) % 16 == 0);
}

//! Group g's map: the template with `ptr`, the outer extent `outer` (0: the template's) and the
//! lines `ld` elements apart.
template <class T>
TILEPIPE_DEVICE void write_group_map(CUtensorMap* map, const CUtensorMap& templ, const T* ptr,
                                     int outer, std::int64_t ld) {
  namespace ptx = cuda::ptx;
  TILEPIPE_UNROLL
  for (int i = 0; i < 8; ++i)
    reinterpret_cast<uint4*>(map)[i] = reinterpret_cast<const uint4*>(&templ)[i];
  const auto stride = static_cast<std::uint64_t>(ld * static_cast<std::int64_t>(sizeof(T)));
  ptx::tensormap_replace_global_address(ptx::space_global, map,
                                        reinterpret_cast<std::uint64_t>(ptr));
  if (outer > 0)
    ptx::tensormap_replace_global_dim(ptx::space_global, map, ptx::n32_t<1>{},
                                      static_cast<std::uint32_t>(outer));
  ptx::tensormap_replace_global_stride(ptx::space_global, map, ptx::n32_t<0>{}, stride);
  ptx::tensormap_replace_global_stride(ptx::space_global, map, ptx::n32_t<1>{}, stride);
}

//! One block of `kMaxGroups` threads, thread g for group g: checks it, writes its row count and
//! (where it has tiles to load) its maps, releases the maps, and writes the status.
template <class ElementAB, class ElementD>
__global__ void pointer_array_prepare_kernel(
    const __grid_constant__ PointerArrayPrepareParams<ElementAB, ElementD> p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __shared__ int first_bad;
  if (threadIdx.x == 0) first_bad = INT_MAX;
  __syncthreads();
  const int g = static_cast<int>(threadIdx.x);
  if (g < p.groups) {
    const int r = __ldg(p.rows + g);
    bool bad = r < 0 || r > p.m;
    int rows = bad ? 0 : r;
    if (rows > 0 && p.n > 0) {  // with K = 0, A's and B's arrays are not read (may be null)
      bool ok = group_operand_ok(p.ptr_d[g], __ldg(p.ldd + g), p.n, alignof(ElementD));
      if (ok && p.k > 0) {
        const ElementAB* a = p.ptr_a[g];
        const ElementAB* b = p.ptr_b[g];
        const std::int64_t lda = __ldg(p.lda + g), ldb = __ldg(p.ldb + g);
        ok = group_operand_ok(a, lda, p.k, 16) &&
             group_operand_ok(b, ldb, p.b_k_major ? p.k : p.n, 16);
        if (ok) {
          write_group_map(p.maps + g, p.a, a, rows, lda);
          write_group_map(p.maps + p.groups + g, p.b, b, 0, ldb);
        }
      }
      bad = !ok;
      if (!ok) rows = 0;
    }
    p.rows_out[g] = rows;
    if (bad) atomicMin(&first_bad, g);
  }
  arch::tensor_map_release();
  __syncthreads();
  if (threadIdx.x == 0 && p.status != nullptr) *p.status = first_bad == INT_MAX ? 0 : first_bad + 1;
#endif
}

}  // namespace detail

//! \tparam ElementAB  `__half` or `__nv_bfloat16`
//! \tparam ElementD   `__half`, `__nv_bfloat16` or `float`
//! \tparam LayoutB    kColumnMajor: each B_g is `[N, K]`, K contiguous; kRowMajor: `[K, N]`
//! \tparam OutputOp   as GemmSm90's (output_ops.cuh)
//! \tparam Config     a HopperTileConfig without a cluster (GemmGroupedSm90's)
template <class ElementAB, class ElementD, Layout LayoutB = Layout::kColumnMajor,
          class OutputOp = Identity, class Config = HopperTileConfig<128, 256, 4, 1>>
class GemmGroupedPointerArraySm90 {
  static_assert(std::is_same_v<ElementAB, __half> || std::is_same_v<ElementAB, __nv_bfloat16>,
                "GemmGroupedPointerArraySm90: A and B must be __half or __nv_bfloat16");
  static_assert(is_supported_element_v<ElementD>,
                "GemmGroupedPointerArraySm90: D must be __half, __nv_bfloat16 or float");
  static_assert(Config::kClusterM == 1,
                "GemmGroupedPointerArraySm90: the groups' B are apart, so a cluster's blocks "
                "could not share one B tile; use a Config without a cluster");

 public:
  using Arguments = GemmGroupedPointerArrayArguments<ElementAB, ElementD, OutputOp>;
  using Mainloop = WarpSpecializedMainloop<ElementAB, Layout::kRowMajor, LayoutB, Config>;
  using Epilogue = WarpgroupEpilogue<ElementD, typename Mainloop::Accumulators, OutputOp>;
  //! The most groups: the preparing kernel's block, and the scheduler's table (as GemmGroupedSm90).
  static constexpr int kMaxGroups = 256;
  using Scheduler =
      GroupedPointerArrays<ElementD, Config::kM, Config::kN, 1, GroupedRaster<8>, kMaxGroups>;
  using Kernel = GemmKernelSm90<Mainloop, Epilogue, GroupedRaster<8>, void, Scheduler>;
  using Params = typename Kernel::Params;
  using PrepareParams = detail::PointerArrayPrepareParams<ElementAB, ElementD>;

  //! Bytes of workspace for `groups` groups: `2 G` tensor maps, then G row counts.
  static constexpr std::size_t workspace_bytes(int groups) {
    const std::size_t g = groups > 0 ? static_cast<std::size_t>(groups) : 0;
    return 2 * g * sizeof(CUtensorMap) + (g * sizeof(int) + 127) / 128 * 128;
  }

  static bool available() { return hopper_tier_on_current_device(); }

  //! The device-free checks of what the host holds; each failure names the argument.
  static Status check_arguments(const Arguments& a) {
    if (a.groups < 1 || a.groups > kMaxGroups)
      return invalid("groups = " + std::to_string(a.groups) + " is outside [1, " +
                     std::to_string(kMaxGroups) + "]");
    constexpr int kMaxExtent = INT_MAX - 4096;
    const char* names[3] = {"m", "n", "k"};
    const int extents[3] = {a.m, a.n, a.k};
    for (int i = 0; i < 3; ++i)
      if (extents[i] < 0 || extents[i] > kMaxExtent)
        return invalid(std::string(names[i]) + " = " + std::to_string(extents[i]) +
                       " is outside [0, " + std::to_string(kMaxExtent) + "]");
    const long long items = static_cast<long long>(a.groups) *
                            ((a.m + Config::kM - 1) / Config::kM) *
                            ((a.n + Config::kN - 1) / Config::kN);
    if (items > INT_MAX) return invalid("groups x m x n has more tiles than an int counts");
    Status s = array("rows", a.rows, alignof(int));
    if (s) s = array("status", a.status, alignof(int), true);
    if (s) s = array("workspace", a.workspace, 128);
    if (s) s = array("d", a.d, alignof(void*));
    if (s) s = array("ldd", a.ldd, alignof(std::int64_t));
    if (s && a.k > 0) s = array("a", a.a, alignof(void*));
    if (s && a.k > 0) s = array("lda", a.lda, alignof(std::int64_t));
    if (s && a.k > 0) s = array("b", a.b, alignof(void*));
    if (s && a.k > 0) s = array("ldb", a.ldb, alignof(std::int64_t));
    if (s && a.m > 0 && a.n > 0) s = check_output_op(a.output_op, a.m, a.n);
    return s;
  }

  //! `check_arguments`, then the device: an sm_90 GPU running `sm_90a` code.
  static Status can_implement(const Arguments& a) {
    const Status s = check_arguments(a);
    return s ? detail::hopper_tier_status("GemmGroupedPointerArraySm90") : s;
  }

  //! Checks, encodes the template maps and launches both kernels on `stream` (asynchronously, no
  //! host read of the device arrays). Where D has no element (m or n is 0) only the preparing
  //! kernel runs (the groups' checks, the status).
  static Status run(const Arguments& a, cudaStream_t stream = nullptr) {
    Status s = can_implement(a);
    if (!s) return s;
    PrepareParams prep{};
    Params p{};
    s = make_params(prep, p, a);
    if (!s) return s;
    detail::pointer_array_prepare_kernel<ElementAB, ElementD><<<1, kMaxGroups, 0, stream>>>(prep);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
      return detail::cuda_error("GemmGroupedPointerArraySm90", "the preparing kernel", e);
    if (a.m == 0 || a.n == 0) return Status::success();
    return KernelLauncher<Kernel>::launch(p, {dim3(p.work.workers), dim3(1, 1, 1)}, stream,
                                          "GemmGroupedPointerArraySm90");
  }

  //! Both kernels' parameters for arguments that passed `check_arguments`.
  static Status make_params(PrepareParams& prep, Params& p, const Arguments& a) {
    auto* maps = static_cast<CUtensorMap*>(a.workspace);
    auto* rows = reinterpret_cast<int*>(maps + 2 * a.groups);
    prep.groups = a.groups, prep.m = a.m, prep.n = a.n, prep.k = a.k;
    prep.b_k_major = LayoutB == Layout::kColumnMajor;
    prep.rows = a.rows;
    prep.ptr_a = a.a, prep.lda = a.lda, prep.ptr_b = a.b, prep.ldb = a.ldb;
    prep.ptr_d = a.d, prep.ldd = a.ldd;
    prep.maps = maps, prep.rows_out = rows, prep.status = a.status;
    p.k = a.k;
    p.work.form = GroupedForm::kMasked;  // each group's rows from 0 (its own A_g and D_g)
    p.work.sizes = rows;
    p.work.groups = a.groups;
    p.work.rows = a.m;
    p.work.items_n = (a.n + Config::kN - 1) / Config::kN;
    p.work.k_tiles = Kernel::k_tiles(a.k);
    p.work.status = nullptr;  // the preparing kernel writes it
    p.work.maps = maps, p.work.d = a.d, p.work.ldd = a.ldd;
    if (a.m == 0 || a.n == 0) return Status::success();
    int workers = 0;
    Status s = KernelLauncher<Kernel>::resident_clusters(dim3(1, 1, 1), &workers,
                                                         "GemmGroupedPointerArraySm90");
    if (s && workers <= 0)
      s = Status::error(Status::Code::kUnsupportedDevice,
                        "GemmGroupedPointerArraySm90: no block of this kernel fits on the device");
    if (!s) return s;
    p.work.workers = workers;
    // D_g is written from the registers (its own pointer): the epilogue keeps no tensor map.
    p.epilogue.out = {nullptr, nullptr,           0,   0,   a.alpha,
                      0.0f,    Layout::kRowMajor, a.m, a.n, a.output_op};
    p.epilogue.direct = true;
    // Template maps (any 16-byte aligned address, lines rounded up to 16 bytes), for the groups'
    // maps to start from; also the kernel's (unused) parameter maps.
    const auto line = [](int e) { return static_cast<std::int64_t>((e > 8 ? e : 8) + 7) / 8 * 8; };
    const auto* dummy = static_cast<const ElementAB*>(a.workspace);
    s = Mainloop::Loader::make_params(p.load, dummy, line(a.k), 0, dummy,
                                      line(prep.b_k_major ? a.k : a.n), 0, a.m, a.n, a.k, 1);
    if (!s) return Status::error(s.code(), "GemmGroupedPointerArraySm90: " + s.message());
    prep.a = p.load.a, prep.b = p.load.b;
    return Status::success();
  }

 private:
  static Status invalid(const std::string& msg) {
    return Status::error(Status::Code::kInvalidArgument, "GemmGroupedPointerArraySm90: " + msg);
  }

  // A device array (or the workspace) at `ptr`: non-null unless `optional`, aligned to `align`.
  static Status array(const char* name, const void* ptr, std::size_t align, bool optional = false) {
    if (ptr == nullptr && !optional) return invalid(std::string(name) + " is a null pointer");
    if (reinterpret_cast<std::uintptr_t>(ptr) % align != 0)
      return invalid(std::string(name) + " is not aligned to " + std::to_string(align) + " bytes");
    return Status::success();
  }
};

}  // namespace tilepipe
