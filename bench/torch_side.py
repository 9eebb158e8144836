"""The parts shared by the bench/<name>_torch.py scripts: torch rows timed with timeit, the phasor benchmark
program run for its medians, and the side-by-side table with phasor / torch ratios (< 1: phasor faster).

A script defines torch_rows() (benchmark name -> seconds, timed with median_time) and calls run(torch_rows).
Options: --bench PATH (the phasor program; without it only torch runs), --threads N (both sides: torch's
set_num_threads, PHASOR_BENCH_THREADS and OMP_NUM_THREADS), --cpu-time (process CPU time instead of wall time,
meaningful with --threads 1 on a machine shared with other jobs).
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


def median_time(fn, repeats=7, budget=0.05):
    """Seconds per call of fn: the median of `repeats` timeit loops of about `budget` seconds, after a warm-up."""
    fn()
    n = max(1, int(budget / max(timeit.timeit(fn, number=1, timer=TIMER), 1e-6)))
    return statistics.median(timeit.repeat(fn, number=n, repeat=repeats, timer=TIMER)) / n


def phasor_rows(binary, threads, cpu):
    """Benchmark name -> seconds: the median aggregates of --benchmark_repetitions=3 of the phasor program."""
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


def run(torch_rows, header=None, width=28):
    """Parses the options, times torch_rows() and the phasor program, prints the table (after `header`)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", default=None)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--cpu-time", action="store_true")
    a = ap.parse_args()
    global TIMER
    if a.cpu_time:
        TIMER = time.process_time
    torch.set_num_threads(a.threads)
    if header:
        print(header)
    tr = torch_rows()
    pr = phasor_rows(a.bench, a.threads, a.cpu_time) if a.bench else {}
    print(f"{'benchmark':{width}s} {'torch ms':>10s} {'phasor ms':>10s} {'ratio':>7s}")
    for k, v in tr.items():
        p = pr.get(k)
        print(f"{k:{width}s} {v * 1e3:10.3f} " + (f"{p * 1e3:10.3f} {p / v:7.2f}" if p else ""))
