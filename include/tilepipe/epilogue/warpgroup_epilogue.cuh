#pragma once
//! \file
//! WarpgroupEpilogue: D = op(alpha * acc + beta * C) from a warpgroup's wgmma accumulators,
//! staged through shared memory and written by TMA stores. The warpgroup converts its 64 x N
//! tile one chunk of 64 lines x 128 bytes at a time into one of two 8 KB buffers (128-byte
//! swizzled, so the writes are free of bank conflicts), and one thread hands each chunk to the
//! copy engine, which writes it to D while the warpgroup converts the next chunk and then goes
//! on to its next tile's MMAs: the tensor cores wait only for the conversion, not for D's writes.
//! A tile of more than two chunks needs a buffer again soon after its store was issued: `begin`
//! converts the tile, stages its first chunks and keeps the last ones (32 registers' worth), and
//! `drain` stages those once the kernel has its next tile's first wgmmas in flight
//! (GemmKernelSm90), so that the waits for a free buffer overlap the tensor cores' work; `store` is
//! the two at once. That is row-major D with `beta == 0`; column-major D, `beta != 0` (C is read
//! from global memory), the tiles named below and `begin_at`'s are written straight from the
//! registers. TMA clips the tiles on D's edges, but writes a line's last 16 bytes whole: where D's
//! lines do not end on 16 bytes, the tiles crossing their end are written from the registers
//! instead, and a D that TMA cannot address (pointer, ldd or batch stride off 16 bytes) has no
//! tensor map. `op`: an output operator (output_ops.cuh), as the Ampere tier's epilogue takes.

#include <cuda.h>

#include <cstdint>
#include <type_traits>

#include "../arch/tma.cuh"
#include "../detail/macros.cuh"
#include "../layout/tile_shape.cuh"
#include "../numeric/element_traits.cuh"
#include "../status.cuh"
#include "epilogue_tensor_map.cuh"
#include "output_ops.cuh"
#include "output_store.cuh"

namespace tilepipe {

//! \tparam ElementD      `float`, `__half` or `__nv_bfloat16` (C and D)
//! \tparam Accumulators  a `WarpgroupMma::Accumulators` (a 64 x N tile over 128 threads)
//! \tparam OutputOp      applied to each `alpha * acc + beta * C` before the conversion
template <class ElementD, class Accumulators, class OutputOp = Identity>
class WarpgroupEpilogue {
  static_assert(is_supported_element_v<ElementD>,
                "WarpgroupEpilogue: D must be float, __half or __nv_bfloat16");
  static constexpr int kN = Accumulators::kRegisters * 2;  // columns of the warpgroup's 64 x N tile
  static constexpr int kBytes = static_cast<int>(sizeof(ElementD));
  //! Elements of D in one 128-byte line of a chunk (along D's contiguous dimension).
  static constexpr int kLine = 128 / kBytes;
  static constexpr int kChunkBytes = 64 * 128;  // 64 lines: TMA's box is (kLine, 64)
  static constexpr int kChunks = kN / kLine;
  //! Element pairs (one shared store each) per thread and chunk: 16, one register each for 16-bit
  //! D, two for float.
  static constexpr int kPairsPerChunk = kLine / 4;
  //! The chunks `begin` keeps for `drain`: the last ones, in at most kHeldRegisters registers
  //! per thread beside the next tile's accumulators.
  static constexpr int kHeldRegisters = 32;
  static constexpr int kRegistersPerChunk = kPairsPerChunk * 2 * kBytes / 4;
  static constexpr int kHeldChunks =
      kChunks < kHeldRegisters / kRegistersPerChunk ? kChunks : kHeldRegisters / kRegistersPerChunk;
  static constexpr int kFirstHeld = kChunks - kHeldChunks;

 public:
  struct Params {
    CUtensorMap d;  //!< D as a (contiguous dimension, other dimension, batch) tensor
    EpilogueParams<ElementD, OutputOp> out;
    std::int64_t batch_stride_c = 0;
    std::int64_t batch_stride_d = 0;  //!< for the edge tiles written without TMA
    bool direct = false;  //!< D is not 16-byte aligned: no tensor map, no tile through TMA
  };

  //! Two chunk buffers per warpgroup (16 KB).
  struct SharedStorage {
    alignas(1024) unsigned char chunk[2][kChunkBytes];
  };

  //! The parameters for `out` (an `m x n` D, `m, n >= 1`, `d` aligned to its element) with
  //! `batches` batches. Fails with a message naming the argument where a 16-byte aligned D is
  //! beyond TMA's reach.
  static Status make_params(Params& p, const EpilogueParams<ElementD, OutputOp>& out,
                            std::int64_t batch_stride_c, std::int64_t batch_stride_d, int batches) {
    p.out = out;
    p.batch_stride_c = batch_stride_c;
    p.batch_stride_d = batch_stride_d;
    const bool batched = batches > 1;
    const std::uint64_t bits = reinterpret_cast<std::uintptr_t>(out.d) |
                               static_cast<std::uint64_t>(out.ldd * kBytes) |
                               static_cast<std::uint64_t>(batched ? batch_stride_d * kBytes : 0);
    p.direct = bits % 16 != 0;
    if (p.direct) return Status::success();
    return detail::make_epilogue_tensor_map(p.d, out.d, out.layout, out.m, out.n, out.ldd,
                                            batch_stride_d, batches);
  }

  //! Fetches D's tensor map into the TMA unit's cache (one thread, before the first store).
  TILEPIPE_DEVICE static void prefetch(const Params& p) {
    if (!p.direct) arch::tma_prefetch_descriptor(&p.d);
  }

  //! The epilogue of one warpgroup: `storage` is its own, `barrier` a named barrier (1..15) no
  //! other warpgroup uses, `thread` its index in the warpgroup.
  TILEPIPE_DEVICE WarpgroupEpilogue(SharedStorage& storage, int barrier, int thread)
      : s_(storage), barrier_(barrier), thread_(thread) {}

  //! Writes the 64 x N tile whose first element is `(m0, n0)` of batch `batch` of D. Elements
  //! outside the `m x n` problem are neither read nor written. Returns once the tile is in shared
  //! memory and handed to the copy engine; `finish` waits for the writes.
  TILEPIPE_DEVICE void store(const Accumulators& acc, const Params& p, int m0, int n0, int batch) {
    begin(acc, p, m0, n0, batch);
    drain(p);
  }

  //! `store`'s first half: hands the tile's first chunks to the copy engine and keeps the rest
  //! converted in registers, so that `acc` may be overwritten once this returns. `drain` must
  //! follow before the next `begin` or `finish`; a kernel calls it while the wgmmas of its next
  //! tile run (WarpSpecializedMainloop::consume's hook).
  TILEPIPE_DEVICE void begin(const Accumulators& acc, const Params& p, int m0, int n0, int batch) {
    skip();
    const EpilogueParams<ElementD, OutputOp>& o = p.out;
    if (m0 >= o.m) return;  // the whole warpgroup's rows are past M (uniform in the warpgroup)
    const ElementD* c = o.beta != 0.0f ? o.c + batch * p.batch_stride_c : nullptr;
    // TMA writes a line's last 16 bytes whole: a tile that crosses the end of D's lines where
    // that end is not 16-byte aligned would write past it, so such a tile is stored directly.
    // Column-major D and beta != 0 are written directly too: each would need a second unrolled
    // staging path, which doubled the kernels' compile time, and reading C inside the staging
    // loop (a check per element) slows the loop the tensor cores wait for.
    const bool row_major = o.layout == Layout::kRowMajor;
    if (p.direct || !row_major || c != nullptr || (n0 + kN > o.n && (o.n * kBytes) % 16 != 0)) {
      ElementD* d = o.d + batch * p.batch_stride_d;
      store_direct(acc, o, d, c, m0, n0);
      return;
    }
    run(acc, p, m0, n0, batch);
  }

  //! `begin` for a tile of which only the rows before `row_end` may be written (a grouped GEMM's
  //! group ends there, and the next group's rows may follow in D): a warpgroup tile that crosses
  //! it is written straight from the registers. `store` and `drain` as for `begin`.
  TILEPIPE_DEVICE void begin(const Accumulators& acc, const Params& p, int m0, int n0, int batch,
                             int row_end) {
    if (m0 + 64 <= row_end) return begin(acc, p, m0, n0, batch);
    skip();
    EpilogueParams<ElementD, OutputOp> o = p.out;  // D's rows end at the group's end
    if (row_end < o.m) o.m = row_end;
    if (m0 >= o.m) return;
    const ElementD* c = o.beta != 0.0f ? o.c + batch * p.batch_stride_c : nullptr;
    store_direct(acc, o, o.d + batch * p.batch_stride_d, c, m0, n0);
  }

  //! The tile at `(m0, n0)` of a `rows x n` D at `d` (a pointer-array group's; `p`'s N, alpha
  //! and operator, beta 0), from the registers; `drain` then has nothing to do.
  TILEPIPE_DEVICE void begin_at(const Accumulators& acc, const Params& p, ElementD* d,
                                std::int64_t ldd, int rows, int m0, int n0) {
    skip();
    EpilogueParams<ElementD, OutputOp> o = p.out;
    o.d = d, o.ldd = ldd, o.m = rows;
    if (m0 < rows) store_direct(acc, o, d, nullptr, m0, n0);
  }

  //! In place of `begin` where this warpgroup stores no tile (another block completes it): the
  //! next `drain` has nothing to do. (The kept registers are cleared too, so that the compiler
  //! sees them dead until the next `begin` writes them, rather than live across a whole
  //! mainloop.)
  TILEPIPE_DEVICE void skip() {
    held_ = false;
    TILEPIPE_UNROLL
    for (auto& w : kept_) w = Word{};
  }

  //! `store`'s second half: stages and hands over the chunks that `begin` kept, if any.
  TILEPIPE_DEVICE void drain(const Params& p) {
    if constexpr (kHeldChunks > 0) {
      if (!held_) return;
      held_ = false;
      TILEPIPE_UNROLL
      for (int h = 0; h < kHeldChunks; ++h) {
        const int q = kFirstHeld + h;
        acquire<1>();  // this buffer's last store, two chunks back
        unsigned char* buffer = s_.chunk[next_];
        TILEPIPE_UNROLL
        for (int j = 0; j < kPairsPerChunk; ++j)
          *reinterpret_cast<Word*>(buffer + place(q, j).offset) = kept_[h * kPairsPerChunk + j];
        publish(p, buffer, held_n0_ + q * kLine, held_m0_, held_batch_);
      }
    } else {
      (void)p;
    }
  }

  //! Waits until every store this warpgroup handed over has been written (after the last
  //! `drain`, before the block exits: its shared memory must outlive the copies).
  TILEPIPE_DEVICE void finish() const {
    if (thread_ == 0) arch::tma_store_wait<0>();
  }

 private:
  // Byte offset of element `pos` of line `line` in a 128-byte-swizzled chunk: the 16-byte
  // group of the element is XORed with the line's index modulo 8 (TMA's SWIZZLE_128B).
  TILEPIPE_HOST_DEVICE static constexpr int offset_of(int line, int pos) {
    return line * 128 + ((((pos * kBytes) / 16) ^ (line % 8)) * 16) + (pos * kBytes) % 16;
  }

  // An element of the staged path (beta == 0), at (row, col) of D. On an edge tile, elements
  // past M or N are staged too (TMA clips them) with the operator applied at the nearest element
  // inside D, so that an operator reading a bias or scale vector stays inside it; where the
  // operator ignores the position (Identity), the clamps vanish. No per-element branch: the
  // compiler would predicate every element on its own, with a load of alpha and a conversion each.
  template <bool kScale, class Op>
  TILEPIPE_DEVICE static ElementD staged_value(float x, float alpha, const Op& op, int row, int col,
                                               int last_row, int last_col) {
    return from_float<ElementD>(op(kScale ? alpha * x : x, row < last_row ? row : last_row,
                                   col < last_col ? col : last_col));
  }

  // An element of the direct path: `c` is null where beta is 0 (a uniform branch, which keeps
  // that path to one copy in the kernel).
  TILEPIPE_DEVICE static ElementD value(float x, const EpilogueParams<ElementD, OutputOp>& o,
                                        const ElementD* c, int row, int col) {
    float v = o.alpha * x;
    if (c != nullptr)
      v += o.beta *
           to_float(c[o.layout == Layout::kRowMajor ? row * o.ldc + col : col * o.ldc + row]);
    return from_float<ElementD>(o.op(v, row, col));
  }

  struct alignas(2 * sizeof(ElementD)) Pair {
    ElementD v[2];
  };
  // A pair's bits, as `drain` keeps them: whole registers, not 16-bit halves to join again.
  using Word = std::conditional_t<sizeof(Pair) == 4, std::uint32_t, uint2>;

  // Pair j of this thread in chunk q: its first register, its row and column in the 64 x N
  // tile, and its byte offset in the chunk's buffer.
  struct PairPlace {
    int i, row, col, offset;
  };
  TILEPIPE_DEVICE PairPlace place(int q, int j) const {
    const int i = q * kLine / 2 + 2 * j;
    const int row = Accumulators::row_of(thread_, i), col = Accumulators::col_of(thread_, i);
    return {i, row, col, offset_of(row, col - q * kLine)};
  }

  // The staged path: chunk q is all 64 rows, columns q * kLine ..; registers {4j, 4j+1} are
  // columns (c, c+1) of row r, {4j+2, 4j+3} the same of row r + 8, and a pair is one store.
  // Chunks from kFirstHeld on are converted into `kept_` for `drain`.
  TILEPIPE_DEVICE void run(const Accumulators& acc, const Params& p, int m0, int n0, int batch) {
    // alpha == 1, the usual case, needs no multiply (x * 1 is x, bit for bit): the multiplies are
    // about a third of the staging, which runs while the tensor cores wait.
    // An operator that chooses at run time (`dispatch`, output_ops.cuh) chooses here, once per
    // tile: the loop is compiled once per choice, with no branch per element.
    const OutputOp& op = p.out.op;
    if (p.out.alpha == 1.0f)
      visit_output_op(op, [&](const auto& chosen) { stage<false>(acc, p, chosen, m0, n0, batch); });
    else
      visit_output_op(op, [&](const auto& chosen) { stage<true>(acc, p, chosen, m0, n0, batch); });
  }

  // `op` by value: the loop applies a local copy, whatever `chosen` refers to.
  template <bool kScale, class Op>
  TILEPIPE_DEVICE void stage(const Accumulators& acc, const Params& p, const Op op, int m0, int n0,
                             int batch) {
    const EpilogueParams<ElementD, OutputOp>& o = p.out;
    const float alpha = o.alpha;
    const int last_row = o.m - 1, last_col = o.n - 1;
    TILEPIPE_UNROLL
    for (int q = 0; q < kChunks; ++q) {
      // Both buffers' last stores are the previous tile's, long since issued; after them, the
      // chunk two back.
      if (q == 0 && q < kFirstHeld) acquire<0>();
      else if (q >= 2 && q < kFirstHeld) acquire<1>();
      unsigned char* buffer = s_.chunk[next_];
      TILEPIPE_UNROLL
      for (int j = 0; j < kPairsPerChunk; ++j) {
        const PairPlace at = place(q, j);
        Pair v;
        v.v[0] = staged_value<kScale>(acc.x[at.i], alpha, op, m0 + at.row, n0 + at.col, last_row,
                                      last_col);
        v.v[1] = staged_value<kScale>(acc.x[at.i + 1], alpha, op, m0 + at.row, n0 + at.col + 1,
                                      last_row, last_col);
        if (q < kFirstHeld) *reinterpret_cast<Pair*>(buffer + at.offset) = v;
        else kept_[(q - kFirstHeld) * kPairsPerChunk + j] = *reinterpret_cast<const Word*>(&v);
      }
      if (q < kFirstHeld) publish(p, buffer, n0 + q * kLine, m0, batch);
    }
    if constexpr (kHeldChunks > 0) {
      held_ = true;
      held_m0_ = m0;
      held_n0_ = n0;
      held_batch_ = batch;
    }
  }

  // A tile straight from the registers to D, with every element outside the problem skipped;
  // in element pairs where D is row-major and this thread's pairs are aligned. They all share
  // one alignment (its rows are 8 apart, its columns even): not all, with an odd ldd or d.
  TILEPIPE_DEVICE void store_direct(const Accumulators& acc,
                                    const EpilogueParams<ElementD, OutputOp>& o, ElementD* d,
                                    const ElementD* c, int m0, int n0) const {
    const std::int64_t first = (m0 + Accumulators::row_of(thread_, 0)) * o.ldd + n0;
    const bool pairs = (reinterpret_cast<std::uintptr_t>(d) + first * kBytes) % sizeof(Pair) == 0;
    TILEPIPE_UNROLL
    for (int i = 0; i < kN / 2; i += 2) {
      const int row = m0 + Accumulators::row_of(thread_, i);
      const int col = n0 + Accumulators::col_of(thread_, i);
      if (row >= o.m) continue;
      if (o.layout == Layout::kRowMajor) {
        if (pairs && col + 1 < o.n) {
          Pair v;
          v.v[0] = value(acc.x[i], o, c, row, col);
          v.v[1] = value(acc.x[i + 1], o, c, row, col + 1);
          *reinterpret_cast<Pair*>(d + (row * o.ldd + col)) = v;
        } else {
          if (col < o.n) d[row * o.ldd + col] = value(acc.x[i], o, c, row, col);
          if (col + 1 < o.n) d[row * o.ldd + col + 1] = value(acc.x[i + 1], o, c, row, col + 1);
        }
      } else {
        if (col < o.n) d[col * o.ldd + row] = value(acc.x[i], o, c, row, col);
        if (col + 1 < o.n) d[(col + 1) * o.ldd + row] = value(acc.x[i + 1], o, c, row, col + 1);
      }
    }
  }

  // Makes the buffer the next chunk goes to writable: thread 0 waits until at most `Pending` of
  // its stores are still reading shared memory, and the barrier tells the warpgroup.
  template <int Pending>
  TILEPIPE_DEVICE void acquire() const {
    if (thread_ == 0) arch::tma_store_wait_read<Pending>();
    arch::named_barrier_sync(barrier_, 128);
  }

  // Hands the chunk in `buffer` to the copy engine, to `(c0, c1, batch)` of D's map, and flips
  // to the other buffer.
  TILEPIPE_DEVICE void publish(const Params& p, unsigned char* buffer, int c0, int c1, int batch) {
    arch::fence_proxy_async_shared();
    arch::named_barrier_sync(barrier_, 128);
    if (thread_ == 0) {
      arch::tma_store(&p.d, buffer, c0, c1, batch);
      arch::tma_store_commit();
    }
    next_ ^= 1;
  }

  SharedStorage& s_;
  int barrier_;
  int thread_;
  int next_ = 0;  // the buffer the next chunk goes to
  // What `begin` kept for `drain`: the last chunks' pairs and the tile's place.
  bool held_ = false;
  Word kept_[kHeldChunks > 0 ? kHeldChunks * kPairsPerChunk : 1];
  int held_m0_ = 0, held_n0_ = 0, held_batch_ = 0;
};

}  // namespace tilepipe
