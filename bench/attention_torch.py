#!/usr/bin/python3
"""Times the shapes of bench/bench_attention.cpp with PyTorch and, when given the phasor binary, runs it
and prints phasor / torch ratios (< 1: phasor faster).

Usage: /usr/bin/python3 bench/attention_torch.py [--bench build/bench/bench_attention] [--threads 2]
torch's attention is F.scaled_dot_product_attention where the installed torch has it (2.0 and later); older
releases (Debian's 1.13) get the same math written out: softmax(q k^T / sqrt(E)) v, the causal mask as a
-inf triangle. MultiheadAttention is torch.nn.MultiheadAttention with need_weights=False either way.
Both sides use the same thread count (PHASOR_BENCH_THREADS / torch.set_num_threads); each torch row is
the median over repeats of a timeit loop after a warm-up; phasor rows are the median aggregate of
--benchmark_repetitions=3 (real time). --cpu-time compares process CPU time instead.
"""
import argparse
import json
import math
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


def sdpa_math(q, k, v, is_causal=False):
    s = (q * (1.0 / math.sqrt(q.shape[-1]))) @ k.transpose(-2, -1)
    if is_causal:
        L, S = s.shape[-2], s.shape[-1]
        s = s.masked_fill(~torch.ones(L, S, dtype=torch.bool).tril(), float("-inf"))
    return torch.softmax(s, -1) @ v


SDPA = getattr(F, "scaled_dot_product_attention", None)


def sdpa(q, k, v, is_causal=False):
    return SDPA(q, k, v, is_causal=is_causal) if SDPA else sdpa_math(q, k, v, is_causal)


def torch_rows():
    torch.manual_seed(0)
    rows = {}
    q, k, v = (torch.randn(8, 8, 256, 64) for _ in range(3))
    with torch.no_grad():
        rows["BM_SDPAFwd"] = median_time(lambda: sdpa(q, k, v))
    qg, kg, vg = (t.clone().requires_grad_() for t in (q, k, v))
    g = torch.randn(8, 8, 256, 64)
    rows["BM_SDPAFwdBwd"] = median_time(lambda: torch.autograd.grad(sdpa(qg, kg, vg), (qg, kg, vg), g))
    rows["BM_SDPACausalFwdBwd"] = median_time(
        lambda: torch.autograd.grad(sdpa(qg, kg, vg, True), (qg, kg, vg), g))
    m = torch.nn.MultiheadAttention(512, 8)
    x = torch.randn(256, 8, 512, requires_grad=True)
    gx = torch.randn(256, 8, 512)
    params = list(m.parameters()) + [x]
    rows["BM_MHAFwdBwd"] = median_time(
        lambda: torch.autograd.grad(m(x, x, x, need_weights=False)[0], params, gx))
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
    print(f"torch {torch.__version__}, attention: "
          + ("F.scaled_dot_product_attention" if SDPA else "math (no F.scaled_dot_product_attention)"))
    tr = torch_rows()
    pr = phasor_rows(a.bench, a.threads, a.cpu_time) if a.bench else {}
    print(f"{'benchmark':28s} {'torch ms':>10s} {'phasor ms':>10s} {'ratio':>7s}")
    for k, v in tr.items():
        p = pr.get(k)
        print(f"{k:28s} {v * 1e3:10.3f} " + (f"{p * 1e3:10.3f} {p / v:7.2f}" if p else ""))


if __name__ == "__main__":
    main()
