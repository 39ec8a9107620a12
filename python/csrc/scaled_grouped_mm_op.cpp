// tilepipe's FP8 grouped operator (python/README.md), a mixture-of-experts layer's FP8 products of
// each expert's rows by its weights in one launch (tilepipe::GemmGroupedFp8Sm90, an sm_90 GPU):
//
//   torch.ops.tilepipe.scaled_grouped_mm(a, b, scale_a, scale_b, offs=None, out_dtype=None)
//
// with torch._scaled_grouped_mm's conventions: a (total_M, K) with offs (G,) int32 on the device,
// the end row of each group, or a (G, M, K) without offs (every group's M rows); b (G, K, N), the
// experts' weights w (G, N, K) transposed (w.transpose(-2, -1), read in place); a and b
// torch.float8_e4m3fn; f32 scales whose shapes say the mode: row-wise (torch's) scale_a (total_M,)
// or (G, M) and scale_b (G, N); tensorwise one value for a and (G,) for b; block-wise (DeepSeek-
// V3's) scale_a (total_M, ceil(K/128)) or (G, M, ceil(K/128)) and scale_b (G, ceil(K/128),
// ceil(N/128)). The result is torch.bfloat16, (total_M, N) (rows past offs[G-1] not written) or
// (G, M, N). The sizes are never read on the host: a CUDA graph may capture a call and replay it
// with new offsets; offsets out of range are clamped. Registered with a CUDA kernel (these checks,
// then scaled_grouped_mm.cu) and a fake implementation in tilepipe/_ops.py; no autograd. Argument
// errors raise TypeError (dtypes) or ValueError (devices, shapes), naming the argument; a failure
// inside tilepipe raises its Status message.

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gemm.h"
#include "messages.h"

namespace {

using tilepipe_torch::DType;
using tilepipe_torch::dtype_name;
using tilepipe_torch::ScaleMode;

constexpr const char* kWho = "tilepipe.scaled_grouped_mm: ";  // starts every message
constexpr std::int64_t kMaxGroups = 256;                      // GemmGroupedFp8Sm90::kMaxGroups
constexpr std::int64_t kBlock = 128;                          // the block-wise scales' block

template <class... Parts>
std::string message(const Parts&... parts) {
  return tilepipe_torch::compose(kWho, parts...);
}

void check_device(const at::Tensor& t, const char* name, const at::Tensor& a) {
  TORCH_CHECK_VALUE(t.device() == a.device(), message(name, " is on ", t.device(), " but a is on ",
                                                      a.device(), "; all must be on one device"));
}

// A 3-D fp8 operand (groups, lines, length) as TMA reads it: unit stride along its lines, which
// are `ld` bytes apart, the groups `batch` apart, the start, `ld` and `batch` multiples of 16
// bytes; in place where it is so, else a copy whose lines are padded to 16 bytes.
struct Lines {
  at::Tensor t;
  std::int64_t ld = 0, batch = 0;
};
Lines tma_lines(const at::Tensor& t) {
  const std::int64_t groups = t.size(0), lines = t.size(1), length = t.size(2);
  const std::int64_t padded = std::max<std::int64_t>((length + 15) / 16 * 16, 16);
  const bool unit = length == 1 || t.stride(2) == 1;
  const std::int64_t ld = lines == 1 ? padded : t.stride(1);
  const std::int64_t batch = groups == 1 ? 0 : t.stride(0);
  const bool start = reinterpret_cast<std::uintptr_t>(t.const_data_ptr()) % 16 == 0;
  if (unit && ld >= length && ld % 16 == 0 && batch >= 0 && batch % 16 == 0 && start)
    return {t, ld, batch};
  at::Tensor copy = at::empty({groups, lines, padded}, t.options()).narrow(2, 0, length);
  copy.copy_(t);
  return {copy, padded, lines * padded};
}

bool shaped(const at::Tensor& t, std::initializer_list<std::int64_t> sizes) {
  return t.sizes().vec() == std::vector<std::int64_t>(sizes);
}

// The scale mode the shapes of scale_a and scale_b say, for `groups` groups of `rows` rows each
// (3-D a, `per_group`) or `rows` rows in all.
ScaleMode scale_mode(const at::Tensor& sa, const at::Tensor& sb, bool per_group,
                     std::int64_t groups, std::int64_t rows, std::int64_t n, std::int64_t k) {
  const std::int64_t kb = (k + kBlock - 1) / kBlock, nb = (n + kBlock - 1) / kBlock;
  if (sa.numel() == 1 && (shaped(sb, {groups}) || shaped(sb, {groups, 1})))
    return ScaleMode::kTensorwise;
  const bool row_a = per_group ? shaped(sa, {groups, rows}) || shaped(sa, {groups, rows, 1})
                               : shaped(sa, {rows}) || shaped(sa, {rows, 1});
  if (row_a && (shaped(sb, {groups, n}) || shaped(sb, {groups, 1, n}))) return ScaleMode::kRowwise;
  const bool block_a = per_group ? shaped(sa, {groups, rows, kb}) : shaped(sa, {rows, kb});
  if (block_a && shaped(sb, {groups, kb, nb})) return ScaleMode::kBlockwise;
  const std::string a_rows = per_group ? "(" + std::to_string(groups) + ", " + std::to_string(rows)
                                       : "(" + std::to_string(rows);
  TORCH_CHECK_VALUE(
      false,
      message("scale_a (shape ", sa.sizes(), ") and scale_b (shape ", sb.sizes(),
              ") are no scale mode for G = ", groups, ", N = ", n, ", K = ", k, ": row-wise takes ",
              a_rows, ") and (", groups, ", ", n, "), tensorwise one value and (", groups,
              ",), block-wise ", a_rows, ", ", kb, ") and (", groups, ", ", kb, ", ", nb, ")"));
}

at::Tensor scaled_grouped_mm_cuda(const at::Tensor& a_in, const at::Tensor& b_in,
                                  const at::Tensor& scale_a, const at::Tensor& scale_b,
                                  const std::optional<at::Tensor>& offs,
                                  std::optional<at::ScalarType> out_dtype) {
  TORCH_CHECK_VALUE(a_in.is_cuda(),
                    message("a is on ", a_in.device(), "; it must be a CUDA tensor"));
  check_device(b_in, "b", a_in);
  check_device(scale_a, "scale_a", a_in);
  check_device(scale_b, "scale_b", a_in);
  if (offs) check_device(*offs, "offs", a_in);
  const c10::cuda::CUDAGuard guard(a_in.device());

  TORCH_CHECK_TYPE(a_in.scalar_type() == at::kFloat8_e4m3fn,
                   message("a has dtype ", dtype_name(a_in.scalar_type()),
                           "; tilepipe takes torch.float8_e4m3fn here"));
  TORCH_CHECK_TYPE(b_in.scalar_type() == at::kFloat8_e4m3fn,
                   message("b has dtype ", dtype_name(b_in.scalar_type()),
                           "; tilepipe takes torch.float8_e4m3fn here"));
  for (const auto& [t, name] : {std::pair{&scale_a, "scale_a"}, std::pair{&scale_b, "scale_b"}})
    TORCH_CHECK_TYPE(
        t->scalar_type() == at::kFloat,
        message(name, " has dtype ", dtype_name(t->scalar_type()), "; scales are torch.float32"));
  TORCH_CHECK_TYPE(
      !offs || offs->scalar_type() == at::kInt,
      message("offs has dtype ", dtype_name(offs->scalar_type()), "; it must be torch.int32"));
  const at::ScalarType d_type = out_dtype.value_or(at::kBFloat16);
  TORCH_CHECK_TYPE(d_type == at::kBFloat16,
                   message("out_dtype ", dtype_name(d_type), " is not torch.bfloat16"));

  TORCH_CHECK_VALUE(b_in.dim() == 3, message("b must be (G, K, N); its shape is ", b_in.sizes()));
  const std::int64_t groups = b_in.size(0), k = b_in.size(1), n = b_in.size(2);
  TORCH_CHECK_VALUE(groups >= 1 && groups <= kMaxGroups,
                    message("b (shape ", b_in.sizes(), ") has G = ", groups,
                            " groups; tilepipe takes 1 to ", kMaxGroups));
  const bool masked = a_in.dim() == 3;
  TORCH_CHECK_VALUE(a_in.dim() == 2 || masked,
                    message("a must be (total_M, K) with offs, or (G, M, K) without; its shape "
                            "is ",
                            a_in.sizes()));
  TORCH_CHECK_VALUE(
      masked != offs.has_value(),
      message(masked ? "offs is given but a is 3-D (shape " : "offs is None but a is 2-D (shape ",
              a_in.sizes(),
              masked ? "): every group takes all M rows"
                     : "): give the groups' end rows, (G,) int32 on a's device"));
  TORCH_CHECK_VALUE(
      a_in.size(-1) == k,
      message("a (shape ", a_in.sizes(), ") has K = ", a_in.size(-1), " columns but b (shape ",
              b_in.sizes(), ") has ", k, " rows per group; they must be equal"));
  TORCH_CHECK_VALUE(!masked || a_in.size(0) == groups,
                    message("a (shape ", a_in.sizes(), ") has ", a_in.size(0),
                            " groups but b (shape ", b_in.sizes(), ") has ", groups));
  TORCH_CHECK_VALUE(!offs || (offs->dim() == 1 && offs->size(0) == groups),
                    message("offs must be (G,) = (", groups, ",); its shape is ", offs->sizes()));
  TORCH_CHECK_VALUE(k % 16 == 0, message("K = ", k,
                                         " is not a multiple of 16 (TMA reads fp8 rows of a "
                                         "multiple of 16 bytes)"));
  const std::int64_t rows = a_in.size(-2);
  for (const std::int64_t extent : {rows, n, k})
    TORCH_CHECK_VALUE(extent <= std::numeric_limits<int>::max(),
                      message("extent ", extent, " of a (", a_in.sizes(), ") or b (", b_in.sizes(),
                              ") exceeds the int range"));
  const ScaleMode mode = scale_mode(scale_a, scale_b, masked, groups, rows, n, k);

  const at::TensorOptions d_options = a_in.options().dtype(d_type);
  at::Tensor d = masked ? at::empty({groups, rows, n}, d_options) : at::empty({rows, n}, d_options);
  if (rows == 0 || n == 0) return d;
  if (k == 0) return d.zero_();

  const Lines a = tma_lines(masked ? a_in : a_in.unsqueeze(0));
  const Lines b = tma_lines(b_in.transpose(1, 2));  // [G, N, K], K contiguous
  const at::Tensor sizes =
      offs ? offs->contiguous() : at::full({groups}, rows, a_in.options().dtype(at::kInt));
  // Tensorwise and row-wise scales as vectors (row-wise: a's per row, group after group; b's per
  // group and column); block-wise ones per group M-major (a) and K-major (b), packed.
  at::Tensor sa, sb;
  std::int64_t ld_sa = 0, ld_sb = 0;
  if (mode == ScaleMode::kBlockwise) {
    sa = (masked ? scale_a.transpose(1, 2) : scale_a.t()).contiguous();  // (G,) kb x rows
    sb = scale_b.transpose(1, 2).contiguous();                           // G x nb x kb
    ld_sa = rows;
    ld_sb = (k + kBlock - 1) / kBlock;
  } else {
    sa = scale_a.reshape({-1}).contiguous();
    sb = scale_b.reshape({-1}).contiguous();
  }

  // The counter with which the blocks claim tiles on demand (1.08-1.17 x the fixed deal with
  // Zipf-routed experts, 0.94-0.97 x with 4 to 64 balanced ones: performance log 63); the GEMM
  // zeroes it on the stream.
  const at::Tensor claims = at::empty({1}, sizes.options());
  tilepipe_torch::ScaledGroupedMmProblem p;
  p.ab = DType::kE4M3;
  p.d = DType::kBF16;
  p.scaling = mode;
  p.masked = masked;
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
  p.scale_a = sa.const_data_ptr<float>();
  p.scale_b = sb.const_data_ptr<float>();
  p.ld_scale_a = ld_sa;
  p.ld_scale_b = ld_sb;
  p.claims = claims.mutable_data_ptr();
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream(d.get_device()).stream();
  const tilepipe::Status status = tilepipe_torch::run_scaled_grouped_mm(p, stream);
  if (!status) {
    const std::string what = kWho + status.message();
    TORCH_CHECK_VALUE(status.code() != tilepipe::Status::Code::kInvalidArgument, what);
    TORCH_CHECK(false, what);
  }
  return d;
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(tilepipe, m) {
  m.def(
      "scaled_grouped_mm(Tensor a, Tensor b, Tensor scale_a, Tensor scale_b, Tensor? offs=None, "
      "ScalarType? out_dtype=None) -> Tensor");
}

// The CPU kernel is the CUDA one, which says that a is not on a GPU.
TORCH_LIBRARY_IMPL(tilepipe, CUDA, m) { m.impl("scaled_grouped_mm", &scaled_grouped_mm_cuda); }

TORCH_LIBRARY_IMPL(tilepipe, CPU, m) { m.impl("scaled_grouped_mm", &scaled_grouped_mm_cuda); }
