"""torch.ops.tilepipe.scaled_grouped_mm (tilepipe.scaled_grouped_mm) against a float64 reference
per group (the decoded fp8 values, each 128 of K scaled as its mode says) and against
torch._scaled_grouped_mm itself (row-wise): the three scale modes, empty, one-row and unbalanced
groups, G = 1 and 256, a 3-D a, b copied where its strides need it, out-of-range offsets
(clamped), a CUDA graph replayed with new offsets, opcheck, torch.compile, errors.

Run with `python3 -m pytest python/tests` after `pip install --no-build-isolation ./python`.
Skips, saying why, without torch, a CUDA GPU, or an sm_90 GPU (Hopper tier only).
"""

import math
import re

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed; tilepipe needs it")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device: tilepipe runs on a GPU", allow_module_level=True)

import tilepipe  # noqa: E402

if not tilepipe.hopper_tier_available():
    pytest.skip("the GPU is not sm_90: tilepipe.scaled_grouped_mm runs on the Hopper tier only",
                allow_module_level=True)

FP8 = torch.float8_e4m3fn
N, K = 320, 400  # a partial tile column and scale block; K of four k-blocks, the last partial
MODES = ["tensor", "row", "block"]


def fp8(*shape, exact):
    """Small integers in [-4, 4] (exact in e4m3), or normals times 2."""
    if exact:
        return torch.randint(-4, 5, shape, device="cuda").to(FP8)
    return (torch.randn(*shape, device="cuda") * 2).to(FP8)


def scales(*shape, exact):
    """Powers of two in [1/4, 4] (exact), or reals in [0.1, 2]."""
    if exact:
        return torch.exp2(torch.randint(-2, 3, shape, device="cuda").float())
    return torch.rand(*shape, device="cuda") * 1.9 + 0.1


def offsets(counts):
    return torch.tensor(counts, device="cuda").cumsum(0).to(torch.int32)


def make_scales(mode, groups, rows, n, k, exact, per_group=False):
    """scale_a and scale_b of `mode` for 2-D a of `rows` rows (3-D a of G x rows: per_group)."""
    kb, nb = math.ceil(k / 128), math.ceil(n / 128)
    a_rows = (groups, rows) if per_group else (rows,)
    if mode == "tensor":
        return scales(1, exact=exact), scales(groups, exact=exact)
    if mode == "row":
        return scales(*a_rows, exact=exact), scales(groups, n, exact=exact)
    return scales(*a_rows, kb, exact=exact), scales(groups, kb, nb, exact=exact)


def reference(a, w, sa, sb, mode, bounds):
    """Group g's rows bounds[g] of a (rows, K) times w[g] (N, K) transposed in float64, each
    k-block scaled as `mode` says; the sums of the terms' magnitudes; which rows a group covers."""
    rows, k = a.shape
    n = w.shape[1]
    ref = torch.zeros(rows, n, dtype=torch.float64, device="cuda")
    mass = torch.zeros_like(ref)
    covered = torch.zeros(rows, dtype=torch.bool, device="cuda")
    col_block = torch.arange(n, device="cuda") // 128
    for g, (lo, hi) in enumerate(bounds):
        if hi <= lo:
            continue
        x, y = a[lo:hi].double(), w[g].double()
        for q in range(math.ceil(k / 128)):
            xs, ys = x[:, q * 128:(q + 1) * 128], y[:, q * 128:(q + 1) * 128]
            if mode == "tensor":
                s = sa.double().reshape(()) * sb[g].double()
            elif mode == "row":
                s = sa.reshape(-1)[lo:hi].double()[:, None] * sb[g].double()[None, :]
            else:
                s = sa[lo:hi, q].double()[:, None] * sb[g, q, col_block].double()[None, :]
            ref[lo:hi] += s * (xs @ ys.t())
            mass[lo:hi] += s.abs() * (xs.abs() @ ys.abs().t())
        covered[lo:hi] = True
    return ref, mass, covered


def bound(ref, mass, k):
    """test_gemm_fp8's FP8Bound: the tensor cores' fp8 accumulation per k-block (2^-6 of its
    mass), the f32 folds and scales ((K/128 + 3) units of 2^-24), then bf16's rounding."""
    kb = math.ceil(k / 128)
    return mass * (2.0 ** -6 + (kb + 3) * 2.0 ** -24) + 2.0 ** -8 * ref.abs() + 1e-30


def clamped(offs, rows):
    out, prev = [], 0
    for end in offs:
        lo = min(max(prev, 0), rows)
        out.append((lo, max(min(max(end, 0), rows), lo)))
        prev = end
    return out


def close(got, want, tol, what):
    err = (got.double() - want).abs()
    bad = ~(err <= tol)
    if bad.any():
        i = tuple(int(x) for x in torch.nonzero(bad)[0])
        pytest.fail(f"{what}: {int(bad.sum())} of {got.numel()} elements outside the bound; first "
                    f"at {i}: got {float(got[i])}, want {float(want[i])} +- {float(tol[i])}")


def run_and_check(counts, mode, exact, n=N, k=K, spare_rows=0, w=None):
    rows = sum(counts) + spare_rows
    a = fp8(rows, k, exact=exact)
    w = fp8(len(counts), n, k, exact=exact) if w is None else w
    sa, sb = make_scales(mode, len(counts), rows, n, k, exact)
    offs = offsets(counts)
    d = tilepipe.scaled_grouped_mm(a, w.transpose(-2, -1), sa, sb, offs)
    assert d.shape == (rows, n) and d.dtype == torch.bfloat16 and d.is_contiguous()
    ref, mass, covered = reference(a, w, sa, sb, mode, clamped(offs.tolist(), rows))
    if exact:
        assert torch.equal(d[covered], ref[covered].to(torch.bfloat16)), \
            "the result differs from the exact reference"
    else:
        tol = bound(ref, mass, k)
        close(d[covered], ref[covered], tol[covered], f"{mode} result")
    return a, w, sa, sb, offs, d, ref, mass, covered


CASES = {
    "balanced": [128] * 8,
    "empty groups": [0, 100, 0, 0, 37, 0],
    "one-row groups": [1] * 16,
    "unbalanced": [1000, 1, 0, 3, 200, 7],
    "G = 1": [300],
    "G = 256": [(g * 37) % 41 for g in range(256)],
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("mode", MODES)
def test_exact_small_integers(case, mode):
    run_and_check(CASES[case], mode, exact=True)


@pytest.mark.parametrize("mode", MODES)
def test_random_values_within_bound(mode):
    run_and_check([200, 0, 57, 300, 1], mode, exact=False)
    run_and_check([64, 64], mode, exact=False, n=128, k=2048)


def test_against_torch_scaled_grouped_mm():
    """Row-wise, torch's only mode here: both within the bound of the reference."""
    if not hasattr(torch, "_scaled_grouped_mm"):
        pytest.skip("this torch has no _scaled_grouped_mm")
    counts = [256, 0, 128, 64, 320]
    a, w, sa, sb, offs, d, ref, mass, covered = run_and_check(counts, "row", exact=False,
                                                              n=512, k=1024)
    peer = torch._scaled_grouped_mm(a, w.transpose(-2, -1), sa, sb, offs=offs,
                                    out_dtype=torch.bfloat16)
    tol = bound(ref, mass, 1024)
    close(peer[covered], ref[covered], tol[covered], "torch._scaled_grouped_mm (same bound)")
    diff = (d[covered].float() - peer[covered].float()).abs().max().item()
    assert diff <= ref[covered].abs().max().item() * 2 ** -6


def test_rows_past_the_last_offset_and_clamped_offsets():
    run_and_check([30, 0, 45], "block", exact=True, spare_rows=50)
    rows, n, k = 40, 192, 256
    a, w = fp8(rows, k, exact=True), fp8(4, n, k, exact=True)
    sa, sb = make_scales("row", 4, rows, n, k, exact=True)
    offs = torch.tensor([10, 10, 50, -3], dtype=torch.int32, device="cuda")
    d = tilepipe.scaled_grouped_mm(a, w.transpose(-2, -1), sa, sb, offs)
    ref, _, covered = reference(a, w, sa, sb, "row", clamped(offs.tolist(), rows))
    assert bool(covered.all())
    assert torch.equal(d, ref.to(torch.bfloat16))


@pytest.mark.parametrize("mode", MODES)
def test_three_dimensional_a_without_offs(mode):
    groups, m, n, k = 3, 70, 200, 384
    a, w = fp8(groups, m, k, exact=True), fp8(groups, n, k, exact=True)
    sa, sb = make_scales(mode, groups, m, n, k, exact=True, per_group=True)
    d = tilepipe.scaled_grouped_mm(a, w.transpose(-2, -1), sa, sb)
    assert d.shape == (groups, m, n)
    for g in range(groups):
        if mode == "tensor":
            sag, sbg = sa, sb[g:g + 1]
        else:
            sag, sbg = sa[g], sb[g:g + 1]
        ref, _, _ = reference(a[g], w[g:g + 1], sag, sbg, mode, [(0, m)])
        assert torch.equal(d[g], ref.to(torch.bfloat16)), f"group {g}"


def test_copied_weights():
    """b with N contiguous (w^T made contiguous): copied to K-major first."""
    counts, n, k = [50, 70], 128, 256
    w = fp8(2, n, k, exact=True)
    a = fp8(sum(counts), k, exact=True)
    sa, sb = make_scales("block", 2, sum(counts), n, k, exact=True)
    offs = offsets(counts)
    d = tilepipe.scaled_grouped_mm(a, w.transpose(-2, -1).contiguous(), sa, sb, offs)
    ref, _, _ = reference(a, w, sa, sb, "block", clamped(offs.tolist(), sum(counts)))
    assert torch.equal(d, ref.to(torch.bfloat16))


@pytest.mark.parametrize("mode", MODES)
def test_opcheck(mode):
    """opcheck's registration tests, less test_schema: its schema-checking mode multiplies the
    inputs, which torch 2.11 does not implement for fp8 (test_scaled_mm.py's test_opcheck)."""
    counts, n, k = [100, 0, 150, 50], 192, 256
    a, w = fp8(sum(counts), k, exact=True), fp8(4, n, k, exact=True)
    sa, sb = make_scales(mode, 4, sum(counts), n, k, exact=True)
    torch.library.opcheck(torch.ops.tilepipe.scaled_grouped_mm.default,
                          (a, w.transpose(-2, -1), sa, sb, offsets(counts)),
                          test_utils=("test_autograd_registration", "test_faketensor",
                                      "test_aot_dispatch_dynamic"))


def test_torch_compile_fullgraph():
    counts, n, k = [100, 0, 50, 150], 256, 512
    a, w = fp8(sum(counts), k, exact=True), fp8(4, n, k, exact=True)
    sa, sb = make_scales("block", 4, sum(counts), n, k, exact=True)
    offs = offsets(counts)

    def experts(x, weight, s_x, s_w, ends):
        return torch.relu(tilepipe.scaled_grouped_mm(x, weight.transpose(-2, -1), s_x, s_w, ends))

    compiled = torch.compile(experts, fullgraph=True)
    ref, _, _ = reference(a, w, sa, sb, "block", clamped(offs.tolist(), sum(counts)))
    assert torch.equal(compiled(a, w, sa, sb, offs), torch.relu(ref.to(torch.bfloat16)))


def test_cuda_graph_replay_with_new_offsets():
    rows, n, k = 512, 256, 384
    a, w = fp8(rows, k, exact=True), fp8(4, n, k, exact=True)
    sa, sb = make_scales("block", 4, rows, n, k, exact=True)
    offs = offsets([100, 200, 0, 212])
    out = tilepipe.scaled_grouped_mm(a, w.transpose(-2, -1), sa, sb, offs)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = tilepipe.scaled_grouped_mm(a, w.transpose(-2, -1), sa, sb, offs)
    for ends in ([100, 300, 300, 512], [0, 0, 512, 512], [512, 512, 512, 512], [7, 400, 401, 512]):
        offs.copy_(torch.tensor(ends, dtype=torch.int32))
        graph.replay()
        torch.cuda.synchronize()
        ref, _, _ = reference(a, w, sa, sb, "block", clamped(ends, rows))
        assert torch.equal(out, ref.to(torch.bfloat16)), f"replay with offs {ends}"


def bad_cases():
    a, w = fp8(64, 128, exact=True), fp8(2, 128, 128, exact=True)
    b = w.transpose(-2, -1)
    sa, sb = make_scales("row", 2, 64, 128, 128, exact=True)
    offs = offsets([32, 32])
    return {
        "a dtype": (TypeError, "a has dtype", (a.to(torch.bfloat16), b, sa, sb, offs), {}),
        "scale dtype": (TypeError, "scale_a has dtype", (a, b, sa.double(), sb, offs), {}),
        "out_dtype": (TypeError, "out_dtype", (a, b, sa, sb, offs), {"out_dtype": torch.float16}),
        "offs missing": (ValueError, "offs is None", (a, b, sa, sb), {}),
        "offs shape": (ValueError, "offs must be (G,)", (a, b, sa, sb, offsets([64])), {}),
        "scale shapes": (ValueError, "are no scale mode", (a, b, sa[:10], sb, offs), {}),
        "K": (ValueError, "K = 120", (a[:, :120], b[:, :120], sa, sb, offs), {}),
        "a on the CPU": (ValueError, "a is on cpu", (a.cpu(), b, sa, sb, offs), {}),
    }


@pytest.mark.parametrize("case", list(bad_cases()))
def test_bad_arguments_raise(case):
    error, text, args, kwargs = bad_cases()[case]
    with pytest.raises(error, match=re.escape(text)):
        torch.ops.tilepipe.scaled_grouped_mm(*args, **kwargs)
