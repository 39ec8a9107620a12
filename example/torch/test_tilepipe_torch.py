"""tilepipe_torch.gemm against torch.matmul in float64, and its argument errors.

Run with `python3 -m pytest example/torch`. Skips, saying why, where torch or a CUDA GPU of
compute capability 8.0 or newer is missing. The first run builds the extension (jit_build.py).
"""

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed; tilepipe_torch needs it")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device: tilepipe_torch runs on a GPU", allow_module_level=True)
if torch.cuda.get_device_capability() < (8, 0):
    pytest.skip("the GPU is older than sm_80, which tilepipe needs", allow_module_level=True)

import torch.nn.functional as F  # noqa: E402

import jit_build  # noqa: E402

DTYPES = [torch.float16, torch.bfloat16]
LAYOUTS = [("row", "row"), ("row", "col"), ("col", "row"), ("col", "col")]
ACTIVATIONS = {
    "none": lambda x: x,
    "relu": torch.relu,
    "gelu": F.gelu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "silu": F.silu,
}
EPS32 = torch.finfo(torch.float32).eps


@pytest.fixture(scope="module")
def tp():
    return jit_build.load()


def matrix(rows, cols, dtype, layout, batch=None):
    """A random rows x cols matrix (batch of them if batch), row-major ("row") or column-major
    ("col", a transposed view), its leading dimension padded to 16 bytes as the extension needs."""
    outer, inner = (rows, cols) if layout == "row" else (cols, rows)
    padded = -(-max(inner, 1) // 8) * 8
    lead = () if batch is None else (batch,)
    t = torch.randn(*lead, outer, padded, device="cuda").to(dtype)[..., :inner]
    return t if layout == "row" else t.transpose(-1, -2)


def check(d, a, b, bias=None, activation="none", out_dtype=None):
    """Every element of d against act(a @ b + bias) in float64. The bound follows from the
    dtypes and K: rounding to d's dtype (eps relative, eps * tiny absolute below the normal
    range), plus the f32 sum of K exact products, where each addition errs by at most EPS32 times
    the sum of magnitudes (mag), times 2 for the activation's slope (at most 1.13, GELU) and its
    own evaluation in f32."""
    pre = torch.matmul(a.double(), b.double())
    mag = torch.matmul(a.double().abs(), b.double().abs())
    if bias is not None:
        pre, mag = pre + bias.double(), mag + bias.double().abs()
    ref = ACTIVATIONS[activation](pre)
    assert d.shape == ref.shape and d.dtype == (out_dtype or a.dtype)
    info = torch.finfo(d.dtype)
    tol = info.eps * (ref.abs() + info.tiny) + 2 * (a.shape[-1] + 4) * EPS32 * mag
    err = (d.double() - ref).abs()
    bad = ~(err <= tol)  # NaN is bad too
    if bad.any():
        i = tuple(int(x) for x in torch.nonzero(bad)[0])
        pytest.fail(f"{int(bad.sum())} of {d.numel()} elements outside the bound; first at {i}: "
                    f"got {float(d[i])}, want {float(ref[i])} +- {float(tol[i])}")


# M, N and K of one tile, odd ones, a single row or column, and several tiles.
SHAPES = [(128, 256, 64), (77, 33, 135), (1, 8, 24), (300, 1, 40), (1000, 520, 264)]


@pytest.mark.parametrize("m,n,k", SHAPES)
@pytest.mark.parametrize("layout_a,layout_b", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_matches_matmul(tp, dtype, layout_a, layout_b, m, n, k):
    a, b = matrix(m, k, dtype, layout_a), matrix(k, n, dtype, layout_b)
    check(tp.gemm(a, b), a, b)


@pytest.mark.parametrize("activation", list(ACTIVATIONS))
@pytest.mark.parametrize("dtype", DTYPES)
def test_bias_and_activation(tp, dtype, activation):
    a, b = matrix(96, 72, dtype, "row"), matrix(72, 200, dtype, "col")
    bias = torch.randn(200, device="cuda").to(dtype)
    check(tp.gemm(a, b, bias, activation), a, b, bias, activation)


@pytest.mark.parametrize("dtype", DTYPES)
def test_float32_bias_and_output(tp, dtype):
    a, b = matrix(64, 48, dtype, "col"), matrix(48, 100, dtype, "row")
    bias = torch.randn(100, device="cuda")
    d = tp.gemm(a, b, bias=bias, activation="gelu", out_dtype=torch.float32)
    check(d, a, b, bias, "gelu", out_dtype=torch.float32)


@pytest.mark.parametrize("batch_a,batch_b", [(3, 3), (3, None), (None, 4), (1, 4)])
def test_batched(tp, batch_a, batch_b):
    a = matrix(40, 24, torch.float16, "row", batch_a)
    b = matrix(24, 56, torch.float16, "col", batch_b)
    bias = torch.randn(56, device="cuda").half()
    check(tp.gemm(a, b, bias, "relu"), a, b, bias, "relu")


def test_empty_extents(tp):
    bias = torch.randn(24, device="cuda").half()
    a, b = torch.randn(5, 0, device="cuda").half(), torch.randn(0, 24, device="cuda").half()
    assert torch.equal(tp.gemm(a, b, bias, "relu"), torch.relu(bias).expand(5, 24))  # K = 0
    a = torch.randn(0, 16, device="cuda").half()
    assert tp.gemm(a, matrix(16, 24, torch.float16, "row")).shape == (0, 24)


def test_runs_on_the_current_stream(tp):
    """The GEMM must queue behind the work already on the current stream: here a copy into A
    that a sleep delays. On any other stream it would read A before the copy."""
    a_new, b = matrix(256, 128, torch.float16, "row"), matrix(128, 192, torch.float16, "col")
    a = matrix(256, 128, torch.float16, "row")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.cuda._sleep(1 << 27)  # about 0.1 s
        a.copy_(a_new)
        d = tp.gemm(a, b)
    side.synchronize()
    check(d, a_new, b)


def test_hopper_tier_where_the_gpu_has_one(tp):
    """sm_90 GPUs run the Hopper tier, which needs jit_build's sm_90a target; others do not."""
    device = torch.cuda.current_device()
    assert tp.hopper_tier_available(device) == (torch.cuda.get_device_capability(device) == (9, 0))


BAD_CALLS = {
    "a float32": (TypeError, r"a has dtype torch\.float32", lambda g, a, b: g(a.float(), b)),
    "dtypes differ": (TypeError, r"b has dtype torch\.bfloat16 but a has torch\.float16",
                      lambda g, a, b: g(a, b.bfloat16())),
    "out_dtype": (TypeError, r"out_dtype torch\.bfloat16",
                  lambda g, a, b: g(a, b, out_dtype=torch.bfloat16)),
    "a on cpu": (ValueError, r"a is on cpu", lambda g, a, b: g(a.cpu(), b)),
    "b on cpu": (ValueError, r"b is on cpu but a is on cuda", lambda g, a, b: g(a, b.cpu())),
    "1-D a": (ValueError, r"a must be 2-D", lambda g, a, b: g(a[0], b)),
    "K differs": (ValueError, r"K = 32 columns but b .* has 40 rows",
                  lambda g, a, b: g(a, matrix(40, 48, torch.float16, "row"))),
    "no unit stride": (ValueError, r"unit stride in neither",
                       lambda g, a, b: g(a[:, ::2], matrix(16, 48, torch.float16, "row"))),
    "unpadded rows": (ValueError, r"stride between its rows is 36 elements, not a multiple of 8",
                      lambda g, a, b: g(torch.randn(64, 36, device="cuda").half(),
                                        matrix(36, 48, torch.float16, "row"))),
    "misaligned": (ValueError, r"a does not start on a 16-byte boundary",
                   lambda g, a, b: g(torch.randn(64, 48, device="cuda").half()[:, 1:33], b)),
    "bias shape": (ValueError, r"bias must have shape \(48,\)",
                   lambda g, a, b: g(a, b, torch.randn(47, device="cuda").half())),
    "bias dtype": (TypeError, r"bias has dtype torch\.bfloat16",
                   lambda g, a, b: g(a, b, torch.randn(48, device="cuda").bfloat16())),
    "activation": (ValueError, r"activation \"tanh\" is not one of",
                   lambda g, a, b: g(a, b, None, "tanh")),
}


@pytest.mark.parametrize("case", list(BAD_CALLS))
def test_bad_arguments_raise(tp, case):
    error, match, call = BAD_CALLS[case]
    a, b = matrix(64, 32, torch.float16, "row"), matrix(32, 48, torch.float16, "row")
    with pytest.raises(error, match=match):
        call(tp.gemm, a, b)
