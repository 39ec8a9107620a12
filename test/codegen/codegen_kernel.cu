// Kernels built only from tilepipe's collectives, compiled (never run) by the codegen test: the
// PTX must contain 16-byte cp.async.cg, 8- and 4-byte cp.async.ca (the narrow kernel), ldmatrix
// and mma.sync, W8A16's int8 -> f16 / bf16 conversions (and, for sm_90a, the Hopper tier's
// TMA copies, mbarrier parity waits, wgmma and setmaxnreg), and ptxas must report no spills, no
// stack frame and no warning for any of them.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <tilepipe/tilepipe.cuh>
#include <tilepipe/mainloop/multistage_mainloop.cuh>

namespace {

// D (M x N, f32, row-major) = A * B through the mainloop; the accumulators are stored directly.
template <class Element, tilepipe::Layout LA, tilepipe::Layout LB, class Policy>
__device__ void gemm_body(const Element* a, const Element* b, float* d, int m, int n, int k) {
  using Mainloop = tilepipe::MultistageMainloop<Element, LA, LB, Policy>;
  extern __shared__ __align__(128) unsigned char smem[];
  Mainloop mainloop(*reinterpret_cast<typename Mainloop::SharedStorage*>(smem), threadIdx.x);
  typename Mainloop::Accumulators acc;
  acc.clear();
  const int block_m0 = blockIdx.y * Policy::Tile::kM, block_n0 = blockIdx.x * Policy::Tile::kN;
  const std::int64_t lda = LA == tilepipe::Layout::kRowMajor ? k : m;
  const std::int64_t ldb = LB == tilepipe::Layout::kColumnMajor ? k : n;
  mainloop(acc, a, lda, b, ldb, m, n, k, block_m0, block_n0);

  const int row0 = block_m0 + mainloop.warp_m0(), col0 = block_n0 + mainloop.warp_n0();
  acc.for_each(threadIdx.x % 32, [&](int r, int c, float v) {
    if (row0 + r < m && col0 + c < n) d[static_cast<long long>(row0 + r) * n + col0 + c] = v;
  });
}

using Policy4 = tilepipe::GemmPolicy<128, 128, 32, 64, 64, 4>;
using Policy3 = tilepipe::GemmPolicy<128, 256, 32, 64, 64, 3>;

}  // namespace

// A row-major, B column-major (TN), f16, 4 stages: the default GEMM's shape.
__global__ void __launch_bounds__(Policy4::kThreads)
    codegen_tn_f16(const __half* a, const __half* b, float* d, int m, int n, int k) {
  gemm_body<__half, tilepipe::Layout::kRowMajor, tilepipe::Layout::kColumnMajor, Policy4>(a, b, d,
                                                                                          m, n, k);
}

// A column-major, B row-major (both MN-contiguous, ldmatrix.trans), bf16, 3 stages, 8 warps.
__global__ void __launch_bounds__(Policy3::kThreads)
    codegen_nt_bf16(const __nv_bfloat16* a, const __nv_bfloat16* b, float* d, int m, int n, int k) {
  gemm_body<__nv_bfloat16, tilepipe::Layout::kColumnMajor, tilepipe::Layout::kRowMajor, Policy3>(
      a, b, d, m, n, k);
}

// The complete GemmMultistage kernels (mainloop + epilogue) at their default configuration and
// at the largest ring, closest to the register limit: no spills, no stack either.
#include <tilepipe/gemm/gemm_multistage.cuh>

using DefaultTN = tilepipe::GemmMultistage<__half, __half, tilepipe::Layout::kRowMajor,
                                           tilepipe::Layout::kColumnMajor>;
using WideNT = tilepipe::GemmMultistage<__half, float, tilepipe::Layout::kColumnMajor,
                                        tilepipe::Layout::kRowMajor, 3>;
using DeepTT = tilepipe::GemmMultistage<__nv_bfloat16, __nv_bfloat16, tilepipe::Layout::kRowMajor,
                                        tilepipe::Layout::kRowMajor, 6>;
template __global__ void tilepipe::gemm_kernel<DefaultTN::Kernel>(DefaultTN::Params);
template __global__ void tilepipe::gemm_kernel<WideNT::Kernel>(WideNT::Params);
template __global__ void tilepipe::gemm_kernel<DeepTT::Kernel>(DeepTT::Params);
// The default GEMM's narrow kernel, for arguments that are not 16-byte aligned: 16-, 8- and 4-byte
// cp.async (the copy width chosen at run time) and element copies, per-element C and D.
template __global__ void tilepipe::gemm_kernel<DefaultTN::NarrowKernel>(
    DefaultTN::NarrowKernel::Params);

// The maths other than MathDefault (numeric/math.cuh), one kernel each, on the Ampere tier: f16
// accumulation (mma.sync ...f16.f16.f16.f16, HMMA.16816.F16); f32 inputs as tf32 (mma.sync
// m16n8k8 ...tf32, HMMA.1688.F32.TF32), A K-contiguous and B N-contiguous so that both shared
// orders of its 32-bit fragment loads are compiled; the same for SIMT f32 (below).
using F16AccumulateTN = tilepipe::GemmMultistage<
    __half, __half, tilepipe::Layout::kRowMajor, tilepipe::Layout::kColumnMajor, 3,
    tilepipe::Identity, tilepipe::TileConfig<128, 128, 32, 64, 64, tilepipe::MathF16Accumulate>>;
using Tf32TT = tilepipe::GemmMultistage<float, float, tilepipe::Layout::kRowMajor,
                                        tilepipe::Layout::kRowMajor, 3, tilepipe::Identity,
                                        tilepipe::DefaultF32TileConfig<tilepipe::MathTF32>>;
template __global__ void tilepipe::gemm_kernel<F16AccumulateTN::Kernel>(F16AccumulateTN::Params);
template __global__ void tilepipe::gemm_kernel<Tf32TT::Kernel>(Tf32TT::Params);
// f32 inputs in full precision on the CUDA cores (MathSimtF32: fma.rn.f32, FFMA), A K-contiguous
// (16-byte LDS.128 fragment loads) and B N-contiguous (8-byte LDS.64), at the register limit.
using SimtTT = tilepipe::GemmMultistage<float, float, tilepipe::Layout::kRowMajor,
                                        tilepipe::Layout::kRowMajor, 3, tilepipe::Identity,
                                        tilepipe::DefaultF32TileConfig<tilepipe::MathSimtF32>>;
template __global__ void tilepipe::gemm_kernel<SimtTT::Kernel>(SimtTT::Params);
// The same with A and B column-major (NN): A M-contiguous in shared memory, whose lanes hold two
// adjacent rows (8-byte LDS.64) and shuffle the accumulators back to mma.sync's rows at the end;
// B K-contiguous in global memory, copied transposed (4-byte LDGSTS) into an N-contiguous shared
// tile, whose fragments are 8-byte LDS.64 too.
using SimtNN = tilepipe::GemmMultistage<float, float, tilepipe::Layout::kColumnMajor,
                                        tilepipe::Layout::kColumnMajor, 3, tilepipe::Identity,
                                        tilepipe::DefaultF32TileConfig<tilepipe::MathSimtF32>>;
template __global__ void tilepipe::gemm_kernel<SimtNN::Kernel>(SimtNN::Params);

// The Hopper tier's kernels (empty outside sm_90a): the default GEMM's, an M/N-major bf16
// one with f32 output and the 128 x 256 tile (its column-major f32 epilogue once spilled), and
// tf32.
using DefaultHopperTN = DefaultTN::HopperGemm;
using HopperNN = tilepipe::GemmSm90<__nv_bfloat16, float, tilepipe::Layout::kColumnMajor,
                                    tilepipe::Layout::kRowMajor, 4>;
template __global__ void tilepipe::gemm_kernel_sm90<DefaultHopperTN::Kernel>(
    const __grid_constant__ DefaultHopperTN::Params);
template __global__ void tilepipe::gemm_kernel_sm90<HopperNN::Kernel>(
    const __grid_constant__ HopperNN::Params);
// f32 A and B as tf32 on the Hopper tier (wgmma m64n256k8 ...tf32, K-major A and B): what
// GemmMultistage's tf32 TN (DefaultF32TileConfig<MathTF32>, 3 stages, as the benchmark's) runs
// there.
using Tf32TN = tilepipe::GemmMultistage<float, float, tilepipe::Layout::kRowMajor,
                                        tilepipe::Layout::kColumnMajor, 3, tilepipe::Identity,
                                        tilepipe::DefaultF32TileConfig<tilepipe::MathTF32>>;
using HopperTf32TN = Tf32TN::HopperGemm;
template __global__ void tilepipe::gemm_kernel_sm90<HopperTf32TN::Kernel>(
    const __grid_constant__ HopperTf32TN::Params);

// FP8 on the Hopper tier (wgmma m64n128k32 on e4m3 / e5m2, QGMMA): block-wise scales folded per
// k-tile on the CUDA cores (FFMA), on both 128-row tiles (the wide one's accumulators and its one
// set of half-width partials must fit the consumers' registers), row-wise on the wide tile (its
// sums, partials and two rows' scales: with an add in the fold and the scales after the last
// k-tile it spilled 12 bytes, so the ptxas check below watches it), tensorwise e5m2,
// tensorwise on the 64-row decode tile (one consumer warpgroup, which holds the sums and two
// k-tiles' products; tensorwise folds by FADD, the scale applied once after the last k-tile),
// tensorwise on the 128 x 192 tile (m64n192k32, one set of partial products) and on the 64 x 64
// decode tile (m64n64k32), with one consumer warpgroup and with two on alternate k-tiles, and
// on the 64 x 256 tile whose two consumer warpgroups take 128 columns each (m64n128k32, the B
// operand offset by the consumer's half).
using Fp8Blockwise =
    tilepipe::GemmFp8Sm90<__nv_fp8_e4m3, __nv_bfloat16, tilepipe::Fp8Scaling::kBlockwise>;
using Fp8BlockwiseWide =
    tilepipe::GemmFp8Sm90<__nv_fp8_e4m3, __nv_bfloat16, tilepipe::Fp8Scaling::kBlockwise,
                          tilepipe::Identity, tilepipe::Fp8WideTileConfig>;
using Fp8RowwiseWide =
    tilepipe::GemmFp8Sm90<__nv_fp8_e4m3, __nv_bfloat16, tilepipe::Fp8Scaling::kRowwise,
                          tilepipe::Identity, tilepipe::Fp8WideTileConfig>;
using Fp8E5m2 =
    tilepipe::GemmFp8Sm90<__nv_fp8_e5m2, __nv_bfloat16, tilepipe::Fp8Scaling::kTensorwise>;
using Fp8Decode =
    tilepipe::GemmFp8Sm90<__nv_fp8_e4m3, __nv_bfloat16, tilepipe::Fp8Scaling::kTensorwise,
                          tilepipe::Identity, tilepipe::Fp8DecodeTileConfig>;
using Fp8Tile192 =
    tilepipe::GemmFp8Sm90<__nv_fp8_e4m3, __nv_bfloat16, tilepipe::Fp8Scaling::kTensorwise,
                          tilepipe::Identity, tilepipe::Fp8Tile192Config>;
using Fp8Decode64 =
    tilepipe::GemmFp8Sm90<__nv_fp8_e4m3, __nv_bfloat16, tilepipe::Fp8Scaling::kTensorwise,
                          tilepipe::Identity, tilepipe::Fp8DecodeTile64Config>;
template __global__ void tilepipe::gemm_kernel_sm90<Fp8Blockwise::Kernel>(
    const __grid_constant__ Fp8Blockwise::Params);
template __global__ void tilepipe::gemm_kernel_sm90<Fp8BlockwiseWide::Kernel>(
    const __grid_constant__ Fp8BlockwiseWide::Params);
template __global__ void tilepipe::gemm_kernel_sm90<Fp8RowwiseWide::Kernel>(
    const __grid_constant__ Fp8RowwiseWide::Params);
template __global__ void tilepipe::gemm_kernel_sm90<Fp8E5m2::Kernel>(
    const __grid_constant__ Fp8E5m2::Params);
template __global__ void tilepipe::gemm_kernel_sm90<Fp8Decode::Kernel>(
    const __grid_constant__ Fp8Decode::Params);
template __global__ void tilepipe::gemm_kernel_sm90<Fp8Tile192::Kernel>(
    const __grid_constant__ Fp8Tile192::Params);
template __global__ void tilepipe::gemm_kernel_sm90<Fp8Decode64::Kernel>(
    const __grid_constant__ Fp8Decode64::Params);
using Fp8Decode64Interleaved =
    tilepipe::GemmFp8Sm90<__nv_fp8_e4m3, __nv_bfloat16, tilepipe::Fp8Scaling::kTensorwise,
                          tilepipe::Identity, tilepipe::Fp8DecodeTile64KInterleavedConfig>;
template __global__ void tilepipe::gemm_kernel_sm90<Fp8Decode64Interleaved::Kernel>(
    const __grid_constant__ Fp8Decode64Interleaved::Params);
using Fp8Decode256Split =
    tilepipe::GemmFp8Sm90<__nv_fp8_e4m3, __nv_bfloat16, tilepipe::Fp8Scaling::kTensorwise,
                          tilepipe::Identity, tilepipe::Fp8DecodeTile256SplitConfig>;
template __global__ void tilepipe::gemm_kernel_sm90<Fp8Decode256Split::Kernel>(
    const __grid_constant__ Fp8Decode256Split::Params);
// The FP8 grouped GEMM, block-wise on its default 128 x 256 tile: the same fold per k-tile
// (FFMA) with each unit's scales found per group, walked by the grouped scheduler.
using GroupedFp8Blockwise =
    tilepipe::GemmGroupedFp8Sm90<__nv_fp8_e4m3, __nv_bfloat16, tilepipe::Fp8Scaling::kBlockwise>;
template __global__ void tilepipe::gemm_kernel_sm90<GroupedFp8Blockwise::Kernel>(
    const __grid_constant__ GroupedFp8Blockwise::Params);

// W8A16 (GemmMixedInput): int8 B through the same ring at one byte per element with its scales,
// 128-bit shared loads of a whole k-tile of B's bytes and of A (ByteKOrder), converted in registers
// before the mma (f16: prmt into 0x64XX and sub.f16x2; bf16: prmt into 2^23 + XX in f32, one fma
// and cvt.rn.bf16x2.f32).
using W8A16F16 = tilepipe::GemmMixedInput<__half, std::int8_t, __half>;
using W8A16BF16 = tilepipe::GemmMixedInput<__nv_bfloat16, std::int8_t, __nv_bfloat16>;
template __global__ void tilepipe::gemm_kernel<W8A16F16::Kernel>(W8A16F16::Params);
template __global__ void tilepipe::gemm_kernel<W8A16BF16::Kernel>(W8A16BF16::Params);
// fp8 e4m3 weights: cvt.rn.f16x2.e4m3x2 on sm_90a, integer operations on sm_80.
using W8A16E4M3 = tilepipe::GemmMixedInput<__half, __nv_fp8_e4m3, __half>;
template __global__ void tilepipe::gemm_kernel<W8A16E4M3::Kernel>(W8A16E4M3::Params);
