"""Times tilepipe.scaled_mm (GemmFp8Sm90) against torch._scaled_mm (cuBLASLt) in one process.

    python3 python/bench/bench_fp8.py [--quick] [--json FILE]

e4m3 A and B, bf16 result, per scale mode (tensorwise, row-wise, block-wise 1 x 128 / 128 x 128),
on the FP8 issue's shapes and DeepSeek-V3's projections (N x K of 2112 x 7168, 24576 x 1536,
32768 x 512, 7168 x 16384, 4096 x 7168, 7168 x 2048 at M = 64, 128 and 4096). Both are called
the same way (a (M, K) row-major, b = w.t() of an (N, K) weight, torch._scaled_mm's scale
shapes and its default use_fast_accum=False, whose 128-deep promotion tilepipe matches). Each is
timed three ways, with CUDA events as a median over repetitions:
- replaying a CUDA graph of back-to-back calls, the two alternating repetition by repetition (a
  repetition lasts about 20 ms): the kernels alone, as a server that captures its decode step
  runs them. The main figures and ratio. The GPU's power cap cannot follow 20 ms turns, so both
  run at about one clock: the ratio is one of work per clock (performance log 59).
- the same graphs in blocks (each operator's repetitions in a row, twice, ABAB), "steady": each
  at the clock its own power draw settles to under the cap, as a long run of one kernel would.
  Under a cap a kernel that draws less power per second runs at a higher clock here.
- calling eagerly, back to back, alternating: what a PyTorch program without graphs gets, host
  time included. Where a kernel takes 7-46 us (M <= 128) the host paths weigh in this ratio.
Each pair of results is compared too (largest difference over the largest magnitude). Where torch
refuses a problem (a scale layout its version lacks), "-" there; torch 2.11 ran every one.

Ends with `summary:` lines: per mode and timing, the worst, geometric-mean and best ratios
(tilepipe / torch) at M >= 4096 and at M <= 128.
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


def graph_of(fn, calls):
    """A CUDA graph of `calls` back-to-back calls of `fn` (warmed up on the capture's stream)."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(calls):
            fn()
    return graph


def time_pair(fns, flops, reps, graph=False, blocks=False):
    """Median microseconds per call of each function in `fns`, alternating repetitions; with
    `graph`, each repetition replays a CUDA graph of the calls; with `blocks`, each function's
    repetitions run in a row (after 3 untimed ones), all functions in turn, twice."""
    calls = max(10, min(200 if graph else 1000, int(20e-3 / max(flops / 1000e12, 2e-6))))
    for fn in fns:
        for _ in range(5):
            fn()
    if graph:
        graphs = [graph_of(fn, calls) for fn in fns]
        runs = [g.replay for g in graphs]
    else:
        def eager(fn):
            def run():
                for _ in range(calls):
                    fn()
            return run
        runs = [eager(fn) for fn in fns]
    for run in runs:
        run()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = [[] for _ in fns]

    def timed(run):
        start.record()
        run()
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop) * 1000.0 / calls

    if blocks:
        for _ in range(2):
            for run, t in zip(runs, times):
                for _ in range(3):
                    run()
                t.extend(timed(run) for _ in range(reps))
    else:
        for _ in range(reps):
            for run, t in zip(runs, times):
                t.append(timed(run))
    return [statistics.median(t) for t in times]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="four shapes, few repetitions")
    parser.add_argument("--json", help="write the rows to this file")
    args = parser.parse_args()
    reps = 3 if args.quick else 15
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, e4m3 -> bf16, TFLOP/s")
    print("| M x N x K | mode | tilepipe | torch._scaled_mm | ratio (graph) | ratio (steady) | "
          "ratio (eager) | max diff / max |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
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
                (t_ours,) = time_pair([ours], flops, reps, graph=True)
                t_peer, eager, steady, diff = None, None, None, float("nan")
            else:
                e_ours, e_peer = time_pair([ours, peer], flops, reps)
                try:
                    t_ours, t_peer = time_pair([ours, peer], flops, reps, graph=True)
                    s_ours, s_peer = time_pair([ours, peer], flops, reps, graph=True, blocks=True)
                except RuntimeError as e:  # a capture the peer refuses: the eager figures
                    print(f"# {m} x {n} x {k} {mode}: no CUDA graph ({e}); eager times shown")
                    t_ours, t_peer = e_ours, e_peer
                    s_ours, s_peer = e_ours, e_peer
                eager = e_peer / e_ours
                steady = s_peer / s_ours
                diff = float((got - want).abs().max() / want.abs().max().clamp_min(1e-30))
            row = {"m": m, "n": n, "k": k, "mode": mode, "tilepipe_tflops": flops / t_ours / 1e6,
                   "torch_tflops": flops / t_peer / 1e6 if t_peer else None, "diff": diff,
                   "ratio": t_peer / t_ours if t_peer else None, "steady_ratio": steady,
                   "eager_ratio": eager}
            rows.append(row)
            peer_text = f"{row['torch_tflops']:.0f}" if t_peer else "- (refused)"
            ratio_text = (f"{row['ratio']:.2f} | {steady:.2f} | {eager:.2f}" if t_peer
                          else "- | - | -")
            print(f"| {m} x {n} x {k} | {mode} | {row['tilepipe_tflops']:.0f} | {peer_text} | "
                  f"{ratio_text} | {diff:.1e} |", flush=True)
    for timing, key in (("graph", "ratio"), ("steady", "steady_ratio"), ("eager", "eager_ratio")):
        for mode in MODES:
            for name, keep in (("M >= 4096", lambda r: r["m"] >= 4096),
                               ("M <= 128", lambda r: r["m"] <= 128)):
                ratios = [r[key] for r in rows if r["mode"] == mode and keep(r) and r[key]]
                if ratios:
                    geo = math.exp(sum(map(math.log, ratios)) / len(ratios))
                    print(f"summary ({timing}): {mode} {name}: worst {min(ratios):.2f} x, "
                          f"geomean {geo:.2f} x, best {max(ratios):.2f} x over {len(ratios)} shapes")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
