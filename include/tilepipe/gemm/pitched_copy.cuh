#pragma once
//! \file
//! The pitched copy: how the Hopper tier multiplies f16 and bf16 operands that TMA cannot address
//! (a pointer, leading dimension or batch stride that is not a multiple of 16 bytes, e.g. K odd).
//! `copy_pitched` copies such an operand, lines of `len` elements `ld_src` apart, into lines
//! 16 bytes apart in the caller's workspace (CopyWorkspace), and the GEMM then reads the copy.
//!
//! It is a memory-bound kernel, shaped for bandwidth: each thread stores whole aligned 16-byte
//! chunks of the copy, and a warp's chunks are consecutive along a line (layout/
//! pitched_copy_map.cuh), so loads and stores are coalesced. The source's lines start anywhere,
//! but every 16 bytes of a line lie in two aligned 16-byte blocks: a chunk is read as those two
//! loads (the neighbouring thread's second block is its first, so L1 serves one of them) and
//! funnel-shifted into place, which keeps the loads 16 bytes wide whatever the alignment, where
//! element loads would take eight instructions per chunk. Only the chunks whose blocks reach
//! outside their line (a line's first and last one or two) are read element by element: the copy
//! never reads outside the operand's lines. Each thread has the chunks of four lines in flight.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "../detail/macros.cuh"
#include "../layout/pitched_copy_map.cuh"
#include "../status.cuh"
#include "launch.cuh"

namespace tilepipe {

//! One pitched copy of 16-bit elements: `src` holds `batches` matrices (`batch_stride_src` apart)
//! of `lines` lines of `len` elements, line `i` at `src + i * ld_src`; `dst` receives each line
//! at `dst + i * ld_dst`, followed by zeros up to `len` rounded up to 8.
struct PitchedCopyParams {
  const std::uint16_t* src = nullptr;
  std::int64_t ld_src = 0, batch_stride_src = 0;
  std::uint16_t* dst = nullptr;
  std::int64_t ld_dst = 0, batch_stride_dst = 0;
  int lines = 0, len = 0;
  int log2_cols = 0;  //!< PitchedCopyMap's for `len` (set by copy_pitched)
};

namespace detail {

// Chunk `c` of `line` (elements 8c .. 8c + 7, zeros past `len`), where its two aligned 16-byte
// blocks (one where the line starts on 16 bytes) lie inside the line: `*fast` then, with the
// blocks loaded into `lo` and `hi`; otherwise nothing is loaded.
TILEPIPE_DEVICE void load_chunk_blocks(const std::uint16_t* line, int len, std::int64_t c,
                                       bool* fast, int* offset, uint4* lo, uint4* hi) {
  const auto line_first = reinterpret_cast<std::uintptr_t>(line);
  const auto line_end = reinterpret_cast<std::uintptr_t>(line + len);
  const std::uintptr_t at = line_first + 16 * c;
  const std::uintptr_t first = at & ~std::uintptr_t(15);
  *offset = static_cast<int>(at & 15);
  *fast = first >= line_first && first + (*offset != 0 ? 32 : 16) <= line_end;
  if (*fast) *lo = __ldg(reinterpret_cast<const uint4*>(first));
  if (*fast && *offset != 0) *hi = __ldg(reinterpret_cast<const uint4*>(first + 16));
}

// The chunk from its blocks (`fast`), or element by element from `line` (the line's ends).
TILEPIPE_DEVICE uint4 assemble_chunk(const std::uint16_t* line, int len, std::int64_t c, bool fast,
                                     int offset, const uint4& lo, const uint4& hi) {
  std::uint32_t out[4] = {0, 0, 0, 0};
  if (fast && offset == 0) return lo;
  if (fast) {
    const std::uint32_t w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
    shift_chunk(w, offset, out);
  } else {
    const std::uint16_t* s = line + 8 * c;
    const std::int64_t valid = len - 8 * c;
    TILEPIPE_UNROLL
    for (int e = 0; e < 8; ++e)
      if (e < valid) out[e / 2] |= static_cast<std::uint32_t>(s[e]) << (16 * (e % 2));
  }
  return make_uint4(out[0], out[1], out[2], out[3]);
}

}  // namespace detail

//! The copy: block (x, y, batch) walks the tiles (x + i gridDim.x, y + j gridDim.y) of
//! PitchedCopyMap over batch `blockIdx.z`'s lines and chunks. A thread issues the loads of all
//! its lines' chunks before it assembles and stores any, so that they are in flight together.
template <int = 0>
__global__ void __launch_bounds__(PitchedCopyMap::kThreads)
    pitched_copy_kernel(const PitchedCopyParams p) {
  constexpr int kLines = PitchedCopyMap::kLinesPerThread;
  const PitchedCopyMap map{p.log2_cols};
  const std::uint16_t* src = p.src + blockIdx.z * p.batch_stride_src;
  std::uint16_t* dst = p.dst + blockIdx.z * p.batch_stride_dst;
  const std::int64_t chunks = (p.len + 7) / 8;
  const int t = static_cast<int>(threadIdx.x);
  for (std::int64_t ty = blockIdx.y; ty < map.tiles_y(p.lines); ty += gridDim.y) {
    for (std::int64_t tx = blockIdx.x; tx < map.tiles_x(chunks); tx += gridDim.x) {
      const std::int64_t c = map.chunk(t, tx);
      bool fast[kLines];
      int offset[kLines];
      uint4 lo[kLines], hi[kLines];  // (lines of this thread): the chunk's two aligned blocks
      TILEPIPE_UNROLL
      for (int u = 0; u < kLines; ++u) {
        const std::int64_t line = map.line(t, u, ty);
        fast[u] = false;
        if (c < chunks && line < p.lines)
          detail::load_chunk_blocks(src + line * p.ld_src, p.len, c, &fast[u], &offset[u], &lo[u],
                                    &hi[u]);
      }
      TILEPIPE_UNROLL
      for (int u = 0; u < kLines; ++u) {
        const std::int64_t line = map.line(t, u, ty);
        if (c < chunks && line < p.lines)
          *reinterpret_cast<uint4*>(dst + line * p.ld_dst + 8 * c) = detail::assemble_chunk(
              src + line * p.ld_src, p.len, c, fast[u], offset[u], lo[u], hi[u]);
      }
    }
  }
}

//! pitched_copy_kernel as a kernel for KernelLauncher.
struct PitchedCopyKernel {
  using Params = PitchedCopyParams;
  using Entry = void (*)(const Params);
  static constexpr int kThreads = PitchedCopyMap::kThreads;
  static constexpr std::size_t kSharedBytes = 0;
  static Entry entry() { return pitched_copy_kernel<>; }

  //! A block per tile for `batches` batches, up to the grid's limits (the blocks loop beyond).
  static LaunchShape shape(const Params& p, int batches) {
    const PitchedCopyMap map{p.log2_cols};
    const std::int64_t x = map.tiles_x((p.len + 7) / 8), y = map.tiles_y(p.lines);
    return {dim3(static_cast<unsigned>(x < 0x7FFFFFFF ? x : 0x7FFFFFFF),
                 static_cast<unsigned>(y < 65535 ? y : 65535), static_cast<unsigned>(batches))};
  }
};

namespace detail {

//! Launches the pitched copy on `stream` (see PitchedCopyParams; `batches` of them, at most 65535,
//! 1 for a source shared by all batches). `dst` must be 16-byte aligned, `ld_dst` a multiple of 8
//! and at least `len` rounded up to 8, and with several batches `batch_stride_dst` a multiple of
//! 8; `src` needs only its elements' alignment, and must not overlap `dst`.
inline Status copy_pitched(PitchedCopyParams p, int batches, cudaStream_t stream) {
  const auto refuse = [](const std::string& why) {
    return Status::error(Status::Code::kInvalidArgument, "copy_pitched: " + why);
  };
  if (reinterpret_cast<std::uintptr_t>(p.dst) % 16 != 0 || p.ld_dst % 8 != 0 ||
      (batches > 1 && p.batch_stride_dst % 8 != 0))
    return refuse(
        "dst, ld_dst and (with several batches) batch_stride_dst must be multiples of "
        "16 bytes");
  if (reinterpret_cast<std::uintptr_t>(p.src) % 2 != 0)
    return refuse("src is not aligned to its 2-byte elements");
  if (p.ld_dst < (std::int64_t(p.len) + 7) / 8 * 8 || (p.lines > 1 && p.ld_src < p.len))
    return refuse(
        "ld_dst = " + std::to_string(p.ld_dst) + " or ld_src = " + std::to_string(p.ld_src) +
        " is shorter than a line of len = " + std::to_string(p.len) + " (ld_dst: rounded up to 8)");
  if (batches > 65535)
    return refuse("batches = " + std::to_string(batches) + " exceeds 65535, the grid's z limit");
  if (p.lines <= 0 || p.len <= 0 || batches <= 0) return Status::success();
  p.log2_cols = PitchedCopyMap::for_line_chunks((p.len + 7) / 8).log2_cols;
  return KernelLauncher<PitchedCopyKernel>::launch(p, PitchedCopyKernel::shape(p, batches), stream,
                                                   "copy_pitched");
}

}  // namespace detail
}  // namespace tilepipe
