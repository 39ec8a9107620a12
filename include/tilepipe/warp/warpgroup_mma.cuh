#pragma once
//! \file
//! WarpgroupMma: one warpgroup's (4 warps, 128 threads) share of a k-tile: `64 x N` of D from the
//! 64 rows of A and the N columns of B that sit in a ring slot, with `wgmma.mma_async` reading
//! both straight from shared memory (no fragment loads: that is the Ampere tier's
//! FragmentLoader + WarpMma). The slot holds the 128-byte swizzled layout TMA writes
//! (block/tma_tile_loader.cuh); the descriptors of layout/wgmma_descriptor.cuh describe it.

#include <cuda/ptx>

#include <cstdint>
#include <type_traits>

#include "../arch/wgmma.cuh"
#include "../detail/macros.cuh"
#include "../layout/tile_shape.cuh"
#include "../layout/wgmma_descriptor.cuh"

namespace tilepipe {

//! \tparam Element  `__half` or `__nv_bfloat16` (m64nNk16); `float`, multiplied as tf32
//!                  (m64nNk8); `__nv_fp8_e4m3` or `__nv_fp8_e5m2` (m64nNk32). tf32 and fp8 take
//!                  K-major A and B only: A row-major, B column-major.
//! \tparam LayoutA, LayoutB  of A and B in global memory (and so in the slot)
//! \tparam N        columns of D per warpgroup (64, 128 or 256): one wgmma per k step
//! \tparam TileK    k per slot: one 128-byte swizzle row, `128 / sizeof(Element)` (64, 32, 128)
template <class Element, Layout LayoutA, Layout LayoutB, int N, int TileK = 64>
struct WarpgroupMma {
  static_assert(TileK * sizeof(Element) == 128,
                "WarpgroupMma: a slot's k extent must be one 128-byte swizzle row (64 16-bit "
                "elements, 32 floats, 128 fp8)");
  static constexpr int kM = 64;
  static constexpr int kN = N;
  //! k of one wgmma (16 for f16/bf16, 8 for tf32, 32 for fp8): 32 bytes of a K-major row.
  static constexpr int kInstructionK = arch::kWgmmaK<Element>;
  static constexpr int kKSteps = TileK / kInstructionK;
  //! fp8: the slot's addresses are shuffled from lane 0, which tells the compiler they are the
  //! same in every lane, so that it forms the k steps' descriptors in uniform registers beside
  //! the wgmmas (no moves from vector registers, no 64-bit carry). Measured on the H200 (FP8
  //! GEMM, M >= 4096): row-wise +2-5%, block-wise +4-11%, tensorwise level; the 16-bit GEMM
  //! lost 9% at 8192^3 with the low-word steps, so it keeps the plain form (performance log 48).
  static constexpr bool kUniformAddresses = arch::is_wgmma_fp8_v<Element>;
  //! A and B as wgmma sees them: 0 K-major, 1 M/N-major (transposed).
  static constexpr int kTransA = LayoutA == Layout::kRowMajor ? 0 : 1;
  static constexpr int kTransB = LayoutB == Layout::kColumnMajor ? 0 : 1;
  static_assert(
      !std::is_same_v<Element, float> || (kTransA == 0 && kTransB == 0),
      "WarpgroupMma: float A and B run as tf32, which wgmma reads only K-major: A must be "
      "row-major and B column-major (the Ampere tier takes the other layouts)");
  static_assert(!arch::is_wgmma_fp8_v<Element> || (kTransA == 0 && kTransB == 0),
                "WarpgroupMma: wgmma reads fp8 A and B only K-major: A must be row-major and B "
                "column-major (stored N x K)");

  //! f32 accumulators of a `64 x N` tile: `x[i]` of thread `t` is element (row_of(t, i),
  //! col_of(t, i)) (arch/wgmma.cuh gives the layout).
  struct Accumulators {
    static constexpr int kRegisters = N / 2;
    float x[kRegisters];  // (64 x N) / 128 threads

    TILEPIPE_DEVICE void clear() {
      TILEPIPE_UNROLL
      for (int i = 0; i < kRegisters; ++i) x[i] = 0.0f;
    }
    TILEPIPE_HOST_DEVICE static constexpr int row_of(int thread, int i) {
      return 16 * (thread / 32) + (thread % 32) / 4 + 8 * ((i / 2) % 2);
    }
    TILEPIPE_HOST_DEVICE static constexpr int col_of(int thread, int i) {
      return 8 * (i / 4) + 2 * (thread % 4) + i % 2;
    }
  };

  //! Issues the k-tile's `kKSteps` wgmmas, `acc += A * B` (`acc = A * B` where `accumulate` is
  //! false), and commits them as one group. `a` points at this warpgroup's 64 rows of A in the
  //! slot (`64 * TileK` elements per 64 rows in either layout: 64 K-major rows, or one M-major
  //! box), `b` at the slot's B. Does not wait for the group: see `arch::wgmma_wait_group`.
  TILEPIPE_DEVICE static void issue(Accumulators& acc, const Element* a, const Element* b,
                                    bool accumulate = true) {
    std::uint32_t a_addr = smem_address(a);
    std::uint32_t b_addr = smem_address(b);
    if constexpr (kUniformAddresses) {
      a_addr = __shfl_sync(0xFFFFFFFFu, a_addr, 0);
      b_addr = __shfl_sync(0xFFFFFFFFu, b_addr, 0);
    }
    const WgmmaDescriptor da =
        kTransA ? mnmajor_sw128_descriptor(a_addr, TileK * 128) : kmajor_sw128_descriptor(a_addr);
    const WgmmaDescriptor db =
        kTransB ? mnmajor_sw128_descriptor(b_addr, TileK * 128) : kmajor_sw128_descriptor(b_addr);
    // A K-major k step is 32 bytes along the row; an M/N-major one (16-bit only) is 16 rows of 128.
    constexpr std::uint32_t kStepA = kTransA ? kInstructionK * 128 : 32;
    constexpr std::uint32_t kStepB = kTransB ? kInstructionK * 128 : 32;
    const auto step = [](const WgmmaDescriptor& d, std::uint32_t bytes) {
      return kUniformAddresses ? d.advanced_in_low_word(bytes).bits : d.advanced(bytes).bits;
    };
    arch::wgmma_fence_operands(acc.x);
    arch::wgmma_fence();
    TILEPIPE_UNROLL
    for (int kk = 0; kk < kKSteps; ++kk)
      arch::Wgmma<N, Element>::template mma<kTransA, kTransB>(
          acc.x, step(da, kk * kStepA), step(db, kk * kStepB), kk > 0 || accumulate ? 1u : 0u);
    arch::wgmma_commit_group();
    arch::wgmma_fence_operands(acc.x);
  }

 private:
  TILEPIPE_DEVICE static std::uint32_t smem_address(const void* p) {
    return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
  }
};

}  // namespace tilepipe
