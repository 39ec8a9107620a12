#!/usr/bin/env python3
"""Time a Triton matmul on gemm_bench's problems: the comparison table's last column.

    python3 bench/triton_matmul.py [--bench-json BENCH.json] [--quick] [--filter S1,S2]
                                   [--json TRITON.json]

The kernel is this file's own: one output tile per program, grouped along M so that neighbouring
programs share B tiles in L2, K in steps of BLOCK_K through tl.dot with f32 accumulation, D
stored in the input type (f32 problems: f32 A, B and D, which tl.dot multiplies as tf32, its
default precision for f32); triton.autotune picks among a few tile configurations per shape (the
first call of each shape, before anything is timed). Triton lowers tl.dot to wgmma on sm_90 and
to mma.sync on sm_80.

The problems are gemm_bench's: those in BENCH.json (gemm_bench --json) when given, else the same
list gemm_bench makes (--quick and --filter as there). Each is measured as gemm_bench measures
(docs/performance.md): inputs uniform in [-1, 1), enough input sets that one pass covers 3x the
L2, used in turn; D poisoned to NaN and checked once against an f32 reference on the same inputs
(relative Frobenius error < 1e-2, no NaN/Inf); then 8 rounds of 3 warm-up runs and an eighth of
the timed runs (about 100 ms in all, 3 to 200 per round), queued behind a sleep kernel (longer than
gemm_bench's spin: a launch from Python takes more host time), each between its own pair of CUDA
events; the median is reported. There is no mma.sync peak kernel in turns
and no other configuration to take turns with, so compare with gemm_bench's columns knowing that
they were timed in another process, at another moment of the GPU's clock.

Prints a table (with BENCH.json: next to tilepipe's default and cuBLAS, and tilepipe's default
over Triton) and writes --json, whose records scripts/plot_bench.py merges with --peers.
Exits 0 with a message where triton or torch cannot be imported or there is no GPU; 3 if a result
failed verification.
"""

import argparse
import datetime
import json
import math
import statistics
import sys

SQUARES = [512, 1024, 2048, 4096, 8192, 16384]
SQUARES_QUICK = [1024, 4096]
F32_SQUARES = [2048, 4096]
F32_SQUARES_QUICK = [4096]
MODEL_M = [16, 128, 1024, 8192]
MODEL_M_QUICK = [16, 1024]
MODEL_NK = [(4096, 4096), (14336, 4096), (4096, 14336)]
MODEL_NK_QUICK = [(4096, 4096)]
L2_FACTOR = 3.0
VERIFY_THRESHOLD = 1e-2
ROUNDS = 8
WARMUP_RUNS = 3


def problems_of(args):
    """[(group, m, n, k, dtype, layout)] in gemm_bench's table order."""
    if args.bench_json:
        with open(args.bench_json) as f:
            bench = json.load(f)
        seen, out = set(), []
        for r in bench["records"]:
            p = (r["group"], r["m"], r["n"], r["k"], r["dtype"], r["layout"])
            if p not in seen:
                seen.add(p)
                out.append(p)
        return bench, out
    squares = SQUARES_QUICK if args.quick else SQUARES
    ms = MODEL_M_QUICK if args.quick else MODEL_M
    nks = MODEL_NK_QUICK if args.quick else MODEL_NK
    out = []
    for dtype in ("f16", "bf16"):
        for layout in ("tn", "nn"):
            out += [("square", s, s, s, dtype, layout) for s in squares]
            out += [("model", m, n, k, dtype, layout) for n, k in nks for m in ms]
            if not args.quick:
                out.append(("edge", 1000, 3000, 4104, dtype, layout))
    f32_squares = F32_SQUARES_QUICK if args.quick else F32_SQUARES
    for layout in ("tn", "nn"):
        out += [("square", s, s, s, "f32", layout) for s in f32_squares]
    return None, out


def key_of(p):
    group, m, n, k, dtype, layout = p
    return f"{dtype}/{layout}/{m}x{n}x{k}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bench-json", help="gemm_bench --json output: its problems and columns")
    parser.add_argument("--quick", action="store_true", help="gemm_bench --quick's problems")
    parser.add_argument("--filter", default="", help="only problems whose key contains one of these")
    parser.add_argument("--json", help="write the measurements here (scripts/plot_bench.py --peers)")
    parser.add_argument("--runs", type=int, default=20, help="at least this many timed runs")
    parser.add_argument("--target-ms", type=float, default=100.0, help="about this much GPU time")
    args = parser.parse_args()

    try:
        import torch
        import triton
        import triton.language as tl
    except ImportError as e:
        print(f"triton_matmul: skipped: {e}", file=sys.stderr)
        return 0
    if not torch.cuda.is_available():
        print("triton_matmul: skipped: torch sees no CUDA device", file=sys.stderr)
        return 0

    configs = [
        # BLOCK_M, BLOCK_N, BLOCK_K, stages, warps
        (128, 256, 64, 3, 8),
        (256, 128, 64, 3, 8),
        (128, 128, 64, 4, 8),
        (128, 128, 64, 4, 4),
        (128, 64, 64, 4, 4),
        (64, 128, 64, 4, 4),
        (64, 64, 64, 4, 4),
    ]

    @triton.autotune(
        configs=[triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8},
                               num_stages=s, num_warps=w) for bm, bn, bk, s, w in configs],
        key=["M", "N", "K", "stride_am", "stride_ak"])
    @triton.jit
    def matmul_kernel(a, b, d, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_dm,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                      GROUP_M: tl.constexpr):
        # Programs walk the output in groups of GROUP_M tile rows, column by column within a group.
        pid = tl.program_id(0)
        tiles_m = tl.cdiv(M, BLOCK_M)
        tiles_n = tl.cdiv(N, BLOCK_N)
        per_group = GROUP_M * tiles_n
        first_m = (pid // per_group) * GROUP_M
        rows_in_group = min(tiles_m - first_m, GROUP_M)
        tile_m = first_m + (pid % per_group) % rows_in_group
        tile_n = (pid % per_group) // rows_in_group

        rm = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
        rk = tl.arange(0, BLOCK_K)
        a_tile = a + rm[:, None] * stride_am + rk[None, :] * stride_ak  # (BLOCK_M, BLOCK_K)
        b_tile = b + rk[:, None] * stride_bk + rn[None, :] * stride_bn  # (BLOCK_K, BLOCK_N)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k0 in range(0, K, BLOCK_K):
            k_ok = rk < K - k0
            x = tl.load(a_tile, mask=(rm[:, None] < M) & k_ok[None, :], other=0.0)
            y = tl.load(b_tile, mask=k_ok[:, None] & (rn[None, :] < N), other=0.0)
            acc = tl.dot(x, y, acc)
            a_tile += BLOCK_K * stride_ak
            b_tile += BLOCK_K * stride_bk
        out = d + rm[:, None] * stride_dm + rn[None, :]
        tl.store(out, acc.to(d.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))

    def matmul(a, b, d):
        m, k = a.shape
        n = b.shape[1]
        grid = lambda meta: (triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"]),)  # noqa: E731
        matmul_kernel[grid](a, b, d, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                            d.stride(0))

    torch.backends.cuda.matmul.allow_tf32 = False  # the reference is a true f32 product
    # f32 problems keep f32 A, B and D; tl.dot multiplies them as tf32 (its default precision for
    # f32), so their peers are tilepipe's tf32 rows and cuBLAS's tf32 GEMM.
    TORCH_DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}
    props = torch.cuda.get_device_properties(0)
    l2_bytes = getattr(props, "L2_cache_size", 50 << 20)
    bench, problems = problems_of(args)
    filters = [f for f in args.filter.split(",") if f]
    problems = [p for p in problems if not filters or any(f in key_of(p) for f in filters)]
    print(f"[triton] {props.name}, triton {triton.__version__}, torch {torch.__version__}, "
          f"{len(problems)} problems", file=sys.stderr)

    records = []
    for seed, p in enumerate(problems, start=1):
        group, m, n, k, dtype, layout = p
        torch_dtype = TORCH_DTYPES[dtype]
        set_bytes = torch_dtype.itemsize * (m * k + k * n + m * n)
        sets = max(1, min(1024, math.ceil(L2_FACTOR * l2_bytes / set_bytes)))
        free, _ = torch.cuda.mem_get_info()
        if free < set_bytes + 4 * m * n + (1 << 30):
            print(f"[triton] {key_of(p)}: skipped (not enough memory)", file=sys.stderr)
            continue
        sets = max(1, min(sets, (free - 4 * m * n - (1 << 30)) // set_bytes))
        gen = torch.Generator(device="cuda").manual_seed(seed)

        def uniform(*shape):
            return (torch.rand(*shape, device="cuda", generator=gen) * 2 - 1).to(torch_dtype)

        # A is M x K: row-major (TN) or column-major (NN); B is K x N column-major; D row-major.
        a_sets = [uniform(m, k) if layout == "tn" else uniform(k, m).t() for _ in range(sets)]
        b_sets = [uniform(n, k).t() for _ in range(sets)]
        d_sets = [torch.empty(m, n, device="cuda", dtype=torch_dtype) for _ in range(sets)]

        # Verification: set 0, D poisoned first.
        d_sets[0].fill_(float("nan"))
        matmul(a_sets[0], b_sets[0], d_sets[0])  # the first call of a shape also autotunes
        d_sets[0].fill_(float("nan"))
        matmul(a_sets[0], b_sets[0], d_sets[0])
        ref = a_sets[0].float() @ b_sets[0].float()
        got = d_sets[0].float()
        nonfinite = int((~torch.isfinite(got)).sum())
        err = float(torch.linalg.norm(torch.nan_to_num(got) - ref) / torch.linalg.norm(ref))
        verified = nonfinite == 0 and err < VERIFY_THRESHOLD

        # Timing: rounds of warm-up and timed runs behind a sleep kernel, sets used in turn.
        samples, next_set = [], 0

        def run():
            nonlocal next_set
            matmul(a_sets[next_set], b_sets[next_set], d_sets[next_set])
            next_set = (next_set + 1) % sets

        per_round_min = (args.runs + ROUNDS - 1) // ROUNDS
        for _ in range(ROUNDS):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(WARMUP_RUNS):
                run()
            end.record()
            torch.cuda.synchronize()
            estimate = max(1e-3, start.elapsed_time(end) / WARMUP_RUNS)
            runs = max(per_round_min, min(200, math.ceil(args.target_ms / ROUNDS / estimate)))
            events = [torch.cuda.Event(enable_timing=True) for _ in range(runs + 1)]
            # A launch from Python costs more host time than gemm_bench's, so the queue needs a
            # longer head start: about 0.1 ms a run (in clock cycles, at most ~2 GHz).
            torch.cuda._sleep(int(2e6 * min(40.0, 1.0 + 0.1 * runs)))
            events[0].record()
            for i in range(runs):
                run()
                events[i + 1].record()
            torch.cuda.synchronize()
            samples += [events[i].elapsed_time(events[i + 1]) for i in range(runs)]
        samples.sort()
        median = statistics.median(samples)
        tflops = 2.0 * m * n * k / (median * 1e-3) / 1e12
        best = matmul_kernel.best_config
        config = (f"{best.kwargs['BLOCK_M']}x{best.kwargs['BLOCK_N']}x{best.kwargs['BLOCK_K']}"
                  f"/w{best.num_warps}/s{best.num_stages}")
        records.append({
            "group": group, "m": m, "n": n, "k": k, "dtype": dtype, "layout": layout,
            "kernel": "triton", "config": config, "ms": median, "ms_min": samples[0],
            "ms_q1": samples[len(samples) // 4], "ms_q3": samples[(3 * len(samples)) // 4],
            "ms_max": samples[-1], "runs": len(samples), "sets": sets, "tflops": tflops,
            "rel_error": err, "nonfinite": nonfinite, "verified": verified, "error": ""})
        print(f"[triton] {key_of(p):24} {config:22} {median:8.4f} ms {tflops:7.1f} TFLOP/s  "
              f"err {err:.2e}  {'ok' if verified else 'FAILED'}", file=sys.stderr)
        del a_sets, b_sets, d_sets, ref, got
        torch.cuda.empty_cache()

    # The table: with gemm_bench's JSON, tilepipe's default and cuBLAS from it, Triton last. For
    # f32 (tf32 in Triton) they are tilepipe's fastest tf32 configuration and cuBLAS's tf32 GEMM.
    def from_bench(p, kind):
        if not bench:
            return None
        tf32 = p[4] == "f32"
        def wanted(r):
            if kind == "cublas":
                return r["config"] == ("cublas-tf32" if tf32 else "cublas")
            if r["kernel"] != "tilepipe":
                return False
            return r["config"].endswith("/tf32") if tf32 else r["config"] == bench["default_config"]

        found = [r["tflops"] for r in bench["records"] if r["verified"] and wanted(r)
                 and (r["group"], r["m"], r["n"], r["k"], r["dtype"], r["layout"]) == p]
        return max(found) if found else None

    fmt = lambda x, f="%.1f": f % x if x is not None else "-"  # noqa: E731
    print(f"\nTriton matmul (this file's kernel, autotuned), TFLOP/s on {props.name}; "
          "default/ = tilepipe's default over Triton (gemm_bench's JSON, another process)")
    print(f"{'dtype':5} {'lay':3} {'M x N x K':18} {'default':>8} {'cuBLAS':>8} | "
          f"{'triton':>8} {'config':22} {'default/':>8} check")
    for r in records:
        p = (r["group"], r["m"], r["n"], r["k"], r["dtype"], r["layout"])
        default = from_bench(p, "default")
        ratio = default / r["tflops"] if default and r["verified"] else None
        shape = f"{r['m']}x{r['n']}x{r['k']}"
        print(f"{r['dtype']:5} {r['layout']:3} {shape:18} "
              f"{fmt(default):>8} {fmt(from_bench(p, 'cublas')):>8} | {fmt(r['tflops']):>8} {r['config']:22} "
              f"{fmt(ratio, '%.2f'):>8} {'ok' if r['verified'] else 'FAILED'}")

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"schema": "tilepipe-triton-matmul/1",
                       "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                       "command": " ".join(sys.argv),
                       "device": {"name": props.name, "cc": f"{props.major}.{props.minor}"},
                       "triton": triton.__version__, "torch": torch.__version__,
                       "records": records}, f, indent=1)
        print(f"[triton] wrote {args.json} ({len(records)} records)", file=sys.stderr)
    return 3 if any(not r["verified"] for r in records) else 0


if __name__ == "__main__":
    sys.exit(main())
