// PyTorch binding of tilepipe's GEMM (README.md beside this file):
//
//   tilepipe_torch.gemm(a, b, bias=None, activation="none", out_dtype=None)
//       = act(a @ b + bias), on the current CUDA stream
//
// This file checks the tensors and turns them into a tilepipe_torch::Problem; tilepipe_gemm.cu
// runs it. Argument errors raise TypeError (dtypes) or ValueError (devices, shapes, strides),
// naming the argument; a failure inside tilepipe raises its Status message.

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/extension.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "tilepipe_gemm.h"

namespace {

using tilepipe::Layout;
using tilepipe_torch::Activation;
using tilepipe_torch::DType;
using tilepipe_torch::Operand;

constexpr const char* kWho = "tilepipe_torch.gemm: ";  // starts every message

// The extension runs tilepipe's 16-byte kernels (tilepipe_gemm.cuh compiles GemmMultistage without
// its narrow kernel): every matrix, leading dimension and batch stride is a multiple of 16 bytes.
constexpr std::int64_t kAlignBytes = 16;

std::string dtype_name(at::ScalarType t) { return "torch." + c10::getDtypeNames(t).first; }

// The text of a message: TORCH_CHECK gets one string, built here, integers by std::to_string.
// Letting TORCH_CHECK stream an integer (or a shape) into its message segfaulted the process on
// the GPU machine (torch 2.11: every bad-argument case whose message held a number crashed,
// those with only strings and devices raised as they should).
std::string text(const char* s) { return s; }
std::string text(const std::string& s) { return s; }
std::string text(const c10::Device& d) { return d.str(); }
template <class T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
std::string text(T v) {
  return std::to_string(v);
}
// "[64, 32]": a tensor's sizes or strides.
std::string text(c10::IntArrayRef v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}
template <class... Parts>
std::string message(const Parts&... parts) {
  return (std::string(kWho) + ... + text(parts));
}

DType to_dtype(at::ScalarType t) {
  return t == at::kBFloat16 ? DType::kBF16 : t == at::kFloat ? DType::kF32 : DType::kF16;
}

Activation parse_activation(const std::string& name) {
  if (name == "none") return Activation::kNone;
  if (name == "relu") return Activation::kRelu;
  if (name == "gelu") return Activation::kGelu;
  if (name == "gelu_tanh") return Activation::kGeluTanh;
  if (name == "silu") return Activation::kSilu;
  TORCH_CHECK_VALUE(
      false, message("activation \"", name,
                     "\" is not one of \"none\", \"relu\", \"gelu\", \"gelu_tanh\", \"silu\""));
}

// tilepipe's view of the matrices in the last two dimensions of `t` (called `name`): row-major
// if its columns have unit stride, column-major if its rows do. Torch gives extent-1 dimensions
// arbitrary strides, and a single row (column) has no stride between rows (columns) that is ever
// used: then the smallest leading dimension tilepipe accepts stands in for it.
Operand operand(const at::Tensor& t, const char* name, std::int64_t batch) {
  const std::int64_t rows = t.size(-2), cols = t.size(-1);
  const std::int64_t align = kAlignBytes / static_cast<std::int64_t>(t.element_size());
  const auto padded = [&](std::int64_t x) {
    return (std::max<std::int64_t>(x, 1) + align - 1) / align * align;
  };
  const bool row_unit = t.stride(-1) == 1 || cols == 1;
  const bool col_unit = t.stride(-2) == 1 || rows == 1;
  const std::int64_t row_ld = rows == 1 ? padded(cols) : t.stride(-2);
  const std::int64_t col_ld = cols == 1 ? padded(rows) : t.stride(-1);
  const auto fits = [&](std::int64_t ld, std::int64_t inner) {
    return ld >= inner && ld % align == 0;
  };

  Operand op;
  op.data = t.const_data_ptr();
  if (row_unit && fits(row_ld, cols)) {
    op.layout = Layout::kRowMajor;
    op.ld = row_ld;
  } else if (col_unit && fits(col_ld, rows)) {
    op.layout = Layout::kColumnMajor;
    op.ld = col_ld;
  } else {
    TORCH_CHECK_VALUE(
        row_unit || col_unit,
        message(name, " (shape ", t.sizes(), ", strides ", t.strides(),
                ") has unit stride in neither of its last two dimensions; "
                "tilepipe reads row-major or column-major matrices (.contiguous() makes "
                "one)"));
    const char* lines = row_unit ? "rows" : "columns";
    const std::int64_t ld = row_unit ? row_ld : col_ld, inner = row_unit ? cols : rows;
    TORCH_CHECK_VALUE(ld >= inner, message(name, " (shape ", t.sizes(), ", strides ", t.strides(),
                                           ") has overlapping ", lines, " (stride ", ld, " < ",
                                           inner, "); .contiguous() makes a copy that has not"));
    TORCH_CHECK_VALUE(false, message(name, " (shape ", t.sizes(), ", strides ", t.strides(),
                                     "): the stride between its ", lines, " is ", ld,
                                     " elements, not a multiple of ", align,
                                     " (16 bytes), which this extension "
                                     "needs because it runs tilepipe's 16-byte kernels; pad the ",
                                     lines, " to a multiple of ", align,
                                     " elements (allocate them wider and slice)"));
  }
  TORCH_CHECK_VALUE(
      reinterpret_cast<std::uintptr_t>(op.data) % kAlignBytes == 0,
      message(name, " does not start on a 16-byte boundary (storage offset ", t.storage_offset(),
              " elements), which this extension needs; slice at multiples of ", align,
              " elements or pass .contiguous()"));
  // A 2-D operand, or a batch of one, is shared by every batch: batch stride 0.
  if (t.dim() == 3 && t.size(0) == batch && batch > 1) {
    op.batch_stride = t.stride(0);
    TORCH_CHECK_VALUE(op.batch_stride % align == 0,
                      message(name, "'s batch stride ", op.batch_stride, " is not a multiple of ",
                              align, " elements (16 bytes)"));
  }
  return op;
}

at::Tensor gemm(const at::Tensor& a, const at::Tensor& b, const std::optional<at::Tensor>& bias,
                const std::string& activation, std::optional<at::ScalarType> out_dtype) {
  // Devices and dtypes.
  TORCH_CHECK_VALUE(a.is_cuda(), message("a is on ", a.device(), "; it must be a CUDA tensor"));
  TORCH_CHECK_VALUE(b.device() == a.device(),
                    message("b is on ", b.device(), " but a is on ", a.device(),
                            "; both must be on the same CUDA device"));
  const at::ScalarType type = a.scalar_type();
  TORCH_CHECK_TYPE(type == at::kHalf || type == at::kBFloat16,
                   message("a has dtype ", dtype_name(type),
                           "; tilepipe takes torch.float16 or torch.bfloat16"));
  TORCH_CHECK_TYPE(b.scalar_type() == type,
                   message("b has dtype ", dtype_name(b.scalar_type()), " but a has ",
                           dtype_name(type), "; they must match"));
  const at::ScalarType d_type = out_dtype.value_or(type);
  TORCH_CHECK_TYPE(d_type == type || d_type == at::kFloat,
                   message("out_dtype ", dtype_name(d_type), " is neither a's dtype (",
                           dtype_name(type), ") nor torch.float32"));

  // Shapes: (M x K) @ (K x N), either one optionally with a leading batch dimension.
  TORCH_CHECK_VALUE(a.dim() == 2 || a.dim() == 3, message("a must be 2-D (M x K) or 3-D "
                                                          "(batch x M x K); its shape is ",
                                                          a.sizes()));
  TORCH_CHECK_VALUE(b.dim() == 2 || b.dim() == 3, message("b must be 2-D (K x N) or 3-D "
                                                          "(batch x K x N); its shape is ",
                                                          b.sizes()));
  TORCH_CHECK_VALUE(
      a.size(-1) == b.size(-2),
      message("a (shape ", a.sizes(), ") has K = ", a.size(-1), " columns but b (shape ", b.sizes(),
              ") has ", b.size(-2), " rows; they must be equal"));
  const std::int64_t batch_a = a.dim() == 3 ? a.size(0) : 1;
  const std::int64_t batch_b = b.dim() == 3 ? b.size(0) : 1;
  TORCH_CHECK_VALUE(batch_a == batch_b || batch_a == 1 || batch_b == 1,
                    message("the batch sizes "
                            "of a (",
                            batch_a, ") and b (", batch_b, ") differ and neither is 1"));
  const std::int64_t batch = batch_a == 1 ? batch_b : batch_a;
  const std::int64_t m = a.size(-2), n = b.size(-1), k = a.size(-1);
  for (const std::int64_t extent : {batch, m, n, k})
    TORCH_CHECK_VALUE(extent <= std::numeric_limits<int>::max(),
                      message("extent ", extent, " of a (", a.sizes(), ") or b (", b.sizes(),
                              ") exceeds the int range"));

  const Activation act = parse_activation(activation);
  if (bias.has_value()) {
    const at::Tensor& v = *bias;
    TORCH_CHECK_VALUE(v.device() == a.device(),
                      message("bias is on ", v.device(), " but a is on ", a.device()));
    TORCH_CHECK_TYPE(v.scalar_type() == type || v.scalar_type() == at::kFloat,
                     message("bias has dtype ", dtype_name(v.scalar_type()), "; it must be a's (",
                             dtype_name(type), ") or torch.float32"));
    TORCH_CHECK_VALUE(v.dim() == 1 && v.size(0) == n,
                      message("bias must have shape (", n,
                              ",), one value per column of the output; its shape is ", v.sizes()));
  }

  tilepipe_torch::Problem p;
  p.ab = to_dtype(type);
  p.d = to_dtype(d_type);
  p.batch = static_cast<int>(batch);
  p.m = static_cast<int>(m);
  p.n = static_cast<int>(n);
  p.k = static_cast<int>(k);
  p.activation = act;
  const bool empty = batch == 0 || m == 0 || n == 0;
  if (!empty && k > 0) {  // with K = 0, D = act(bias) and A and B are never read
    p.a = operand(a, "a", batch);
    p.b = operand(b, "b", batch);
  }

  const c10::cuda::CUDAGuard guard(a.device());
  // D is row-major with rows padded to 16 bytes (tilepipe's rule for leading dimensions); when N
  // is not a multiple of that, the result is a view of the first N columns.
  const std::int64_t d_align = kAlignBytes / static_cast<std::int64_t>(c10::elementSize(d_type));
  const std::int64_t ldd = std::max<std::int64_t>((n + d_align - 1) / d_align * d_align, d_align);
  std::vector<std::int64_t> shape{m, ldd};
  if (a.dim() == 3 || b.dim() == 3) shape.insert(shape.begin(), batch);
  at::Tensor d = at::empty(shape, a.options().dtype(d_type));
  if (ldd != n) d = d.narrow(-1, 0, n);
  if (empty) return d;
  p.d_data = d.mutable_data_ptr();
  p.ldd = ldd;
  p.batch_stride_d = m * ldd;
  // The f32 copy of the bias is freed on return, once the kernel is queued: the caching
  // allocator hands its memory only to work queued after it on this stream.
  at::Tensor bias_f32;
  if (bias.has_value()) {
    bias_f32 = bias->to(at::kFloat).contiguous();
    p.bias = bias_f32.const_data_ptr<float>();
  }

  const cudaStream_t stream = at::cuda::getCurrentCUDAStream(a.get_device()).stream();
  const tilepipe::Status status = tilepipe_torch::run_gemm(p, stream);
  if (!status) {
    const std::string what = kWho + status.message();
    TORCH_CHECK_VALUE(status.code() != tilepipe::Status::Code::kInvalidArgument, what);
    TORCH_CHECK(false, what);
  }
  return d;
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "tilepipe's GEMM on torch tensors: gemm(a, b, bias, activation, out_dtype)";
  m.def("gemm", &gemm,
        "act(a @ b + bias) for CUDA float16/bfloat16 a (M x K) and b (K x N), either optionally "
        "batched (3-D); bias: (N,) of a's dtype or float32; activation: \"none\", \"relu\", "
        "\"gelu\", \"gelu_tanh\" or \"silu\"; out_dtype: a's dtype (None) or torch.float32. "
        "Runs on the current CUDA stream.",
        py::arg("a"), py::arg("b"), py::arg("bias") = py::none(), py::arg("activation") = "none",
        py::arg("out_dtype") = py::none());
  m.def("hopper_tier_available", &tilepipe_torch::hopper_tier_available,
        "Whether CUDA device `device` runs tilepipe's Hopper tier (an sm_90 GPU, and this "
        "extension built for sm_90a)",
        py::arg("device"));
  // c10 errors as the Python exceptions they name, with the message but not the C++ backtrace.
  py::register_local_exception_translator([](std::exception_ptr e) {
    try {
      if (e) std::rethrow_exception(e);
    } catch (const c10::TypeError& err) {
      PyErr_SetString(PyExc_TypeError, err.what_without_backtrace());
    } catch (const c10::ValueError& err) {
      PyErr_SetString(PyExc_ValueError, err.what_without_backtrace());
    } catch (const c10::Error& err) {
      PyErr_SetString(PyExc_RuntimeError, err.what_without_backtrace());
    }
  });
}
