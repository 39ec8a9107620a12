// tilepipe's FP8 operator (python/README.md):
//
//   torch.ops.tilepipe.scaled_mm(a, b, scale_a, scale_b, out_dtype=None)
//       = (a * scale_a) @ (b * scale_b), on the current CUDA stream
//
// with torch._scaled_mm's conventions: a (M, K) and b (K, N) in torch.float8_e4m3fn or
// torch.float8_e5m2 (the same for both; b is a weight's transpose, w.t() of an (N, K) w), f32
// scales whose shapes say the mode (tensorwise: one value each; row-wise: (M, 1) and (1, N);
// block-wise, DeepSeek-V3's: (M, ceil(K/128)) per row per 128 of K, and (ceil(K/128),
// ceil(N/128)) per 128 x 128 block of b), and a result of out_dtype (torch.bfloat16 by default,
// torch.float16 or torch.float32). Registered with a CUDA kernel (these checks, then GemmFp8Sm90
// through scaled_mm.cu) and a fake implementation in tilepipe/_ops.py; like torch._scaled_mm it
// has no autograd. Argument errors raise TypeError (dtypes) or ValueError (devices, shapes),
// naming the argument; a failure inside tilepipe raises its Status message.

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "gemm.h"
#include "messages.h"

namespace {

using tilepipe_torch::DType;
using tilepipe_torch::dtype_name;
using tilepipe_torch::ScaleMode;

constexpr const char* kWho = "tilepipe.scaled_mm: ";  // starts every message
constexpr std::int64_t kBlock = 128;                  // the block-wise scales' block

template <class... Parts>
std::string message(const Parts&... parts) {
  return tilepipe_torch::compose(kWho, parts...);
}

void check_device(const at::Tensor& t, const char* name, const at::Tensor& a) {
  TORCH_CHECK_VALUE(t.device() == a.device(), message(name, " is on ", t.device(), " but a is on ",
                                                      a.device(), "; all must be on one device"));
}

// The scale mode the shapes of scale_a and scale_b say, as torch._scaled_mm reads them.
ScaleMode scale_mode(const at::Tensor& sa, const at::Tensor& sb, std::int64_t m, std::int64_t n,
                     std::int64_t k) {
  const std::int64_t kb = (k + kBlock - 1) / kBlock, nb = (n + kBlock - 1) / kBlock;
  const auto is = [](const at::Tensor& t, std::int64_t rows, std::int64_t cols) {
    return t.dim() == 2 && t.size(0) == rows && t.size(1) == cols;
  };
  if (sa.numel() == 1 && sb.numel() == 1) return ScaleMode::kTensorwise;
  if (is(sa, m, 1) && is(sb, 1, n)) return ScaleMode::kRowwise;
  if (is(sa, m, kb) && is(sb, kb, nb)) return ScaleMode::kBlockwise;
  TORCH_CHECK_VALUE(false,
                    message("scale_a (shape ", sa.sizes(), ") and scale_b (shape ", sb.sizes(),
                            ") are no scale mode for M = ", m, ", N = ", n, ", K = ", k,
                            ": tensorwise takes one value each, row-wise (", m, ", 1) and (1, ", n,
                            "), block-wise (", m, ", ", kb, ") and (", kb, ", ", nb, ")"));
}

// `t` (rows x cols) with unit stride down its rows (column-major), and its leading dimension:
// in place where it is so, else a copy. (A line of one element has no stride that is ever used.)
std::int64_t column_major(at::Tensor& t) {
  const std::int64_t rows = t.size(0), cols = t.size(1);
  const bool unit = rows == 1 || t.stride(0) == 1;
  const std::int64_t ld = cols == 1 ? rows : t.stride(1);
  if (unit && ld >= rows) return ld;
  t = t.t().contiguous().t();
  return rows;
}

at::Tensor scaled_mm_cuda(const at::Tensor& a_in, const at::Tensor& b_in, const at::Tensor& scale_a,
                          const at::Tensor& scale_b, std::optional<at::ScalarType> out_dtype) {
  TORCH_CHECK_VALUE(a_in.is_cuda(),
                    message("a is on ", a_in.device(), "; it must be a CUDA tensor"));
  check_device(b_in, "b", a_in);
  check_device(scale_a, "scale_a", a_in);
  check_device(scale_b, "scale_b", a_in);
  const c10::cuda::CUDAGuard guard(a_in.device());

  const at::ScalarType type = a_in.scalar_type();
  TORCH_CHECK_TYPE(type == at::kFloat8_e4m3fn || type == at::kFloat8_e5m2,
                   message("a has dtype ", dtype_name(type),
                           "; tilepipe takes torch.float8_e4m3fn or torch.float8_e5m2"));
  TORCH_CHECK_TYPE(b_in.scalar_type() == type,
                   message("b has dtype ", dtype_name(b_in.scalar_type()), " but a has ",
                           dtype_name(type), "; they must match"));
  for (const auto& [t, name] : {std::pair{&scale_a, "scale_a"}, std::pair{&scale_b, "scale_b"}})
    TORCH_CHECK_TYPE(
        t->scalar_type() == at::kFloat,
        message(name, " has dtype ", dtype_name(t->scalar_type()), "; scales are torch.float32"));
  const at::ScalarType d_type = out_dtype.value_or(at::kBFloat16);
  TORCH_CHECK_TYPE(d_type == at::kBFloat16 || d_type == at::kHalf || d_type == at::kFloat,
                   message("out_dtype ", dtype_name(d_type),
                           " is not torch.bfloat16, torch.float16 or torch.float32"));

  TORCH_CHECK_VALUE(a_in.dim() == 2, message("a must be (M, K); its shape is ", a_in.sizes()));
  TORCH_CHECK_VALUE(b_in.dim() == 2, message("b must be (K, N); its shape is ", b_in.sizes()));
  TORCH_CHECK_VALUE(
      a_in.size(1) == b_in.size(0),
      message("a (shape ", a_in.sizes(), ") has K = ", a_in.size(1), " columns but b (shape ",
              b_in.sizes(), ") has ", b_in.size(0), " rows; they must be equal"));
  const std::int64_t m = a_in.size(0), n = b_in.size(1), k = a_in.size(1);
  for (const std::int64_t extent : {m, n, k})
    TORCH_CHECK_VALUE(extent <= std::numeric_limits<int>::max(),
                      message("extent ", extent, " of a (", a_in.sizes(), ") or b (", b_in.sizes(),
                              ") exceeds the int range"));
  const ScaleMode mode = scale_mode(scale_a, scale_b, m, n, k);

  at::Tensor d = at::empty({m, n}, a_in.options().dtype(d_type));
  if (m == 0 || n == 0) return d;
  if (k == 0) return d.zero_();

  // a row-major and b column-major (K-major both, as wgmma takes fp8): in place where they are,
  // else copied. The rows must start 16 bytes apart (TMA).
  at::Tensor a = a_in, b = b_in;
  std::int64_t lda = m == 1 ? k : a.stride(0);
  if (!(k == 1 || a.stride(1) == 1) || lda < k) {
    a = a.contiguous();
    lda = k;
  }
  const std::int64_t ldb = column_major(b);
  TORCH_CHECK_VALUE(lda % 16 == 0 && ldb % 16 == 0,
                    message("a's rows are ", lda, " and b's columns ", ldb,
                            " elements apart; FP8 operands need a multiple of 16 bytes (TMA), "
                            "e.g. K % 16 == 0"));

  tilepipe_torch::ScaledMmProblem p;
  p.ab = type == at::kFloat8_e4m3fn ? DType::kE4M3 : DType::kE5M2;
  p.d = d_type == at::kBFloat16 ? DType::kBF16 : d_type == at::kHalf ? DType::kF16 : DType::kF32;
  p.scaling = mode;
  p.m = static_cast<int>(m);
  p.n = static_cast<int>(n);
  p.k = static_cast<int>(k);
  p.a = a.const_data_ptr();
  p.b = b.const_data_ptr();
  p.d_data = d.mutable_data_ptr();
  p.lda = lda;
  p.ldb = ldb;
  p.ldd = n;
  // Tensorwise and row-wise scales as vectors; block-wise ones M-major (scale_a) and K-major
  // (scale_b), as torch._scaled_mm lays them out: in place where they are, else copied.
  at::Tensor sa = scale_a, sb = scale_b;
  if (mode == ScaleMode::kBlockwise) {
    p.ld_scale_a = column_major(sa);
    p.ld_scale_b = column_major(sb);
  } else {
    sa = sa.reshape({-1}).contiguous();
    sb = sb.reshape({-1}).contiguous();
  }
  p.scale_a = sa.const_data_ptr<float>();
  p.scale_b = sb.const_data_ptr<float>();

  // The workspace of split-K and stream-K, from torch's caching allocator (freed once the call
  // is queued: the allocator hands the memory only to work queued after it on the stream).
  at::Tensor workspace;
  const std::size_t bytes = tilepipe_torch::scaled_mm_workspace_size(p);
  if (bytes > 0) {
    workspace = at::empty({static_cast<std::int64_t>(bytes)}, d.options().dtype(at::kByte));
    p.workspace = workspace.mutable_data_ptr();
    p.workspace_bytes = bytes;
  }
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream(d.get_device()).stream();
  const tilepipe::Status status = tilepipe_torch::run_scaled_mm(p, stream);
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
      "scaled_mm(Tensor a, Tensor b, Tensor scale_a, Tensor scale_b, ScalarType? out_dtype=None) "
      "-> Tensor");
}

// The CPU kernel is the CUDA one, which says that a is not on a GPU.
TORCH_LIBRARY_IMPL(tilepipe, CUDA, m) { m.impl("scaled_mm", &scaled_mm_cuda); }

TORCH_LIBRARY_IMPL(tilepipe, CPU, m) { m.impl("scaled_mm", &scaled_mm_cuda); }
