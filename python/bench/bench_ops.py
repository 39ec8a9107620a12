"""Times tilepipe's PyTorch operator against torch, and against tilepipe's own C++ API, in one run.

    python3 python/bench/bench_ops.py [--quick] [--json FILE]

Three tables, each a median over repetitions of back-to-back calls timed with CUDA events on
the current stream (so a call costs whichever is slower, its host work or its GPU work: the wall
time per call of a loop):

1. overhead: the operator (tilepipe.gemm(a, w.t(), bias, "relu")) against the C++ API
   (GemmAuto::run, in the same extension: tilepipe._C.cpp_api_us_per_call) on the same problem,
   and against torch (torch.relu(F.linear(a, w, bias))), at the four sizes of the overhead issue;
2. shapes: the operator against torch per call and in TFLOP/s at decode, prefill and square
   shapes, f16 and bf16, plain (a @ w.t()), with a bias, with a bias and GELU (tanh);
3. mlp: a transformer's MLP block (up-projection with GELU, down-projection) under
   torch.compile, with tilepipe's operators against torch's linear layers: tokens per second and
   the outputs of both against a float64 reference.

Ends with `summary:` lines: the worst and geometric-mean ratios of each table.
"""

import argparse
import json
import math
import statistics

import torch
import torch.nn.functional as F

import tilepipe
from tilepipe import _C


def us_per_call(fn, calls, reps, warmup=10):
    """Median over `reps` of the microseconds per call of `calls` back-to-back calls of fn."""
    for _ in range(warmup):
        fn()
    times = []
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(reps):
        start.record()
        for _ in range(calls):
            fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1000.0 / calls)
    return statistics.median(times)


def calls_for(flops):
    """Enough calls that a repetition lasts about 20 ms or more (at least 20 calls)."""
    return max(20, min(2000, int(20e-3 / max(flops / 600e12, 2e-6))))


def operands(m, n, k, dtype):
    a = torch.randn(m, k, device="cuda").to(dtype)
    w = (torch.randn(n, k, device="cuda") / math.sqrt(k)).to(dtype)
    bias = torch.randn(n, device="cuda").to(dtype)
    return a, w, bias


def overhead(reps):
    rows = []
    for m, n, k in [(1, 4096, 4096), (16, 4096, 4096), (128, 14336, 4096), (4096, 4096, 4096)]:
        a, w, bias = operands(m, n, k, torch.bfloat16)
        calls = calls_for(2 * m * n * k)
        op = us_per_call(lambda: tilepipe.gemm(a, w.t(), bias, "relu"), calls, reps)
        cpp = statistics.median(
            _C.cpp_api_us_per_call(a, w.t(), bias, "relu", None, calls, 10) for _ in range(reps))
        ref = us_per_call(lambda: torch.relu(F.linear(a, w, bias)), calls, reps)
        rows.append({"m": m, "n": n, "k": k, "op_us": op, "cpp_api_us": cpp, "torch_us": ref,
                     "op_minus_cpp_us": op - cpp, "op_over_cpp": op / cpp,
                     "torch_over_op": ref / op})
    return rows


SHAPES = {
    "decode": [(1, 4096, 4096), (16, 4096, 4096), (64, 14336, 4096), (128, 4096, 14336)],
    "prefill": [(2048, 4096, 4096), (4096, 14336, 4096), (4096, 4096, 14336)],
    "square": [(2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192)],
}
EPILOGUES = {
    "plain": (lambda a, w, bias: tilepipe.gemm(a, w.t()), lambda a, w, bias: F.linear(a, w)),
    "bias": (lambda a, w, bias: tilepipe.gemm(a, w.t(), bias),
             lambda a, w, bias: F.linear(a, w, bias)),
    "bias_gelu": (lambda a, w, bias: tilepipe.gemm(a, w.t(), bias, "gelu_tanh"),
                  lambda a, w, bias: F.gelu(F.linear(a, w, bias), approximate="tanh")),
}


def shapes(reps, quick):
    rows = []
    for group, problems in SHAPES.items():
        for m, n, k in problems[:2] if quick else problems:
            for dtype in [torch.float16, torch.bfloat16]:
                a, w, bias = operands(m, n, k, dtype)
                flops = 2 * m * n * k
                calls = calls_for(flops)
                for name, (ours, theirs) in EPILOGUES.items():
                    op = us_per_call(lambda: ours(a, w, bias), calls, reps)
                    ref = us_per_call(lambda: theirs(a, w, bias), calls, reps)
                    rows.append({"group": group, "m": m, "n": n, "k": k,
                                 "dtype": str(dtype).replace("torch.", ""), "epilogue": name,
                                 "op_us": op, "torch_us": ref, "op_tflops": flops / op * 1e-6,
                                 "torch_tflops": flops / ref * 1e-6, "torch_over_op": ref / op})
    return rows


class TorchMlp(torch.nn.Module):
    def __init__(self, up, down):
        super().__init__()
        self.up, self.down = up, down

    def forward(self, x):
        return self.down(F.gelu(self.up(x), approximate="tanh"))


class TilepipeMlp(TorchMlp):
    def forward(self, x):
        h = tilepipe.linear(x, self.up.weight, self.up.bias, "gelu_tanh")
        return tilepipe.linear(h, self.down.weight, self.down.bias)


def mlp(reps, quick):
    dim, hidden = 4096, 14336
    up = torch.nn.Linear(dim, hidden, device="cuda", dtype=torch.bfloat16)
    down = torch.nn.Linear(hidden, dim, device="cuda", dtype=torch.bfloat16)
    models = {"torch": torch.compile(TorchMlp(up, down), fullgraph=True),
              "tilepipe": torch.compile(TilepipeMlp(up, down), fullgraph=True)}
    rows = []
    for tokens in [16, 4096] if quick else [16, 128, 4096, 16384]:
        x = torch.randn(1, tokens, dim, device="cuda").bfloat16()
        with torch.no_grad():
            x64 = x.double()
            want = F.linear(F.gelu(F.linear(x64, up.weight.double(), up.bias.double()),
                                   approximate="tanh"), down.weight.double(), down.bias.double())
            scale = float(want.abs().max())
            row = {"tokens": tokens}
            calls = calls_for(4 * tokens * dim * hidden)
            for name, model in models.items():
                got = model(x)
                row[f"{name}_us"] = us_per_call(lambda: model(x), calls, reps)
                row[f"{name}_tokens_per_s"] = tokens / row[f"{name}_us"] * 1e6
                row[f"{name}_max_err_rel"] = float((got.double() - want).abs().max()) / scale
        row["torch_over_tilepipe"] = row["torch_us"] / row["tilepipe_us"]
        rows.append(row)
    return rows


def table(rows, columns):
    lines = ["| " + " | ".join(columns) + " |", "|" + " --- |" * len(columns)]
    for r in rows:
        cells = [f"{r[c]:.3g}" if isinstance(r[c], float) else str(r[c]) for c in columns]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def summary(name, rows, key, label):
    ratios = [r[key] for r in rows]
    worst = min(rows, key=lambda r: r[key])
    where = ", ".join(f"{c}={worst[c]}" for c in ("group", "dtype", "epilogue", "m", "n", "k",
                                                 "tokens") if c in worst)
    geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
    return (f"summary: {name}: {label} over {len(rows)} problems: worst {worst[key]:.3f} "
            f"({where}), geomean {geo:.3f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer shapes and repetitions")
    parser.add_argument("--json", help="also write every row to this file")
    args = parser.parse_args()
    reps = 5 if args.quick else 9
    props = torch.cuda.get_device_properties(0)
    print(f"device: {props.name}; torch {torch.__version__}; "
          f"Hopper tier: {tilepipe.hopper_tier_available()}")

    results = {"device": props.name, "torch": torch.__version__}
    results["overhead"] = overhead(reps)
    print("\n## overhead: bf16, bias + ReLU, microseconds per call\n")
    print(table(results["overhead"], ["m", "n", "k", "op_us", "cpp_api_us", "op_minus_cpp_us",
                                      "op_over_cpp", "torch_us", "torch_over_op"]))
    results["shapes"] = shapes(reps, args.quick)
    print("\n## shapes: the operator against torch (torch_over_op > 1: the operator is faster)\n")
    print(table(results["shapes"], ["group", "m", "n", "k", "dtype", "epilogue", "op_us",
                                    "torch_us", "op_tflops", "torch_tflops", "torch_over_op"]))
    results["mlp"] = mlp(reps, args.quick)
    print("\n## mlp: 4096 -> 14336 (GELU tanh) -> 4096, bf16, torch.compile(fullgraph=True)\n")
    print(table(results["mlp"], ["tokens", "tilepipe_us", "torch_us", "tilepipe_tokens_per_s",
                                 "torch_tokens_per_s", "torch_over_tilepipe",
                                 "tilepipe_max_err_rel", "torch_max_err_rel"]))

    over = results["overhead"]
    # The target: the operator within 5% or 3 us of the C++ API, whichever is larger.
    met = all(r["op_minus_cpp_us"] <= max(3.0, 0.05 * r["cpp_api_us"]) for r in over)
    lines = [
        summary("overhead", over, "torch_over_op", "torch / op"),
        f"summary: overhead: op - C++ API worst {max(r['op_minus_cpp_us'] for r in over):.2f} us, "
        f"op / C++ API worst {max(r['op_over_cpp'] for r in over):.3f}; "
        f"within 5% or 3 us: {'met' if met else 'missed'}",
        summary("shapes", results["shapes"], "torch_over_op", "torch / op"),
        summary("mlp", results["mlp"], "torch_over_tilepipe", "torch / tilepipe"),
    ]
    print()
    print("\n".join(lines))
    results["summary"] = lines
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
