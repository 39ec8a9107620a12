"""torch.ops.tilepipe.gemm (tilepipe.gemm, tilepipe.linear) against torch in float64: the result,
the gradients, torch.library.opcheck, torch.compile(fullgraph=True), CUDA graphs, streams, errors.

Run with `python3 -m pytest python/tests` after `pip install --no-build-isolation ./python`.
Skips, saying why, where torch or a CUDA GPU of compute capability 8.0 or newer is missing.
"""

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed; tilepipe needs it")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device: tilepipe runs on a GPU", allow_module_level=True)
if torch.cuda.get_device_capability() < (8, 0):
    pytest.skip("the GPU is older than sm_80, which tilepipe needs", allow_module_level=True)

import torch.nn.functional as F  # noqa: E402

import tilepipe  # noqa: E402

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
# The largest |act''| of the smooth activations (GELU's, at 0: sqrt(2 / pi)), bounding how far an
# error in P moves act'(P).
MAX_CURVATURE = 0.8


def matrix(rows, cols, dtype, layout="row", batch=(), pad=0, offset=0):
    """A random rows x cols matrix (a batch of them), row-major ("row") or column-major ("col", a
    transposed view); `pad` extra elements between lines and `offset` elements before the start
    make leading dimensions and starts that are not 16-byte aligned."""
    outer, inner = (rows, cols) if layout == "row" else (cols, rows)
    flat = torch.randn(*batch, outer * (inner + pad) + offset, device="cuda").to(dtype)
    t = flat[..., offset:].view(*batch, outer, inner + pad)[..., :inner]
    return t if layout == "row" else t.transpose(-1, -2)


def forward_bound(a, b, bias, out_dtype):
    """The reference P = a @ b + bias in float64 and how far a tilepipe result may be from act(P):
    the f32 sum of K exact products errs by at most (K + 4) EPS32 times the sum of magnitudes
    (mag), times 2 for the activation's slope (at most 1.13, GELU) and its own evaluation in f32;
    then the rounding to the output's dtype (eps relative, eps * tiny absolute)."""
    pre = torch.matmul(a.double(), b.double())
    mag = torch.matmul(a.double().abs(), b.double().abs())
    if bias is not None:
        pre, mag = pre + bias.double(), mag + bias.double().abs()
    return pre, 2 * (a.shape[-1] + 4) * EPS32 * mag


def check(d, a, b, bias=None, activation="none", out_dtype=None):
    """Every element of d against act(a @ b + bias) in float64, within forward_bound."""
    pre, sum_err = forward_bound(a, b, bias, out_dtype)
    ref = ACTIVATIONS[activation](pre)
    assert d.shape == ref.shape and d.dtype == (out_dtype or a.dtype)
    assert d.is_contiguous()
    info = torch.finfo(d.dtype)
    close(d, ref, info.eps * (ref.abs() + info.tiny) + sum_err, "result")


def close(got, want, tol, what):
    err = (got.double() - want).abs()
    bad = ~(err <= tol)  # NaN is bad too
    if bad.any():
        i = tuple(int(x) for x in torch.nonzero(bad)[0])
        pytest.fail(f"{what}: {int(bad.sum())} of {got.numel()} elements outside the bound; first "
                    f"at {i}: got {float(got[i])}, want {float(want[i])} +- {float(tol[i])}")


# M, N and K of one tile, odd ones, a single row or column, several tiles, K = 0.
SHAPES = [(128, 256, 64), (77, 33, 135), (1, 8, 24), (300, 1, 40), (1000, 520, 264)]


@pytest.mark.parametrize("m,n,k", SHAPES)
@pytest.mark.parametrize("layout_a,layout_b", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_matches_matmul(dtype, layout_a, layout_b, m, n, k):
    a, b = matrix(m, k, dtype, layout_a), matrix(k, n, dtype, layout_b)
    check(tilepipe.gemm(a, b), a, b)


# Problems GemmAuto gives to different tiles, tiers and splits: decode-sized M (split-K on the
# small tiles), long K, several waves of the large tile.
@pytest.mark.parametrize("m,n,k", [(16, 4096, 4096), (64, 1024, 8192), (1024, 2048, 512)])
def test_gemm_auto_choices(m, n, k):
    a, b = matrix(m, k, torch.bfloat16), matrix(k, n, torch.bfloat16, "col")
    bias = torch.randn(n, device="cuda").bfloat16()
    check(tilepipe.gemm(a, b, bias, "relu"), a, b, bias, "relu")


# Leading dimensions and starts that are not multiples of 16 bytes, K = 4099, an odd vocabulary N,
# and a matrix with unit stride in neither dimension (copied first).
@pytest.mark.parametrize("case", ["pad", "offset", "odd_k", "odd_n", "strided"])
def test_unaligned_operands(case):
    dt = torch.float16
    if case == "pad":
        a, b = matrix(100, 72, dt, "row", pad=3), matrix(72, 96, dt, "col", pad=1)
    elif case == "offset":
        a, b = matrix(64, 48, dt, "col", offset=1), matrix(48, 80, dt, "row", offset=3)
    elif case == "odd_k":
        a, b = matrix(200, 4099, dt), matrix(4099, 300, dt, "col")
    elif case == "odd_n":
        a, b = matrix(48, 512, dt), matrix(512, 50257, dt, "col")
    else:
        a, b = matrix(64, 96, dt)[:, ::2], matrix(48, 40, dt, "col")
    check(tilepipe.gemm(a, b), a, b)


@pytest.mark.parametrize("activation", list(ACTIVATIONS))
@pytest.mark.parametrize("dtype", DTYPES)
def test_bias_and_activation(dtype, activation):
    a, b = matrix(96, 72, dtype, "row"), matrix(72, 200, dtype, "col")
    bias = torch.randn(200, device="cuda").to(dtype)
    check(tilepipe.gemm(a, b, bias, activation), a, b, bias, activation)


@pytest.mark.parametrize("dtype", DTYPES)
def test_float32_bias_and_output(dtype):
    a, b = matrix(64, 48, dtype, "col"), matrix(48, 100, dtype, "row")
    bias = torch.randn(100, device="cuda")
    d = tilepipe.gemm(a, b, bias=bias, activation="gelu", out_dtype=torch.float32)
    check(d, a, b, bias, "gelu", out_dtype=torch.float32)


# Batch dimensions broadcast as in torch.matmul: equal, one side 2-D, a batch of one, 4-D, and
# partial broadcasting.
BATCHES = [((3,), (3,)), ((3,), ()), ((), (4,)), ((1,), (4,)), ((2, 3), (2, 3)), ((2, 1), (1, 3))]


@pytest.mark.parametrize("batch_a,batch_b", BATCHES)
def test_batched(batch_a, batch_b):
    a = matrix(40, 24, torch.float16, "row", batch_a)
    b = matrix(24, 56, torch.float16, "col", batch_b)
    bias = torch.randn(56, device="cuda").half()
    check(tilepipe.gemm(a, b, bias, "relu"), a, b, bias, "relu")


def test_linear_matches_functional_linear():
    x = torch.randn(2, 7, 96, device="cuda").bfloat16()
    w = torch.randn(80, 96, device="cuda").bfloat16()
    bias = torch.randn(80, device="cuda").bfloat16()
    y = tilepipe.linear(x, w, bias, "silu")
    assert y.shape == (2, 7, 80)
    check(y.reshape(14, 80), x.reshape(14, 96), w.t(), bias, "silu")


def test_empty_extents():
    bias = torch.randn(24, device="cuda").half()
    a, b = torch.randn(5, 0, device="cuda").half(), torch.randn(0, 24, device="cuda").half()
    assert torch.equal(tilepipe.gemm(a, b, bias, "relu"), torch.relu(bias).expand(5, 24))  # K = 0
    assert torch.equal(tilepipe.gemm(a, b), torch.zeros(5, 24, device="cuda").half())
    a = torch.randn(0, 16, device="cuda").half()
    assert tilepipe.gemm(a, matrix(16, 24, torch.float16)).shape == (0, 24)


def test_runs_on_the_current_stream():
    """The GEMM must queue behind the work already on the current stream: here a copy into A
    that a sleep delays. On any other stream it would read A before the copy."""
    a_new, b = matrix(256, 128, torch.float16), matrix(128, 192, torch.float16, "col")
    a = matrix(256, 128, torch.float16)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.cuda._sleep(1 << 27)  # about 0.1 s
        a.copy_(a_new)
        d = tilepipe.gemm(a, b)
    side.synchronize()
    check(d, a_new, b)


def test_hopper_tier_where_the_gpu_has_one():
    """sm_90 GPUs run the Hopper tier, which needs the package's sm_90a target; others do not."""
    device = torch.cuda.current_device()
    assert tilepipe.hopper_tier_available() == (torch.cuda.get_device_capability(device) == (9, 0))


# ---- Autograd ----


def grad_bounds(a, b, bias, activation, g, out_dtype):
    """Float64 reference gradients of L = sum(g * act(a @ b + bias)) and a bound on each of
    tilepipe's. Its backward forms Gp = g act'(P) (act' from tilepipe's output for ReLU, from P
    recomputed in f32 for the smooth ones), rounds Gp to a's dtype, and computes Gp B^T, A^T Gp in
    f32 rounded to a's dtype, and the bias's sum in f32. Per element of Gp the error is at most
    dGp = |g| MAX_CURVATURE dP + 8 EPS32 |g| (1 + |P|) for the smooth activations (dP: the f32
    GEMM's bound), |g| where ReLU's P is within the forward bound of 0 (its sign may flip), plus
    eps(a) (|Gp| + dGp); a GEMM adds (inner + 4) EPS32 times its sum of magnitudes. The sums over
    each operand's elements are the gradients of sum(E * (|a| @ |b|)) (autograd does the
    broadcasting)."""
    a, b = a.detach(), b.detach()
    bias = None if bias is None else bias.detach()
    a64, b64 = a.double().requires_grad_(), b.double().requires_grad_()
    bias64 = None if bias is None else bias.double().requires_grad_()
    pre = torch.matmul(a64, b64) + (0 if bias64 is None else bias64)
    pre.retain_grad()
    (ACTIVATIONS[activation](pre) * g.double()).sum().backward()
    gp = pre.grad.detach()

    p, sum_err = forward_bound(a, b, bias, out_dtype)
    g_abs = g.double().abs()
    if activation == "none":
        d_gp = torch.zeros_like(gp)
    elif activation == "relu":
        out_eps = torch.finfo(out_dtype or a.dtype).eps
        d_gp = torch.where(p.abs() <= sum_err + 2 * out_eps * p.abs(), g_abs, 0.0)
    else:
        d_gp = g_abs * (MAX_CURVATURE * sum_err + 8 * EPS32 * (1 + p.abs()))
    eps_ab = torch.finfo(a.dtype).eps
    d_gp = d_gp + eps_ab * (gp.abs() + d_gp)

    m, n = a.shape[-2], b.shape[-1]
    rows = gp.numel() // n  # the rows of Gp summed into B's gradient and the bias's
    abs_a = a.double().abs().requires_grad_()
    abs_b = b.double().abs().requires_grad_()
    prod = torch.matmul(abs_a, abs_b)
    e_a = d_gp + 2 * (n + 4) * EPS32 * (gp.abs() + d_gp)
    e_b = d_gp + 2 * (rows + 4) * EPS32 * (gp.abs() + d_gp)
    err_a = torch.autograd.grad((prod * e_a).sum(), abs_a, retain_graph=True)[0]
    err_b = torch.autograd.grad((prod * e_b).sum(), abs_b)[0]
    bounds = {
        "a": (a64.grad, eps_ab * a64.grad.abs() + err_a),
        "b": (b64.grad, eps_ab * b64.grad.abs() + err_b),
    }
    if bias is not None:
        flat = (gp.abs() + d_gp).reshape(-1, n)
        eps_bias = torch.finfo(bias.dtype).eps
        bounds["bias"] = (bias64.grad, eps_bias * bias64.grad.abs() + d_gp.reshape(-1, n).sum(0)
                          + 2 * (rows + 4) * EPS32 * flat.sum(0))
    return bounds


def check_gradients(a, b, bias=None, activation="none", out_dtype=None):
    a = a.detach().requires_grad_()
    b = b.detach().requires_grad_()
    if bias is not None:
        bias = bias.detach().requires_grad_()
    d = tilepipe.gemm(a, b, bias, activation, out_dtype)
    assert d.grad_fn is not None
    g = torch.randn_like(d)
    d.backward(g)
    for name, (want, tol) in grad_bounds(a, b, bias, activation, g, out_dtype).items():
        got = {"a": a, "b": b, "bias": bias}[name].grad
        assert got is not None and got.shape == want.shape, f"the gradient of {name}"
        close(got, want, tol, f"the gradient of {name}")


@pytest.mark.parametrize("activation", list(ACTIVATIONS))
@pytest.mark.parametrize("dtype", DTYPES)
def test_gradients(dtype, activation):
    a, b = matrix(48, 40, dtype), matrix(40, 56, dtype, "col")
    bias = torch.randn(56, device="cuda").to(dtype)
    check_gradients(a, b, bias, activation)


@pytest.mark.parametrize("batch_a,batch_b", BATCHES)
def test_gradients_batched(batch_a, batch_b):
    a = matrix(24, 40, torch.float16, "row", batch_a)
    b = matrix(40, 32, torch.float16, "col", batch_b)
    check_gradients(a, b, torch.randn(32, device="cuda"), "gelu_tanh")


def test_gradients_float32_output():
    a, b = matrix(33, 70, torch.bfloat16, "col"), matrix(70, 45, torch.bfloat16, "row")
    check_gradients(a, b, torch.randn(45, device="cuda"), "silu", torch.float32)


@pytest.mark.parametrize("activation", ["none", "gelu"])
def test_gradients_of_a_realistic_linear_layer(activation):
    """bf16 at a transformer's sizes: a batch of sequences through a linear layer (the weight's
    gradient is one GEMM with the batch stacked along K)."""
    x = torch.randn(4, 512, 1024, device="cuda").bfloat16()
    w = (torch.randn(768, 1024, device="cuda") / 32).bfloat16()
    bias = torch.randn(768, device="cuda").bfloat16()
    check_gradients(x, w.t(), bias, activation)


def test_no_grad_needed_no_graph():
    a, b = matrix(16, 16, torch.float16), matrix(16, 16, torch.float16)
    assert tilepipe.gemm(a, b).grad_fn is None
    with torch.no_grad():
        assert tilepipe.gemm(a.requires_grad_(), b).grad_fn is None


# ---- Registration: opcheck, torch.compile, CUDA graphs ----

OPCHECK_CASES = {
    "plain": lambda: ((matrix(32, 48, torch.float16), matrix(48, 24, torch.float16, "col")), {}),
    "bias_relu_grad": lambda: (
        (matrix(32, 48, torch.bfloat16).requires_grad_(),
         matrix(48, 24, torch.bfloat16).requires_grad_(),
         torch.randn(24, device="cuda").bfloat16().requires_grad_()), {"activation": "relu"}),
    "batched_gelu_f32": lambda: (
        (matrix(20, 16, torch.float16, batch=(3,)).requires_grad_(),
         matrix(16, 40, torch.float16, "col").requires_grad_(), torch.randn(40, device="cuda")),
        {"activation": "gelu", "out_dtype": torch.float32}),
    "unaligned": lambda: ((matrix(30, 4099, torch.float16).requires_grad_(),
                           matrix(4099, 17, torch.float16, "col")), {"activation": "silu"}),
}


@pytest.mark.parametrize("case", list(OPCHECK_CASES))
def test_opcheck(case):
    args, kwargs = OPCHECK_CASES[case]()
    torch.library.opcheck(torch.ops.tilepipe.gemm.default, args, kwargs)


class Mlp(torch.nn.Module):
    """A transformer's MLP block through tilepipe: up-projection with GELU, down-projection."""

    def __init__(self, dim, hidden):
        super().__init__()
        self.up = torch.nn.Linear(dim, hidden, device="cuda", dtype=torch.bfloat16)
        self.down = torch.nn.Linear(hidden, dim, device="cuda", dtype=torch.bfloat16)

    def forward(self, x):
        h = tilepipe.linear(x, self.up.weight, self.up.bias, "gelu_tanh")
        return tilepipe.linear(h, self.down.weight, self.down.bias)


def test_torch_compile_fullgraph():
    """torch.compile traces the operator into one graph (fullgraph: a graph break is an error),
    forward and backward, and the compiled model computes what the eager one does: the same
    result (the same kernels on the same inputs), and gradients that differ at most where
    Inductor evaluates the activation's derivative and the bias's sum in its own kernels: by a
    few roundings of bf16 (2^-8 each), against the largest element."""
    torch._dynamo.reset()
    model = Mlp(256, 512)
    compiled = torch.compile(model, fullgraph=True)
    x = torch.randn(2, 64, 256, device="cuda").bfloat16()
    eager_x, compiled_x = x.clone().requires_grad_(), x.clone().requires_grad_()
    y_eager, y_compiled = model(eager_x), compiled(compiled_x)
    assert torch.equal(y_eager, y_compiled)
    g = torch.randn_like(y_eager)
    eager_grads = torch.autograd.grad(y_eager, [eager_x, *model.parameters()], g)
    compiled_grads = torch.autograd.grad(y_compiled, [compiled_x, *model.parameters()], g)
    for e, c in zip(eager_grads, compiled_grads):
        assert float((e.float() - c.float()).abs().max()) <= 2**-6 * float(e.float().abs().max())


def test_cuda_graph_capture_and_replay():
    """Captured into a CUDA graph (with GemmAuto's workspace, which the small-M, long-K problem
    needs, from the graph's pool), replays compute on the inputs' new values."""
    a, b = matrix(32, 8192, torch.float16), matrix(8192, 512, torch.float16, "col")
    bias = torch.randn(512, device="cuda").half()
    side = torch.cuda.Stream()  # warm up off the capture, as torch's documentation asks
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        tilepipe.gemm(a, b, bias, "relu")
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        d = tilepipe.gemm(a, b, bias, "relu")
    for _ in range(3):
        a.copy_(matrix(32, 8192, torch.float16))
        bias.copy_(torch.randn(512, device="cuda"))
        d.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        check(d, a, b, bias, "relu")


# ---- Errors ----

BAD_CALLS = {
    "a float32": (TypeError, r"a has dtype torch\.float32", lambda g, a, b: g(a.float(), b)),
    "dtypes differ": (TypeError, r"b has dtype torch\.bfloat16 but a has torch\.float16",
                      lambda g, a, b: g(a, b.bfloat16())),
    "out_dtype": (TypeError, r"out_dtype torch\.bfloat16",
                  lambda g, a, b: g(a, b, out_dtype=torch.bfloat16)),
    "a on cpu": (ValueError, r"a is on cpu", lambda g, a, b: g(a.cpu(), b)),
    "b on cpu": (ValueError, r"b is on cpu but a is on cuda", lambda g, a, b: g(a, b.cpu())),
    "1-D a": (ValueError, r"a must have 2 or more dimensions", lambda g, a, b: g(a[0], b)),
    "K differs": (ValueError, r"K = 32 columns but b .* has 40 rows",
                  lambda g, a, b: g(a, matrix(40, 48, torch.float16))),
    "batches": (ValueError, r"batch dimensions of a .* do not broadcast",
                lambda g, a, b: g(a.expand(2, 64, 32), b.expand(3, 32, 48))),
    "bias shape": (ValueError, r"bias must have shape \(48,\)",
                   lambda g, a, b: g(a, b, torch.randn(47, device="cuda").half())),
    "bias dtype": (TypeError, r"bias has dtype torch\.bfloat16",
                   lambda g, a, b: g(a, b, torch.randn(48, device="cuda").bfloat16())),
    "activation": (ValueError, r"activation \"tanh\" is not one of",
                   lambda g, a, b: g(a, b, None, "tanh")),
}


@pytest.mark.parametrize("case", list(BAD_CALLS))
def test_bad_arguments_raise(case):
    error, match, call = BAD_CALLS[case]
    a, b = matrix(64, 32, torch.float16), matrix(32, 48, torch.float16)
    with pytest.raises(error, match=match):
        call(tilepipe.gemm, a, b)
