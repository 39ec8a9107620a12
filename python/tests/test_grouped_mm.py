"""torch.ops.tilepipe.grouped_mm and grouped_mm_masked (tilepipe.grouped_mm, grouped_mm_masked)
against a float64 reference per group and against torch._grouped_mm itself: empty, one-row and
unbalanced groups, G = 1, 128 and 256, both layouts of b and ones it copies, f16 and an f32
result, out-of-range sizes (clamped), CUDA graphs replayed with new sizes in device memory,
opcheck, torch.compile, errors.

Run with `python3 -m pytest python/tests` after `pip install --no-build-isolation ./python`.
Skips, saying why, without torch, a CUDA GPU, or an sm_90 GPU (the grouped GEMM is Hopper-tier
only).
"""

import random

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed; tilepipe needs it")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device: tilepipe runs on a GPU", allow_module_level=True)

import tilepipe  # noqa: E402

if not tilepipe.hopper_tier_available():
    pytest.skip("the GPU is not sm_90: tilepipe.grouped_mm runs on the Hopper tier only",
                allow_module_level=True)

EPS32 = torch.finfo(torch.float32).eps
N, K = 192, 320  # a partial 256-wide tile column; K of several 64-deep k-tiles


def values(*shape, dtype=torch.bfloat16, exact=False):
    """Random values: small integers (exact products and sums), or normals."""
    if exact:
        return torch.randint(-2, 3, shape, device="cuda").to(dtype)
    return torch.randn(*shape, device="cuda").to(dtype)


def weights(groups, n, k, layout, dtype=torch.bfloat16, exact=False):
    """b (G, K, N): "k", a weight's transpose (K contiguous, as torch._grouped_mm takes it); "n",
    N contiguous; "strided", neither (copied by the operator)."""
    if layout == "k":
        return values(groups, n, k, dtype=dtype, exact=exact).transpose(1, 2)
    if layout == "n":
        return values(groups, k, n, dtype=dtype, exact=exact)
    return values(groups, k, 2 * n, dtype=dtype, exact=exact)[..., ::2]


def offsets(counts):
    ends, total = [], 0
    for c in counts:
        total += c
        ends.append(total)
    return torch.tensor(ends, dtype=torch.int32, device="cuda")


def clamped_rows(offs, rows):
    """Each group's rows (begin, end) as GemmGroupedSm90 clamps torch's offsets into [0, rows]."""
    out, prev = [], 0
    for end in offs:
        lo = min(max(prev, 0), rows)
        out.append((lo, max(min(max(end, 0), rows), lo)))
        prev = end
    return out


def reference(a, b, rows):
    """Each group's rows of a times its b in float64, the sums of the terms' magnitudes, and
    which rows belong to a group (the others are not compared)."""
    ref = torch.zeros(a.shape[0], b.shape[2], dtype=torch.float64, device="cuda")
    mass = torch.zeros_like(ref)
    covered = torch.zeros(a.shape[0], dtype=torch.bool, device="cuda")
    for g, (lo, hi) in enumerate(rows):
        x, y = a[lo:hi].double(), b[g].double()
        ref[lo:hi], mass[lo:hi] = x @ y, x.abs() @ y.abs()
        covered[lo:hi] = True
    return ref, mass, covered


def bound(ref, mass, k, dtype):
    """test_ops.py's forward bound without an activation: the f32 sum of K exact products errs
    by at most (K + 4) EPS32 times the sum of magnitudes; then the rounding to the result's
    dtype (eps relative, eps * tiny absolute)."""
    info = torch.finfo(dtype)
    return (k + 4) * EPS32 * mass + info.eps * (ref.abs() + info.tiny)


def close(got, want, tol, what):
    err = (got.double() - want).abs()
    bad = ~(err <= tol)  # NaN is bad too
    if bad.any():
        i = tuple(int(x) for x in torch.nonzero(bad)[0])
        pytest.fail(f"{what}: {int(bad.sum())} of {got.numel()} elements outside the bound; first "
                    f"at {i}: got {float(got[i])}, want {float(want[i])} +- {float(tol[i])}")


def torch_peer(a, b, offs, out_dtype):
    """torch._grouped_mm's result, or None where it refuses the problem (it takes bf16, b with K
    contiguous, 16-byte strides; older torch lacks it)."""
    try:
        return torch._grouped_mm(a, b, offs=offs, out_dtype=out_dtype)
    except (AttributeError, RuntimeError, ValueError, NotImplementedError, TypeError):
        return None


def run_and_check(counts, layout="k", dtype=torch.bfloat16, out_dtype=None, exact=False,
                  n=N, k=K, spare_rows=0):
    """grouped_mm on groups of `counts` rows (and `spare_rows` of no group at the end) against
    the reference; True where torch._grouped_mm took the problem too (and agreed)."""
    a = values(sum(counts) + spare_rows, k, dtype=dtype, exact=exact)
    b = weights(len(counts), n, k, layout, dtype, exact)
    offs = offsets(counts)
    d = tilepipe.grouped_mm(a, b, offs, out_dtype=out_dtype)
    result = out_dtype or dtype
    assert d.shape == (a.shape[0], n) and d.dtype == result and d.is_contiguous()
    ref, mass, covered = reference(a, b, clamped_rows(offs.tolist(), a.shape[0]))
    peer = torch_peer(a, b, offs, out_dtype) if spare_rows == 0 else None
    if exact:
        want = ref[covered].to(result)
        assert torch.equal(d[covered], want), "the result differs from the exact reference"
        if peer is not None:
            assert torch.equal(peer, d), "tilepipe.grouped_mm differs from torch._grouped_mm"
    else:
        tol = bound(ref, mass, k, result)
        close(d[covered], ref[covered], tol[covered], "result")
        if peer is not None:
            close(peer[covered], ref[covered], tol[covered], "torch._grouped_mm (same bound)")
    return peer is not None


def draw(groups, total, seed, zeros=False):
    """`groups` row counts summing to `total`, unbalanced, with empty groups where `zeros`."""
    rng = random.Random(seed)
    weights_ = [rng.random() ** 3 * (0 if zeros and rng.random() < 0.2 else 1)
                for _ in range(groups)]
    scale = total / (sum(weights_) or 1)
    counts = [int(w * scale) for w in weights_]
    counts[max(range(groups), key=lambda g: weights_[g])] += total - sum(counts)
    return counts


CASES = {
    "balanced": [128] * 8,
    "empty groups": [0, 100, 0, 0, 37, 0],
    "one-row groups": [1] * 16,
    "unbalanced": [1000, 1, 0, 3, 200, 7],
    "G = 1": [300],
    "G = 128": draw(128, 3000, seed=1),
    "G = 256": draw(256, 5000, seed=2, zeros=True),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("layout", ["k", "n"])
def test_random_values_within_bound(case, layout):
    run_and_check(CASES[case], layout)


@pytest.mark.parametrize("layout", ["k", "n"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_exact_small_integers(dtype, layout):
    run_and_check([64, 0, 200, 1, 129], layout, dtype, exact=True, k=64)


def test_torch_peer_takes_the_moe_case():
    """The comparison with torch._grouped_mm above is not vacuous: it takes bf16 with b = w^T."""
    assert run_and_check([64, 0, 200, 1, 129], "k", exact=True, k=64), \
        "torch._grouped_mm refused bf16 (total_M, K) x (G, K, N) with offs"


@pytest.mark.parametrize("layout", ["k", "n"])
def test_float16_and_float32_results(layout):
    run_and_check([50, 300, 7], layout, torch.float16)
    run_and_check([50, 300, 7], layout, torch.bfloat16, out_dtype=torch.float32)


def test_copied_operands():
    """b with unit stride in neither dimension, a with padded rows (read in place) and K = 100
    (rows not 16-byte multiples: a and b copied to padded rows)."""
    run_and_check([70, 0, 33], "strided")
    a = values(120, K + 16)[:, :K]
    b, offs = weights(2, N, K, "k"), offsets([100, 20])
    ref, mass, _ = reference(a, b, clamped_rows(offs.tolist(), 120))
    close(tilepipe.grouped_mm(a, b, offs), ref, bound(ref, mass, K, torch.bfloat16), "padded a")
    run_and_check([40, 9], "k", k=100)
    run_and_check([40, 9], "n", k=100, n=100)


def test_rows_past_the_last_offset_not_compared_but_groups_are():
    run_and_check([30, 0, 45], spare_rows=50)


def test_out_of_range_offsets_are_clamped():
    """Past the end, negative and decreasing offsets: each group's rows clamped into [0, rows]."""
    rows = 40
    a, b = values(rows, K), weights(4, N, K, "k")
    offs = torch.tensor([10, 10, 50, -3], dtype=torch.int32, device="cuda")
    d = tilepipe.grouped_mm(a, b, offs)
    ref, mass, covered = reference(a, b, clamped_rows(offs.tolist(), rows))
    assert bool(covered.all())
    close(d, ref, bound(ref, mass, K, torch.bfloat16), "clamped")


def test_three_dimensional_a_without_offs():
    """torch._grouped_mm's 3-D x 3-D case: every group's M rows."""
    groups, m = 5, 70
    a, b = values(groups, m, K), weights(groups, N, K, "n")
    d = tilepipe.grouped_mm(a, b)
    assert d.shape == (groups, m, N) and d.is_contiguous()
    ref = torch.bmm(a.double(), b.double())
    mass = torch.bmm(a.double().abs(), b.double().abs())
    close(d, ref, bound(ref, mass, K, torch.bfloat16), "3-D")


def check_masked(d, a, b, counts):
    """Group g's first counts[g] rows (clamped into [0, M_max]) against the reference, and the
    rest exactly zero."""
    m_max = a.shape[1]
    assert d.shape == (a.shape[0], m_max, b.shape[2]) and d.is_contiguous()
    for g, c in enumerate(counts):
        c = min(max(c, 0), m_max)
        ref, mass, _ = reference(a[g], b[g:g + 1], [(0, c)])
        close(d[g, :c], ref[:c], bound(ref, mass, a.shape[2], d.dtype)[:c], f"group {g}")
        assert bool((d[g, c:] == 0).all()), f"group {g}: rows past its count are not zero"


@pytest.mark.parametrize("layout", ["k", "n"])
def test_masked(layout):
    counts = [0, 1, 130, 256, 77, -5, 1000]  # the last two out of range: clamped
    a, b = values(len(counts), 256, K), weights(len(counts), N, K, layout)
    counts_t = torch.tensor(counts, dtype=torch.int32, device="cuda")
    check_masked(tilepipe.grouped_mm_masked(a, b, counts_t), a, b, counts)


def test_empty_extents():
    b = weights(3, 32, 64, "k")
    d = tilepipe.grouped_mm(values(0, 64), b, offsets([0, 0, 0]))
    assert d.shape == (0, 32)
    d = tilepipe.grouped_mm(values(8, 0), weights(3, 32, 0, "k"), offsets([3, 0, 5]))
    assert d.shape == (8, 32) and bool((d == 0).all())
    d = tilepipe.grouped_mm_masked(values(3, 8, 0), weights(3, 32, 0, "k"), offsets([1, 1, 1]))
    assert d.shape == (3, 8, 32) and bool((d == 0).all())


# ---- Registration: opcheck, torch.compile, CUDA graphs ----


def test_opcheck():
    a, b, offs = values(300, K), weights(4, N, K, "k"), offsets([100, 0, 150, 50])
    torch.library.opcheck(torch.ops.tilepipe.grouped_mm.default, (a, b, offs))
    a3, counts = values(4, 64, K), offsets([10, 0, 30, 20])  # counts 10, 10, 40, 60
    torch.library.opcheck(torch.ops.tilepipe.grouped_mm_masked.default, (a3, b, counts))
    torch.library.opcheck(torch.ops.tilepipe.grouped_mm.default, (a3, b),
                          {"out_dtype": torch.float32})


def test_torch_compile_fullgraph():
    a, w, offs = values(400, K), values(6, N, K), offsets([100, 0, 50, 150, 1, 99])

    def experts(x, weight, ends):
        return torch.relu(tilepipe.grouped_mm(x, weight.transpose(-2, -1), ends))

    # Against the reference, not bit for bit against eager: the compiled graph may hand the
    # operator a contiguous copy of the transposed weight, which it reads as the other layout.
    compiled = torch.compile(experts, fullgraph=True)
    b = w.transpose(-2, -1)
    ref, mass, covered = reference(a, b, clamped_rows(offs.tolist(), a.shape[0]))
    assert bool(covered.all())
    tol = bound(ref, mass, K, torch.bfloat16)
    close(compiled(a, w, offs), torch.relu(ref), tol, "compiled")
    close(experts(a, w, offs), torch.relu(ref), tol, "eager")


def capture(fn):
    """fn() captured in a CUDA graph after a warm-up call on a side stream; the graph and the
    captured result."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = fn()
    return graph, out


def test_cuda_graph_replay_with_new_offsets():
    """One capture; offs changed in device memory before each replay, which uses the new sizes."""
    rows, groups = 600, 8
    a, b = values(rows, K), weights(groups, N, K, "k")
    offs = offsets([rows // groups] * groups)
    graph, d = capture(lambda: tilepipe.grouped_mm(a, b, offs))
    for seed, spare in ((3, 0), (4, 0), (5, 100)):
        counts = draw(groups, rows - spare, seed, zeros=True)
        offs.copy_(offsets(counts))
        a.copy_(values(rows, K))
        d.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        ref, mass, covered = reference(a, b, clamped_rows(offs.tolist(), rows))
        tol = bound(ref, mass, K, torch.bfloat16)
        close(d[covered], ref[covered], tol[covered], f"replay {seed}")


def test_cuda_graph_replay_masked():
    groups, m_max = 6, 200
    a, b = values(groups, m_max, K), weights(groups, N, K, "n")
    counts = offsets([0] * groups)  # placeholder values, replaced before each replay
    graph, d = capture(lambda: tilepipe.grouped_mm_masked(a, b, counts))
    for seed in (6, 7):
        new = draw(groups, 3 * m_max, seed, zeros=True)
        new = [min(c, m_max) for c in new]
        counts.copy_(torch.tensor(new, dtype=torch.int32, device="cuda"))
        d.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        check_masked(d, a, b, new)


# ---- Errors ----


def _ok():
    return values(64, 128), weights(4, 48, 128, "k"), offsets([16, 16, 16, 16])


BAD_CALLS = {
    "a float32": (TypeError, r"a has dtype torch\.float32",
                  lambda a, b, o: tilepipe.grouped_mm(a.float(), b, o)),
    "dtypes differ": (TypeError, r"b has dtype torch\.float16 but a has torch\.bfloat16",
                      lambda a, b, o: tilepipe.grouped_mm(a, b.half(), o)),
    "offs int64": (TypeError, r"offs has dtype torch\.int64; it must be torch\.int32",
                   lambda a, b, o: tilepipe.grouped_mm(a, b, o.long())),
    "out_dtype": (TypeError, r"out_dtype torch\.float32 is not taken with a of torch\.float16",
                  lambda a, b, o: tilepipe.grouped_mm(a.half(), b.half(), o, torch.float32)),
    "a on cpu": (ValueError, r"a is on cpu",
                 lambda a, b, o: tilepipe.grouped_mm(a.cpu(), b, o)),
    "offs on cpu": (ValueError, r"offs is on cpu",
                    lambda a, b, o: tilepipe.grouped_mm(a, b, o.cpu())),
    "K differs": (ValueError, r"K = 128 columns but b .* has 144 rows",
                  lambda a, b, o: tilepipe.grouped_mm(a, weights(4, 48, 144, "k"), o)),
    "offs shape": (ValueError, r"offs must be \(G,\) = \(4,\)",
                   lambda a, b, o: tilepipe.grouped_mm(a, b, o[:3])),
    "b 2-D": (ValueError, r"b must be \(G, K, N\)",
              lambda a, b, o: tilepipe.grouped_mm(a, b[0], o)),
    "no group": (ValueError, r"has G = 0 groups",
                 lambda a, b, o: tilepipe.grouped_mm(a, b[:0], o[:0])),
    "257 groups": (ValueError, r"has G = 257 groups",
                   lambda a, b, o: tilepipe.grouped_mm(a, weights(257, 8, 128, "k"),
                                                       offsets([0] * 257))),
    "offs None": (ValueError, r"offs is None but a is 2-D",
                  lambda a, b, o: tilepipe.grouped_mm(a, b)),
    "offs with 3-D a": (ValueError, r"offs is given but a is 3-D",
                        lambda a, b, o: tilepipe.grouped_mm(a.view(4, 16, 128), b, o)),
    "masked counts int64": (TypeError, r"counts has dtype torch\.int64",
                            lambda a, b, o: tilepipe.grouped_mm_masked(a.view(4, 16, 128), b,
                                                                       o.long())),
    "masked 2-D a": (ValueError, r"a must be \(G, M_max, K\)",
                     lambda a, b, o: tilepipe.grouped_mm_masked(a, b, o)),
    "masked groups differ": (ValueError, r"has 2 groups but b .* has 4",
                             lambda a, b, o: tilepipe.grouped_mm_masked(a.view(2, 32, 128), b, o)),
}


@pytest.mark.parametrize("case", list(BAD_CALLS))
def test_bad_arguments_raise(case):
    error, match, call = BAD_CALLS[case]
    with pytest.raises(error, match=match):
        call(*_ok())
