#pragma once
//! \file
//! The K-major copy of an f32 operand: how GemmMultistage runs tf32 with A column-major or B
//! row-major on the Hopper tier, whose wgmma reads tf32 operands from shared memory only K-major.
//! `transpose_to_k_major` makes one in the caller's workspace (where: layout/copy_workspace.cuh),
//! a kernel of 32 x 32 tiles through shared memory (layout/transpose_tile.cuh) with 16-byte
//! loads and stores, before the GEMM reads it with TMA.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "../layout/transpose_tile.cuh"
#include "../status.cuh"
#include "launch.cuh"

namespace tilepipe {

//! One K-major copy: `src` holds `batches` matrices of `k` lines of `rows` contiguous floats
//! (line `kk` at `src + kk * ld_src`: A column-major, rows = M, or B row-major, rows = N);
//! `dst` receives each as `rows` lines of K contiguous floats, line `r` at `dst + r * ld_dst`.
struct KMajorTransposeParams {
  const float* src;
  std::int64_t ld_src, batch_stride_src;
  float* dst;
  std::int64_t ld_dst, batch_stride_dst;
  int rows, k;
};

//! Threads of a block of the copy: one 16-byte chunk of the 32 x 32 tile each.
inline constexpr int kKMajorTransposeThreads =
    TransposeTile::kExtent * TransposeTile::kChunksPerRow;

//! The copy: block (x, batch) walks tiles x, x + gridDim.x, ... of batch `blockIdx.y`. Thread
//! t loads chunk `t % 8` of source line `t / 8` of the tile (4 consecutive rows at one k),
//! writes its four floats down a column of the shared tile, and after the barrier stores chunk
//! `t % 8` of the copy's line `t / 8` (4 consecutive k of one row). Outside `rows x k` it loads
//! zeros, and it stores only the chunks that begin inside, so each line of the copy is written
//! up to K rounded up to 4 (the zeros past K stay inside `ld_dst`) and nothing else.
template <int = 0>
__global__ void __launch_bounds__(kKMajorTransposeThreads)
    k_major_transpose_kernel(const KMajorTransposeParams p) {
  using L = TransposeTile;
  constexpr int kN = L::kExtent, kC = L::kChunk;
  __shared__ alignas(16) float tile[L::kElements];  // (rows, k) of the copy, swizzled chunks
  const float* src = p.src + blockIdx.y * p.batch_stride_src;
  float* dst = p.dst + blockIdx.y * p.batch_stride_dst;
  const int line = static_cast<int>(threadIdx.x) / L::kChunksPerRow;
  const int chunk = static_cast<int>(threadIdx.x) % L::kChunksPerRow;
  const long long tiles_rows = (p.rows + kN - 1) / kN;
  const long long tiles = tiles_rows * ((p.k + kN - 1) / kN);
  for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {
    const int r0 = static_cast<int>(t % tiles_rows) * kN,
              k0 = static_cast<int>(t / tiles_rows) * kN;
    // Load: 4 rows (r, .. r + 3) at k; a chunk that reaches past `rows` element by element.
    const int k = k0 + line, r = r0 + kC * chunk;
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (k < p.k) {
      const float* s = src + k * p.ld_src + r;
      if (r + kC <= p.rows) {
        v = *reinterpret_cast<const float4*>(s);
      } else {
        if (r < p.rows) v.x = s[0];
        if (r + 1 < p.rows) v.y = s[1];
        if (r + 2 < p.rows) v.z = s[2];
      }
    }
    tile[L::offset(kC * chunk + 0, line)] = v.x;
    tile[L::offset(kC * chunk + 1, line)] = v.y;
    tile[L::offset(kC * chunk + 2, line)] = v.z;
    tile[L::offset(kC * chunk + 3, line)] = v.w;
    __syncthreads();
    // Store: k .. k + 3 of one row of the copy.
    const int row = r0 + line, kk = k0 + kC * chunk;
    if (row < p.rows && kk < p.k)
      *reinterpret_cast<float4*>(dst + row * p.ld_dst + kk) =
          *reinterpret_cast<const float4*>(&tile[L::offset(line, kC * chunk)]);
    __syncthreads();  // every read of this tile is done before the next one is written
  }
}

//! k_major_transpose_kernel as a kernel for KernelLauncher.
struct KMajorTransposeKernel {
  using Params = KMajorTransposeParams;
  using Entry = void (*)(const Params);
  static constexpr int kThreads = kKMajorTransposeThreads;
  static constexpr std::size_t kSharedBytes = 0;  // its tile is static shared memory
  static Entry entry() { return k_major_transpose_kernel<>; }

  //! Enough blocks to fill any GPU, for `batches` batches; larger matrices loop (a grid's x
  //! extent is finite).
  static LaunchShape shape(const Params& p, int batches) {
    constexpr int kN = TransposeTile::kExtent;
    const long long tiles = ((p.rows + kN - 1LL) / kN) * ((p.k + kN - 1LL) / kN);
    const auto blocks = static_cast<unsigned>(tiles < (1LL << 20) ? tiles : (1LL << 20));
    return {dim3(blocks, static_cast<unsigned>(batches))};
  }
};

namespace detail {

//! Launches the K-major copy on `stream` (see KMajorTransposeParams; `batches` of them, at most
//! 65535, 1 for a source shared by all batches). Needs 16-byte alignment: `src`, `dst`, `ld_src`,
//! `ld_dst` and, with several batches, both batch strides multiples of 16 bytes, and `ld_dst` at
//! least K rounded up to 4. `dst` must not overlap `src`. The caller (GemmMultistage) has checked
//! all of it; the alignment is checked again here, because a violation would fault on the device.
inline Status transpose_to_k_major(const KMajorTransposeParams& p, int batches,
                                   cudaStream_t stream) {
  const auto misaligned = [](const void* ptr) {
    return reinterpret_cast<std::uintptr_t>(ptr) % 16 != 0;
  };
  if (misaligned(p.src) || misaligned(p.dst) || p.ld_src % 4 != 0 || p.ld_dst % 4 != 0 ||
      (batches > 1 && (p.batch_stride_src % 4 != 0 || p.batch_stride_dst % 4 != 0)) ||
      p.ld_dst < (std::int64_t(p.k) + 3) / 4 * 4 || p.ld_src < p.rows)
    return Status::error(Status::Code::kInvalidArgument,
                         "transpose_to_k_major: pointers, leading dimensions and batch strides "
                         "must be multiples of 16 bytes, ld_src >= rows and ld_dst >= K rounded "
                         "up to 4");
  if (batches > 65535)
    return Status::error(Status::Code::kInvalidArgument,
                         "transpose_to_k_major: batches = " + std::to_string(batches) +
                             " exceeds 65535, the grid's y limit");
  if (p.rows <= 0 || p.k <= 0 || batches <= 0) return Status::success();
  return KernelLauncher<KMajorTransposeKernel>::launch(p, KMajorTransposeKernel::shape(p, batches),
                                                       stream, "transpose_to_k_major");
}

}  // namespace detail
}  // namespace tilepipe
