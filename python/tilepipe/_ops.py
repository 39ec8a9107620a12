"""The Python side of torch.ops.tilepipe.gemm, scaled_mm, grouped_mm, grouped_mm_masked and
scaled_grouped_mm: their
fake implementations (shapes, dtypes and strides of the result, for torch.compile and other tracing)
and the functions the package exports."""

import torch

ACTIVATIONS = ("none", "relu", "gelu", "gelu_tanh", "silu")

_gemm = torch.ops.tilepipe.gemm.default
_scaled_mm = torch.ops.tilepipe.scaled_mm.default
_grouped_mm = torch.ops.tilepipe.grouped_mm.default
_grouped_mm_masked = torch.ops.tilepipe.grouped_mm_masked.default
_scaled_grouped_mm = torch.ops.tilepipe.scaled_grouped_mm.default


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


@torch.library.register_fake("tilepipe::grouped_mm")
def _grouped_mm_fake(a, b, offs=None, out_dtype=None):
    torch._check(b.dim() == 3, lambda: "b must be (G, K, N)")
    torch._check(a.dim() in (2, 3), lambda: "a must be (total_M, K) or (G, M, K)")
    torch._check(a.shape[-1] == b.shape[1], lambda: "a's K differs from b's")
    return a.new_empty((*a.shape[:-1], b.shape[2]), dtype=out_dtype or a.dtype)


def grouped_mm(a, b, offs=None, out_dtype=None):
    """The products of a mixture-of-experts layer's groups of rows by their experts' weights, by
    tilepipe's grouped GEMM (GemmGroupedSm90, an sm_90 GPU) in one launch, with
    torch._grouped_mm's conventions, on the current CUDA stream.

    a (total_M, K): the groups' rows one after the other; b (G, K, N), G <= 256: usually
    w.transpose(-2, -1) of the experts' weights w (G, N, K), read in place, as is a b with N
    contiguous (other strides, and starts or strides that are not multiples of 16 bytes, are
    copied first); torch.bfloat16 or torch.float16, the same for both. offs (G,) torch.int32 on
    a's device: group g's rows are offs[g-1] .. offs[g] (offs[-1] = 0). The result (total_M, N)
    is contiguous; rows past offs[G-1] are not written (their values are unspecified).

    offs is never read on the host and nothing synchronises, so a CUDA graph may capture a call
    and replay it after offs has changed in device memory. Offsets out of range (decreasing,
    negative, past total_M) are clamped into [0, total_M] rather than refused, so only a and the
    result are touched; there is no error for them.

    With a 3-D a (G, M, K) and offs None, every group has all M rows and the result is
    (G, M, N). out_dtype: None (a's dtype) or, with bf16 inputs, torch.float32. No autograd.
    """
    return _grouped_mm(a, b, offs, out_dtype)


@torch.library.register_fake("tilepipe::grouped_mm_masked")
def _grouped_mm_masked_fake(a, b, counts, out_dtype=None):
    torch._check(a.dim() == 3 and b.dim() == 3, lambda: "a must be (G, M_max, K), b (G, K, N)")
    torch._check(a.shape[-1] == b.shape[1], lambda: "a's K differs from b's")
    return a.new_empty((a.shape[0], a.shape[1], b.shape[2]), dtype=out_dtype or a.dtype)


def grouped_mm_masked(a, b, counts, out_dtype=None):
    """tilepipe.grouped_mm's masked form: a (G, M_max, K) holds up to M_max rows per group, of
    which the first counts[g] are group g's (counts (G,) torch.int32 on a's device, never read
    on the host; out of range ones are clamped into [0, M_max]). b and out_dtype as in
    grouped_mm. The result (G, M_max, N) is contiguous, and its rows from counts[g] on are zero:
    it is allocated zeroed (one memset of the result before the GEMM, which writes only the
    valid rows).
    """
    return _grouped_mm_masked(a, b, counts, out_dtype)


@torch.library.register_fake("tilepipe::scaled_grouped_mm")
def _scaled_grouped_mm_fake(a, b, scale_a, scale_b, offs=None, out_dtype=None):
    torch._check(b.dim() == 3, lambda: "b must be (G, K, N)")
    torch._check(a.dim() in (2, 3), lambda: "a must be (total_M, K) or (G, M, K)")
    torch._check(a.shape[-1] == b.shape[1], lambda: "a's K differs from b's")
    return a.new_empty((*a.shape[:-1], b.shape[2]), dtype=out_dtype or torch.bfloat16)


def scaled_grouped_mm(a, b, scale_a, scale_b, offs=None, out_dtype=torch.bfloat16):
    """The FP8 products of a mixture-of-experts layer's groups of rows by their experts' weights,
    by tilepipe's FP8 grouped GEMM (GemmGroupedFp8Sm90, an sm_90 GPU) in one launch, with
    torch._scaled_grouped_mm's conventions, on the current CUDA stream.

    a (total_M, K) with offs (G,) torch.int32 on a's device (group g's rows offs[g-1] ..
    offs[g]), or a (G, M, K) without offs (every group's M rows); b (G, K, N), G <= 256: the
    experts' weights w (G, N, K) transposed (w.transpose(-2, -1), read in place; other strides
    are copied first); a and b torch.float8_e4m3fn, K % 16 == 0. scale_a and scale_b,
    torch.float32, say the mode by their shapes: row-wise (torch's) (total_M,) or (G, M) and
    (G, N); tensorwise one value and (G,); block-wise (DeepSeek-V3's) (total_M, ceil(K/128)) or
    (G, M, ceil(K/128)) and (G, ceil(K/128), ceil(N/128)). Every 128 of K is accumulated by the
    tensor cores and added, scaled, in f32. The result is torch.bfloat16, contiguous, (total_M,
    N) (rows past offs[G-1] are not written) or (G, M, N). offs is never read on the host, so a
    CUDA graph may capture a call and replay it with new offsets; offsets out of range are
    clamped into [0, total_M]. No autograd.
    """
    return _scaled_grouped_mm(a, b, scale_a, scale_b, offs, out_dtype)
