// tilepipe's grouped operators (python/README.md), a mixture-of-experts layer's products of each
// expert's rows by its weights in one launch (tilepipe::GemmGroupedSm90, an sm_90 GPU):
//
//   torch.ops.tilepipe.grouped_mm(a, b, offs=None, out_dtype=None)
//       torch._grouped_mm's conventions: a (total_M, K), b (G, K, N), offs (G,) int32 on the
//       device, the end row of each group (group g's rows: offs[g-1] .. offs[g]); result
//       (total_M, N), rows past offs[G-1] unspecified (not written). With a 3-D a (G, M, K) and
//       offs None: every group's M rows, result (G, M, N).
//   torch.ops.tilepipe.grouped_mm_masked(a, b, counts, out_dtype=None)
//       a (G, M_max, K), counts (G,) int32 on the device; result (G, M_max, N), group g's rows
//       from counts[g] on zero.
//
// a and b of torch.bfloat16 or torch.float16 (the same), b usually w.transpose(-2, -1) of the
// experts' weights w (G, N, K), read in place, as is a b with N contiguous (other strides, and
// starts or strides that are not multiples of 16 bytes, are copied first). out_dtype: None (a's
// dtype) or, with bf16, torch.float32. The sizes are never read on the host and nothing
// synchronises, so a CUDA graph may capture a call and replay it with new sizes; sizes out of
// range (decreasing, negative, past the rows) are clamped into a's rows, as GemmGroupedSm90 does.
// Registered with a CUDA kernel (these checks, then grouped_mm.cu) and fake implementations in
// tilepipe/_ops.py; no autograd. Argument errors raise TypeError (dtypes) or ValueError (devices,
// shapes), naming the argument; a failure inside tilepipe raises its Status message.

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "gemm.h"
#include "messages.h"

namespace {

using tilepipe_torch::DType;
using tilepipe_torch::dtype_name;

constexpr std::int64_t kMaxGroups = 256;  // GemmGroupedSm90::kMaxGroups
constexpr std::int64_t kBytes = 2;        // an element of a and b (f16, bf16)
constexpr std::int64_t kAlign = 16 / kBytes;

template <class... Parts>
std::string message(const char* who, const Parts&... parts) {
  return tilepipe_torch::compose(who, parts...);
}

// A 3-D operand (groups, lines, length) as TMA reads it: unit stride along its lines, which are
// `ld` elements apart, the groups `batch` apart; the start, `ld` and `batch` multiples of 16 bytes.
struct Lines {
  at::Tensor t;
  std::int64_t ld = 0, batch = 0;
};

// `t` in place where it is so, else a copy whose lines are padded to 16 bytes. A stride along an
// extent of one is never used: a passing one is taken. `t` has at least one element.
Lines tma_lines(const at::Tensor& t) {
  const std::int64_t groups = t.size(0), lines = t.size(1), length = t.size(2);
  const std::int64_t padded = std::max((length + kAlign - 1) / kAlign * kAlign, kAlign);
  const auto aligned = [](std::int64_t v) { return v * kBytes % 16 == 0; };
  const bool unit = length == 1 || t.stride(2) == 1;
  const std::int64_t ld = lines == 1 ? padded : t.stride(1);
  const std::int64_t batch = groups == 1 ? 0 : t.stride(0);
  const bool start = reinterpret_cast<std::uintptr_t>(t.const_data_ptr()) % 16 == 0;
  if (unit && ld >= length && aligned(ld) && batch >= 0 && aligned(batch) && start)
    return {t, ld, batch};
  at::Tensor copy = at::empty({groups, lines, padded}, t.options()).narrow(2, 0, length);
  copy.copy_(t);
  return {copy, padded, lines * padded};
}

void check_device(const char* who, const at::Tensor& t, const char* name, const at::Tensor& a) {
  TORCH_CHECK_VALUE(t.device() == a.device(),
                    message(who, name, " is on ", t.device(), " but a is on ", a.device(),
                            "; all must be on one device"));
}

// D = the groups' products: a is (rows, K) for the contiguous form, (G, rows, K) for the masked
// one; `sizes_in` the G int32 end rows or counts (None: counts of `rows` each, made here); D is
// (rows, N) or (G, rows, N), zeroed first where `zero` says.
at::Tensor grouped(const char* who, const at::Tensor& a_in, const at::Tensor& b_in,
                   const std::optional<at::Tensor>& sizes_in, const char* sizes_name, bool masked,
                   bool zero, std::optional<at::ScalarType> out_dtype) {
  TORCH_CHECK_VALUE(a_in.is_cuda(),
                    message(who, "a is on ", a_in.device(), "; it must be a CUDA tensor"));
  check_device(who, b_in, "b", a_in);
  if (sizes_in) check_device(who, *sizes_in, sizes_name, a_in);
  const c10::cuda::CUDAGuard guard(a_in.device());

  const at::ScalarType type = a_in.scalar_type();
  TORCH_CHECK_TYPE(type == at::kBFloat16 || type == at::kHalf,
                   message(who, "a has dtype ", dtype_name(type),
                           "; tilepipe takes torch.bfloat16 or torch.float16"));
  TORCH_CHECK_TYPE(b_in.scalar_type() == type,
                   message(who, "b has dtype ", dtype_name(b_in.scalar_type()), " but a has ",
                           dtype_name(type), "; they must match"));
  TORCH_CHECK_TYPE(!sizes_in || sizes_in->scalar_type() == at::kInt,
                   message(who, sizes_name, " has dtype ", dtype_name(sizes_in->scalar_type()),
                           "; it must be torch.int32"));
  const at::ScalarType d_type = out_dtype.value_or(type);
  TORCH_CHECK_TYPE(
      d_type == type || (d_type == at::kFloat && type == at::kBFloat16),
      message(who, "out_dtype ", dtype_name(d_type), " is not taken with a of ", dtype_name(type),
              ": None (a's dtype), or torch.float32 with torch.bfloat16 inputs"));

  TORCH_CHECK_VALUE(b_in.dim() == 3,
                    message(who, "b must be (G, K, N); its shape is ", b_in.sizes()));
  const std::int64_t groups = b_in.size(0), k = b_in.size(1), n = b_in.size(2);
  TORCH_CHECK_VALUE(groups >= 1 && groups <= kMaxGroups,
                    message(who, "b (shape ", b_in.sizes(), ") has G = ", groups,
                            " groups; tilepipe takes 1 to ", kMaxGroups));
  TORCH_CHECK_VALUE(
      a_in.size(-1) == k,
      message(who, "a (shape ", a_in.sizes(), ") has K = ", a_in.size(-1), " columns but b (shape ",
              b_in.sizes(), ") has ", k, " rows per group; they must be equal"));
  TORCH_CHECK_VALUE(!masked || a_in.size(0) == groups,
                    message(who, "a (shape ", a_in.sizes(), ") has ", a_in.size(0),
                            " groups but b (shape ", b_in.sizes(), ") has ", groups));
  TORCH_CHECK_VALUE(!sizes_in || (sizes_in->dim() == 1 && sizes_in->size(0) == groups),
                    message(who, sizes_name, " must be (G,) = (", groups, ",); its shape is ",
                            sizes_in->sizes()));
  const std::int64_t rows = a_in.size(-2);
  for (const std::int64_t extent : {rows, n, k})
    TORCH_CHECK_VALUE(extent <= std::numeric_limits<int>::max(),
                      message(who, "extent ", extent, " of a (", a_in.sizes(), ") or b (",
                              b_in.sizes(), ") exceeds the int range"));

  const at::TensorOptions d_options = a_in.options().dtype(d_type);
  const std::vector<std::int64_t> d_shape =
      masked ? std::vector<std::int64_t>{groups, rows, n} : std::vector<std::int64_t>{rows, n};
  at::Tensor d = zero ? at::zeros(d_shape, d_options) : at::empty(d_shape, d_options);
  if (rows == 0 || n == 0) return d;
  if (k == 0) return d.zero_();

  const Lines a = tma_lines(masked ? a_in : a_in.unsqueeze(0));
  // b [G, K, N] with N contiguous is read as it is (kRowMajor); any other as [G, N, K].
  const bool n_major = (n == 1 || b_in.stride(2) == 1) && !(k == 1 || b_in.stride(1) == 1);
  const Lines b = tma_lines(n_major ? b_in : b_in.transpose(1, 2));
  const at::Tensor sizes =
      sizes_in ? sizes_in->contiguous() : at::full({groups}, rows, a_in.options().dtype(at::kInt));
  // The counter with which the blocks claim tiles on demand (groups of unequal size make tiles of
  // unequal cost); the GEMM zeroes it on the stream.
  const at::Tensor claims = at::empty({1}, a_in.options().dtype(at::kInt));

  tilepipe_torch::GroupedMmProblem p;
  p.ab = type == at::kBFloat16 ? DType::kBF16 : DType::kF16;
  p.d = d_type == at::kFloat ? DType::kF32 : p.ab;
  p.masked = masked;
  p.layout_b = n_major ? tilepipe::Layout::kRowMajor : tilepipe::Layout::kColumnMajor;
  p.groups = static_cast<int>(groups);
  p.m = static_cast<int>(rows);
  p.n = static_cast<int>(n);
  p.k = static_cast<int>(k);
  p.sizes = sizes.const_data_ptr<int>();
  p.a = a.t.const_data_ptr();
  p.lda = a.ld;
  p.batch_stride_a = a.batch;
  p.b = b.t.const_data_ptr();
  p.ldb = b.ld;
  p.batch_stride_b = b.batch;
  p.d_data = d.mutable_data_ptr();
  p.ldd = n;
  p.batch_stride_d = masked ? rows * n : 0;
  p.claims = claims.mutable_data_ptr();
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream(d.get_device()).stream();
  const tilepipe::Status status = tilepipe_torch::run_grouped_mm(p, stream);
  if (!status) {
    const std::string what = who + status.message();
    TORCH_CHECK_VALUE(status.code() != tilepipe::Status::Code::kInvalidArgument, what);
    TORCH_CHECK(false, what);
  }
  return d;
}

constexpr const char* kGrouped = "tilepipe.grouped_mm: ";
constexpr const char* kMasked = "tilepipe.grouped_mm_masked: ";

at::Tensor grouped_mm_cuda(const at::Tensor& a, const at::Tensor& b,
                           const std::optional<at::Tensor>& offs,
                           std::optional<at::ScalarType> out_dtype) {
  if (a.dim() == 2) {
    TORCH_CHECK_VALUE(offs.has_value(),
                      message(kGrouped, "offs is None but a is 2-D (shape ", a.sizes(),
                              "): give the groups' end rows, (G,) int32 on a's device"));
    return grouped(kGrouped, a, b, offs, "offs", false, false, out_dtype);
  }
  TORCH_CHECK_VALUE(a.dim() == 3, message(kGrouped,
                                          "a must be (total_M, K) with offs, or (G, M, K) without; "
                                          "its shape is ",
                                          a.sizes()));
  TORCH_CHECK_VALUE(!offs.has_value(),
                    message(kGrouped, "offs is given but a is 3-D (shape ", a.sizes(),
                            "): every group takes all M rows; for row counts per group call "
                            "tilepipe.grouped_mm_masked"));
  // Every group's M rows: the masked form with counts of M (made on the device).
  return grouped(kGrouped, a, b, std::nullopt, "counts", true, false, out_dtype);
}

at::Tensor grouped_mm_masked_cuda(const at::Tensor& a, const at::Tensor& b,
                                  const at::Tensor& counts,
                                  std::optional<at::ScalarType> out_dtype) {
  TORCH_CHECK_VALUE(a.dim() == 3,
                    message(kMasked, "a must be (G, M_max, K); its shape is ", a.sizes()));
  return grouped(kMasked, a, b, counts, "counts", true, true, out_dtype);
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(tilepipe, m) {
  m.def("grouped_mm(Tensor a, Tensor b, Tensor? offs=None, ScalarType? out_dtype=None) -> Tensor");
  m.def(
      "grouped_mm_masked(Tensor a, Tensor b, Tensor counts, ScalarType? out_dtype=None) -> "
      "Tensor");
}

// The CPU kernels are the CUDA ones, which say that a is not on a GPU.
TORCH_LIBRARY_IMPL(tilepipe, CUDA, m) {
  m.impl("grouped_mm", &grouped_mm_cuda);
  m.impl("grouped_mm_masked", &grouped_mm_masked_cuda);
}

TORCH_LIBRARY_IMPL(tilepipe, CPU, m) {
  m.impl("grouped_mm", &grouped_mm_cuda);
  m.impl("grouped_mm_masked", &grouped_mm_masked_cuda);
}
