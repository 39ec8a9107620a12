"""torch.ops.tilepipe.scaled_mm (tilepipe.scaled_mm) against a float64 reference computed from the
decoded fp8 values and the scales, and against torch._scaled_mm itself: every scale mode, both
fp8 types, every output dtype; the schedules the operator picks (split-K, stream-K); layouts it
copies; opcheck, torch.compile, CUDA graphs; errors.

Run with `python3 -m pytest python/tests` after `pip install --no-build-isolation ./python`.
Skips, saying why, without torch, a CUDA GPU, or an sm_90 GPU (the FP8 GEMM is Hopper-tier only).
"""

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed; tilepipe needs it")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device: tilepipe runs on a GPU", allow_module_level=True)

import tilepipe  # noqa: E402

if not tilepipe.hopper_tier_available():
    pytest.skip("the GPU is not sm_90: tilepipe.scaled_mm runs on the Hopper tier only",
                allow_module_level=True)

E4M3, E5M2 = torch.float8_e4m3fn, torch.float8_e5m2
OUTPUTS = [torch.bfloat16, torch.float16, torch.float32]
MODES = ["tensor", "row", "block"]
BLOCK = 128


def fp8(rows, cols, dtype, exact):
    """A random rows x cols fp8 matrix: small integers (exact products and sums), or normals."""
    if exact:
        v = torch.randint(-2, 3, (rows, cols), device="cuda").float()
    else:
        v = torch.randn(rows, cols, device="cuda") * 3
    return v.to(dtype)


def scales(mode, m, n, k, exact):
    """f32 scales for `mode` in torch._scaled_mm's shapes and layouts (block-wise: scale_a M-major,
    scale_b K-major): powers of two (exact) or random values in [0.5, 2)."""
    kb, nb = -(-k // BLOCK), -(-n // BLOCK)

    def values(*shape):
        if exact:
            return torch.pow(2.0, torch.randint(-3, 4, shape, device="cuda").float())
        return torch.rand(*shape, device="cuda") * 1.5 + 0.5

    if mode == "tensor":
        return values(1).reshape(()), values(1).reshape(())
    if mode == "row":
        return values(m, 1), values(1, n)
    return values(kb, m).t(), values(nb, kb).t()


def reference(a, b, scale_a, scale_b, mode):
    """(a * scale_a) @ (b * scale_b) in float64, and the sum of the terms' magnitudes."""
    (m, k), n = a.shape, b.shape[1]
    sa, sb = scale_a.double(), scale_b.double()
    if mode == "block":  # one per row per 128 of K; one per 128 x 128 block of b
        sa = sa.repeat_interleave(BLOCK, 1)[:, :k]
        sb = sb.repeat_interleave(BLOCK, 0)[:k].repeat_interleave(BLOCK, 1)[:, :n]
    x, y = a.double() * sa, b.double() * sb
    return x @ y, x.abs() @ y.abs()


def bound(ref, mass, k, out_dtype):
    """How far a result may be from the reference (test_gemm_fp8.cu's FP8Bound): the tensor
    cores' accumulation of a 128-deep k-block keeps at least 13 fraction bits (2^-6 of the mass
    for a k-tile's four steps), the f32 folds add (K/128 + 3) units of 2^-24 of the mass, and the
    result's rounding half an ulp (or half the smallest normal's ulp below it)."""
    info = torch.finfo(out_dtype)
    kb = -(-k // BLOCK)
    folds = mass * (2.0**-6 + (kb + 3) * 2.0**-24)
    return folds + 0.5 * info.eps * ref.abs() + info.eps * info.tiny


def _one():
    return torch.ones((), device="cuda")


def close(got, want, tol, what):
    err = (got.double() - want).abs()
    bad = ~(err <= tol)  # NaN is bad too
    if bad.any():
        i = tuple(int(x) for x in torch.nonzero(bad)[0])
        pytest.fail(f"{what}: {int(bad.sum())} of {got.numel()} elements outside the bound; first "
                    f"at {i}: got {float(got[i])}, want {float(want[i])} +- {float(tol[i])}")


def torch_peer(a, b, scale_a, scale_b, out_dtype):
    """torch._scaled_mm's result, or None where it refuses the problem (block-wise needs N and K
    multiples of 128 there, e4m3 x e5m2 rules, ...)."""
    try:
        return torch._scaled_mm(a, b, scale_a=scale_a, scale_b=scale_b, out_dtype=out_dtype)
    except (RuntimeError, ValueError, NotImplementedError):
        return None


def run_and_check(m, n, k, mode, dtype=E4M3, out_dtype=torch.bfloat16, exact=False):
    a = fp8(m, k, dtype, exact)
    b = fp8(n, k, dtype, exact).t()  # a weight's transpose, as torch._scaled_mm takes b
    sa, sb = scales(mode, m, n, k, exact)
    d = tilepipe.scaled_mm(a, b, sa, sb, out_dtype=out_dtype)
    assert d.shape == (m, n) and d.dtype == out_dtype and d.is_contiguous()
    ref, mass = reference(a, b, sa, sb, mode)
    peer = torch_peer(a, b, sa, sb, out_dtype)
    if exact:
        # Exact sums in f32, rounded once: the reference rounded to the output's dtype, bit for bit,
        # and so is torch._scaled_mm's where it takes the problem.
        want = ref.to(out_dtype)
        assert torch.equal(d, want), f"{int((d != want).sum())} elements differ from the reference"
        if peer is not None:
            assert torch.equal(d, peer), "tilepipe.scaled_mm differs from torch._scaled_mm"
    else:
        tol = bound(ref, mass, k, out_dtype)
        close(d, ref, tol, "result")
        if peer is not None:
            close(peer, ref, tol, "torch._scaled_mm (the peer, same bound)")
    return peer is not None


@pytest.mark.parametrize("out_dtype", OUTPUTS)
@pytest.mark.parametrize("dtype", [E4M3, E5M2])
@pytest.mark.parametrize("mode", MODES)
def test_exact_small_integers(mode, dtype, out_dtype):
    run_and_check(256, 384, 512, mode, dtype, out_dtype, exact=True)


# On 132 SMs (H100 SXM, H200) the heuristic runs these tensorwise and row-wise on the 192-wide
# tiles (64 rows: 365 tiles in 3 waves against 5 waves of 64 x 128 ones; 128 rows: one wave of 128
# tiles); block-wise on the 64 x 128 and the 128 x 256 one.
@pytest.mark.parametrize("m,n", [(64, 70000), (128, 24576)])
@pytest.mark.parametrize("mode", MODES)
def test_exact_192_wide_tiles(mode, m, n):
    run_and_check(m, n, 1536, mode, E4M3, torch.bfloat16, exact=True)


# And these on the 64 x 64 tile in 3 and 2 K slices (tensorwise and row-wise; block-wise on the
# 64 x 128 one).
@pytest.mark.parametrize("m", [64, 128])
@pytest.mark.parametrize("mode", MODES)
def test_exact_64_by_64_tile(mode, m):
    run_and_check(m, 2112, 7168, mode, E4M3, torch.bfloat16, exact=True)


# And these unsplit on it from 64 rows, with two consumer warpgroups taking alternate k-tiles
# (tensorwise and row-wise; block-wise on the 64 x 128 tile); odd M, 17 k-tiles.
@pytest.mark.parametrize("m,n,k", [(128, 4096, 7168), (100, 4096, 2048), (77, 2048, 2064),
                                   (64, 7168, 2048)])
@pytest.mark.parametrize("mode", MODES)
def test_exact_k_interleaved_tile(mode, m, n, k):
    run_and_check(m, n, k, mode, E4M3, torch.bfloat16, exact=True)


# The 64 x 256 tile with two consumer warpgroups of 128 columns each, where the heuristic picks it
# (at most 64 rows, one wave of it against two of 64 x 128 tiles on 132 SMs), in every mode; odd M,
# an edge tile half past N. (K a multiple of 128: with a partial last k-block, e.g. 64 x 20096 x
# 2064, torch 2.11's block-wise result is wrong from column 128 on, performance log 61; tilepipe's
# matches the reference there.)
@pytest.mark.parametrize("m,n,k", [(64, 32768, 512), (33, 24576, 1536), (64, 20096, 2048)])
@pytest.mark.parametrize("mode", MODES)
def test_exact_split_columns_tile(mode, m, n, k):
    run_and_check(m, n, k, mode, E4M3, torch.bfloat16, exact=True)


# One tile; odd M and N with K a multiple of 16 but not of 128 (a partial last scale block); a
# single row; decode shapes on the 64-row tile, split along K (in 2); a ragged wave with long K
# (stream-K); two waves of 128 x 128 tiles, one of 128 x 256 (the wide tile); the 192-wide tiles
# (tensorwise and row-wise on 132 SMs).
SHAPES = [(128, 128, 128), (77, 200, 160), (1, 64, 272), (64, 4096, 7168), (128, 1024, 4096),
          (1000, 2112, 4096), (1024, 4096, 512), (100, 24576, 1536), (33, 24576, 1536)]


@pytest.mark.parametrize("m,n,k", SHAPES)
@pytest.mark.parametrize("mode", MODES)
def test_random_values_within_bound(mode, m, n, k):
    run_and_check(m, n, k, mode)


def test_torch_peer_takes_every_mode():
    """The comparison with torch._scaled_mm above is not vacuous: it takes each mode here."""
    for mode in MODES:
        assert run_and_check(256, 256, 512, mode, exact=True), f"torch._scaled_mm refused {mode}"


def test_copied_layouts():
    """a column-major, b row-major, block-wise scales in the other orders: copied, same result."""
    m, n, k = 96, 256, 384
    a, b = fp8(m, k, E4M3, False), fp8(n, k, E4M3, False).t()
    sa, sb = scales("block", m, n, k, False)
    want = tilepipe.scaled_mm(a, b, sa, sb)
    a_col = a.t().contiguous().t()
    b_row = b.contiguous()
    got = tilepipe.scaled_mm(a_col, b_row, sa.contiguous(), sb.contiguous())
    assert torch.equal(got, want)


def test_empty_extents():
    a, b = fp8(0, 64, E4M3, True), fp8(32, 64, E4M3, True).t()
    assert tilepipe.scaled_mm(a, b, _one(), _one()).shape == (0, 32)
    a, b = fp8(8, 0, E4M3, True), fp8(32, 0, E4M3, True).t()
    d = tilepipe.scaled_mm(a, b, _one(), _one())
    assert d.shape == (8, 32) and bool((d == 0).all())


# ---- Registration: opcheck, torch.compile, CUDA graphs ----


@pytest.mark.parametrize("mode", MODES)
def test_opcheck(mode):
    """opcheck's registration tests, less test_schema: its schema-checking mode multiplies the
    inputs, which torch 2.11 does not implement for fp8 ("mul_cuda" not implemented for
    'Float8_e4m3fn'), so it fails before it reaches the operator."""
    m, n, k = 64, 256, 256
    a, b = fp8(m, k, E4M3, False), fp8(n, k, E4M3, False).t()
    sa, sb = scales(mode, m, n, k, False)
    torch.library.opcheck(torch.ops.tilepipe.scaled_mm.default, (a, b, sa, sb),
                          {"out_dtype": torch.bfloat16},
                          test_utils=("test_autograd_registration", "test_faketensor",
                                      "test_aot_dispatch_dynamic"))


def test_torch_compile_fullgraph():
    m, n, k = 128, 256, 512
    a, w = fp8(m, k, E4M3, False), fp8(n, k, E4M3, False)
    sa, sb = scales("row", m, n, k, False)

    def layer(x, weight, s_x, s_w):
        return torch.relu(tilepipe.scaled_mm(x, weight.t(), s_x, s_w))

    compiled = torch.compile(layer, fullgraph=True)
    assert torch.equal(compiled(a, w, sa, sb), layer(a, w, sa, sb))


def test_cuda_graph_capture_and_replay():
    """Captured with the split-K workspace from the graph's pool; replays use the new values."""
    m, n, k = 64, 4096, 7168
    a, b = fp8(m, k, E4M3, False), fp8(n, k, E4M3, False).t()
    sa, sb = scales("block", m, n, k, False)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        tilepipe.scaled_mm(a, b, sa, sb)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        d = tilepipe.scaled_mm(a, b, sa, sb)
    for _ in range(3):
        a.copy_(fp8(m, k, E4M3, False))
        sa.copy_(scales("block", m, n, k, False)[0])
        d.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        ref, mass = reference(a, b, sa, sb, "block")
        close(d, ref, bound(ref, mass, k, torch.bfloat16), "replay")


# ---- Errors ----


BAD_CALLS = {
    "a float16": (TypeError, r"a has dtype torch\.float16",
                  lambda a, b: tilepipe.scaled_mm(a.half(), b, _one(), _one())),
    "dtypes differ": (TypeError, r"b has dtype torch\.float8_e5m2 but a has torch\.float8_e4m3fn",
                      lambda a, b: tilepipe.scaled_mm(a, b.float().to(E5M2), _one(), _one())),
    "scale dtype": (TypeError, r"scale_a has dtype torch\.float64",
                    lambda a, b: tilepipe.scaled_mm(a, b, _one().double(), _one())),
    "out_dtype": (TypeError, r"out_dtype torch\.float8_e4m3fn",
                  lambda a, b: tilepipe.scaled_mm(a, b, _one(), _one(), out_dtype=E4M3)),
    "a on cpu": (ValueError, r"a is on cpu",
                 lambda a, b: tilepipe.scaled_mm(a.cpu(), b, _one(), _one())),
    "scale on cpu": (ValueError, r"scale_b is on cpu",
                     lambda a, b: tilepipe.scaled_mm(a, b, _one(), _one().cpu())),
    "K differs": (ValueError, r"K = 128 columns but b .* has 144 rows",
                  lambda a, b: tilepipe.scaled_mm(a, fp8(48, 144, E4M3, True).t(), _one(), _one())),
    "scale shapes": (ValueError, r"scale_a \(shape \[64\]\) and scale_b .* are no scale mode",
                     lambda a, b: tilepipe.scaled_mm(a, b, torch.ones(64, device="cuda"), _one())),
    "K not 16": (ValueError, r"multiple of 16 bytes",
                 lambda a, b: tilepipe.scaled_mm(fp8(64, 120, E4M3, True),
                                                 fp8(48, 120, E4M3, True).t(), _one(), _one())),
    "3-D a": (ValueError, r"a must be \(M, K\)",
              lambda a, b: tilepipe.scaled_mm(a.unsqueeze(0), b, _one(), _one())),
}


@pytest.mark.parametrize("case", list(BAD_CALLS))
def test_bad_arguments_raise(case):
    error, match, call = BAD_CALLS[case]
    a, b = fp8(64, 128, E4M3, True), fp8(48, 128, E4M3, True).t()
    with pytest.raises(error, match=match):
        call(a, b)
