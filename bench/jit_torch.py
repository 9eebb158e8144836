#!/usr/bin/python3
"""phasor's static graphs against PyTorch's, side by side (bench/README.md, "Static graphs").

Runs build/bench/bench_jit's BM_Mlp rows (phasor eager, phasor jit::Graph replay) and times the same model in
PyTorch: eager, and torch.jit.trace'd (frozen, under torch.no_grad, 1 thread, float32). The models: batch
width/4, 4 layers of Linear(width, width) + gelu, width 16 and 64. Prints microseconds per forward call (median of --repeats timing runs) and
the ratios. Use Debian's /usr/bin/python3 (it has torch).
"""
import argparse
import json
import statistics
import subprocess
import sys
import time


def torch_rows(width, repeats, calls):
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(0)
    layers = []
    for _ in range(4):
        layers += [torch.nn.Linear(width, width), torch.nn.GELU()]
    model = torch.nn.Sequential(*layers).eval()
    x = torch.randn(width // 4, width)
    rows = {}
    with torch.no_grad():
        traced = torch.jit.freeze(torch.jit.trace(model, x))
        for name, fn in (("torch eager", model), ("torch jit.trace", traced)):
            for _ in range(200):
                fn(x)
            runs = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                for _ in range(calls):
                    fn(x)
                runs.append((time.perf_counter() - t0) / calls * 1e6)
            rows[name] = statistics.median(runs)
    return rows


def phasor_rows(binary, width, repeats):
    out = subprocess.run(
        [binary, f"--benchmark_filter=BM_Mlp/width:{width}/", f"--benchmark_repetitions={repeats}",
         "--benchmark_report_aggregates_only=true", "--benchmark_format=json"],
        check=True, capture_output=True, text=True).stdout
    rows = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        name = "phasor replay" if "replay:1" in b["name"] else "phasor eager"
        scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3}[b["time_unit"]]
        rows[name] = b["real_time"] * scale
        rows[name + " steps"] = b.get("steps", 0)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", default="build/bench/bench_jit", help="the bench_jit program")
    ap.add_argument("--repeats", type=int, default=5, help="timing runs per row (median)")
    ap.add_argument("--calls", type=int, default=2000, help="torch calls per timing run")
    args = ap.parse_args()
    for width in (16, 64):
        rows = phasor_rows(args.bench, width, args.repeats)
        rows.update(torch_rows(width, args.repeats, args.calls))
        print(f"MLP forward (batch {width // 4}, 4 x Linear({width}, {width}) + gelu, float32, 1 thread); phasor "
              f"steps: {int(rows.pop('phasor eager steps', 0))}")
        rows.pop("phasor replay steps", None)
        base = rows["torch eager"]
        print(f"{'row':<18}{'us/call':>10}{'vs torch eager':>16}")
        for name in ("phasor eager", "phasor replay", "torch eager", "torch jit.trace"):
            print(f"{name:<18}{rows[name]:>10.2f}{rows[name] / base:>16.2f}")
        print(f"phasor replay / phasor eager: {rows['phasor replay'] / rows['phasor eager']:.2f}")
        print(f"phasor replay / torch jit.trace: {rows['phasor replay'] / rows['torch jit.trace']:.2f}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
