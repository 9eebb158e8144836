#!/usr/bin/python3
"""Times the shapes of bench/bench_rnn.cpp (a 2-layer torch.nn.LSTM, L = 100, N = 32, H_in = H = 128, float32)
with PyTorch and, when given the phasor binary, runs it and prints phasor / torch ratios (< 1: phasor faster).

Usage: /usr/bin/python3 bench/rnn_torch.py [--bench build/bench/bench_rnn] [--threads 2] [--cpu-time]
Both sides use the same thread count (PHASOR_BENCH_THREADS / torch.set_num_threads); each torch row is the
median over repeats of a timeit loop after a warm-up; phasor rows are the median aggregate of
--benchmark_repetitions=3. The forward row runs without gradients (torch.no_grad); the forward + backward row
takes the gradients of every parameter and the input for a given output gradient.
--cpu-time compares process CPU time instead (meaningful with --threads 1 on a machine shared with other jobs).
"""
import argparse
import json
import os
import statistics
import subprocess
import time
import timeit

import torch

TIMER = time.perf_counter
L, N, H = 100, 32, 128


def median_time(fn, repeats=5):
    fn()
    n = max(1, int(0.2 / max(timeit.timeit(fn, number=1, timer=TIMER), 1e-6)))
    return statistics.median(timeit.repeat(fn, number=n, repeat=repeats, timer=TIMER)) / n


def torch_rows():
    torch.manual_seed(0)
    rows = {}
    lstm = torch.nn.LSTM(H, H, num_layers=2)
    x = torch.randn(L, N, H)
    with torch.no_grad():
        rows["BM_LSTMFwd"] = median_time(lambda: lstm(x))
    xg = x.clone().requires_grad_()
    g = torch.randn(L, N, H)
    wrt = tuple(lstm.parameters()) + (xg,)
    rows["BM_LSTMFwdBwd"] = median_time(lambda: torch.autograd.grad(lstm(xg)[0], wrt, g))
    return rows


def phasor_rows(binary, threads, cpu):
    env = dict(os.environ, PHASOR_BENCH_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    out = subprocess.run([binary, "--benchmark_format=json", "--benchmark_repetitions=3",
                          "--benchmark_report_aggregates_only=true"], env=env, check=True,
                         capture_output=True, text=True).stdout
    rows = {}
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    for b in json.loads(out)["benchmarks"]:
        if b.get("aggregate_name") == "median":
            rows[b["run_name"].split("/")[0]] = b["cpu_time" if cpu else "real_time"] * scale[b["time_unit"]]
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", default=None)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--cpu-time", action="store_true")
    a = ap.parse_args()
    global TIMER
    if a.cpu_time:
        TIMER = time.process_time
    torch.set_num_threads(a.threads)
    tr = torch_rows()
    pr = phasor_rows(a.bench, a.threads, a.cpu_time) if a.bench else {}
    print(f"{'benchmark':20s} {'torch ms':>10s} {'phasor ms':>10s} {'ratio':>7s}")
    for k, v in tr.items():
        p = pr.get(k)
        print(f"{k:20s} {v * 1e3:10.3f} " + (f"{p * 1e3:10.3f} {p / v:7.2f}" if p else ""))


if __name__ == "__main__":
    main()
