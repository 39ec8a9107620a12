// Device tests of WarpgroupEpilogue (sm_90a) on its own: two warpgroups per block walk a list of
// 128 x N tiles (several each, so the two chunk buffers are reused), fill their accumulators with
// a known function of (row, column, batch) and store them through the epilogue into D:
// D = op(alpha * acc + beta * C). Every element of D is compared with a double CPU reference
// (small values, exact in every D type), and every element of the larger buffer around D (a line
// before it, the padding of its lines, a line between batches, a line after it) must keep its
// poison. The cases take each of the epilogue's paths: TMA stores of row-major D with beta = 0
// (alpha 1 and not, tiles clipped at M and N, `begin` + `drain` and `store`), tiles crossing a
// line end that is not 16-byte aligned, beta * C, column-major D, batches, tiles whose rows all
// lie past M, and a D that TMA cannot address (one element in, odd ldd), which is written from
// the registers throughout, in element pairs on the rows where they are aligned. One case runs an
// operator chosen at run time (`dispatch`): the staged path must apply what it chooses.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include <tilepipe/epilogue/output_ops.cuh>
#include <tilepipe/epilogue/warpgroup_epilogue.cuh>
#include <tilepipe/warp/warpgroup_mma.cuh>

#include "device_test_util.cuh"
#include "hopper_test_util.cuh"

using tilepipe::Layout;

namespace {

// D = (alpha * acc + beta * C) * scale[row] + bias[col]: an operator that reads both coordinates.
using FusedOp = tilepipe::Chain<tilepipe::ScalePerRow<float>, tilepipe::BiasPerCol<float>>;

// FusedOp or the identity, chosen at run time, with `dispatch` (output_ops.cuh): the staged path
// must call `dispatch` once per tile and apply the operator it passes, never `operator()`, which
// counts its calls in `generic_calls` (the stores from the registers call it, as they should).
struct ChosenOp {
  FusedOp fused;
  bool fuse = false;
  unsigned* generic_calls = nullptr;

  __device__ float operator()(float v, int row, int col) const {
    atomicAdd(generic_calls, 1u);
    return fuse ? fused(v, row, col) : v;
  }
  template <class F>
  __device__ void dispatch(F&& f) const {
    if (fuse) f(fused);
    else f(tilepipe::Identity{});
  }
};
enum class OpKind { kFused, kChosen };

constexpr int kWarpgroups = 2;
constexpr int kThreads = 128 * kWarpgroups;

// `WholeStore`: each tile through `store`, as the ping-pong GEMM does; else `begin` and `drain`,
// as the cooperative one. (A run-time choice would compile the unrolled staging twice as often.)
template <class ElementD, int N, OpKind Kind, bool WholeStore>
struct EpilogueCase {
  using Element = ElementD;
  using Bits = std::conditional_t<sizeof(ElementD) == 2, std::uint16_t, std::uint32_t>;
  static constexpr int kN = N;
  static constexpr OpKind kKind = Kind;
  static constexpr bool kWholeStore = WholeStore;
  using Op = std::conditional_t<Kind == OpKind::kFused, FusedOp, ChosenOp>;
  // The accumulators of one warpgroup's 64 x N wgmma tile (their layout does not depend on A and
  // B).
  using Accumulators = typename tilepipe::WarpgroupMma<__half, Layout::kRowMajor,
                                                       Layout::kColumnMajor, N>::Accumulators;
  using Epilogue = tilepipe::WarpgroupEpilogue<ElementD, Accumulators, Op>;
  using Params = typename Epilogue::Params;
  struct SharedStorage {
    typename Epilogue::SharedStorage warpgroup[kWarpgroups];
  };
  static constexpr std::size_t kSmemBytes = sizeof(SharedStorage) + 1024;
};

// A 128 x N tile of batch `batch`: warpgroup w stores its rows m0 + 64 w ...
struct TileOrigin {
  int m0, n0, batch;
};

// The accumulator of element (row, col) of batch `batch`: an integer in [-9, 9].
__host__ __device__ inline float acc_value(int row, int col, int batch) {
  return static_cast<float>((row * 5 + col * 3 + batch * 7) % 19 - 9);
}

// Block b takes tiles b, b + gridDim.x, ... In `begin` + `drain` order, as GemmKernelSm90 calls
// them: a tile's kept chunks go out after the accumulators hold the next tile's (here NaN).
template <class Case>
__global__ void __launch_bounds__(kThreads)
    epilogue_kernel(const __grid_constant__ typename Case::Params params, const TileOrigin* tiles,
                    int tile_count) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Acc = typename Case::Accumulators;
  using Epilogue = typename Case::Epilogue;
  extern __shared__ unsigned char smem[];
  auto& s = tptest::aligned_shared_storage<typename Case::SharedStorage>(smem);
  if (threadIdx.x == 0) Epilogue::prefetch(params);
  const int warpgroup = threadIdx.x / 128, thread = threadIdx.x % 128;
  Epilogue epilogue(s.warpgroup[warpgroup], 1 + warpgroup, thread);
  Acc acc;
  for (int i = blockIdx.x; i < tile_count; i += gridDim.x) {
    const TileOrigin t = tiles[i];
    const int m0 = t.m0 + 64 * warpgroup;
    if constexpr (!Case::kWholeStore) {
#pragma unroll
      for (int r = 0; r < Acc::kRegisters; ++r) acc.x[r] = __int_as_float(0x7FFFFFFF);
      epilogue.drain(params);
    }
#pragma unroll
    for (int r = 0; r < Acc::kRegisters; ++r)
      acc.x[r] = acc_value(m0 + Acc::row_of(thread, r), t.n0 + Acc::col_of(thread, r), t.batch);
    if constexpr (Case::kWholeStore) epilogue.store(acc, params, m0, t.n0, t.batch);
    else epilogue.begin(acc, params, m0, t.n0, t.batch);
  }
  if constexpr (!Case::kWholeStore) epilogue.drain(params);
  epilogue.finish();
#else
  (void)params;
  (void)tiles;
  (void)tile_count;
#endif
}

struct EpilogueRun {
  Layout layout;  // of C and D
  int m, n, batches;
  float alpha, beta;
  bool unaligned = false;  // D one element in, ldd odd
};

template <class Element>
float to_float(Element x) {
  if constexpr (std::is_same_v<Element, float>) return x;
  else if constexpr (std::is_same_v<Element, __half>) return __half2float(x);
  else return __bfloat162float(x);
}
template <class Element>
Element from_double(double v) {
  if constexpr (std::is_same_v<Element, float>) return static_cast<float>(v);
  else return tptest::from_float<Element>(static_cast<float>(v));
}

// `fuse`: for kChosen, which operator it chooses (the others: their own).
template <class Case>
void run_epilogue_test(const EpilogueRun& run, std::uint32_t seed, bool fuse = false) {
  using Element = typename Case::Element;
  using Bits = typename Case::Bits;
  constexpr int N = Case::kN;
  constexpr int kVector = 16 / static_cast<int>(sizeof(Element));
  const bool row_major = run.layout == Layout::kRowMajor;
  const bool fused = Case::kKind == OpKind::kFused || (Case::kKind == OpKind::kChosen && fuse);
  SCOPED_TRACE(testing::Message() << tptest::element_name<Element>() << " D, N " << N
                                  << (fused ? ", scale and bias" : ", identity")
                                  << (Case::kKind == OpKind::kChosen ? " (chosen)" : "") << "; "
                                  << run.m << "x" << run.n << ", " << run.batches << " batches, "
                                  << (row_major ? "row" : "column") << "-major, alpha " << run.alpha
                                  << ", beta " << run.beta
                                  << (Case::kWholeStore ? ", store" : ", begin + drain")
                                  << (run.unaligned ? ", D unaligned" : ""));

  // D inside a poisoned buffer: a guard line before it, padding after each line, a guard line
  // between batches and after the last. Every stride is a multiple of 16 bytes (TMA's rule), or
  // (unaligned) odd, with D one element further in.
  const int lines = row_major ? run.m : run.n, line = row_major ? run.n : run.m;
  const int odd = run.unaligned ? 1 : 0;
  const std::int64_t ldd = (line + kVector - 1) / kVector * kVector + 2 * kVector + odd;
  const std::int64_t batch_stride_d = ldd * (lines + 1) + odd;
  const std::int64_t d_start = ldd + odd;
  const std::size_t d_size = static_cast<std::size_t>(d_start + run.batches * batch_stride_d);
  const std::int64_t ldc = (line + kVector - 1) / kVector * kVector + kVector;
  const std::int64_t batch_stride_c = ldc * lines + kVector;
  const std::size_t c_size = static_cast<std::size_t>(run.batches * batch_stride_c);

  // C small integers, or NaN where beta is 0 (it must not be read); scale in {-2, -1, 1, 2},
  // bias in [-4, 4], each exactly as long as D has rows or columns.
  std::vector<int> c_ints = tptest::random_small_ints(c_size, 4, seed);
  std::vector<Element> c(c_size);
  for (std::size_t i = 0; i < c_size; ++i)
    c[i] = from_double<Element>(run.beta != 0.0f ? c_ints[i] : std::nan(""));
  std::vector<float> scale(run.m), bias(run.n);
  const std::vector<int> scale_ints = tptest::random_small_ints(run.m, 2, seed + 1);
  const std::vector<int> bias_ints = tptest::random_small_ints(run.n, 4, seed + 2);
  for (int i = 0; i < run.m; ++i) scale[i] = scale_ints[i] != 0 ? scale_ints[i] : 1.0f;
  for (int i = 0; i < run.n; ++i) bias[i] = static_cast<float>(bias_ints[i]);

  std::vector<TileOrigin> tiles;
  for (int b = 0; b < run.batches; ++b)
    for (int m0 = 0; m0 < run.m; m0 += 64 * kWarpgroups)
      for (int n0 = 0; n0 < run.n; n0 += N) tiles.push_back({m0, n0, b});
  // A tile wholly past M: nothing may be written.
  tiles.push_back({(run.m + 127) / 128 * 128, 0, 0});

  tptest::DeviceBuffer<Element> d_d(d_size), d_c(c_size);
  tptest::DeviceBuffer<float> d_scale(scale.size()), d_bias(bias.size());
  tptest::DeviceBuffer<TileOrigin> d_tiles(tiles.size());
  tptest::DeviceBuffer<unsigned> d_calls(1);
  ASSERT_TRUE(d_d.ok() && d_c.ok() && d_scale.ok() && d_bias.ok() && d_tiles.ok() && d_calls.ok());
  TP_CUDA_ASSERT(d_calls.upload(std::vector<unsigned>{0u}));
  TP_CUDA_ASSERT(d_d.poison());
  TP_CUDA_ASSERT(d_c.upload(c));
  TP_CUDA_ASSERT(d_scale.upload(scale));
  TP_CUDA_ASSERT(d_bias.upload(bias));
  TP_CUDA_ASSERT(d_tiles.upload(tiles));

  tilepipe::EpilogueParams<Element, typename Case::Op> out;
  out.d = d_d.get() + d_start;
  out.c = d_c.get();
  out.ldd = ldd;
  out.ldc = ldc;
  out.alpha = run.alpha;
  out.beta = run.beta;
  out.layout = run.layout;
  out.m = run.m;
  out.n = run.n;
  if constexpr (Case::kKind == OpKind::kFused) {
    out.op.template get<0>().scale = d_scale.get();
    out.op.template get<1>().bias = d_bias.get();
  } else if constexpr (Case::kKind == OpKind::kChosen) {
    out.op.fused.template get<0>().scale = d_scale.get();
    out.op.fused.template get<1>().bias = d_bias.get();
    out.op.fuse = fuse;
    out.op.generic_calls = d_calls.get();
  }
  typename Case::Params params{};
  const tilepipe::Status s =
      Case::Epilogue::make_params(params, out, batch_stride_c, batch_stride_d, run.batches);
  ASSERT_TRUE(s.ok()) << s.what();
  EXPECT_EQ(params.direct, run.unaligned) << "no tensor map exactly where TMA cannot address D";

  auto kernel = epilogue_kernel<Case>;
  TP_CUDA_ASSERT(tptest::allow_smem(kernel, Case::kSmemBytes));
  kernel<<<2, kThreads, Case::kSmemBytes>>>(params, d_tiles.get(), static_cast<int>(tiles.size()));
  TP_CUDA_ASSERT(cudaGetLastError());
  TP_CUDA_ASSERT(tptest::synchronize_within(60, "the epilogue kernel"));
  std::vector<Element> d;
  TP_CUDA_ASSERT(d_d.download(d));

  int mismatches = 0, written_outside = 0;
  for (std::size_t i = 0; i < d_size; ++i) {
    // Where element i of the buffer lies: batch, line, position in the line.
    const std::int64_t from_d = static_cast<std::int64_t>(i) - d_start;
    const std::int64_t b = from_d >= 0 ? from_d / batch_stride_d : -1;
    const std::int64_t in_batch = from_d - b * batch_stride_d;
    const std::int64_t l = in_batch / ldd, p = in_batch % ldd;
    Bits bits;
    std::memcpy(&bits, &d[i], sizeof(Bits));
    if (b < 0 || b >= run.batches || l >= lines || p >= line) {
      if (bits != static_cast<Bits>(0xFFFFFFFFu) && ++written_outside <= 10)
        ADD_FAILURE() << "buffer element " << i << " (outside D) was written: 0x" << std::hex
                      << +bits;
      continue;
    }
    const int r = static_cast<int>(row_major ? l : p), col = static_cast<int>(row_major ? p : l);
    double v = double(run.alpha) * acc_value(r, col, static_cast<int>(b));
    if (run.beta != 0.0f) v += double(run.beta) * c_ints[b * batch_stride_c + l * ldc + p];
    if (fused) v = v * scale[r] + bias[col];
    const float want = to_float(from_double<Element>(v));
    const float got = to_float(d[i]);
    if (!(got == want) && ++mismatches <= 10)
      ADD_FAILURE() << "batch " << b << ", D(" << r << ", " << col << ") = " << got << ", want "
                    << want;
  }
  EXPECT_EQ(mismatches, 0);
  EXPECT_EQ(written_outside, 0);
  if constexpr (Case::kKind == OpKind::kChosen) {
    // Where every tile is staged (row-major D that TMA addresses, whole 16-byte lines, beta 0),
    // operator() must never run; elsewhere the stores from the registers call it.
    const bool all_staged =
        row_major && !run.unaligned && run.beta == 0.0f && (run.n * sizeof(Element)) % 16 == 0;
    std::vector<unsigned> calls;
    TP_CUDA_ASSERT(d_calls.download(calls));
    if (all_staged) EXPECT_EQ(calls[0], 0u) << "the staged path called operator(), not dispatch";
    else EXPECT_GT(calls[0], 0u) << "the stores from the registers did not call operator()";
  }
}

// The cases, sized from N so that each instantiation meets the same paths.
template <class Case>
void run_all_paths(std::uint32_t seed, bool fuse = false) {
  constexpr int N = Case::kN;
  // TMA stores clipped at M (8 rows of the last tile's second warpgroup) and N, alpha 1.
  run_epilogue_test<Case>({Layout::kRowMajor, 200, 2 * N + 40, 1, 1.0f, 0.0f}, seed, fuse);
  // alpha != 1; lines that end 6 or 12 bytes past 16: the tiles crossing the end go direct.
  run_epilogue_test<Case>({Layout::kRowMajor, 130, N + N / 2 + 3, 2, 0.5f, 0.0f}, seed + 1, fuse);
  // beta * C (written from the registers), batches.
  run_epilogue_test<Case>({Layout::kRowMajor, 77, N + 40, 2, 2.0f, -0.5f}, seed + 2, fuse);
  // Column-major D, without and with C.
  run_epilogue_test<Case>({Layout::kColumnMajor, 150, N + 17, 1, 1.0f, 0.0f}, seed + 3, fuse);
  run_epilogue_test<Case>({Layout::kColumnMajor, 64, N, 2, 0.5f, 1.0f}, seed + 4, fuse);
  // D that TMA cannot address: every tile from the registers; row-major with and without C (the
  // rows of odd ldd alternate between pairs and single elements), column-major.
  run_epilogue_test<Case>({Layout::kRowMajor, 200, 2 * N + 40, 2, 1.0f, 0.0f, true}, seed + 5,
                          fuse);
  run_epilogue_test<Case>({Layout::kRowMajor, 77, N + N / 2 + 3, 1, 2.0f, -0.5f, true}, seed + 6,
                          fuse);
  run_epilogue_test<Case>({Layout::kColumnMajor, 150, N + 17, 2, 0.5f, 0.0f, true}, seed + 7, fuse);
}

}  // namespace

// f16 D from 64 x 256 tiles (the default GEMM's): four chunks, two kept for `drain`.
TEST(WarpgroupEpilogue, HalfN256ScaleBiasBeginDrain) {
  TP_REQUIRE_HOPPER_TIER(tptest::hopper_tier_on_current_device());
  run_all_paths<EpilogueCase<__half, 256, OpKind::kFused, false>>(100);
}
// f32 D from 64 x 128 tiles: four chunks of 32 columns, two kept; through `store`.
TEST(WarpgroupEpilogue, FloatN128ScaleBiasStore) {
  TP_REQUIRE_HOPPER_TIER(tptest::hopper_tier_on_current_device());
  run_all_paths<EpilogueCase<float, 128, OpKind::kFused, true>>(200);
}
// bf16 D from 64 x 64 tiles: one chunk, kept by `begin` for `drain`; an operator chosen at run
// time (ChosenOp): the identity, then scale and bias.
TEST(WarpgroupEpilogue, BFloat16N64ChosenOpBeginDrain) {
  TP_REQUIRE_HOPPER_TIER(tptest::hopper_tier_on_current_device());
  run_all_paths<EpilogueCase<__nv_bfloat16, 64, OpKind::kChosen, false>>(300, false);
  run_all_paths<EpilogueCase<__nv_bfloat16, 64, OpKind::kChosen, false>>(400, true);
}
