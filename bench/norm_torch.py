#!/usr/bin/python3
"""Times the shapes of bench/bench_norm.cpp with PyTorch and, when given the phasor binary, runs it
and prints phasor / torch ratios (< 1: phasor faster).

Usage: /usr/bin/python3 bench/norm_torch.py [--bench build/bench/bench_norm] [--threads 2]
Both sides use the same thread count (PHASOR_BENCH_THREADS / torch.set_num_threads); each torch
row is the median over repeats of a timeit loop after a warm-up; phasor rows are the median
aggregate of --benchmark_repetitions=3 (real time).
--cpu-time compares process CPU time instead (meaningful with --threads 1 on a machine shared with
other jobs, where wall time includes waiting for a core).
"""
import argparse
import json
import os
import statistics
import subprocess
import time
import timeit

import torch
import torch.nn.functional as F


TIMER = time.perf_counter


def median_time(fn, repeats=7):
    fn()
    n = max(1, int(0.05 / max(timeit.timeit(fn, number=1, timer=TIMER), 1e-6)))
    return statistics.median(timeit.repeat(fn, number=n, repeat=repeats, timer=TIMER)) / n


def torch_rows():
    torch.manual_seed(0)
    rows = {}
    x = torch.randn(4096, 1024)
    w, b = torch.ones(1024), torch.zeros(1024)
    with torch.no_grad():
        rows["BM_LayerNormFwd"] = median_time(lambda: F.layer_norm(x, (1024,), w, b))
    xg, wg, bg = x.clone().requires_grad_(), w.clone().requires_grad_(), b.clone().requires_grad_()
    g = torch.randn(4096, 1024)
    rows["BM_LayerNormFwdBwd"] = median_time(
        lambda: torch.autograd.grad(F.layer_norm(xg, (1024,), wg, bg), (xg, wg, bg), g))
    bn = torch.nn.BatchNorm2d(64)
    x4 = torch.randn(32, 64, 32, 32)
    with torch.no_grad():
        rows["BM_BatchNorm2dFwd"] = median_time(lambda: bn(x4))
    x4g = x4.clone().requires_grad_()
    g4 = torch.randn(32, 64, 32, 32)
    rows["BM_BatchNorm2dFwdBwd"] = median_time(
        lambda: torch.autograd.grad(bn(x4g), (x4g, bn.weight, bn.bias), g4))
    gn = torch.nn.GroupNorm(8, 64)
    rows["BM_GroupNormFwdBwd"] = median_time(
        lambda: torch.autograd.grad(gn(x4g), (x4g, gn.weight, gn.bias), g4))
    p = torch.randn(20, 1, 1024, requires_grad=True)
    t = torch.randn(20, 1, 1024)

    def rel_l2():
        n = p.shape[0]
        loss = (torch.norm(p.reshape(n, -1) - t.reshape(n, -1), 2, 1) / torch.norm(t.reshape(n, -1), 2, 1)).mean()
        return torch.autograd.grad(loss, (p,))
    rows["BM_RelativeL2FwdBwd"] = median_time(rel_l2)
    xc = torch.randn(1024, 100, requires_grad=True)
    tc = torch.randint(0, 100, (1024,))
    rows["BM_CrossEntropyFwdBwd"] = median_time(lambda: torch.autograd.grad(F.cross_entropy(xc, tc), (xc,)))
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
    print(f"{'benchmark':28s} {'torch ms':>10s} {'phasor ms':>10s} {'ratio':>7s}")
    for k, v in tr.items():
        p = pr.get(k)
        print(f"{k:28s} {v * 1e3:10.3f} " + (f"{p * 1e3:10.3f} {p / v:7.2f}" if p else ""))


if __name__ == "__main__":
    main()
