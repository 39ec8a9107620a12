#pragma once
//! \file
//! What the pointer-array grouped GEMMs share (GemmGroupedPointerArraySm90, and
//! GemmGroupedPointerArrayFp8Sm90 with its per-group scale arrays): the scheduler that hands
//! GemmKernelSm90 each group's tensor maps and D (GroupedPointerArrays); the preparing kernel,
//! one block with a thread per group, which checks the group, writes its row count (0 for a
//! skipped group) and its maps of A_g and B_g (`tensormap.replace` of two templates encoded on the
//! host for the shared N and K) into the caller's workspace; and the host side (PointerArrayHost):
//! the argument checks, each failure naming the GEMM and the argument, both kernels' parameters
//! and their launches, one after the other in one stream.

#include <cuda.h>
#include <cuda_runtime.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>

#include "../arch/tma.cuh"
#include "../block/tma_tile_loader.cuh"
#include "../epilogue/output_ops.cuh"
#include "../status.cuh"
#include "grouped_host.cuh"
#include "grouped_scheduler.cuh"
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

//! The arguments both pointer-array GEMMs take (GemmGroupedPointerArrayArguments adds alpha,
//! GemmGroupedPointerArrayFp8Arguments the scales); every array holds G entries on the device.
//! Leading dimensions in elements.
template <class ElementAB, class ElementD, class OutputOp>
struct GroupedPointerArrayOperands {
  int groups = 0;    //!< G (1 .. kMaxGroups)
  int m = 0;         //!< the most rows of any group: a group of more is skipped (and reported)
  int n = 0, k = 0;  //!< every group's N and K
  const int* rows = nullptr;            //!< M_g (int32)
  const ElementAB* const* a = nullptr;  //!< A_g: `[M_g, K]` row-major
  const std::int64_t* lda = nullptr;
  const ElementAB* const* b =
      nullptr;  //!< B_g: `[N, K]` (or, bf16 with LayoutB kRowMajor, `[K, N]`)
  const std::int64_t* ldb = nullptr;
  ElementD* const* d = nullptr;  //!< D_g: `[M_g, N]` row-major
  const std::int64_t* ldd = nullptr;
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
  //! FP8: each group's scale arrays, checked (non-null, 4-byte aligned) unless null (none read);
  //! block-wise, each group's `ld_scale_a`, at least its rows (null: not checked).
  const float* const* scale_a;
  const float* const* scale_b;
  const std::int64_t* ld_scale_a;
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

//! Whether group g, of `rows` rows, has usable scale arrays (where the parameter has any).
template <class P>
TILEPIPE_DEVICE bool group_scales_ok(const P& p, int g, int rows) {
  if (p.scale_a == nullptr) return true;
  const float* a = p.scale_a[g];
  const float* b = p.scale_b[g];
  const auto aligned = [](const float* x) {
    return x != nullptr && reinterpret_cast<std::uintptr_t>(x) % alignof(float) == 0;
  };
  return aligned(a) && aligned(b) && (p.ld_scale_a == nullptr || __ldg(p.ld_scale_a + g) >= rows);
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
      bool ok = group_operand_ok(p.ptr_d[g], __ldg(p.ldd + g), p.n, alignof(ElementD)) &&
                group_scales_ok(p, g, rows);
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

//! The host side of a pointer-array GEMM whose persistent kernel is `Kernel` (its scheduler a
//! GroupedPointerArrays, its loads `Loader`'s); `Args` derive from GroupedPointerArrayOperands.
template <class Kernel, class Loader, class ElementAB, class ElementD, int TileM, int TileN,
          int MaxGroups>
struct PointerArrayHost {
  using Params = typename Kernel::Params;
  using PrepareParams = PointerArrayPrepareParams<ElementAB, ElementD>;

  //! Bytes of workspace for `groups` groups: `2 G` tensor maps, then G row counts.
  static constexpr std::size_t workspace_bytes(int groups) {
    const std::size_t g = groups > 0 ? static_cast<std::size_t>(groups) : 0;
    return 2 * g * sizeof(CUtensorMap) + (g * sizeof(int) + 127) / 128 * 128;
  }

  //! The device-free checks of G, the extents and the device arrays' pointers.
  template <class Args>
  static Status check(const char* gemm, const Args& a) {
    Status s = check_groups_and_extents(gemm, a.groups, MaxGroups, a.m, a.n, a.k);
    if (!s) return s;
    const long long items = static_cast<long long>(a.groups) * ((a.m + TileM - 1) / TileM) *
                            ((a.n + TileN - 1) / TileN);
    if (items > INT_MAX) return invalid(gemm, "groups x m x n has more tiles than an int counts");
    s = array(gemm, "rows", a.rows, alignof(int));
    if (s) s = array(gemm, "status", a.status, alignof(int), true);
    if (s) s = array(gemm, "workspace", a.workspace, 128);
    if (s) s = array(gemm, "d", a.d, alignof(void*));
    if (s) s = array(gemm, "ldd", a.ldd, alignof(std::int64_t));
    if (s && a.k > 0) s = array(gemm, "a", a.a, alignof(void*));
    if (s && a.k > 0) s = array(gemm, "lda", a.lda, alignof(std::int64_t));
    if (s && a.k > 0) s = array(gemm, "b", a.b, alignof(void*));
    if (s && a.k > 0) s = array(gemm, "ldb", a.ldb, alignof(std::int64_t));
    if (s && a.m > 0 && a.n > 0) s = check_output_op(a.output_op, a.m, a.n);
    return s;
  }

  //! Both kernels' parameters for arguments that passed `check` (the k-block operator's, if any,
  //! are the caller's), D scaled by `alpha`.
  template <class Args>
  static Status make_params(const char* gemm, PrepareParams& prep, Params& p, const Args& a,
                            bool b_k_major, float alpha) {
    auto* maps = static_cast<CUtensorMap*>(a.workspace);
    auto* rows = reinterpret_cast<int*>(maps + 2 * a.groups);
    prep.groups = a.groups, prep.m = a.m, prep.n = a.n, prep.k = a.k;
    prep.b_k_major = b_k_major;
    prep.rows = a.rows;
    prep.ptr_a = a.a, prep.lda = a.lda, prep.ptr_b = a.b, prep.ldb = a.ldb;
    prep.ptr_d = a.d, prep.ldd = a.ldd;
    prep.maps = maps, prep.rows_out = rows, prep.status = a.status;
    p.k = a.k;
    p.work.form = GroupedForm::kMasked;  // each group's rows from 0 (its own A_g and D_g)
    p.work.sizes = rows;
    p.work.groups = a.groups;
    p.work.rows = a.m;
    p.work.items_n = (a.n + TileN - 1) / TileN;
    p.work.k_tiles = Kernel::k_tiles(a.k);
    p.work.status = nullptr;  // the preparing kernel writes it
    p.work.maps = maps, p.work.d = a.d, p.work.ldd = a.ldd;
    if (a.m == 0 || a.n == 0) return Status::success();
    int workers = 0;
    Status s = KernelLauncher<Kernel>::resident_clusters(dim3(1, 1, 1), &workers, gemm);
    if (s && workers <= 0)
      s = Status::error(Status::Code::kUnsupportedDevice,
                        std::string(gemm) + ": no block of this kernel fits on the device");
    if (!s) return s;
    p.work.workers = workers;
    // D_g is written from the registers (its own pointer): the epilogue keeps no tensor map.
    p.epilogue.out = {nullptr, nullptr,           0,   0,   alpha,
                      0.0f,    Layout::kRowMajor, a.m, a.n, a.output_op};
    p.epilogue.direct = true;
    // Template maps (any 16-byte aligned address, lines rounded up to 16 bytes), for the groups'
    // maps to start from; also the kernel's (unused) parameter maps.
    constexpr int kLine = static_cast<int>(16 / sizeof(ElementAB));
    const auto line = [](int e) {
      return static_cast<std::int64_t>((e > kLine ? e : kLine) + kLine - 1) / kLine * kLine;
    };
    const auto* dummy = static_cast<const ElementAB*>(a.workspace);
    s = Loader::make_params(p.load, dummy, line(a.k), 0, dummy, line(b_k_major ? a.k : a.n), 0, a.m,
                            a.n, a.k, 1);
    if (!s) return Status::error(s.code(), std::string(gemm) + ": " + s.message());
    prep.a = p.load.a, prep.b = p.load.b;
    return Status::success();
  }

  //! Launches both kernels on `stream` (asynchronously, no host read of the device arrays);
  //! where D has no element only the preparing kernel (the groups' checks, the status).
  static Status launch(const char* gemm, const PrepareParams& prep, const Params& p, bool any,
                       cudaStream_t stream) {
    pointer_array_prepare_kernel<ElementAB, ElementD><<<1, MaxGroups, 0, stream>>>(prep);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return cuda_error(gemm, "the preparing kernel", e);
    if (!any) return Status::success();
    return KernelLauncher<Kernel>::launch(p, {dim3(p.work.workers), dim3(1, 1, 1)}, stream, gemm);
  }

  static Status invalid(const char* gemm, const std::string& msg) {
    return grouped_invalid(gemm, msg);
  }

  //! A device array (or the workspace) at `ptr`: non-null unless `optional`, aligned to `align`.
  static Status array(const char* gemm, const char* name, const void* ptr, std::size_t align,
                      bool optional = false) {
    if (ptr == nullptr && !optional) return invalid(gemm, std::string(name) + " is a null pointer");
    if (reinterpret_cast<std::uintptr_t>(ptr) % align != 0)
      return invalid(gemm,
                     std::string(name) + " is not aligned to " + std::to_string(align) + " bytes");
    return Status::success();
  }
};

}  // namespace detail

}  // namespace tilepipe
