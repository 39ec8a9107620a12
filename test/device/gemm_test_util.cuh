#pragma once
// Harness for GemmMultistage (and GemmAuto) device tests: builds a problem on the host, runs it
// with guard bands around D (and around the workspace, when one is needed), and checks
// every element against an exact CPU reference (small integers) or cuBLAS.

#include <cublas_v2.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <tilepipe/gemm/gemm_multistage.cuh>

#include "device_test_util.cuh"

namespace tptest {

using tilepipe::Layout;

struct GemmCase {
  int m, n, k;
  Layout layout_cd = Layout::kRowMajor;
  float alpha = 1.0f, beta = 0.0f;
  int batch = 1;
  int pad = 0;               // extra elements in every leading dimension (a multiple of 8)
  bool broadcast_b = false;  // batch_stride_b = 0
  int split_k = 1;           // args.split_k (GemmAuto ignores it)
  // > 0: every pointer is `misalign` elements past an allocation's start, and leading dimensions
  // and batch strides are multiples of `misalign` elements but not of 16 bytes (1, 2, 4 for
  // 16-bit elements: 2-, 4-, 8-byte alignment), so that the GEMM runs its narrow kernel.
  int misalign = 0;
  int stream_k = 0;  // args.stream_k: persistent blocks of a GEMM with stream-K (0: none)
};

// "stages 4" for a GemmMultistage, "auto" for a Gemm without a single policy (GemmAuto).
template <class Gemm, class = void>
struct GemmLabel {
  static std::string get() { return "auto"; }
};
template <class Gemm>
struct GemmLabel<Gemm, std::void_t<typename Gemm::Policy>> {
  static std::string get() {
    return "stages " + std::to_string(Gemm::Policy::kStages) + (Gemm::kSplitK ? " split-K" : "");
  }
};

inline const char* name_of(Layout l) { return l == Layout::kRowMajor ? "row" : "col"; }

template <class T>
const char* type_name() {
  if constexpr (std::is_same_v<T, __half>) return "f16";
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return "bf16";
  else return "f32";
}

template <class T>
float to_float_host(T x) {
  if constexpr (std::is_same_v<T, float>) return x;
  else if constexpr (std::is_same_v<T, __half>) return __half2float(x);
  else return __bfloat162float(x);
}
template <class T>
T from_float_host(float x) {
  if constexpr (std::is_same_v<T, float>) return x;
  else if constexpr (std::is_same_v<T, __half>) return __float2half_rn(x);
  else return __float2bfloat16_rn(x);
}

// Offset of logical element (r, c) of a matrix with leading dimension ld in layout l.
inline std::int64_t at(Layout l, std::int64_t ld, int r, int c) {
  return l == Layout::kRowMajor ? r * ld + c : c * ld + r;
}
// Elements a matrix spans, first to last.
inline std::int64_t span(Layout l, std::int64_t ld, int rows, int cols) {
  const std::int64_t outer = l == Layout::kRowMajor ? rows : cols;
  const std::int64_t inner = l == Layout::kRowMajor ? cols : rows;
  return outer == 0 || inner == 0 ? 0 : (outer - 1) * ld + inner;
}
inline std::int64_t round_up(std::int64_t x, std::int64_t to) { return (x + to - 1) / to * to; }

enum class Reference { kExactCpu, kCublas };

// The workspace a GEMM asks for (`workspace_size`: split-K's or stream-K's partials, tf32's K-major
// copies), poisoned, between guard bands of kGuard poisoned bytes that no kernel may write.
class GuardedWorkspace {
 public:
  static constexpr std::size_t kGuard = 256;      // bytes before and after the workspace
  static constexpr unsigned char kPoison = 0xFF;  // every byte, guard bands included (NaN)

  explicit GuardedWorkspace(std::size_t bytes)
      : bytes_(bytes), buffer_(bytes + 2 * kGuard),
        error_(buffer_.ok() ? buffer_.poison(kPoison) : cudaErrorMemoryAllocation) {}

  // cudaSuccess once allocated and poisoned.
  cudaError_t error() const { return error_; }
  // For args.workspace and args.workspace_bytes: null and 0 where the GEMM asks for none.
  void* get() const { return bytes_ > 0 ? buffer_.get() + kGuard : nullptr; }
  std::size_t bytes() const { return bytes_; }

  // Fails the current test (EXPECT) if any guard byte lost its poison. Returns the error of
  // reading the guard bands back, in which case nothing was checked.
  cudaError_t expect_guards_intact() const {
    unsigned char before[kGuard], after[kGuard];
    cudaError_t e = cudaMemcpy(before, buffer_.get(), kGuard, cudaMemcpyDeviceToHost);
    if (e == cudaSuccess)
      e = cudaMemcpy(after, buffer_.get() + kGuard + bytes_, kGuard, cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) return e;
    long long clobbered = 0;
    for (std::size_t i = 0; i < kGuard; ++i)
      clobbered += (before[i] != kPoison) + (after[i] != kPoison);
    EXPECT_EQ(clobbered, 0) << "bytes around the workspace written";
    return cudaSuccess;
  }

 private:
  std::size_t bytes_;
  DeviceBuffer<unsigned char> buffer_;
  cudaError_t error_;
};

// The output operator of a case: what it sets in the arguments (its device vectors), and what it
// computes, in double on the host. `kExact`: with small-integer data the operator's f32 result is
// exact (a bias, a scale, ReLU), so D must match bit for bit; otherwise (transcendental
// activations) the check allows the operator's f32 error.
struct NoOutputOp {
  static constexpr bool kExact = true;
  template <class Args>
  void setup(Args&, int, int) {}
  double apply(double v, int, int) const { return v; }
};

// Runs one case of Gemm and checks it. kExactCpu: inputs are small integers, so every output is
// the exact value rounded once to D's type and must match bit for bit. kCublas: inputs are
// uniform in [-1, 1]; cuBLAS (f32 output) is the reference, with a bound from K and D's precision.
template <class Gemm, class ElementAB, class ElementD, class OpCase>
void run_gemm_case_op(const GemmCase& gc, Reference ref_kind, std::uint32_t seed, OpCase& op_case) {
  constexpr Layout LA = Gemm::kLayoutA, LB = Gemm::kLayoutB;
  const Layout LC = gc.layout_cd;
  SCOPED_TRACE(testing::Message() << type_name<ElementAB>() << "->" << type_name<ElementD>()
                                  << " A " << name_of(LA) << " B " << name_of(LB) << " CD "
                                  << name_of(LC) << " " << GemmLabel<Gemm>::get() << " " << gc.m
                                  << "x" << gc.n << "x" << gc.k << " batch " << gc.batch
                                  << " alpha " << gc.alpha << " beta " << gc.beta << " pad "
                                  << gc.pad << " split_k " << gc.split_k << " stream_k "
                                  << gc.stream_k);
  const int m = gc.m, n = gc.n, k = gc.k, batch = gc.batch;
  // Leading dimensions and strides: multiples of 8 elements, or (misalign) of `misalign` but not 8.
  const std::int64_t mis = gc.misalign;
  auto fit = [&](std::int64_t x) {
    if (mis == 0) return round_up(x, 8);
    const std::int64_t r = round_up(x, mis);
    return r % 8 == 0 ? r + mis : r;
  };
  const std::int64_t lda = fit((LA == Layout::kRowMajor ? k : m) + gc.pad);
  const std::int64_t ldb = fit((LB == Layout::kRowMajor ? n : k) + gc.pad);
  const std::int64_t ldc = fit((LC == Layout::kRowMajor ? n : m) + gc.pad);
  const std::int64_t ldd = ldc + 8;  // D's leading dimension differs from C's
  const std::int64_t stride_a = fit(span(LA, lda, m, k)) + 8 * (gc.pad > 0);
  const std::int64_t stride_b = gc.broadcast_b ? 0 : fit(span(LB, ldb, k, n));
  const std::int64_t stride_c = fit(span(LC, ldc, m, n));
  const std::int64_t stride_d = fit(span(LC, ldd, m, n)) + 8;
  const std::int64_t guard = 64;  // sentinel elements after the last D
  // Every matrix starts `mis` elements into its buffer (the elements before it are never read;
  // D's stay poisoned like the guard).
  const std::size_t size_a =
      mis + std::max<std::int64_t>(1, stride_a * (batch - 1) + span(LA, lda, m, k));
  const std::size_t size_b =
      mis + std::max<std::int64_t>(1, stride_b * (batch - 1) + span(LB, ldb, k, n));
  const std::size_t size_c =
      mis + std::max<std::int64_t>(1, stride_c * (batch - 1) + span(LC, ldc, m, n));
  const std::size_t size_d = mis + stride_d * (batch - 1) + span(LC, ldd, m, n) + guard;

  // Inputs; padding elements hold values too (random), so reading them would show.
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> small(-3, 3);
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  auto draw = [&] { return ref_kind == Reference::kExactCpu ? float(small(rng)) : uni(rng); };
  std::vector<ElementAB> a(size_a), b(size_b);
  std::vector<ElementD> c(size_c);
  for (auto& x : a) x = from_float_host<ElementAB>(draw());
  for (auto& x : b) x = from_float_host<ElementAB>(draw());
  for (auto& x : c) x = from_float_host<ElementD>(draw());
  const bool c_is_nan = gc.beta == 0.0f;  // C must not be read: make it poison
  if (c_is_nan) std::memset(static_cast<void*>(c.data()), 0xFF, c.size() * sizeof(ElementD));

  DeviceBuffer<ElementAB> d_a(size_a), d_b(size_b);
  DeviceBuffer<ElementD> d_c(size_c), d_d(size_d);
  ASSERT_TRUE(d_a.ok() && d_b.ok() && d_c.ok() && d_d.ok());
  TP_CUDA_ASSERT(d_a.upload(a));
  TP_CUDA_ASSERT(d_b.upload(b));
  TP_CUDA_ASSERT(d_c.upload(c));
  TP_CUDA_ASSERT(d_d.poison(0xFF));

  typename Gemm::Arguments args;
  args.m = m;
  args.n = n;
  args.k = k;
  args.a = d_a.get() + mis;
  args.b = d_b.get() + mis;
  args.c = d_c.get() + mis;
  args.d = d_d.get() + mis;
  args.lda = lda;
  args.ldb = ldb;
  args.ldc = ldc;
  args.ldd = ldd;
  args.alpha = gc.alpha;
  args.beta = gc.beta;
  args.layout_cd = LC;
  args.batch_count = batch;
  args.batch_stride_a = stride_a;
  args.batch_stride_b = stride_b;
  args.batch_stride_c = stride_c;
  args.batch_stride_d = stride_d;
  op_case.setup(args, m, n);
  args.split_k = gc.split_k;
  args.stream_k = gc.stream_k;
  GuardedWorkspace workspace(Gemm::workspace_size(args));
  TP_CUDA_ASSERT(workspace.error());
  args.workspace = workspace.get();
  args.workspace_bytes = workspace.bytes();
  const tilepipe::Status s = Gemm::run(args);
  ASSERT_TRUE(s.ok()) << s.message();
  TP_CUDA_ASSERT_LAUNCH();
  TP_CUDA_ASSERT(workspace.expect_guards_intact());

  std::vector<ElementD> d;
  TP_CUDA_ASSERT(d_d.download(d));

  // Reference: exact on the CPU, or cuBLAS in f32.
  std::vector<float> ref(std::size_t(batch) * m * n);
  if (ref_kind == Reference::kExactCpu) {
    for (int bt = 0; bt < batch; ++bt)
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
          double acc = 0;
          for (int kk = 0; kk < k; ++kk)
            acc += double(to_float_host(a[mis + bt * stride_a + at(LA, lda, i, kk)])) *
                   double(to_float_host(b[mis + bt * stride_b + at(LB, ldb, kk, j)]));
          double v = double(gc.alpha) * acc;
          if (gc.beta != 0.0f)
            v +=
                double(gc.beta) * double(to_float_host(c[mis + bt * stride_c + at(LC, ldc, i, j)]));
          ref[(std::size_t(bt) * m + i) * n + j] = static_cast<float>(op_case.apply(v, i, j));
        }
  } else {
    ASSERT_EQ(batch, 1) << "the cuBLAS reference handles one problem";
    cublasHandle_t handle;
    ASSERT_EQ(cublasCreate(&handle), CUBLAS_STATUS_SUCCESS);
    DeviceBuffer<float> d_ref(std::size_t(m) * n);  // column-major m x n
    ASSERT_TRUE(d_ref.ok());
    // Start from C (converted to f32) so beta is applied by cuBLAS too.
    std::vector<float> c32(std::size_t(m) * n, 0.0f);
    if (gc.beta != 0.0f)
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j)
          c32[std::size_t(j) * m + i] = to_float_host(c[mis + at(LC, ldc, i, j)]);
    TP_CUDA_ASSERT(d_ref.upload(c32));
    const cudaDataType_t t = std::is_same_v<ElementAB, __half> ? CUDA_R_16F : CUDA_R_16BF;
    const float alpha = gc.alpha, beta = gc.beta;
    const cublasOperation_t op_a = LA == Layout::kColumnMajor ? CUBLAS_OP_N : CUBLAS_OP_T;
    const cublasOperation_t op_b = LB == Layout::kColumnMajor ? CUBLAS_OP_N : CUBLAS_OP_T;
    const cublasStatus_t cs = cublasGemmEx(
        handle, op_a, op_b, m, n, k, &alpha, d_a.get() + mis, t, int(lda), d_b.get() + mis, t,
        int(ldb), &beta, d_ref.get(), CUDA_R_32F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    cublasDestroy(handle);
    ASSERT_EQ(cs, CUBLAS_STATUS_SUCCESS);
    TP_CUDA_ASSERT(cudaDeviceSynchronize());
    std::vector<float> r;
    TP_CUDA_ASSERT(d_ref.download(r));
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j)
        ref[std::size_t(i) * n + j] =
            static_cast<float>(op_case.apply(r[std::size_t(j) * m + i], i, j));
  }

  // Compare every element of D; every other element of the D buffer must keep its sentinel.
  std::vector<char> is_d(size_d, 0);
  long long bad = 0;
  double err2 = 0, ref2 = 0;
  // Precision of D's type: unit roundoff.
  const double u = std::is_same_v<ElementD, float>    ? std::ldexp(1.0, -24)
                   : std::is_same_v<ElementD, __half> ? std::ldexp(1.0, -11)
                                                      : std::ldexp(1.0, -8);
  for (int bt = 0; bt < batch; ++bt)
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        const std::int64_t off = mis + bt * stride_d + at(LC, ldd, i, j);
        is_d[off] = 1;
        const float want_f = ref[(std::size_t(bt) * m + i) * n + j];
        const float got = to_float_host(d[off]);
        bool ok;
        if (ref_kind == Reference::kExactCpu && OpCase::kExact) {
          ok = to_float_host(from_float_host<ElementD>(want_f)) == got;  // one rounding, bit-exact
        } else if (ref_kind == Reference::kExactCpu) {
          // Exact product; the operator's f32 error (a few f32 ulps) may move D's rounding by one.
          ok = std::fabs(double(got) - want_f) <=
               2 * u * std::fabs(want_f) + 1e-5 * (1 + std::fabs(want_f));
        } else {
          // f32 accumulation in another order (~ sqrt(K) eps32 |terms|) plus D's rounding.
          const double tol = 2 * u * std::fabs(want_f) + 1e-5 * std::sqrt(double(k)) + 1e-6;
          ok = std::fabs(double(got) - want_f) <= tol;
          err2 += (double(got) - want_f) * (double(got) - want_f);
          ref2 += double(want_f) * want_f;
        }
        if (!ok && ++bad <= 8)
          ADD_FAILURE() << "batch " << bt << " D(" << i << ", " << j << ") = " << got << ", want "
                        << want_f;
      }
  EXPECT_EQ(bad, 0) << "elements of D wrong";
  // Normwise: D's rounding plus f32 accumulation in a different order (~ sqrt(K) eps32).
  if (ref_kind == Reference::kCublas && ref2 > 0)
    EXPECT_LT(std::sqrt(err2 / ref2), 2 * u + 4 * std::sqrt(double(k)) * std::ldexp(1.0, -24));
  long long clobbered = 0;
  for (std::size_t i = 0; i < size_d; ++i) {
    if (is_d[i]) continue;
    unsigned char bytes[sizeof(ElementD)];
    std::memcpy(bytes, static_cast<const void*>(&d[i]), sizeof(ElementD));
    for (unsigned char by : bytes)
      if (by != 0xFF) {
        if (++clobbered <= 8)
          ADD_FAILURE() << "guard element " << i << " of the D buffer was written";
        break;
      }
  }
  EXPECT_EQ(clobbered, 0) << "elements outside D written";
}

template <class Gemm, class ElementAB, class ElementD>
void run_gemm_case(const GemmCase& gc, Reference ref_kind, std::uint32_t seed) {
  NoOutputOp none;
  run_gemm_case_op<Gemm, ElementAB, ElementD>(gc, ref_kind, seed, none);
}

// One GEMM, D = A * B, from host inputs `a` and `b` (in Gemm's layouts, leading dimensions `lda`
// and `ldb`), D poisoned first, with the workspace `Gemm::workspace_size` asks for (guarded); every
// element of D must lie within `bound(products)` (0: bit for bit) of the double reference, the sum
// of `products`, each `ref_input(a) * ref_input(b)` (the inputs as the GEMM is meant to see them:
// themselves, or rounded to tf32).
template <class Gemm, class ElementAB, class ElementD, class RefInput, class Bound>
void run_against_double(int m, int n, int k, const std::vector<ElementAB>& a, std::int64_t lda,
                        const std::vector<ElementAB>& b, std::int64_t ldb,
                        const RefInput& ref_input, const Bound& bound) {
  constexpr Layout LA = Gemm::kLayoutA, LB = Gemm::kLayoutB;
  const std::int64_t ldd = round_up(n, 8);
  DeviceBuffer<ElementAB> d_a(a.size()), d_b(b.size());
  DeviceBuffer<ElementD> d_d(std::size_t(m) * ldd);
  ASSERT_TRUE(d_a.ok() && d_b.ok() && d_d.ok());
  TP_CUDA_ASSERT(d_a.upload(a));
  TP_CUDA_ASSERT(d_b.upload(b));
  TP_CUDA_ASSERT(d_d.poison(0xFF));
  typename Gemm::Arguments args;
  args.m = m;
  args.n = n;
  args.k = k;
  args.a = d_a.get();
  args.lda = lda;
  args.b = d_b.get();
  args.ldb = ldb;
  args.d = d_d.get();
  args.ldd = ldd;
  // The workspace the GEMM asks for (tf32's K-major copies on the Hopper tier).
  GuardedWorkspace workspace(Gemm::workspace_size(args));
  TP_CUDA_ASSERT(workspace.error());
  args.workspace = workspace.get();
  args.workspace_bytes = workspace.bytes();
  const tilepipe::Status s = Gemm::run(args);
  ASSERT_TRUE(s.ok()) << s.message();
  TP_CUDA_ASSERT_LAUNCH();
  TP_CUDA_ASSERT(workspace.expect_guards_intact());
  std::vector<ElementD> d;
  TP_CUDA_ASSERT(d_d.download(d));

  long long bad = 0;
  double worst = 0;  // largest error as a fraction of its bound
  std::vector<double> products(k);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double want = 0;
      for (int kk = 0; kk < k; ++kk) {
        products[kk] =
            double(ref_input(a[at(LA, lda, i, kk)])) * double(ref_input(b[at(LB, ldb, kk, j)]));
        want += products[kk];
      }
      const double got = to_float_host(d[std::size_t(i) * ldd + j]);
      const double err = std::fabs(got - want), tol = bound(products);
      if (!(err <= tol) && ++bad <= 8)
        ADD_FAILURE() << "D(" << i << ", " << j << ") = " << got << ", want " << want << " within "
                      << tol;
      if (err <= tol && tol > 0) worst = std::max(worst, err / tol);
    }
  EXPECT_EQ(bad, 0) << "elements of D outside the bound";
  testing::Test::RecordProperty("worst_error_over_bound", std::to_string(worst));
}

}  // namespace tptest
