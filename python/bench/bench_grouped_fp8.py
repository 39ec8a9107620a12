"""Times tilepipe.scaled_grouped_mm (GemmGroupedFp8Sm90) against torch._scaled_grouped_mm
(row-wise, the mode torch takes) and tilepipe.scaled_mm on the same total size (our dense FP8
GEMM), in one process.

    python3 python/bench/bench_grouped_fp8.py [--quick] [--json FILE]

e4m3 -> bf16 on bench_grouped.py's shapes and routings (balanced, and Zipf-routed rows), plus 32
experts of 64 rows (a decode step's). Per shape: tilepipe row-wise and block-wise (DeepSeek-V3's
scales), torch row-wise and tilepipe's dense FP8 GEMM row-wise, timed with CUDA events as a median
over repetitions of back-to-back calls replayed from CUDA graphs, the four alternating repetition by
repetition (bench_fp8.py's time_pair), then tilepipe's row-wise and torch's again in blocks
("steady"). tilepipe's row-wise result is compared with torch's (largest difference over the
largest magnitude).

Ends with `summary:` lines: the worst and geometric-mean ratios of tilepipe row-wise over torch,
per routing.
"""

import argparse
import json
import math

import torch

import tilepipe
from bench_fp8 import time_pair
from bench_grouped import ROUTINGS, SHAPES, geomean, split

FP8 = torch.float8_e4m3fn


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="two shapes, few repetitions")
    parser.add_argument("--json", help="write the rows to this file")
    args = parser.parse_args()
    reps = 3 if args.quick else 15
    shapes = SHAPES + [(32, 64, 4096, 7168)]
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, e4m3 -> bf16, TFLOP/s, "
          "CUDA graphs")
    print("| experts x rows, N, K | routing | tilepipe row-wise | tilepipe block-wise | "
          "torch._scaled_grouped_mm | tilepipe dense (row-wise) | vs torch | vs torch (steady) | "
          "vs dense | max diff / max |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    rows = []
    for groups, rows_each, n, k in shapes[-2:] if args.quick else shapes:
        total = groups * rows_each
        flops = 2.0 * total * n * k
        kb, nb = math.ceil(k / 128), math.ceil(n / 128)
        a = (torch.randn(total, k, device="cuda") * 2).to(FP8)
        w = (torch.randn(groups, n, k, device="cuda") * 2).to(FP8)
        b = w.transpose(-2, -1)
        sa, sb = torch.rand(total, device="cuda") + 0.5, torch.rand(groups, n, device="cuda") + 0.5
        sa_block = torch.rand(total, kb, device="cuda") + 0.5
        sb_block = torch.rand(groups, kb, nb, device="cuda") + 0.5
        dense_w = w[0].t()
        for routing in ROUTINGS:
            counts = split(groups, rows_each, routing)
            offs = torch.tensor(counts).cumsum(0).to(device="cuda", dtype=torch.int32)

            def ours():
                return tilepipe.scaled_grouped_mm(a, b, sa, sb, offs)

            def ours_block():
                return tilepipe.scaled_grouped_mm(a, b, sa_block, sb_block, offs)

            def peer():
                return torch._scaled_grouped_mm(a, b, sa, sb, offs=offs, out_dtype=torch.bfloat16)

            def dense():
                return tilepipe.scaled_mm(a, dense_w, sa[:, None], sb[0][None, :])

            got = ours().float()
            try:
                want = peer().float()
            except (AttributeError, RuntimeError, ValueError, NotImplementedError) as e:
                print(f"torch._scaled_grouped_mm refused: {e}")
                want = None
            fns = [ours, ours_block, dense] + ([peer] if want is not None else [])
            times = time_pair(fns, flops, reps, graph=True)
            t_ours, t_block, t_dense = times[:3]
            t_peer = times[3] if want is not None else None
            steady = None
            if want is not None:
                s_ours, s_peer = time_pair([ours, peer], flops, reps, graph=True, blocks=True)
                steady = s_peer / s_ours
            diff = (float((got - want).abs().max() / want.abs().max().clamp_min(1e-30))
                    if want is not None else float("nan"))

            def tf(us):
                return flops / us / 1e6

            row = {"groups": groups, "rows_each": rows_each, "n": n, "k": k, "routing": routing,
                   "rowwise_tflops": tf(t_ours), "blockwise_tflops": tf(t_block),
                   "torch_tflops": tf(t_peer) if t_peer else None, "dense_tflops": tf(t_dense),
                   "vs_torch": t_peer / t_ours if t_peer else None, "vs_torch_steady": steady,
                   "vs_dense": t_dense / t_ours, "diff": diff}
            rows.append(row)
            peer_text = f"{row['torch_tflops']:.0f}" if t_peer else "- (refused)"
            vs_torch = f"{row['vs_torch']:.2f} | {steady:.2f}" if t_peer else "- | -"
            print(f"| {groups} x {rows_each}, {n}, {k} | {routing} | {row['rowwise_tflops']:.0f} | "
                  f"{row['blockwise_tflops']:.0f} | {peer_text} | {row['dense_tflops']:.0f} | "
                  f"{vs_torch} | {row['vs_dense']:.2f} | {diff:.1e} |", flush=True)
    for key, timing in (("vs_torch", ""), ("vs_torch_steady", " (steady)")):
        for routing in ROUTINGS:
            ratios = [r[key] for r in rows if r["routing"] == routing and r[key]]
            if ratios:
                print(f"summary: row-wise vs torch._scaled_grouped_mm{timing}, {routing}: worst "
                      f"{min(ratios):.2f} x, geomean {geomean(ratios):.2f} x over {len(ratios)} "
                      "shapes")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
