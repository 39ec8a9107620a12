// The problems of a run and the buffers of one problem (problems.cuh).
#include "problems.cuh"

#include <algorithm>
#include <cmath>
#include <utility>

#include "check.cuh"

namespace tilepipe_bench {

// ---- The problem list ------------------------------------------------------------------------

ProblemSet::ProblemSet(const Options& o) : o_(o) {
  const std::vector<int> ms =
      o_.quick ? std::vector<int>{16, 1024} : std::vector<int>{16, 128, 1024, 8192};
  const std::vector<std::pair<int, int>> nks =
      o_.quick ? std::vector<std::pair<int, int>>{{4096, 4096}}
               : std::vector<std::pair<int, int>>{{4096, 4096}, {14336, 4096}, {4096, 14336}};
  std::vector<Problem> all;
  for (DType d : {DType::kF16, DType::kBF16}) {
    const std::vector<Problem> irregular = irregular_problems(d);
    // A shape of both kinds is listed once, in the irregular group, so that the groups' summaries
    // (report.cu) count every problem once.
    auto add = [&](const Problem& p) {
      if (std::none_of(irregular.begin(), irregular.end(),
                       [&](const Problem& q) { return same_problem(p, q); }))
        all.push_back(p);
    };
    for (LayoutPair l : {LayoutPair::kTN, LayoutPair::kNN}) {
      for (int s : square_sizes()) add({"square", s, s, s, d, l});
      for (const auto& [n, k] : nks)
        for (int m : ms) add({"model", m, n, k, d, l});
      // One wave whose edge tiles are a large share of it (27 of its 96 tiles of 256 x 128 are
      // partial; K = 4104 leaves a k-residue of 8): the edge-tile path against the 4096^3 rate.
      if (!o_.quick) add({"edge", 1000, 3000, 4104, d, l});
    }
    all.insert(all.end(), irregular.begin(), irregular.end());
  }
  for (LayoutPair l : {LayoutPair::kTN, LayoutPair::kNN})
    for (int s : f32_square_sizes()) all.push_back({"square", s, s, s, DType::kF32, l});
  for (const auto& p : all)
    if (selected(p)) problems_.push_back(p);
  // Run order: sweep problems first, in sweep_sizes() order.
  for (int s : sweep_sizes())
    for (const auto& p : problems_)
      if (is_sweep(p) && p.m == s) run_order_.push_back(p);
  for (const auto& p : problems_)
    if (!is_sweep(p)) run_order_.push_back(p);
}

// Shapes that real models run and a tile made for large squares does badly on. Leading dimensions
// stay tight (lda_of, ldb_of, ldd_of), so odd sizes are odd leading dimensions, as in a model.
std::vector<Problem> ProblemSet::irregular_problems(DType d) const {
  const LayoutPair tn = LayoutPair::kTN, nn = LayoutPair::kNN;
  std::vector<Problem> out;
  auto add = [&](int m, int n, int k, LayoutPair l) {
    out.push_back({"irregular", m, n, k, d, l});
  };
  if (o_.quick) {  // one of each kind that the aligned problems do not have
    add(1, 4096, 4096, tn);
    add(4096, 4096, 4099, tn);
    add(3001, 2999, 4097, nn);
    return out;
  }
  // Decode: a batch of 1 to 128 tokens through an 8B model's attention projection, fused
  // gate + up projection and down projection (N x K). Too few rows for one wave of tiles.
  const std::pair<int, int> weights[] = {{4096, 4096}, {28672, 4096}, {4096, 14336}};
  for (const auto& [n, k] : weights)
    for (int m : {1, 8, 16, 32, 64, 128}) add(m, n, k, tn);
  // Few tiles, long K: 72 and 32 tiles of 256 x 128 on 132 SMs, unless K is split.
  add(1536, 1536, 32768, tn);
  add(1024, 1024, 16384, tn);
  // Unaligned: an odd vocabulary (GPT-2's 50257: D's leading dimension is odd; NN too), and an
  // odd K (A's and B's leading dimensions).
  add(4096, 50257, 4096, tn);
  add(4096, 50257, 4096, nn);
  add(4096, 4096, 4099, tn);
  // Column-major A of odd sizes: every leading dimension odd.
  add(3001, 2999, 4097, nn);
  // Partial last waves: 448 tiles of 256 x 128 (3.4 waves on 132 SMs), and the edge problem's
  // 96 tiles, 27 of them partial.
  add(1024, 14336, 4096, tn);
  add(1000, 3000, 4104, tn);
  return out;
}

std::vector<int> ProblemSet::square_sizes() const {
  return o_.quick ? std::vector<int>{1024, 4096}
                  : std::vector<int>{512, 1024, 2048, 4096, 8192, 16384};
}

std::vector<int> ProblemSet::f32_square_sizes() const {
  return o_.quick ? std::vector<int>{4096} : std::vector<int>{2048, 4096};
}

std::vector<int> ProblemSet::sweep_sizes() const {
  if (!o_.sweep) return {};
  return o_.quick ? std::vector<int>{4096} : std::vector<int>{4096, 2048, 8192};  // 4096 first
}

bool ProblemSet::is_sweep(const Problem& p) const {
  if (!p.is_f16_tn() || p.group != "square") return false;
  const auto s = sweep_sizes();
  return std::find(s.begin(), s.end(), p.m) != s.end();
}

bool ProblemSet::selected(const Problem& p) const {
  if (o_.filters.empty()) return true;
  for (const auto& f : o_.filters)
    if (f == p.group || p.key().find(f) != std::string::npos) return true;
  return false;
}

// ---- Buffers of one problem ------------------------------------------------------------------

void Buffers::release() {
  cudaFree(a);
  cudaFree(b);
  cudaFree(d);
  cudaFree(ref);
  *this = Buffers{};
}

Operands operands_of(const Problem& p, const Buffers& buf, int s) {
  Operands op;
  op.m = p.m;
  op.n = p.n;
  op.k = p.k;
  op.a = buf.a_of(s);
  op.lda = lda_of(p);
  op.b = buf.b_of(s);
  op.ldb = ldb_of(p);
  op.d = buf.d_of(s);
  op.ldd = ldd_of(p);
  return op;
}

bool make_buffers(const Problem& p, std::size_t l2_bytes, std::uint64_t seed, cudaStream_t stream,
                  Buffers* buf, std::string* why) {
  buf->elems_a = std::size_t(p.m) * p.k;
  buf->elems_b = std::size_t(p.k) * p.n;
  buf->elems_d = std::size_t(p.m) * p.n;
  buf->elem_bytes = tptest::size_of(p.dtype);
  const auto set_stride = [&](std::size_t elems) {
    return (buf->elem_bytes * elems + kSetAlignment - 1) / kSetAlignment * kSetAlignment;
  };
  buf->bytes_a = set_stride(buf->elems_a);
  buf->bytes_b = set_stride(buf->elems_b);
  buf->bytes_d = set_stride(buf->elems_d);
  const std::size_t set_bytes = buf->bytes_a + buf->bytes_b + buf->bytes_d;
  int sets = int(std::ceil(kL2Factor * double(l2_bytes) / double(set_bytes)));
  sets = std::clamp(sets, 1, 1024);
  std::size_t free_bytes = 0, total_bytes = 0;
  CHECK_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::size_t ref_bytes = 4 * buf->elems_d;
  const std::size_t reserve = std::size_t(1) << 30;  // cuBLAS workspace, the runtime, slack
  if (free_bytes < ref_bytes + set_bytes + reserve) {
    *why = "needs " + std::to_string((ref_bytes + set_bytes) >> 20) + " MiB, " +
           std::to_string(free_bytes >> 20) + " MiB free";
    return false;
  }
  sets = int(std::min<std::size_t>(sets, (free_bytes - ref_bytes - reserve) / set_bytes));
  buf->sets = sets;
  CHECK_CUDA(cudaMalloc(&buf->a, buf->bytes_a * sets));
  CHECK_CUDA(cudaMalloc(&buf->b, buf->bytes_b * sets));
  CHECK_CUDA(cudaMalloc(&buf->d, buf->bytes_d * sets));
  CHECK_CUDA(cudaMalloc(&buf->ref, ref_bytes));
  // Uniform in [-1, 1): the hash of (seed, index) that the device tests use (device_fill.cuh),
  // the padding between the sets included (kSetAlignment is a multiple of every element size).
  const std::size_t elems_a = buf->bytes_a / buf->elem_bytes * sets;
  const std::size_t elems_b = buf->bytes_b / buf->elem_bytes * sets;
  CHECK_CUDA(tptest::fill(p.dtype, buf->a, elems_a, seed * 2, /*range=*/0, stream));
  CHECK_CUDA(tptest::fill(p.dtype, buf->b, elems_b, seed * 2 + 1, /*range=*/0, stream));
  CHECK_CUDA(cudaMemsetAsync(buf->d, 0xFF, buf->bytes_d * sets, stream));
  return true;
}

}  // namespace tilepipe_bench
