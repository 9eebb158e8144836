#!/usr/bin/python3
"""Runs bench_conv (phasor) and the same convolutions with PyTorch, prints both and the ratios.

Usage (from the repository root, after a Release build with -DPHASOR_BUILD_BENCH=ON):
    /usr/bin/python3 bench/conv_torch.py [--bench build/bench/bench_conv] [--sessions 3]

Debian's /usr/bin/python3 has torch 1.13; a pyenv `python3` on PATH may not.

Cases (float32, see bench/bench_conv.cpp): conv2d x (8, 32, 64, 64), w (32, 32, 3, 3), padding 1,
with bias; conv1d 1x1 x (20, 64, 1024), w (64, 64, 1), with bias. "fwd" is the forward alone (no
grad), "fwd_bwd" is forward + sum + backward into x, w and b (grads cleared every iteration).
Thread counts 1 and 2: phasor set_num_threads(n), torch.set_num_threads(n).
Each side reports the median wall time and the median process CPU time (all threads) per call;
--sessions N alternates phasor and torch N times and keeps per row the lowest medians (the least
disturbed run on a shared machine). On a loaded machine wall time includes time spent descheduled;
CPU time does not (but includes OpenMP spin-waiting), so both are shown.
ratio = phasor time / torch time (< 1: phasor faster).
"""
import argparse
import json
import statistics
import subprocess
import sys
import time

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # pragma: no cover - depends on the interpreter
    sys.exit("conv_torch.py needs torch: run it with Debian's /usr/bin/python3")

CASES = {
    "conv2d_3x3": ((8, 32, 64, 64), (32, 32, 3, 3), 1),
    "conv1d_1x1": ((20, 64, 1024), (64, 64, 1), 0),
}
# one-input layers (bench_conv.cpp's run_layer): input shape, the layer; fwd_bwd differentiates into x only
torch.manual_seed(1)
UP_W = torch.randn(32, 16, 2, 2) * 0.1
LAYERS = {
    "conv_transpose2d_2x2": ((8, 32, 32, 32), lambda x: F.conv_transpose2d(x, UP_W, None, 2)),
    "max_pool2d_2x2": ((8, 32, 64, 64), lambda x: F.max_pool2d(x, 2)),
    "avg_pool2d_3x3": ((8, 32, 64, 64), lambda x: F.avg_pool2d(x, 3, 1, 1)),
    "adaptive_avg_pool2d_7": ((8, 32, 64, 64), lambda x: F.adaptive_avg_pool2d(x, 7)),
    "interpolate_bilinear_2x": ((8, 32, 64, 64),
                                lambda x: F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)),
}
THREADS = (1, 2)


def run_phasor(bench, repetitions):
    cmd = [bench, "--benchmark_format=json", f"--benchmark_repetitions={repetitions}",
           "--benchmark_report_aggregates_only=true"]
    doc = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
    rows = {}
    for b in doc["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        name = b["run_name"].replace("/real_time", "").replace("/process_time", "").replace("BM_", "")
        u = scale[b.get("time_unit", "ns")]
        rows[name] = (b["real_time"] * u, b["cpu_time"] * u)
    return rows  # {"conv2d_3x3_fwd/1": (wall ms, cpu ms)}


def torch_case(name, backward, threads, repeats):
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    if name in LAYERS:
        xs, layer = LAYERS[name]
        x = torch.randn(xs)
        x.requires_grad_(backward)

        def step():
            if backward:
                layer(x).sum().backward()
                x.grad = None
            else:
                with torch.no_grad():
                    layer(x)
        return time_step(step, repeats)
    xs, ws, pad = CASES[name]
    x, w, b = torch.randn(xs), torch.randn(ws) * 0.1, torch.randn(ws[0])
    conv = F.conv2d if len(ws) == 4 else F.conv1d
    if backward:
        for t in (x, w, b):
            t.requires_grad_()

    def step():
        if backward:
            conv(x, w, b, 1, pad).sum().backward()
            x.grad = w.grad = b.grad = None
        else:
            with torch.no_grad():
                conv(x, w, b, 1, pad)
    return time_step(step, repeats)


def time_step(step, repeats):
    for _ in range(2):
        step()
    # enough calls per sample for ~0.05 s
    t0 = time.perf_counter()
    step()
    one = time.perf_counter() - t0
    k = max(1, int(0.05 / max(one, 1e-6)))
    wall, cpu = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(k):
            step()
        wall.append((time.perf_counter() - t0) / k * 1e3)
        cpu.append((time.process_time() - c0) / k * 1e3)
    return statistics.median(wall), statistics.median(cpu)


def run_torch(repeats):
    rows = {}
    for name in list(CASES) + list(LAYERS):
        for backward in (False, True):
            for t in THREADS:
                rows[f"{name}_{'fwd_bwd' if backward else 'fwd'}/{t}"] = torch_case(name, backward, t, repeats)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", default="build/bench/bench_conv")
    ap.add_argument("--sessions", type=int, default=1)
    ap.add_argument("--repetitions", type=int, default=5)
    args = ap.parse_args()
    best_p, best_t = {}, {}
    for _ in range(args.sessions):
        for rows, best in ((run_phasor(args.bench, args.repetitions), best_p), (run_torch(args.repetitions), best_t)):
            for k, v in rows.items():
                old = best.get(k, (float("inf"), float("inf")))
                best[k] = (min(old[0], v[0]), min(old[1], v[1]))
    print(f"torch {torch.__version__}, {args.sessions} session(s), medians in ms, lowest over sessions")
    print(f"{'case/threads':24s} {'phasor wall':>11s} {'torch wall':>10s} {'ratio':>6s}   "
          f"{'phasor cpu':>10s} {'torch cpu':>9s} {'ratio':>6s}")
    for k in best_t:
        p, t = best_p.get(k, (float("nan"), float("nan"))), best_t[k]
        print(f"{k:24s} {p[0]:11.2f} {t[0]:10.2f} {p[0] / t[0]:6.2f}   {p[1]:10.2f} {t[1]:9.2f} {p[1] / t[1]:6.2f}")


if __name__ == "__main__":
    main()
