#!/usr/bin/env python3
"""Plot gemm_bench's JSON: TFLOP/s against square problem size, and tilepipe's ratio to each peer.

    scripts/plot_bench.py BENCH.json OUT.png [--dtype f16] [--layout tn] [--peers TRITON.json ...]

Top panel: one line per stage count of GemmMultistage's default tile (the JSON's default_config),
the best tilepipe configuration timed at each size, GemmAuto (the heuristic), cuBLAS, each other
peer the JSON holds (CUTLASS's kernels, with TILEPIPE_BENCH_CUTLASS: the fastest verified
configuration of each at each size), and the mma.sync peak of the register-only microbenchmark as
a horizontal reference. --peers merges the records of other files in the same form, e.g. the one
bench/triton_matmul.py writes. Bottom panel: tilepipe's default over each peer (above 1: tilepipe
is faster). Results that failed verification are left out of the lines and drawn as red crosses.
Needs matplotlib.
"""

import argparse
import json
import math
import sys

import matplotlib

matplotlib.use("Agg")  # no display on the GPU machine
import matplotlib.pyplot as plt  # noqa: E402



def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("json", help="the file written by gemm_bench --json")
    parser.add_argument("png", help="the plot to write")
    parser.add_argument("--dtype", default="f16", choices=["f16", "bf16"])
    parser.add_argument("--layout", default="tn", choices=["tn", "nn"])
    parser.add_argument("--peers", nargs="*", default=[], metavar="JSON",
                        help="more records to plot as peers (e.g. bench/triton_matmul.py --json)")
    args = parser.parse_args()

    with open(args.json) as f:
        bench = json.load(f)
    all_records = list(bench["records"])
    for path in args.peers:
        with open(path) as f:
            all_records += json.load(f)["records"]
    records = [
        r for r in all_records
        if r["group"] == "square" and r["dtype"] == args.dtype and r["layout"] == args.layout
    ]
    if not records:
        sys.exit(f"plot_bench: no square {args.dtype} {args.layout} results in {args.json}")
    sizes = sorted({r["m"] for r in records})

    # Kernels of other libraries besides cuBLAS (gemm_bench's "peers", and --peers files).
    tilepipe_kinds = {"tilepipe", "tilepipe-auto", "cublas"}
    peers = []
    for r in records:
        if r["kernel"] not in tilepipe_kinds and r["kernel"] not in peers:
            peers.append(r["kernel"])

    fig, (ax, ax_ratio) = plt.subplots(2, 1, figsize=(9, 8), sharex=True,
                                       gridspec_kw={"height_ratios": [3, 1.3]})

    def line(points, axis=None, **style):
        points = sorted(p for p in points if p[1] is not None)
        if points:
            (axis or ax).plot([p[0] for p in points], [p[1] for p in points], **style)

    # One line per stage count: what GemmMultistage<S> runs by default (DefaultGemmPolicy<S>; schema
    # 3 records it per S, e.g. the 64-deep tile up to 4 stages and the 32-deep one at 5 and 6 in a
    # build for sm_90), else the default tile at every stage count; the default (4 stages) heavier.
    default_config = bench.get("default_config", "128x128x32/w64x64/s4")
    default_stages = int(default_config.split("/")[2].lstrip("s"))
    by_stages = {int(s): c for s, c in bench.get("default_configs_by_stages", {}).items()}
    if not by_stages:
        prefix = default_config.rsplit("/", 1)[0]
        by_stages = {s: f"{prefix}/s{s}" for s in range(2, 7)}
    stages = sorted(s for s, c in by_stages.items()
                    if any(r["kernel"] == "tilepipe" and r["config"] == c for r in records))
    colors = plt.get_cmap("viridis")
    for i, s in enumerate(stages):
        pts = [(r["m"], r["tflops"]) for r in records
               if r["kernel"] == "tilepipe" and r["config"] == by_stages[s] and r["verified"]]
        tile = by_stages[s].split("/")[0]
        line(pts, marker="o", markersize=4, linewidth=2.2 if s == default_stages else 1.2,
             color=colors(i / max(1, len(stages) - 1) * 0.9),
             label=f"tilepipe default, {s} stages ({tile})" + (" (default)" if s == default_stages else ""))

    # Best tilepipe configuration timed at each size (all tiles and stages).
    best = []
    for m in sizes:
        ok = [r for r in records if r["m"] == m and r["kernel"] == "tilepipe" and r["verified"]]
        if ok:
            b = max(ok, key=lambda r: r["tflops"])
            best.append((m, b["tflops"], b["config"]))
    line([(m, t) for m, t, _ in best], marker="s", markersize=5, linestyle="--", color="tab:orange",
         label="tilepipe, best configuration timed")
    for m, t, name in best:
        ax.annotate(name.replace("/", " "), (m, t), textcoords="offset points", xytext=(0, 7),
                    ha="center", fontsize=6, color="tab:orange")

    # GemmAuto: the configuration heuristic (tile and split-K chosen per problem).
    auto = [(r["m"], r["tflops"]) for r in records if r["kernel"] == "tilepipe-auto" and r["verified"]]
    line(auto, marker="D", markersize=4, linestyle="-.", color="tab:green",
         label="tilepipe GemmAuto (heuristic tile and split-K)")

    cublas = [(r["m"], r["tflops"]) for r in records if r["kernel"] == "cublas" and r["verified"]]
    line(cublas, marker="^", linewidth=2.2, color="black", label="cuBLAS (cublasGemmEx, f32 compute)")

    # Each peer: its fastest verified configuration at each size.
    peer_colors = ["tab:purple", "tab:brown", "tab:pink", "tab:cyan", "tab:olive"]
    peer_best = {}
    for i, peer in enumerate(peers):
        best_at = {}
        for r in records:
            if r["kernel"] == peer and r["verified"] and r["tflops"] is not None:
                if r["m"] not in best_at or r["tflops"] > best_at[r["m"]]:
                    best_at[r["m"]] = r["tflops"]
        peer_best[peer] = best_at
        line(list(best_at.items()), marker="v", linewidth=1.6, color=peer_colors[i % len(peer_colors)],
             label=f"{peer}, fastest configuration timed")

    peak = bench.get("peak", {}).get(args.dtype, {}).get("tflops")
    if peak:
        ax.axhline(peak, color="tab:red", linestyle=":", linewidth=1.5,
                   label=f"mma.sync m16n8k16 peak ({peak:.0f})")

    failed = [(r["m"], r["tflops"]) for r in records if not r["verified"] and r["tflops"] is not None]
    if failed:
        ax.plot([p[0] for p in failed], [p[1] for p in failed], "x", color="red", markersize=9,
                label="failed verification")

    # tilepipe's default (GemmMultistage<default stages>) over each peer.
    default = {r["m"]: r["tflops"] for r in records
               if r["kernel"] == "tilepipe" and r["config"] == default_config and r["verified"]}
    over = [("cuBLAS", dict(cublas), "black")] + [
        (peer, peer_best[peer], peer_colors[i % len(peer_colors)]) for i, peer in enumerate(peers)]
    for name, theirs, color in over:
        pts = [(m, default[m] / t) for m, t in theirs.items() if m in default and t]
        line(pts, axis=ax_ratio, marker="o", markersize=4, color=color, label=f"over {name}")
    ax_ratio.axhline(1.0, color="grey", linewidth=1, linestyle=":")
    ax_ratio.set_ylabel("tilepipe default / peer")
    ax_ratio.grid(True, which="major", alpha=0.3)
    ax_ratio.legend(fontsize=7, loc="best")

    ax_ratio.set_xscale("log", base=2)
    ax_ratio.set_xticks(sizes)
    ax_ratio.set_xticklabels([str(s) for s in sizes])
    ax_ratio.set_xlabel("M = N = K")
    ax.set_ylabel("TFLOP/s")
    top = max([peak or 0] + [t for _, t in cublas] + [t for _, t, _ in best] + [t for _, t in auto] +
              [t for b in peer_best.values() for t in b.values()])
    ax.set_ylim(0, math.ceil(top * 1.12 / 50) * 50)
    ax.grid(True, which="major", alpha=0.3)
    device = bench.get("device", {}).get("name", "?")
    date = bench.get("date", "?")[:10]
    ax.set_title(f"GEMM {args.dtype} {args.layout.upper()} (D row-major {args.dtype}, f32 accumulate)"
                 f" on {device}, {date}", fontsize=10)
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    fig.savefig(args.png, dpi=130)
    print(f"plot_bench: wrote {args.png}")


if __name__ == "__main__":
    main()
