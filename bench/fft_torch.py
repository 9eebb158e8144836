#!/usr/bin/python3
"""torch.fft on the shapes of bench/bench_fft.cpp, for the phasor / PyTorch ratios.

Run with Debian's python3 (it has python3-torch):
    /usr/bin/python3 bench/fft_torch.py [--threads N] [--json out.json]

Each case times forward c2c (complex64/complex128 input) and r2c (float32/float64 input)
transforms, and the forward and forward+backward of irfft(rfft(x) * w, n) on a (64, 4096)
float32 x. Times are per call in microseconds: the median over repetitions of the process
CPU time (the figure bench_fft reports as "CPU"), and the wall time.
"""
import argparse
import json
import time

import torch

CASES = [
    ("1d_256", (256,), (0,)),
    ("1d_4096", (4096,), (0,)),
    ("1d_65536", (65536,), (0,)),
    ("1d_1048576", (1 << 20,), (0,)),
    ("batch_256x1024", (256, 1024), (1,)),
    ("2d_256x256", (256, 256), (0, 1)),
    ("2d_1024x1024", (1024, 1024), (0, 1)),
    ("3d_64x64x64", (64, 64, 64), (0, 1, 2)),
]


def timeit(fn, min_time=0.2, reps=3):
    """Median per-call (cpu_us, wall_us) over `reps` runs of at least `min_time` CPU seconds."""
    fn()  # warm up (allocations, plan-free pocketfft twiddles)
    iters = 1
    while True:
        c0 = time.process_time()
        for _ in range(iters):
            fn()
        if time.process_time() - c0 >= min_time / 4 or iters >= 1 << 20:
            break
        iters *= 4
    cpu, wall = [], []
    for _ in range(reps):
        n = 0
        c0, w0 = time.process_time(), time.perf_counter()
        while True:
            for _ in range(iters):
                fn()
            n += iters
            if time.process_time() - c0 >= min_time:
                break
        cpu.append((time.process_time() - c0) / n * 1e6)
        wall.append((time.perf_counter() - w0) / n * 1e6)
    cpu.sort()
    wall.sort()
    return cpu[len(cpu) // 2], wall[len(wall) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--json", default=None)
    ap.add_argument("--min-time", type=float, default=0.2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    results = {}
    with torch.no_grad():
        for name, shape, dims in CASES:
            for r2c in (False, True):
                for single in (True, False):
                    if r2c:
                        x = torch.randn(shape, dtype=torch.float32 if single else torch.float64)
                        f = (lambda: torch.fft.rfft(x, dim=dims[0])) if len(dims) == 1 else (
                            lambda: torch.fft.rfftn(x, dim=dims))
                    else:
                        x = torch.randn(shape, dtype=torch.complex64 if single else torch.complex128)
                        f = (lambda: torch.fft.fft(x, dim=dims[0])) if len(dims) == 1 else (
                            lambda: torch.fft.fftn(x, dim=dims))
                    key = "%s/%s/%s" % ("r2c" if r2c else "c2c", "f32" if single else "f64", name)
                    cpu, wall = timeit(f, args.min_time)
                    results[key] = {"cpu_us": cpu, "wall_us": wall}
                    print("torch/%-28s cpu %10.3f us   wall %10.3f us" % (key, cpu, wall), flush=True)
    # spectral filter
    n = 4096
    x = torch.randn(64, n, dtype=torch.float32, requires_grad=True)
    w = torch.randn(n // 2 + 1, dtype=torch.complex64, requires_grad=True)
    g = torch.randn(64, n, dtype=torch.float32)

    def fwd():
        with torch.no_grad():
            return torch.fft.irfft(torch.fft.rfft(x) * w, n)

    def fwd_bwd():
        y = torch.fft.irfft(torch.fft.rfft(x) * w, n)
        y.backward(g)
        x.grad = None
        w.grad = None

    for key, f in (("filter/forward/64x4096/f32", fwd), ("filter/forward_backward/64x4096/f32", fwd_bwd)):
        cpu, wall = timeit(f, args.min_time)
        results[key] = {"cpu_us": cpu, "wall_us": wall}
        print("torch/%-28s cpu %10.3f us   wall %10.3f us" % (key, cpu, wall), flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"threads": args.threads, "torch": torch.__version__, "results": results}, fh, indent=1)


if __name__ == "__main__":
    main()
