#pragma once
//! \file
//! TmaTileLoader: the Hopper tier's tile loader. One thread copies a k-tile of A
//! (`TileM x TileK`) and of B (`TileK x TileN`) into one slot of the ring with TMA, both copies
//! completing on the slot's full mbarrier (block/mbarrier_ring.cuh). The Ampere tier's
//! AsyncTileLoader has every thread copy 16-byte chunks instead.
//!
//! The tensor maps are built on the host (`make_params`) from the matrices' pointers, extents,
//! leading dimensions and batch strides, with 128-byte swizzling, so that a slot holds the
//! layout wgmma's descriptors describe (layout/wgmma_descriptor.cuh). Each box is 128 bytes along
//! the matrix's contiguous dimension (64 f16/bf16 elements, 32 floats, 128 fp8:
//! `kSwizzleElements`):
//! - a K-major operand (A row-major, B column-major) is one box of `TileK x rows`;
//! - an M/N-major operand (A column-major, B row-major) is `rows / kSwizzleElements` boxes of
//!   `kSwizzleElements x TileK`, one after the other (the descriptor's LBO steps between them).
//! Boxes reaching past M, N or K are zero-filled by the copy engine, so residues need no code,
//! and batches are the tensor's third dimension.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "../arch/tma.cuh"
#include "../detail/macros.cuh"
#include "../detail/tensor_map.cuh"
#include "../layout/tile_shape.cuh"
#include "../status.cuh"

namespace tilepipe {

//! The tensor maps of A and B where they are not in the kernel parameter (a pointer-array grouped
//! GEMM's, one pair per group in global memory), each of one batch.
struct TmaMaps {
  const CUtensorMap* a;
  const CUtensorMap* b;
};

//! TMA copies of A and B k-tiles for `Element` (`__half`, `__nv_bfloat16` or `float`) operands.
//!
//! \tparam TileM, TileN  rows of A and columns of B per tile (multiples of 64, at most 256)
//! \tparam TileK         k per tile: one 128-byte swizzle row (64 16-bit elements, 32 floats)
//! \tparam ClusterM      CTAs of a cluster that share B (their tiles are in one column of tiles):
//!                       each copies `1 / ClusterM` of the B tile and multicasts it to all of
//!                       them, so that B leaves L2 once per cluster. 1: no cluster.
template <class Element, Layout LayoutA, Layout LayoutB, int TileM, int TileN, int TileK = 64,
          int ClusterM = 1>
struct TmaTileLoader {
  static_assert(std::is_same_v<Element, __half> || std::is_same_v<Element, __nv_bfloat16> ||
                    std::is_same_v<Element, float> || std::is_same_v<Element, __nv_fp8_e4m3> ||
                    std::is_same_v<Element, __nv_fp8_e5m2>,
                "TmaTileLoader: A and B must be __half, __nv_bfloat16, float, __nv_fp8_e4m3 or "
                "__nv_fp8_e5m2");
  static_assert(TileK * sizeof(Element) == 128,
                "TmaTileLoader: TileK must span one 128-byte swizzle row (64 16-bit elements, 32 "
                "floats, 128 fp8)");
  static_assert(TileM % 64 == 0 && TileN % 64 == 0 && TileM <= 256 && TileN <= 256,
                "TmaTileLoader: TileM and TileN must be multiples of 64, at most 256 (a TMA box)");

  static_assert(ClusterM == 1 || ClusterM == 2 || ClusterM == 4,
                "TmaTileLoader: ClusterM must be 1, 2 or 4");
  static_assert(TileN % (64 * ClusterM) == 0,
                "TmaTileLoader: with a cluster, each CTA copies TileN / ClusterM columns of B, a "
                "multiple of 64");

  //! Elements in one 128-byte swizzle row: a box's extent along the contiguous dimension.
  static constexpr int kSwizzleElements = 128 / static_cast<int>(sizeof(Element));
  static constexpr int kElementsA = TileM * TileK;
  static constexpr int kElementsB = TileN * TileK;
  //! Bytes one k-tile brings: what the slot's full barrier waits for.
  static constexpr std::uint32_t kBytesPerStage = (kElementsA + kElementsB) * sizeof(Element);

  //! The tensor maps, passed to the kernel as (part of) a `__grid_constant__` parameter.
  struct Params {
    CUtensorMap a;
    CUtensorMap b;
    int batched_a;  //!< 1: A's third coordinate is the batch; 0: one A for all (a 2-D tensor)
    int batched_b;  //!< the same for B
  };

  //! Builds the tensor maps of an `m x k` A and a `k x n` B with `batches` batches. Fails with a
  //! message naming the argument when TMA cannot address a matrix (the caller may then fall back
  //! to the Ampere tier).
  static Status make_params(Params& p, const Element* a, std::int64_t lda,
                            std::int64_t batch_stride_a, const Element* b, std::int64_t ldb,
                            std::int64_t batch_stride_b, int m, int n, int k, int batches) {
    // A stride-0 batch (a broadcast input) or a single batch reads the same tile every time.
    p.batched_a = batches > 1 && batch_stride_a != 0;
    p.batched_b = batches > 1 && batch_stride_b != 0;
    Status s = encode(p.a, "A", "lda", "batch_stride_a", a, LayoutA == Layout::kRowMajor, m, k, lda,
                      batch_stride_a, p.batched_a ? batches : 1, TileM);
    if (!s) return s;
    return encode(p.b, "B", "ldb", "batch_stride_b", b, LayoutB == Layout::kColumnMajor, n, k, ldb,
                  batch_stride_b, p.batched_b ? batches : 1, TileN / ClusterM);
  }

  //! Fetches both tensor maps into the TMA unit's cache (one thread, before the first copy).
  TILEPIPE_DEVICE static void prefetch(const Params& p) {
    arch::tma_prefetch_descriptor(&p.a);
    arch::tma_prefetch_descriptor(&p.b);
  }

  //! Copies k-tile `k0 .. k0 + TileK` of A's rows `m0 .. m0 + TileM` to `a_slot` and of B's
  //! columns `n0 .. n0 + TileN` to `b_slot` (both 1024-byte aligned), completing `kBytesPerStage`
  //! bytes on `full`. Called by one thread, after `full` was armed with those bytes. In a
  //! cluster, `cta_rank` is the CTA's rank: it copies its part of B to every CTA's `b_slot` and
  //! `full`, and receives the other parts from them.
  TILEPIPE_DEVICE static void load(const Params& p, Element* a_slot, Element* b_slot,
                                   std::uint64_t* full, int k0, int m0, int n0, int batch,
                                   int cta_rank = 0) {
    copy(&p.a, &p.b, a_slot, b_slot, full, k0, m0, n0, batch, p.batched_a, p.batched_b, cta_rank);
  }

  //! `load` through maps in global memory, made visible to this thread's copies
  //! (`arch::tensor_map_acquire`); `batch` is not used (each map holds one).
  TILEPIPE_DEVICE static void load(const TmaMaps& p, Element* a_slot, Element* b_slot,
                                   std::uint64_t* full, int k0, int m0, int n0, int /*batch*/,
                                   int cta_rank = 0) {
    copy(p.a, p.b, a_slot, b_slot, full, k0, m0, n0, 0, 0, 0, cta_rank);
  }

 private:
  TILEPIPE_DEVICE static void copy(const CUtensorMap* a, const CUtensorMap* b, Element* a_slot,
                                   Element* b_slot, std::uint64_t* full, int k0, int m0, int n0,
                                   int batch, int batched_a, int batched_b, int cta_rank) {
    constexpr bool kKMajorB = LayoutB == Layout::kColumnMajor;
    load_operand<LayoutA == Layout::kRowMajor, TileM>(a, a_slot, full, k0, m0, batch * batched_a);
    if constexpr (ClusterM == 1) {
      (void)cta_rank;
      load_operand<kKMajorB, TileN>(b, b_slot, full, k0, n0, batch * batched_b);
    } else {
      constexpr auto kAll = static_cast<std::uint16_t>((1u << ClusterM) - 1);
      constexpr int kColumns = TileN / ClusterM;  // this CTA's part of B
      const int first = cta_rank * kColumns;
      if constexpr (kKMajorB) {
        arch::tma_load_multicast(b_slot + first * TileK, b, full, k0, n0 + first, batch * batched_b,
                                 kAll);
      } else {
        TILEPIPE_UNROLL
        for (int j = 0; j < kColumns / kSwizzleElements; ++j)
          arch::tma_load_multicast(b_slot + (first + kSwizzleElements * j) * TileK, b, full,
                                   n0 + first + kSwizzleElements * j, k0, batch * batched_b, kAll);
      }
    }
  }

  template <bool kKMajor, int kRows>
  TILEPIPE_DEVICE static void load_operand(const CUtensorMap* map, Element* slot,
                                           std::uint64_t* full, int k0, int r0, int batch) {
    if constexpr (kKMajor) {
      arch::tma_load(slot, map, full, k0, r0, batch);
    } else {
      TILEPIPE_UNROLL
      for (int j = 0; j < kRows / kSwizzleElements; ++j)
        arch::tma_load(slot + j * kSwizzleElements * TileK, map, full, r0 + kSwizzleElements * j,
                       k0, batch);
    }
  }

  // One operand of `rows x k` (M or N by K) as a 3-D tensor (contiguous dimension, the other,
  // batch); `batches` is 1 for an operand shared by every batch. `k_major`: K is contiguous.
  static Status encode(CUtensorMap& map, const char* name, const char* ld_name,
                       const char* stride_name, const Element* ptr, bool k_major, int rows, int k,
                       std::int64_t ld, std::int64_t batch_stride, int batches, int tile_rows) {
    const auto fn = detail::tensor_map_encoder();
    if (fn == nullptr)
      return Status::error(Status::Code::kCudaError,
                           "TmaTileLoader: the driver has no cuTensorMapEncodeTiled (CUDA 12.0+)");
    constexpr std::int64_t kMaxStride = detail::kTensorMapMaxStride;
    const std::int64_t e = sizeof(Element);
    if (ld * e >= kMaxStride)
      return invalid(std::string(ld_name) + " = " + std::to_string(ld) +
                     " exceeds TMA's largest stride (2^40 bytes) for " + name);
    const bool batched = batches > 1;
    if (batched && batch_stride * e >= kMaxStride)
      return invalid(std::string(stride_name) + " = " + std::to_string(batch_stride) +
                     " exceeds TMA's largest stride (2^40 bytes)");
    // Extents: at least 1 (a K of 0 loads nothing, but the map must still be valid).
    const cuuint64_t inner = static_cast<cuuint64_t>(k_major ? (k > 0 ? k : 1) : rows);
    const cuuint64_t outer = static_cast<cuuint64_t>(k_major ? rows : (k > 0 ? k : 1));
    const cuuint64_t dims[3] = {inner, outer, static_cast<cuuint64_t>(batched ? batches : 1)};
    const cuuint64_t strides[2] = {static_cast<cuuint64_t>(ld * e),
                                   static_cast<cuuint64_t>(batched ? batch_stride * e : ld * e)};
    const cuuint32_t box[3] = {static_cast<cuuint32_t>(kSwizzleElements),
                               static_cast<cuuint32_t>(k_major ? tile_rows : TileK), 1};
    const cuuint32_t element_strides[3] = {1, 1, 1};
    const CUresult r =
        fn(&map, detail::tensor_map_data_type<Element>(), 3, const_cast<Element*>(ptr), dims,
           strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
           CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
      return invalid(std::string("cuTensorMapEncodeTiled refused ") + name + " (error " +
                     std::to_string(static_cast<int>(r)) + "; " + ld_name + " = " +
                     std::to_string(ld) + ", " + stride_name + " = " +
                     std::to_string(batch_stride) + ")");
    return Status::success();
  }

  static Status invalid(const std::string& msg) {
    return Status::error(Status::Code::kInvalidArgument, "TmaTileLoader: " + msg);
  }
};

}  // namespace tilepipe
