// tilepipe's PyTorch operator (python/README.md):
//
//   torch.ops.tilepipe.gemm(a, b, bias=None, activation="none", out_dtype=None)
//       = act(a @ b + bias), on the current CUDA stream
//
// registered with the dispatcher: a CUDA kernel (this file's checks, then GemmAuto through
// gemm.cu), an autograd kernel in C++ (so that a call runs no Python), and a fake implementation
// in tilepipe/_ops.py (for torch.compile). Argument errors raise TypeError (dtypes) or ValueError
// (devices, shapes), naming the argument; a failure inside tilepipe raises its Status message.
//
// The module tilepipe._C also holds hopper_tier_available and cpp_api_us_per_call (the C++ API's
// per-call time for the benchmark of the operator's overhead).

#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/autograd.h>
#include <torch/extension.h>
#include <torch/library.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "gemm.h"
#include "messages.h"

namespace {

using tilepipe::Layout;
using tilepipe_torch::Activation;
using tilepipe_torch::DType;
using tilepipe_torch::dtype_name;
using tilepipe_torch::Operand;

constexpr const char* kWho = "tilepipe.gemm: ";  // starts every message

template <class... Parts>
std::string message(const Parts&... parts) {
  return tilepipe_torch::compose(kWho, parts...);
}

DType to_dtype(at::ScalarType t) {
  return t == at::kBFloat16 ? DType::kBF16 : t == at::kFloat ? DType::kF32 : DType::kF16;
}

Activation parse_activation(c10::string_view name) {
  if (name == "none") return Activation::kNone;
  if (name == "relu") return Activation::kRelu;
  if (name == "gelu") return Activation::kGelu;
  if (name == "gelu_tanh") return Activation::kGeluTanh;
  if (name == "silu") return Activation::kSilu;
  TORCH_CHECK_VALUE(
      false, message("activation \"", name,
                     "\" is not one of \"none\", \"relu\", \"gelu\", \"gelu_tanh\", \"silu\""));
}

// The activation on a tensor, with torch's functions (used where K = 0).
at::Tensor activate(const at::Tensor& v, Activation act) {
  switch (act) {
    case Activation::kNone: return v;
    case Activation::kRelu: return at::relu(v);
    case Activation::kGelu: return at::gelu(v);
    case Activation::kGeluTanh: return at::gelu(v, "tanh");
    case Activation::kSilu: return at::silu(v);
  }
  return v;
}

// The product of the sizes before the last two.
std::int64_t batch_of(const at::Tensor& t) {
  std::int64_t n = 1;
  for (std::int64_t i = 0; i + 2 < t.dim(); ++i) n *= t.size(i);
  return n;
}

// `t`'s matrices as tilepipe takes them: (rows, cols) where one is shared by every batch, else
// (batch, rows, cols) with the batch dimensions flattened (a view where the strides allow, else a
// copy; also a copy where `t` is broadcast along some of them but not all).
at::Tensor flatten_batch(const at::Tensor& t, c10::IntArrayRef batch_shape, std::int64_t batch) {
  const std::int64_t rows = t.size(-2), cols = t.size(-1);
  if (batch_of(t) == 1) return t.dim() == 2 ? t : t.reshape({rows, cols});
  if (t.sizes().slice(0, t.dim() - 2).equals(batch_shape)) return t.reshape({batch, rows, cols});
  std::vector<std::int64_t> full(batch_shape.begin(), batch_shape.end());
  full.push_back(rows);
  full.push_back(cols);
  return t.expand(full).reshape({batch, rows, cols});
}

// tilepipe's view of the 2-D or 3-D `t`: row-major if its columns have unit stride, column-major
// if its rows do, with any leading dimension (GemmAuto takes unaligned ones). Torch gives extent-1
// dimensions arbitrary strides, and a single row (column) has no stride between rows (columns)
// that is ever used: then its extent stands in for it. A matrix with unit stride in neither
// dimension (or overlapping lines) is copied first: `t` is replaced by the copy.
Operand operand(at::Tensor& t) {
  const std::int64_t rows = t.size(-2), cols = t.size(-1);
  const bool row_unit = t.stride(-1) == 1 || cols == 1;
  const bool col_unit = t.stride(-2) == 1 || rows == 1;
  const std::int64_t row_ld = rows == 1 ? cols : t.stride(-2);
  const std::int64_t col_ld = cols == 1 ? rows : t.stride(-1);
  Operand op;
  if (row_unit && row_ld >= cols) {
    op.layout = Layout::kRowMajor;
    op.ld = row_ld;
  } else if (col_unit && col_ld >= rows) {
    op.layout = Layout::kColumnMajor;
    op.ld = col_ld;
  } else {
    t = t.contiguous();
    op.layout = Layout::kRowMajor;
    op.ld = cols;
  }
  op.data = t.const_data_ptr();
  op.batch_stride = t.dim() == 3 ? t.stride(0) : 0;
  return op;
}

// a and b on one CUDA device (checked before anything is allocated there).
void check_devices(const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK_VALUE(a.is_cuda(), message("a is on ", a.device(), "; it must be a CUDA tensor"));
  TORCH_CHECK_VALUE(b.device() == a.device(),
                    message("b is on ", b.device(), " but a is on ", a.device(),
                            "; both must be on the same CUDA device"));
}

// The checked arguments of one call: the problem for tilepipe, the output, and the tensors the
// problem points into (kept alive until the call is queued).
struct Call {
  tilepipe_torch::Problem problem;
  at::Tensor d, a, b, bias, workspace;
  bool empty = false;  // nothing to compute (an extent is 0), or K = 0 (D = act(bias))
};

Call prepare(const at::Tensor& a_in, const at::Tensor& b_in, const std::optional<at::Tensor>& bias,
             c10::string_view activation, std::optional<at::ScalarType> out_dtype) {
  // Dtypes (check_devices came first).
  const at::ScalarType type = a_in.scalar_type();
  TORCH_CHECK_TYPE(type == at::kHalf || type == at::kBFloat16,
                   message("a has dtype ", dtype_name(type),
                           "; tilepipe takes torch.float16 or torch.bfloat16"));
  TORCH_CHECK_TYPE(b_in.scalar_type() == type,
                   message("b has dtype ", dtype_name(b_in.scalar_type()), " but a has ",
                           dtype_name(type), "; they must match"));
  const at::ScalarType d_type = out_dtype.value_or(type);
  TORCH_CHECK_TYPE(d_type == type || d_type == at::kFloat,
                   message("out_dtype ", dtype_name(d_type), " is neither a's dtype (",
                           dtype_name(type), ") nor torch.float32"));
  const Activation act = parse_activation(activation);

  // Shapes: (..., M x K) @ (..., K x N), the batch dimensions broadcast as in torch.matmul.
  TORCH_CHECK_VALUE(a_in.dim() >= 2, message("a must have 2 or more dimensions (..., M, K); its "
                                             "shape is ",
                                             a_in.sizes()));
  TORCH_CHECK_VALUE(b_in.dim() >= 2, message("b must have 2 or more dimensions (..., K, N); its "
                                             "shape is ",
                                             b_in.sizes()));
  TORCH_CHECK_VALUE(
      a_in.size(-1) == b_in.size(-2),
      message("a (shape ", a_in.sizes(), ") has K = ", a_in.size(-1), " columns but b (shape ",
              b_in.sizes(), ") has ", b_in.size(-2), " rows; they must be equal"));
  const c10::IntArrayRef batch_a = a_in.sizes().slice(0, a_in.dim() - 2);
  const c10::IntArrayRef batch_b = b_in.sizes().slice(0, b_in.dim() - 2);
  std::vector<std::int64_t> shape;
  {
    const std::size_t dims = std::max(batch_a.size(), batch_b.size());
    shape.resize(dims);
    for (std::size_t i = 0; i < dims; ++i) {
      // Aligned at the right, as torch.matmul broadcasts.
      const std::int64_t x = i + batch_a.size() >= dims ? batch_a[i + batch_a.size() - dims] : 1;
      const std::int64_t y = i + batch_b.size() >= dims ? batch_b[i + batch_b.size() - dims] : 1;
      TORCH_CHECK_VALUE(x == y || x == 1 || y == 1,
                        message("the batch dimensions of a (shape ", a_in.sizes(),
                                ") and b (shape ", b_in.sizes(), ") do not broadcast"));
      shape[i] = x == 1 ? y : x;
    }
  }
  std::int64_t batch = 1;
  for (const std::int64_t s : shape) batch *= s;
  const std::int64_t m = a_in.size(-2), n = b_in.size(-1), k = a_in.size(-1);
  for (const std::int64_t extent : {batch, m, n, k})
    TORCH_CHECK_VALUE(extent <= std::numeric_limits<int>::max(),
                      message("extent ", extent, " of a (", a_in.sizes(), ") or b (", b_in.sizes(),
                              ") exceeds the int range"));
  if (bias.has_value()) {
    const at::Tensor& v = *bias;
    TORCH_CHECK_VALUE(v.device() == a_in.device(),
                      message("bias is on ", v.device(), " but a is on ", a_in.device()));
    TORCH_CHECK_TYPE(v.scalar_type() == type || v.scalar_type() == at::kFloat,
                     message("bias has dtype ", dtype_name(v.scalar_type()), "; it must be a's (",
                             dtype_name(type), ") or torch.float32"));
    TORCH_CHECK_VALUE(v.dim() == 1 && v.size(0) == n,
                      message("bias must have shape (", n,
                              ",), one value per column of the output; its shape is ", v.sizes()));
  }

  Call call;
  shape.push_back(m);
  shape.push_back(n);
  call.d = at::empty(shape, a_in.options().dtype(d_type));
  if (batch == 0 || m == 0 || n == 0) {
    call.empty = true;
    return call;
  }
  if (k == 0) {  // D = act(bias): A and B are empty and never read
    if (bias.has_value()) call.d.copy_(activate(bias->to(at::kFloat), act));
    else call.d.zero_();  // every activation maps 0 to 0
    call.empty = true;
    return call;
  }

  tilepipe_torch::Problem& p = call.problem;
  p.ab = to_dtype(type);
  p.d = to_dtype(d_type);
  p.batch = static_cast<int>(batch);
  p.m = static_cast<int>(m);
  p.n = static_cast<int>(n);
  p.k = static_cast<int>(k);
  p.activation = act;
  const c10::IntArrayRef batch_shape = c10::IntArrayRef(shape).slice(0, shape.size() - 2);
  call.a = flatten_batch(a_in, batch_shape, batch);
  call.b = flatten_batch(b_in, batch_shape, batch);
  p.a = operand(call.a);
  p.b = operand(call.b);
  if (p.a.layout == Layout::kColumnMajor && p.b.layout == Layout::kColumnMajor) {
    // Both column-major (a.t() @ b.t(), rare: autograd never makes it) runs on a row-major copy
    // of A, so that the package compiles three layouts of each GEMM instead of four.
    call.a = call.a.contiguous();
    p.a = operand(call.a);
  }
  p.d_data = call.d.mutable_data_ptr();
  p.ldd = n;
  p.batch_stride_d = m * n;
  if (bias.has_value()) {
    // A bias with a stride other than 1 is packed (it is N values: the copy is cheap).
    call.bias = bias->stride(0) == 1 ? *bias : bias->contiguous();
    p.bias = call.bias.const_data_ptr();
    p.bias_type = to_dtype(call.bias.scalar_type());
  }
  return call;
}

// GemmAuto's workspace for `call`, where it needs one, from torch's caching allocator (freed once
// the call is queued: the allocator hands the memory only to work queued after it on the stream).
void attach_workspace(Call& call) {
  tilepipe_torch::Problem& p = call.problem;
  const std::size_t bytes = tilepipe_torch::workspace_size(p);
  if (bytes == 0) return;
  call.workspace = at::empty({static_cast<std::int64_t>(bytes)}, call.d.options().dtype(at::kByte));
  p.workspace = call.workspace.mutable_data_ptr();
  p.workspace_bytes = bytes;
}

// Runs `call` on the current stream of its device, with GemmAuto's workspace.
void run(Call& call) {
  tilepipe_torch::Problem& p = call.problem;
  attach_workspace(call);
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream(call.d.get_device()).stream();
  const tilepipe::Status status = tilepipe_torch::run_gemm(p, stream);
  if (!status) {
    const std::string what = kWho + status.message();
    TORCH_CHECK_VALUE(status.code() != tilepipe::Status::Code::kInvalidArgument, what);
    TORCH_CHECK(false, what);
  }
}

// The CUDA kernel of tilepipe::gemm (also its CPU kernel, which says that a is not on a GPU).
at::Tensor gemm_cuda(const at::Tensor& a, const at::Tensor& b,
                     const std::optional<at::Tensor>& bias, c10::string_view activation,
                     std::optional<at::ScalarType> out_dtype) {
  check_devices(a, b);
  const c10::cuda::CUDAGuard guard(a.device());
  Call call = prepare(a, b, bias, activation, out_dtype);
  if (!call.empty) run(call);
  return call.d;
}

// tilepipe::gemm through the dispatcher (the autograd kernel's forward and backward call it, so
// that whatever traces them, torch.compile's fake tensors say, sees the operator).
at::Tensor gemm_op(const at::Tensor& a, const at::Tensor& b, const std::optional<at::Tensor>& bias,
                   c10::string_view activation, std::optional<at::ScalarType> out_dtype) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("tilepipe::gemm", "")
                             .typed<decltype(gemm_cuda)>();
  return op.call(a, b, bias, activation, out_dtype);
}

// Autograd: D = act(P), P = A B + bias (batch dimensions broadcast). With G = dL/dD and
// Gp = G act'(P): dL/dA = Gp B^T, dL/dB = A^T Gp, dL/dbias = Gp summed over every dimension but
// the last, each summed over the batch dimensions its operand was broadcast along. ReLU's
// derivative comes from D; the smooth activations' from P, which the backward recomputes (one
// more GEMM, in f32) rather than keep. Gp goes into the gradient GEMMs in a's dtype, as torch's
// own backward of a bf16 linear layer does.
class GemmFunction : public torch::autograd::Function<GemmFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& a,
                            const at::Tensor& b, const std::optional<at::Tensor>& bias,
                            c10::string_view activation, std::optional<at::ScalarType> out_dtype) {
    at::Tensor d;
    {
      const at::AutoDispatchBelowADInplaceOrView below;
      d = gemm_op(a, b, bias, activation, out_dtype);
    }
    const Activation act = parse_activation(activation);
    ctx->saved_data["activation"] = static_cast<std::int64_t>(act);
    ctx->saved_data["has_bias"] = bias.has_value();
    ctx->save_for_backward(
        {a, b, bias.value_or(at::Tensor()), act == Activation::kRelu ? d : at::Tensor()});
    return d;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &a = saved[0], &b = saved[1], &bias = saved[2], &d = saved[3];
    const auto act = static_cast<Activation>(ctx->saved_data["activation"].toInt());
    const std::optional<at::Tensor> bias_opt =
        ctx->saved_data["has_bias"].toBool() ? std::optional<at::Tensor>(bias) : std::nullopt;
    const at::Tensor& g = grads[0];

    at::Tensor gp;  // dL/dP
    if (act == Activation::kNone) {
      gp = g;
    } else if (act == Activation::kRelu) {
      gp = at::threshold_backward(g, d, 0);
    } else {
      const at::Tensor pre = gemm_op(a, b, bias_opt, "none", at::kFloat);
      const at::Tensor g32 = g.to(at::kFloat);
      gp = act == Activation::kSilu
               ? at::silu_backward(g32, pre)
               : at::gelu_backward(g32, pre, act == Activation::kGelu ? "none" : "tanh");
    }
    const at::Tensor gp_ab = gp.to(a.scalar_type());

    at::Tensor grad_a, grad_b, grad_bias;
    if (ctx->needs_input_grad(0)) grad_a = grad_a_of(gp_ab, a, b);
    if (ctx->needs_input_grad(1)) grad_b = grad_b_of(gp_ab, a, b);
    if (bias_opt.has_value() && ctx->needs_input_grad(2)) {
      std::vector<std::int64_t> dims(gp.dim() - 1);
      for (std::size_t i = 0; i < dims.size(); ++i) dims[i] = static_cast<std::int64_t>(i);
      grad_bias = at::sum(gp, dims, false, at::kFloat).to(bias.scalar_type());
    }
    return {grad_a, grad_b, grad_bias, at::Tensor(), at::Tensor()};
  }

 private:
  // Sizes as symbols (torch.compile traces this backward with symbolic shapes, where sizes() would
  // throw).
  static c10::SymIntArrayRef batch_dims(const at::Tensor& t) {
    return t.sym_sizes().slice(0, t.dim() - 2);
  }
  // Whether `t`'s batch dimensions are the output's (`gp`'s): its gradient needs no sum.
  static bool unbroadcast(const at::Tensor& t, const at::Tensor& gp) {
    return batch_dims(t).equals(batch_dims(gp));
  }
  // Gp B^T, summed over the batch dimensions A was broadcast along (in f32, then a's dtype).
  static at::Tensor grad_a_of(const at::Tensor& gp, const at::Tensor& a, const at::Tensor& b) {
    const at::Tensor bt = b.transpose(-1, -2);
    if (unbroadcast(a, gp)) return gemm_op(gp, bt, std::nullopt, "none", std::nullopt);
    const at::Tensor full = gemm_op(gp, bt, std::nullopt, "none", at::kFloat);
    return at::sum_to(full, a.sym_sizes()).to(a.scalar_type());
  }
  // A^T Gp, summed likewise. Where B is one matrix shared by every batch of an unbroadcast A (a
  // linear layer's weight), the sum is one GEMM with the batches stacked along its K: the
  // flattened rows of A, transposed, times the flattened rows of Gp.
  static at::Tensor grad_b_of(const at::Tensor& gp, const at::Tensor& a, const at::Tensor& b) {
    const at::Tensor at_ = a.transpose(-1, -2);
    if (unbroadcast(b, gp)) return gemm_op(at_, gp, std::nullopt, "none", std::nullopt);
    bool shared = true;
    for (const c10::SymInt& s : batch_dims(b)) shared = shared && s == 1;
    if (shared && unbroadcast(a, gp))
      return gemm_op(a.flatten(0, -2).t(), gp.flatten(0, -2), std::nullopt, "none", std::nullopt)
          .reshape_symint(b.sym_sizes());
    const at::Tensor full = gemm_op(at_, gp, std::nullopt, "none", at::kFloat);
    return at::sum_to(full, b.sym_sizes()).to(b.scalar_type());
  }
};

at::Tensor gemm_autograd(const at::Tensor& a, const at::Tensor& b,
                         const std::optional<at::Tensor>& bias, c10::string_view activation,
                         std::optional<at::ScalarType> out_dtype) {
  return GemmFunction::apply(a, b, bias, activation, out_dtype);
}

// The C++ API's time per call for the problem tilepipe.gemm(a, b, bias, activation, out_dtype)
// runs, in microseconds: `iters` calls of the GEMM (tilepipe_torch::run_gemm, i.e. GemmAuto::run)
// back to back on the current stream, between two events, after `warmup` calls; the problem, the
// output and the workspace are prepared once, as a C++ caller would. For the benchmark of the
// operator's overhead (python/bench/bench_ops.py), which times the operator the same way.
double cpp_api_us_per_call(const at::Tensor& a, const at::Tensor& b,
                           const std::optional<at::Tensor>& bias, const std::string& activation,
                           std::optional<at::ScalarType> out_dtype, int iters, int warmup) {
  TORCH_CHECK_VALUE(iters > 0 && warmup >= 0, message("iters must be > 0 and warmup >= 0"));
  check_devices(a, b);
  const c10::cuda::CUDAGuard guard(a.device());
  Call call = prepare(a, b, bias, activation, out_dtype);
  TORCH_CHECK_VALUE(!call.empty, message("the problem is empty; there is nothing to time"));
  attach_workspace(call);
  const tilepipe_torch::Problem& p = call.problem;
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream(a.get_device()).stream();
  struct Events {  // destroyed however the function returns
    cudaEvent_t start = nullptr, stop = nullptr;
    ~Events() {
      if (start) cudaEventDestroy(start);
      if (stop) cudaEventDestroy(stop);
    }
  } ev;
  const auto check = [](cudaError_t e, const char* what) {
    TORCH_CHECK(e == cudaSuccess, kWho + std::string(what) + ": " + cudaGetErrorString(e));
  };
  check(cudaEventCreate(&ev.start), "cudaEventCreate");
  check(cudaEventCreate(&ev.stop), "cudaEventCreate");
  for (int i = 0; i < warmup + iters; ++i) {
    if (i == warmup) check(cudaEventRecord(ev.start, stream), "cudaEventRecord");
    const tilepipe::Status status = tilepipe_torch::run_gemm(p, stream);
    TORCH_CHECK(status, kWho + status.message());
  }
  check(cudaEventRecord(ev.stop, stream), "cudaEventRecord");
  check(cudaEventSynchronize(ev.stop), "cudaEventSynchronize");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, ev.start, ev.stop), "cudaEventElapsedTime");
  return static_cast<double>(ms) * 1000.0 / iters;
}

}  // namespace

TORCH_LIBRARY(tilepipe, m) {
  m.def(
      "gemm(Tensor a, Tensor b, Tensor? bias=None, str activation=\"none\", "
      "ScalarType? out_dtype=None) -> Tensor");
}

TORCH_LIBRARY_IMPL(tilepipe, CUDA, m) { m.impl("gemm", &gemm_cuda); }

TORCH_LIBRARY_IMPL(tilepipe, CPU, m) { m.impl("gemm", &gemm_cuda); }

TORCH_LIBRARY_IMPL(tilepipe, Autograd, m) { m.impl("gemm", &gemm_autograd); }

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "tilepipe's compiled part: registers torch.ops.tilepipe.gemm when imported";
  m.def("hopper_tier_available", &tilepipe_torch::hopper_tier_available,
        "Whether CUDA device `device` runs tilepipe's Hopper tier (an sm_90 GPU, and this "
        "extension built for sm_90a)",
        py::arg("device"));
  m.def("cpp_api_us_per_call", &cpp_api_us_per_call,
        "Microseconds per call of the C++ API (GemmAuto::run) on the problem that "
        "tilepipe.gemm(a, b, bias, activation, out_dtype) runs: iters calls back to back on the "
        "current stream after warmup calls",
        py::arg("a"), py::arg("b"), py::arg("bias") = py::none(), py::arg("activation") = "none",
        py::arg("out_dtype") = py::none(), py::arg("iters") = 200, py::arg("warmup") = 20);
}
