"""The Python side of torch.ops.tilepipe.gemm and torch.ops.tilepipe.scaled_mm: their fake
implementations (shapes, dtypes and strides of the result, for torch.compile and other tracing)
and the functions the package exports."""

import torch

ACTIVATIONS = ("none", "relu", "gelu", "gelu_tanh", "silu")

_gemm = torch.ops.tilepipe.gemm.default
_scaled_mm = torch.ops.tilepipe.scaled_mm.default


@torch.library.register_fake("tilepipe::gemm")
def _gemm_fake(a, b, bias=None, activation="none", out_dtype=None):
    # The CUDA kernel's result: contiguous, the batch dimensions broadcast as in torch.matmul.
    torch._check(a.dim() >= 2 and b.dim() >= 2, lambda: "a and b must have 2 or more dimensions")
    torch._check(a.shape[-1] == b.shape[-2], lambda: "a's K differs from b's")
    torch._check(activation in ACTIVATIONS, lambda: f"activation {activation!r} is unknown")
    batch = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return a.new_empty((*batch, a.shape[-2], b.shape[-1]), dtype=out_dtype or a.dtype)


def gemm(a, b, bias=None, activation="none", out_dtype=None):
    """act(a @ b + bias), computed by tilepipe (GemmAuto: the tile, tier and split chosen per
    problem) on the current CUDA stream; differentiable in a, b and bias.

    a (..., M, K) and b (..., K, N): CUDA tensors of torch.float16 or torch.bfloat16 (the same),
    any strides (a matrix with unit stride in neither dimension is copied first, and so is a
    where both are column-major); the batch dimensions broadcast as in torch.matmul. bias: None or (N,), of a's dtype or torch.float32.
    activation: one of ACTIVATIONS ("gelu" is the erf form). out_dtype: None (a's dtype) or
    torch.float32. The result is contiguous, (*batch, M, N).
    """
    return _gemm(a, b, bias, activation, out_dtype)


def linear(x, weight, bias=None, activation="none"):
    """act(torch.nn.functional.linear(x, weight, bias)) by tilepipe: x (..., K), weight (N, K),
    bias None or (N,). The leading dimensions of x are one M where its strides allow (a view),
    so that a batch of sequences is one GEMM."""
    if x.dim() == 2:
        return _gemm(x, weight.t(), bias, activation, None)
    rows = x.reshape(-1, x.shape[-1])
    return _gemm(rows, weight.t(), bias, activation, None).view(*x.shape[:-1], weight.shape[0])


@torch.library.register_fake("tilepipe::scaled_mm")
def _scaled_mm_fake(a, b, scale_a, scale_b, out_dtype=None):
    torch._check(a.dim() == 2 and b.dim() == 2, lambda: "a must be (M, K) and b (K, N)")
    torch._check(a.shape[1] == b.shape[0], lambda: "a's K differs from b's")
    return a.new_empty((a.shape[0], b.shape[1]), dtype=out_dtype or torch.bfloat16)


def scaled_mm(a, b, scale_a, scale_b, out_dtype=torch.bfloat16):
    """(a * scale_a) @ (b * scale_b) by tilepipe's FP8 GEMM (GemmFp8Sm90, an sm_90 GPU), with
    torch._scaled_mm's conventions, on the current CUDA stream.

    a (M, K) and b (K, N): torch.float8_e4m3fn or torch.float8_e5m2, the same for both; b is
    usually a weight's transpose (w.t(), w (N, K) contiguous), which is read in place, as is a
    row-major a (other strides are copied first); K % 16 == 0. scale_a and scale_b: torch.float32,
    their shapes give the mode: one value each (tensorwise); (M, 1) and (1, N) (row-wise); or
    (M, ceil(K/128)) and (ceil(K/128), ceil(N/128)) (block-wise: a per row per 128 of K, b per
    128 x 128 block). Every 128 of K is accumulated by the tensor cores and added, scaled, in f32
    (torch._scaled_mm's use_fast_accum=False). out_dtype: torch.bfloat16, torch.float16 or
    torch.float32. The result is contiguous, (M, N). No autograd (torch._scaled_mm has none).
    """
    return _scaled_mm(a, b, scale_a, scale_b, out_dtype)
