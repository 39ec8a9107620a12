#pragma once
//! \file
//! Warpgroup MMA (sm_90a): `wgmma.mma_async` m64nNk16 with f16/bf16 inputs, m64nNk8 with tf32
//! inputs, or m64nNk32 with fp8 (e4m3, e5m2) inputs, from shared memory (through matrix
//! descriptors, layout/wgmma_descriptor.cuh) and f32 accumulators in registers, its fence / commit
//! / wait, and `setmaxnreg`. CCCL has no wrappers for these: inline PTX.
//!
//! One k step of every form is 32 bytes of a K-major row (16 f16/bf16, 8 f32 or 32 fp8 elements).
//! The tf32 and fp8 forms have no transpose immediates: the PTX ISA allows M/N-major shared-memory
//! operands for .f16/.bf16 only, so tf32 and fp8 operands must be K-major. It reads the 32-bit
//! words of the f32 values in shared memory as tf32, whose internal layout the PTX ISA leaves to
//! the implementation (at least 10 of the 23 fraction bits are used; what happens to the low 13
//! bits is not specified, and tilepipe does not round them away first: see MathTF32).
//!
//! These instructions exist only in the `sm_90a` target (`-gencode=arch=compute_90a,code=sm_90a`,
//! CMake `90a`), where nvcc defines `__CUDA_ARCH_FEAT_SM90_ALL`; elsewhere each wrapper traps,
//! and the kernels that call them are compiled only for that target (gemm/kernel_sm90.cuh).
//!
//! Accumulator layout of m64nN (PTX ISA, "Register Fragments for wgmma"): thread `t` of the
//! warpgroup (warp w = t / 32, lane l), register `i` in `[0, N/2)`, holds
//!   row = 16 w + l / 4 + 8 * ((i / 2) % 2),   col = 8 * (i / 4) + 2 * (l % 4) + i % 2.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <type_traits>

#include "../detail/macros.cuh"

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define TILEPIPE_WGMMA_UNAVAILABLE 1
#endif

namespace tilepipe::arch {

//! Orders this thread's earlier register and shared-memory accesses before the warpgroup's next
//! `wgmma.mma_async` (required before the first one, and whenever the accumulators were touched).
TILEPIPE_DEVICE void wgmma_fence() {
#if !defined(TILEPIPE_WGMMA_UNAVAILABLE)
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}

//! Closes the group of the wgmmas issued since the last commit.
TILEPIPE_DEVICE void wgmma_commit_group() {
#if !defined(TILEPIPE_WGMMA_UNAVAILABLE)
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}

//! Waits until at most `Pending` committed groups are still running.
template <int Pending>
TILEPIPE_DEVICE void wgmma_wait_group() {
  static_assert(Pending >= 0 && Pending <= 7, "wgmma_wait_group: Pending must be in [0, 7]");
#if !defined(TILEPIPE_WGMMA_UNAVAILABLE)
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(Pending) : "memory");
#endif
}

//! Keeps the compiler from moving accesses of `d` across a wgmma that reads or writes it
//! asynchronously (the registers are in use until the wait).
template <int R>
TILEPIPE_DEVICE void wgmma_fence_operands(float (&d)[R]) {
  TILEPIPE_UNROLL
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

//! Raises (`setmaxnreg.inc`) or lowers (`.dec`) this warpgroup's register budget to `Regs` per
//! thread. Takes effect only in a kernel with a register cap at entry (`__launch_bounds__(n, 1)`).
template <int Regs>
TILEPIPE_DEVICE void setmaxnreg_inc() {
  static_assert(Regs % 8 == 0 && Regs >= 24 && Regs <= 256, "setmaxnreg: 24..256, a multiple of 8");
#if !defined(TILEPIPE_WGMMA_UNAVAILABLE)
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(Regs));
#endif
}
template <int Regs>
TILEPIPE_DEVICE void setmaxnreg_dec() {
  static_assert(Regs % 8 == 0 && Regs >= 24 && Regs <= 256, "setmaxnreg: 24..256, a multiple of 8");
#if !defined(TILEPIPE_WGMMA_UNAVAILABLE)
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(Regs));
#endif
}

//! `D (64 x N) = A (64 x kK) * B (kK x N) + (scale_d ? D : 0)`, issued by a whole warpgroup:
//! m64nNk16 for `__half` / `__nv_bfloat16` A and B, m64nNk8 for `float` (as tf32), m64nNk32 for
//! `__nv_fp8_e4m3` / `__nv_fp8_e5m2`. `TransA` / `TransB`: 0 for K-major operands, 1 for M-/N-major
//! ones (f16/bf16 only).
template <int N, class Element>
struct Wgmma {
  static_assert(N == 64 || N == 128 || N == 192 || N == 256,
                "Wgmma: tilepipe instantiates m64nNk16, m64nNk8 and m64nNk32 for N = 64, 128, 192 "
                "and 256");
};

//! Whether `T` is one of the fp8 types wgmma multiplies (`__nv_fp8_e4m3`, `__nv_fp8_e5m2`).
template <class T>
inline constexpr bool is_wgmma_fp8_v =
    std::is_same_v<T, __nv_fp8_e4m3> || std::is_same_v<T, __nv_fp8_e5m2>;

//! k of one wgmma for A and B of type `Element`: one 32-byte step of a K-major row.
template <class Element>
inline constexpr int kWgmmaK = 32 / static_cast<int>(sizeof(Element));

#if !defined(TILEPIPE_WGMMA_UNAVAILABLE)

// The operands of m64nNk16 for R = N / 2 accumulator registers: the accumulators' register list
// (blocks of 32: TILEPIPE_WGMMA_R<b> names them, TILEPIPE_WGMMA_O<b> binds them), then the
// descriptors (%R, %R+1), scale-d (%R+2) and the transpose immediates (%R+3, %R+4).
#define TILEPIPE_WGMMA_R0                                                                      \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, " \
  "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define TILEPIPE_WGMMA_R1                                                                      \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, " \
  "%50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define TILEPIPE_WGMMA_R2                                                                      \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, " \
  "%82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
#define TILEPIPE_WGMMA_R3                                                                        \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
#define TILEPIPE_WGMMA_O0                                                                         \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
      "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),    \
      "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]),  \
      "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]),  \
      "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define TILEPIPE_WGMMA_O1                                                                        \
  "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]),     \
      "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), \
      "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), \
      "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), \
      "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define TILEPIPE_WGMMA_O2                                                                        \
  "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]),     \
      "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), \
      "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), \
      "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), \
      "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
#define TILEPIPE_WGMMA_O3                                                                       \
  "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), \
      "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]),       \
      "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]),       \
      "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]),       \
      "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]),       \
      "+f"(d[127])
#define TILEPIPE_WGMMA_D64 "{" TILEPIPE_WGMMA_R0 "}"
#define TILEPIPE_WGMMA_OUT64 TILEPIPE_WGMMA_O0
#define TILEPIPE_WGMMA_REST64 "%32, %33, p, 1, 1, %35, %36"
#define TILEPIPE_WGMMA_REST_KMAJOR_64 "%32, %33, p, 1, 1"
#define TILEPIPE_WGMMA_SCALE64 "%34"
#define TILEPIPE_WGMMA_D128 "{" TILEPIPE_WGMMA_R0 ", " TILEPIPE_WGMMA_R1 "}"
#define TILEPIPE_WGMMA_OUT128 TILEPIPE_WGMMA_O0, TILEPIPE_WGMMA_O1
#define TILEPIPE_WGMMA_REST128 "%64, %65, p, 1, 1, %67, %68"
#define TILEPIPE_WGMMA_REST_KMAJOR_128 "%64, %65, p, 1, 1"
#define TILEPIPE_WGMMA_SCALE128 "%66"
#define TILEPIPE_WGMMA_D192 "{" TILEPIPE_WGMMA_R0 ", " TILEPIPE_WGMMA_R1 ", " TILEPIPE_WGMMA_R2 "}"
#define TILEPIPE_WGMMA_OUT192 TILEPIPE_WGMMA_O0, TILEPIPE_WGMMA_O1, TILEPIPE_WGMMA_O2
#define TILEPIPE_WGMMA_REST192 "%96, %97, p, 1, 1, %99, %100"
#define TILEPIPE_WGMMA_REST_KMAJOR_192 "%96, %97, p, 1, 1"
#define TILEPIPE_WGMMA_SCALE192 "%98"
#define TILEPIPE_WGMMA_D256 \
  "{" TILEPIPE_WGMMA_R0 ", " TILEPIPE_WGMMA_R1 ", " TILEPIPE_WGMMA_R2 ", " TILEPIPE_WGMMA_R3 "}"
#define TILEPIPE_WGMMA_OUT256 \
  TILEPIPE_WGMMA_O0, TILEPIPE_WGMMA_O1, TILEPIPE_WGMMA_O2, TILEPIPE_WGMMA_O3
#define TILEPIPE_WGMMA_REST256 "%128, %129, p, 1, 1, %131, %132"
#define TILEPIPE_WGMMA_REST_KMAJOR_256 "%128, %129, p, 1, 1"
#define TILEPIPE_WGMMA_SCALE256 "%130"

// One wgmma.mma_async of shape m64n<N>k16, inputs of PTX type TYPE.
#define TILEPIPE_WGMMA_ASM(N, TYPE)                                            \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " TILEPIPE_WGMMA_SCALE##N     \
               ", 0;\n"                                                        \
               "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TYPE "." TYPE \
               " " TILEPIPE_WGMMA_D##N ", " TILEPIPE_WGMMA_REST##N ";\n}\n"    \
               : TILEPIPE_WGMMA_OUT##N                                         \
               : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TransA), "n"(TransB))

// One wgmma.mma_async of shape m64n<N>k8 on tf32 inputs: both operands K-major, so no transpose
// immediates (the ISA has none for tf32).
#define TILEPIPE_WGMMA_ASM_TF32(N)                                                            \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " TILEPIPE_WGMMA_SCALE##N                    \
               ", 0;\n"                                                                       \
               "wgmma.mma_async.sync.aligned.m64n" #N "k8.f32.tf32.tf32 " TILEPIPE_WGMMA_D##N \
               ", " TILEPIPE_WGMMA_REST_KMAJOR_##N ";\n}\n"                                   \
               : TILEPIPE_WGMMA_OUT##N                                                        \
               : "l"(desc_a), "l"(desc_b), "r"(scale_d))

// One wgmma.mma_async of shape m64n<N>k32 on fp8 inputs of PTX type TYPE (e4m3 or e5m2): both
// operands K-major, no transpose immediates.
#define TILEPIPE_WGMMA_ASM_FP8(N, TYPE)                                             \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " TILEPIPE_WGMMA_SCALE##N          \
               ", 0;\n"                                                             \
               "wgmma.mma_async.sync.aligned.m64n" #N "k32.f32." TYPE "." TYPE      \
               " " TILEPIPE_WGMMA_D##N ", " TILEPIPE_WGMMA_REST_KMAJOR_##N ";\n}\n" \
               : TILEPIPE_WGMMA_OUT##N                                              \
               : "l"(desc_a), "l"(desc_b), "r"(scale_d))

#define TILEPIPE_WGMMA_SPECIALIZATION(N)                                                           \
  template <class Element>                                                                         \
  struct Wgmma<N, Element> {                                                                       \
    template <int TransA, int TransB>                                                              \
    TILEPIPE_DEVICE static void mma(float (&d)[N / 2], std::uint64_t desc_a, std::uint64_t desc_b, \
                                    std::uint32_t scale_d) {                                       \
      if constexpr (std::is_same_v<Element, __half>) {                                             \
        TILEPIPE_WGMMA_ASM(N, "f16");                                                              \
      } else if constexpr (std::is_same_v<Element, float>) {                                       \
        static_assert(TransA == 0 && TransB == 0,                                                  \
                      "Wgmma: tf32 operands must be K-major (no transpose for tf32)");             \
        TILEPIPE_WGMMA_ASM_TF32(N);                                                                \
      } else if constexpr (is_wgmma_fp8_v<Element>) {                                              \
        static_assert(TransA == 0 && TransB == 0,                                                  \
                      "Wgmma: fp8 operands must be K-major (no transpose for fp8)");               \
        if constexpr (std::is_same_v<Element, __nv_fp8_e4m3>) TILEPIPE_WGMMA_ASM_FP8(N, "e4m3");   \
        else TILEPIPE_WGMMA_ASM_FP8(N, "e5m2");                                                    \
      } else {                                                                                     \
        static_assert(std::is_same_v<Element, __nv_bfloat16>,                                      \
                      "Wgmma: the inputs must be __half, __nv_bfloat16, float (tf32), "            \
                      "__nv_fp8_e4m3 or __nv_fp8_e5m2");                                           \
        TILEPIPE_WGMMA_ASM(N, "bf16");                                                             \
      }                                                                                            \
    }                                                                                              \
  };

TILEPIPE_WGMMA_SPECIALIZATION(64)
TILEPIPE_WGMMA_SPECIALIZATION(128)
TILEPIPE_WGMMA_SPECIALIZATION(192)
TILEPIPE_WGMMA_SPECIALIZATION(256)

#undef TILEPIPE_WGMMA_SPECIALIZATION
#undef TILEPIPE_WGMMA_ASM
#undef TILEPIPE_WGMMA_ASM_TF32
#undef TILEPIPE_WGMMA_ASM_FP8
#undef TILEPIPE_WGMMA_R0
#undef TILEPIPE_WGMMA_R1
#undef TILEPIPE_WGMMA_R2
#undef TILEPIPE_WGMMA_R3
#undef TILEPIPE_WGMMA_O0
#undef TILEPIPE_WGMMA_O1
#undef TILEPIPE_WGMMA_O2
#undef TILEPIPE_WGMMA_O3
#undef TILEPIPE_WGMMA_D64
#undef TILEPIPE_WGMMA_REST64
#undef TILEPIPE_WGMMA_REST_KMAJOR_64
#undef TILEPIPE_WGMMA_SCALE64
#undef TILEPIPE_WGMMA_OUT64
#undef TILEPIPE_WGMMA_D128
#undef TILEPIPE_WGMMA_REST128
#undef TILEPIPE_WGMMA_REST_KMAJOR_128
#undef TILEPIPE_WGMMA_SCALE128
#undef TILEPIPE_WGMMA_OUT128
#undef TILEPIPE_WGMMA_D192
#undef TILEPIPE_WGMMA_REST192
#undef TILEPIPE_WGMMA_REST_KMAJOR_192
#undef TILEPIPE_WGMMA_SCALE192
#undef TILEPIPE_WGMMA_OUT192
#undef TILEPIPE_WGMMA_D256
#undef TILEPIPE_WGMMA_REST256
#undef TILEPIPE_WGMMA_REST_KMAJOR_256
#undef TILEPIPE_WGMMA_SCALE256
#undef TILEPIPE_WGMMA_OUT256

#else  // a device pass without sm_90a: the kernels that would call these are not compiled

template <int N>
struct WgmmaUnavailable {
  template <int TransA, int TransB>
  TILEPIPE_DEVICE static void mma(float (&)[N / 2], std::uint64_t, std::uint64_t, std::uint32_t) {
    __trap();
  }
};
template <class Element>
struct Wgmma<64, Element> : WgmmaUnavailable<64> {};
template <class Element>
struct Wgmma<128, Element> : WgmmaUnavailable<128> {};
template <class Element>
struct Wgmma<192, Element> : WgmmaUnavailable<192> {};
template <class Element>
struct Wgmma<256, Element> : WgmmaUnavailable<256> {};

#endif

}  // namespace tilepipe::arch
