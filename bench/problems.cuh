#pragma once
//! \file
//! What gemm_bench measures: the problems (shape, data type, layout), in the order of the tables
//! and in the order they run, and the device buffers of one problem (the rotated input sets).

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "bench_common.cuh"
#include "options.hpp"

namespace tilepipe_bench {

constexpr double kL2Factor = 3.0;    // the input sets together cover this many L2s
constexpr double kHugeFlops = 4e12;  // 16384^3: only cuBLAS, the default (+ f16 TN stages)

struct Problem {
  std::string group;  // "square", "model", "edge" or "irregular" (ProblemSet)
  int m, n, k;
  DType dtype;
  LayoutPair layout;

  double flops() const { return 2.0 * m * n * double(k); }
  std::string shape() const {
    return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  }
  std::string key() const {
    return std::string(name_of(dtype)) + "/" + name_of(layout) + "/" + shape();
  }
  bool is_f16_tn() const { return dtype == DType::kF16 && layout == LayoutPair::kTN; }
};

inline bool same_problem(const Problem& a, const Problem& b) {
  return a.m == b.m && a.n == b.n && a.k == b.k && a.dtype == b.dtype && a.layout == b.layout;
}

//! The problems of a run. For f16 and bf16, four groups (Problem::group):
//! - "square": M = N = K from 512 to 16384, TN and NN;
//! - "model": M in {16, 128, 1024, 8192} x (N, K) in {(4096, 4096), (14336, 4096), (4096, 14336)},
//!   TN and NN;
//! - "edge": 1000 x 3000 x 4104, NN (TN is irregular);
//! - "irregular", TN unless named: decode, M in {1, 8, 16, 32, 64, 128} x (N, K) in
//!   {(4096, 4096), (28672, 4096), (4096, 14336)}; few tiles with long K, 1536 x 1536 x 32768 and
//!   1024 x 1024 x 16384; unaligned, 4096 x 50257 x 4096 (TN and NN) and 4096 x 4096 x 4099; odd
//!   column-major A, 3001 x 2999 x 4097 NN; partial last waves, 1024 x 14336 x 4096 and
//!   1000 x 3000 x 4104. A shape of two groups is listed once, as irregular: so model lacks
//!   16 and 128 x (4096, 4096) and (4096, 14336), and 1024 x 14336 x 4096, in TN.
//! For f32, the squares 2048 and 4096, TN and NN. --quick has fewer of each (no edge); --filter
//! keeps the problems whose group it names or whose key contains one of its strings. The f16 TN
//! squares at the sweep sizes (2048, 4096, 8192) time every compiled configuration.
class ProblemSet {
 public:
  explicit ProblemSet(const Options& o);

  //! In table order.
  const std::vector<Problem>& problems() const { return problems_; }
  //! In run order: the sweep problems first, 4096 first among them, so that the sweep's best
  //! configuration is known for the rest.
  const std::vector<Problem>& run_order() const { return run_order_; }
  //! One of the f16 TN squares that time every compiled configuration.
  bool is_sweep(const Problem& p) const;

 private:
  std::vector<int> square_sizes() const;
  std::vector<int> f32_square_sizes() const;
  std::vector<int> sweep_sizes() const;
  std::vector<Problem> irregular_problems(DType d) const;
  bool selected(const Problem& p) const;

  const Options& o_;
  std::vector<Problem> problems_;
  std::vector<Problem> run_order_;
};

//! The input sets of A, B and D lie this many bytes apart (each set's size rounded up), the
//! alignment of cudaMalloc's blocks: odd sizes give odd leading dimensions, as in real models,
//! but every set's base pointer stays aligned.
constexpr std::size_t kSetAlignment = 256;

//! Device memory of one problem: `sets` copies of A, B and D, so that one pass over them covers
//! kL2Factor times the L2 and no run finds its inputs there, and the f32 reference.
struct Buffers {
  std::size_t elems_a = 0, elems_b = 0, elems_d = 0;
  std::size_t elem_bytes = 2;                         // of A, B and D: the problem's data type
  std::size_t bytes_a = 0, bytes_b = 0, bytes_d = 0;  // from one set to the next (kSetAlignment)
  int sets = 0;
  void* a = nullptr;     // sets x bytes_a
  void* b = nullptr;     // sets x bytes_b
  void* d = nullptr;     // sets x bytes_d
  float* ref = nullptr;  // m x n, row-major: the cuBLAS f32-output reference on set 0

  const void* a_of(int s) const { return static_cast<const char*>(a) + bytes_a * s; }
  const void* b_of(int s) const { return static_cast<const char*>(b) + bytes_b * s; }
  void* d_of(int s) const { return static_cast<char*>(d) + bytes_d * s; }

  void release();
};

// Leading dimensions: tight, so odd sizes give odd leading dimensions.
inline std::int64_t lda_of(const Problem& p) { return p.layout == LayoutPair::kTN ? p.k : p.m; }
inline std::int64_t ldb_of(const Problem& p) { return p.k; }  // B is column-major in both layouts
inline std::int64_t ldd_of(const Problem& p) { return p.n; }

//! The operands of problem `p` in buffer set `s` (no workspace).
Operands operands_of(const Problem& p, const Buffers& buf, int s);

//! Allocates the input sets and fills A and B with values uniform in [-1, 1) drawn from `seed`
//! (tptest::fill), D with NaN; false (and a message) if the GPU's memory is too small.
bool make_buffers(const Problem& p, std::size_t l2_bytes, std::uint64_t seed, cudaStream_t stream,
                  Buffers* buf, std::string* why);

}  // namespace tilepipe_bench
