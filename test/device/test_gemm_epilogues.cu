// The output operators of GemmMultistage (epilogue/output_ops.cuh): each built-in operator, a
// chain of them and a user-written one, on odd shapes, both D layouts, batched and with split-K
// (whose reduction kernel applies the operator), and through GemmAuto; every element against a
// double-precision CPU reference, D poisoned before the run and the memory around it checked.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include <tilepipe/gemm/gemm_heuristic.cuh>

#include "gemm_test_util.cuh"

// [readme:row_minus_col]
// A user-written output operator: D = v + weight * (row - col) (exact with small integers).
struct RowMinusCol {
  float weight = 1.0f;
  __device__ float operator()(float v, int row, int col) const {
    return v + weight * static_cast<float>(row - col);
  }
};
// [readme:row_minus_col]

namespace {

using tilepipe::Layout;
using tptest::GemmCase;
using tptest::Reference;

// A small tile keeps the many instantiations cheap to compile and gives odd shapes many edge tiles;
// so does leaving the narrow kernel out (AnyAlignment = false): the operators reach D through
// store_output_elements there too, which these odd shapes run at every line's end.
using SmallTile = tilepipe::TileConfig<64, 64, 64, 32, 32>;
template <class Op, class D = __half>
using Gemm = tilepipe::GemmMultistageSplitK<__half, D, Layout::kRowMajor, Layout::kColumnMajor, 3,
                                            Op, SmallTile, /*AnyAlignment=*/false>;

// A per-row or per-column vector of small integers on the device, and its host copy.
template <class T>
struct DeviceVector {
  std::vector<float> host;
  tptest::DeviceBuffer<T> device;
  DeviceVector(int n, int lo, int hi, std::uint32_t seed) : device(static_cast<std::size_t>(n)) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> dist(lo, hi);
    std::vector<T> h(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      host.push_back(static_cast<float>(dist(rng)));
      h[i] = tptest::from_float_host<T>(host.back());
    }
    EXPECT_EQ(device.upload(h), cudaSuccess);
  }
};

double gelu_erf(double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }
double gelu_tanh(double v) {
  return 0.5 * v * (1 + std::tanh(0.79788456080286535588 * (v + 0.044715 * v * v * v)));
}
double silu(double v) { return v / (1 + std::exp(-v)); }
double relu(double v) { return v > 0 ? v : 0; }

// Bias or scale, per row or per column, of element type T.
template <class T, bool kPerRow, bool kScale>
struct VectorCase {
  static constexpr bool kExact = true;
  std::uint32_t seed;
  std::unique_ptr<DeviceVector<T>> vec;
  template <class Args>
  void setup(Args& args, int m, int n) {
    vec =
        std::make_unique<DeviceVector<T>>(kPerRow ? m : n, kScale ? -2 : -5, kScale ? 2 : 5, seed);
    if constexpr (kScale) args.output_op.scale = vec->device.get();
    else args.output_op.bias = vec->device.get();
  }
  double apply(double v, int row, int col) const {
    const double x = vec->host[kPerRow ? row : col];
    return kScale ? v * x : v + x;
  }
};

// An activation with no arguments.
template <double (*F)(double), bool kIsExact>
struct ActivationCase {
  static constexpr bool kExact = kIsExact;
  std::uint32_t seed;
  template <class Args>
  void setup(Args&, int, int) {}
  double apply(double v, int, int) const { return F(v); }
};

struct ClampCase {
  static constexpr bool kExact = true;
  std::uint32_t seed;
  template <class Args>
  void setup(Args& args, int, int) {
    args.output_op = tilepipe::Clamp{-7.0f, 9.0f};
  }
  double apply(double v, int, int) const { return std::min(std::max(v, -7.0), 9.0); }
};

struct UserCase {
  static constexpr bool kExact = true;
  std::uint32_t seed;
  template <class Args>
  void setup(Args& args, int, int) {
    args.output_op.weight = 0.5f;
  }
  double apply(double v, int row, int col) const { return v + 0.5 * (row - col); }
};

// scale per row, then bias per column, then GELU (tanh), then clamp.
using ChainOp = tilepipe::Chain<tilepipe::ScalePerRow<float>, tilepipe::BiasPerCol<__nv_bfloat16>,
                                tilepipe::GeluTanh, tilepipe::Clamp>;
struct ChainCase {
  static constexpr bool kExact = false;
  std::uint32_t seed;
  std::unique_ptr<DeviceVector<float>> scale;
  std::unique_ptr<DeviceVector<__nv_bfloat16>> bias;
  template <class Args>
  void setup(Args& args, int m, int n) {
    scale = std::make_unique<DeviceVector<float>>(m, -2, 2, seed);
    bias = std::make_unique<DeviceVector<__nv_bfloat16>>(n, -5, 5, seed + 1);
    args.output_op.template get<0>().scale = scale->device.get();
    args.output_op.template get<1>().bias = bias->device.get();
    args.output_op.template get<3>() = tilepipe::Clamp{-20.0f, 40.0f};
  }
  double apply(double v, int row, int col) const {
    const double x = gelu_tanh(v * scale->host[row] + bias->host[col]);
    return std::min(std::max(x, -20.0), 40.0);
  }
};

// The shapes every operator runs: odd sizes in both D layouts, with C, batched, and split into
// 3 and 5 slices of K (the reduction kernel applies the operator then).
template <class Op, class Case, class D = __half>
void run_cases(std::uint32_t seed) {
  using G = Gemm<Op, D>;
  const GemmCase cases[] = {
      {97, 131, 77, Layout::kRowMajor, 1.0f, 0.0f},
      {131, 70, 45, Layout::kColumnMajor, 0.5f, 1.0f},
      {45, 70, 50, Layout::kRowMajor, 1.0f, -1.0f, /*batch=*/3, /*pad=*/8},
      {50, 60, 700, Layout::kRowMajor, 1.0f, 1.0f, 1, 0, false, /*split_k=*/3},
      {70, 33, 650, Layout::kColumnMajor, 2.0f, 0.0f, 2, 0, false, /*split_k=*/5},
  };
  for (const GemmCase& gc : cases) {
    Case op_case{seed++};
    tptest::run_gemm_case_op<G, __half, D>(gc, Reference::kExactCpu, seed, op_case);
  }
}

}  // namespace

TEST(GemmEpilogues, Bias) {
  run_cases<tilepipe::BiasPerRow<float>, VectorCase<float, true, false>>(10);
  run_cases<tilepipe::BiasPerCol<__half>, VectorCase<__half, false, false>>(20);
}

TEST(GemmEpilogues, Scale) {
  run_cases<tilepipe::ScalePerRow<__nv_bfloat16>, VectorCase<__nv_bfloat16, true, true>>(30);
  run_cases<tilepipe::ScalePerCol<float>, VectorCase<float, false, true>, float>(40);
}

TEST(GemmEpilogues, Activations) {
  run_cases<tilepipe::Relu, ActivationCase<relu, true>>(50);
  run_cases<tilepipe::GeluErf, ActivationCase<gelu_erf, false>>(60);
  run_cases<tilepipe::GeluTanh, ActivationCase<gelu_tanh, false>, float>(70);
  run_cases<tilepipe::Silu, ActivationCase<silu, false>>(80);
  run_cases<tilepipe::Clamp, ClampCase>(90);
}

TEST(GemmEpilogues, ChainAndUserOperator) {
  run_cases<ChainOp, ChainCase, float>(100);
  run_cases<RowMinusCol, UserCase>(110);
}

// GemmAuto passes the operator to whichever configuration it picks: a skinny problem with a long
// K (Small tile, split-K, on either tier), a skinny one with a short K (on sm_90 the Hopper tier's
// 64 x 64 tile, elsewhere the Small tile) and a large one (Large tile, against cuBLAS).
TEST(GemmEpilogues, GemmAuto) {
  using Auto = tilepipe::GemmAuto<__half, __half, Layout::kRowMajor, Layout::kColumnMajor, ChainOp>;
  {
    ChainCase c{200};
    tptest::run_gemm_case_op<Auto, __half, __half>({16, 256, 16384, Layout::kRowMajor, 1.0f, 0.0f},
                                                   Reference::kExactCpu, 201, c);
  }
  {
    ChainCase c{250};
    tptest::run_gemm_case_op<Auto, __half, __half>({16, 256, 4096, Layout::kRowMajor, 1.0f, 0.0f},
                                                   Reference::kExactCpu, 251, c);
  }
  {
    ChainCase c{300};
    tptest::run_gemm_case_op<Auto, __half, __half>({1024, 2048, 512, Layout::kRowMajor, 1.0f, 0.0f},
                                                   Reference::kCublas, 301, c);
  }
}
