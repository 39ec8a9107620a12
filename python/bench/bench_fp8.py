"""Times tilepipe.scaled_mm (GemmFp8Sm90) against torch._scaled_mm (cuBLASLt) in one process.

    python3 python/bench/bench_fp8.py [--quick] [--json FILE]

e4m3 A and B, bf16 result, per scale mode (tensorwise, row-wise, block-wise 1 x 128 / 128 x 128),
on the FP8 issue's shapes and DeepSeek-V3's projections (N x K of 2112 x 7168, 24576 x 1536,
32768 x 512, 7168 x 16384, 4096 x 7168, 7168 x 2048 at M = 64, 128 and 4096). Both are called
the same way (a (M, K) row-major, b = w.t() of an (N, K) weight, torch._scaled_mm's scale
shapes and its default use_fast_accum=False, whose 128-deep promotion tilepipe matches), timed
with CUDA events as a median over repetitions of back-to-back calls, the two alternating
repetition by repetition so that clock drift hits both. Each pair of results is compared too
(largest difference over the largest magnitude). torch refuses block-wise scales where N or K is
not a multiple of 128 (N = 2112): "-" there.

Ends with `summary:` lines: per mode, the worst and geometric-mean ratios (tilepipe / torch) at
M >= 4096 and at M <= 128.
"""

import argparse
import json
import math
import statistics

import torch

import tilepipe

ISSUE_SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (4096, 7168, 16384), (128, 7168, 16384),
                (64, 4096, 7168)]
DEEPSEEK_NK = [(2112, 7168), (24576, 1536), (32768, 512), (7168, 16384), (4096, 7168),
               (7168, 2048)]
MODES = ["tensorwise", "rowwise", "blockwise"]


def shapes(quick):
    out = list(ISSUE_SHAPES)
    for m in (64, 128, 4096):
        out += [(m, n, k) for n, k in DEEPSEEK_NK if (m, n, k) not in out]
    return out[:4] if quick else out


def scales(mode, m, n, k):
    kb, nb = -(-k // 128), -(-n // 128)
    if mode == "tensorwise":
        return torch.rand((), device="cuda") + 0.5, torch.rand((), device="cuda") + 0.5
    if mode == "rowwise":
        return torch.rand(m, 1, device="cuda") + 0.5, torch.rand(1, n, device="cuda") + 0.5
    return torch.rand(kb, m, device="cuda").t() + 0.5, torch.rand(nb, kb, device="cuda").t() + 0.5


def time_pair(fns, flops, reps):
    """Median microseconds per call of each function in `fns`, alternating repetitions."""
    calls = max(10, min(1000, int(20e-3 / max(flops / 1000e12, 2e-6))))
    for fn in fns:
        for _ in range(5):
            fn()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = [[] for _ in fns]
    for _ in range(reps):
        for fn, t in zip(fns, times):
            start.record()
            for _ in range(calls):
                fn()
            stop.record()
            stop.synchronize()
            t.append(start.elapsed_time(stop) * 1000.0 / calls)
    return [statistics.median(t) for t in times]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="four shapes, few repetitions")
    parser.add_argument("--json", help="write the rows to this file")
    args = parser.parse_args()
    reps = 3 if args.quick else 15
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, e4m3 -> bf16, TFLOP/s")
    print("| M x N x K | mode | tilepipe | torch._scaled_mm | ratio | max diff / max |")
    print("| --- | --- | --- | --- | --- | --- |")
    rows = []
    for m, n, k in shapes(args.quick):
        a = (torch.randn(m, k, device="cuda") * 2).to(torch.float8_e4m3fn)
        w = (torch.randn(n, k, device="cuda") * 2).to(torch.float8_e4m3fn)
        flops = 2.0 * m * n * k
        for mode in MODES:
            sa, sb = scales(mode, m, n, k)

            def ours():
                return tilepipe.scaled_mm(a, w.t(), sa, sb, out_dtype=torch.bfloat16)

            def peer():
                return torch._scaled_mm(a, w.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)

            try:
                want = peer().float()
            except (RuntimeError, ValueError, NotImplementedError):
                want = None
            got = ours().float()
            if want is None:
                (t_ours,) = time_pair([ours], flops, reps)
                t_peer, diff = None, float("nan")
            else:
                t_ours, t_peer = time_pair([ours, peer], flops, reps)
                diff = float((got - want).abs().max() / want.abs().max().clamp_min(1e-30))
            row = {"m": m, "n": n, "k": k, "mode": mode, "tilepipe_tflops": flops / t_ours / 1e6,
                   "torch_tflops": flops / t_peer / 1e6 if t_peer else None, "diff": diff}
            row["ratio"] = t_peer / t_ours if t_peer else None
            rows.append(row)
            peer_text = f"{row['torch_tflops']:.0f}" if t_peer else "- (refused)"
            ratio_text = f"{row['ratio']:.2f}" if t_peer else "-"
            print(f"| {m} x {n} x {k} | {mode} | {row['tilepipe_tflops']:.0f} | {peer_text} | "
                  f"{ratio_text} | {diff:.1e} |", flush=True)
    for mode in MODES:
        for name, keep in (("M >= 4096", lambda r: r["m"] >= 4096),
                           ("M <= 128", lambda r: r["m"] <= 128)):
            ratios = [r["ratio"] for r in rows if r["mode"] == mode and keep(r) and r["ratio"]]
            if ratios:
                geo = math.exp(sum(map(math.log, ratios)) / len(ratios))
                print(f"summary: {mode} {name}: worst {min(ratios):.2f} x, geomean {geo:.2f} x, "
                      f"best {max(ratios):.2f} x over {len(ratios)} shapes")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
