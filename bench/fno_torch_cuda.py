#!/usr/bin/python3
"""PyTorch eager on the GPU, for bench/bench_cuda.cpp's side-by-side table (issue #6).

Times, with CUDA events and medians over repeated calls, the same FNO training steps as
bench_cuda's BM_FNO*_step_cuda (models from bench/fno_torch.py's make_fno), the 256 MiB float32
memory-bound kernels (copy, add, exp, sum), the FFTs and the float32 solves and Cholesky factors of
bench_cuda's table, and prints one line
per benchmark: name, median ms, and GB/s or peak GiB. With --phasor (bench_cuda's
--benchmark_out JSON, medians of repetitions) it ends with the side-by-side table of the issue's
targets. scripts/gpu-check.sh runs it right after bench_cuda.

  python3 bench/fno_torch_cuda.py [--steps 30] [--phasor build-gpu/out/bench_cuda.json]
"""
import json
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fno_torch import make_fno  # noqa: E402


# bench_cuda's BM_linalg_cuda/0..3 (float32)
LINALG = ["solve 512 x 16^2", "solve 2048^2", "cholesky 512 x 16^2", "cholesky 2048^2"]
DECOMP = ["qr 1024 x 512", "eigh 512^2", "svd 1024 x 256", "eigh 512 x 16^2"]


def timed(torch, f, reps, inner=1):
    """Median milliseconds of f() over reps samples (after two warm-up calls), each between CUDA events;
    a sample is `inner` back-to-back calls divided by inner (bench_cuda's kFftReps for the FFTs)."""
    f()
    f()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ms = []
    for _ in range(reps):
        a.record()
        for _ in range(inner):
            f()
        b.record()
        b.synchronize()
        ms.append(a.elapsed_time(b) / inner)
    return statistics.median(ms)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--phasor", help="bench_cuda --benchmark_out JSON for the side-by-side table")
    args = ap.parse_args()
    res = {}
    import torch

    if not torch.cuda.is_available():
        print("no CUDA device")
        return 1
    torch.backends.cuda.matmul.allow_tf32 = False  # as phasor: TF32 off
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    print("torch %s on %s" % (torch.__version__, torch.cuda.get_device_name(0)))
    n = 64 << 20  # 256 MiB of float32
    a, b = torch.rand(n, device=dev), torch.rand(n, device=dev)
    x = torch.complex(torch.rand(n, device=dev), torch.rand(n, device=dev))
    y = torch.complex(torch.rand(n, device=dev), torch.rand(n, device=dev))
    out = torch.empty_like(a)
    bins = (b * (1 << 20)).floor().clamp(max=(1 << 20) - 1).long()
    acc, z, perm = torch.zeros(1 << 20, device=dev), torch.zeros(1 << 20, device=dev), torch.randperm(n, device=dev)
    nbytes = a.numel() * 4
    with torch.no_grad():
        for name, f, streams in [
            ("copy", lambda: out.copy_(a), 2),
            ("add", lambda: a + b, 3),
            ("mul_scalar_inplace", lambda: a.mul_(1.0), 2),
            ("exp", lambda: a.exp(), 2),
            ("lerp", lambda: torch.lerp(a, b, 0.3), 3),
            ("addcmul_mixed", lambda: torch.addcmul(x, a, y), 7),
            ("gelu", lambda: torch.nn.functional.gelu(a), 2),
            ("sum_all", lambda: a.sum(), 1),
            ("sum_rows", lambda: a.reshape(4096, -1).sum(1), 1),
            ("amax_all", lambda: a.amax(), 1),
            ("sum_short_rows", lambda: a.reshape(-1, 8).sum(1), 1),
            ("argmax_short_rows", lambda: a.reshape(-1, 8).argmax(1), 1),
            ("var_all", lambda: a.var(), 1),
            ("logsumexp_all", lambda: a.logsumexp(0), 1),
            ("argmax_all", lambda: a.argmax(), 1),
            ("index_put_acc", lambda: acc.index_put_((bins,), a, accumulate=True), 3),
            ("scatter_reduce_amax", lambda: z.scatter_reduce(0, bins, a, "amax"), 3),
            ("index_copy_perm", lambda: a.index_copy(0, perm, b), 3),
        ]:
            ms = timed(torch, f, 20)
            res[name] = dict(ms=ms, gbps=streams * nbytes / ms / 1e6)
            print("torch_%-24s %10.3f ms %8.1f GBps" % (name, ms, streams * nbytes / ms / 1e6))
    del a, b, x, y, out, bins, acc, z, perm
    ffts = [("c2c 2^20 x 16", (16, 1 << 20), False, 1), ("c2c 1024 x 4096", (4096, 1024), False, 1),
            ("r2c 256x256 x 2048", (2048, 256, 256), True, 2), ("r2c 64x64 x 640", (640, 64, 64), True, 2)]
    for label, shape, real, rank in ffts:
        x = torch.randn(*shape, device=dev, dtype=torch.float32 if real else torch.complex64)
        f = (lambda: torch.fft.rfft(x) if rank == 1 else torch.fft.rfft2(x)) if real else \
            (lambda: torch.fft.fft(x) if rank == 1 else torch.fft.fft2(x))
        res["fft " + label] = dict(ms=timed(torch, f, 20, inner=10))
        print("torch_fft %-20s %10.3f ms" % (label.replace(" ", "_"), res["fft " + label]["ms"]))
        del x
    for i, label in enumerate(LINALG):  # bench_cuda's BM_linalg_cuda/0..3
        batched, chol = i % 2 == 0, i >= 2
        n, batch = (16, (512,)) if batched else (2048, ())
        g = torch.randn(*batch, n, n, device=dev)
        eye = torch.eye(n, device=dev)
        a = g @ g.transpose(-1, -2) / n + eye if chol else g / n ** 0.5 + 2 * eye
        b = torch.randn(*batch, n, 16, device=dev)
        f = (lambda: torch.linalg.cholesky(a)) if chol else (lambda: torch.linalg.solve(a, b))
        res[label] = dict(ms=timed(torch, f, 20))
        print("torch_%-26s %10.3f ms" % (label.replace(" ", "_"), res[label]["ms"]))
        del g, a, b
    for i, label in enumerate(DECOMP):  # bench_cuda's BM_decomp_cuda/0..3
        a = torch.randn(1024, 256 if i == 2 else 512, device=dev)
        g = torch.randn(*((512, 16, 16) if i == 3 else (512, 512)), device=dev)
        h = g + g.transpose(-1, -2)
        f = [lambda: torch.linalg.qr(a)[0], lambda: torch.linalg.eigh(h)[1],
             lambda: torch.linalg.svd(a, full_matrices=False)[0], lambda: torch.linalg.eigh(h)[1]][i]
        res[label] = dict(ms=timed(torch, f, 10))
        print("torch_%-26s %10.3f ms" % (label.replace(" ", "_"), res[label]["ms"]))
        del a, g, h
    for name in ("1d", "2d", "2d_large"):
        torch.manual_seed(0)
        torch.cuda.empty_cache()
        model, x, y, step = make_fno(name, dev)
        torch.cuda.reset_peak_memory_stats()
        ms = timed(torch, step, args.steps)
        peak = torch.cuda.max_memory_allocated() / 2 ** 30
        res["FNO " + name] = dict(ms=ms, peak=peak)
        print("torch_FNO%-22s %10.3f ms %8.2f peak_GiB" % (name + "_step", ms, peak))
        del model, x, y, step
    if args.phasor:
        try:
            table(res, args.phasor)
        except Exception as e:  # a cut-off or crashed bench_cuda: keep torch's figures above
            print("no side-by-side table: %s: %s" % (args.phasor, e))
    return 0


def table(torch_res, path):
    """The side-by-side table: phasor's medians from bench_cuda's JSON against torch's."""
    med = {}
    for b in json.load(open(path))["benchmarks"]:
        if b.get("aggregate_name", "median") == "median" and not b.get("error_occurred"):
            med[b["run_name"].replace("/manual_time", "")] = b
    ms = lambda b: b["real_time"] * {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b["time_unit"]]
    print()
    print("| benchmark | phasor | torch | time phasor/torch | target |")
    print("|---|---|---|---|---|")
    copy = med.get("BM_copy_cudaMemcpy")
    copy_target, no_target = ">= 80% of copy", "(none: split rows)"
    for name, key, target in [("copy", "BM_copy_phasor", copy_target), ("add", "BM_add", copy_target),
                              ("mul_scalar_inplace", "BM_mul_scalar_inplace", copy_target),
                              ("exp", "BM_exp", copy_target), ("lerp", "BM_lerp", copy_target),
                              ("addcmul_mixed", "BM_addcmul_mixed", copy_target), ("gelu", "BM_gelu", copy_target),
                              ("sum_all", "BM_sum_all", copy_target), ("sum_rows", "BM_sum_rows", copy_target),
                              ("amax_all", "BM_amax_all", copy_target),
                              ("sum_short_rows", "BM_sum_short_rows", copy_target),
                              ("argmax_short_rows", "BM_argmax_short_rows", "(none: an int64 out per 8 in)"),
                              ("var_all", "BM_var_all", no_target), ("logsumexp_all", "BM_logsumexp_all", no_target),
                              ("argmax_all", "BM_argmax_all", no_target),
                              ("index_put_acc", "BM_index_put_acc", "(none: scatter)"),
                              ("scatter_reduce_amax", "BM_scatter_reduce_amax", "(none: scatter)"),
                              ("index_copy_perm", "BM_index_copy_perm", "(none: scatter)")]:
        if key in med:  # a row torch could not run keeps phasor's figure
            p = med[key]["GBps"]
            frac = " (%.0f%% of cudaMemcpy)" % (100 * p / copy["GBps"]) if copy else ""
            tg = torch_res.get(name, {}).get("gbps")
            print("| %s 256 MiB | %.0f GB/s%s | %s | %s | %s |" % (
                name, p, frac, "%.0f GB/s" % tg if tg else "n/a", "%.2f" % (tg / p) if tg else "n/a", target))
    for i, label in enumerate(["c2c 2^20 x 16", "c2c 1024 x 4096", "r2c 256x256 x 2048", "r2c 64x64 x 640"]):
        p, c = med.get("BM_fft_phasor/%d" % i), med.get("BM_fft_cufft/%d" % i)
        if p:
            tm = torch_res.get("fft " + label, {}).get("ms")
            print("| fft %s | %.1f us (%s) | %s | %s | <= 1.05 x cuFFT |" % (
                label, ms(p) * 1e3, "cuFFT %.1f us: %.3f" % (ms(c) * 1e3, ms(p) / ms(c)) if c else "cuFFT n/a",
                "%.1f us" % (tm * 1e3) if tm else "n/a", "%.2f" % (ms(p) / tm) if tm else "n/a"))
    for key, labels in (("BM_linalg_cuda", LINALG), ("BM_decomp_cuda", DECOMP)):
      for i, label in enumerate(labels):
        p = med.get("%s/%d" % (key, i))
        if p:
            tm = torch_res.get(label, {}).get("ms")
            print("| %s | %.1f us | %s | %s | (none) |" % (
                label, ms(p) * 1e3, "%.1f us" % (tm * 1e3) if tm else "n/a", "%.2f" % (ms(p) / tm) if tm else "n/a"))
    for b in ("BM_host_overhead_add", "BM_host_overhead_add_grad"):
        if b in med:
            print("| %s | %.2f us/op | | | < 5 us |" % (b[3:], med[b]["us_per_op"]))
    variant = {"_graph": " graph", "_fft": " (transforms: FFT)", "_matrix": " (transforms: matrix)"}
    for name, key, target in [("1d", "BM_FNO1d_step_cuda", "< torch"), ("2d", "BM_FNO2d_step_cuda", "< torch"),
                              ("2d_large", "BM_FNO2d_large_step_cuda", "<= 0.8 x torch, peak <= torch"),
                              ("1d", "BM_FNO1d_step_cuda_graph", "(whole step in a CUDA graph)"),
                              ("2d", "BM_FNO2d_step_cuda_graph", "(whole step in a CUDA graph)"),
                              ("1d", "BM_FNO1d_step_cuda_fft", "(which path wins here)"),
                              ("2d", "BM_FNO2d_step_cuda_fft", "(which path wins here)"),
                              ("2d_large", "BM_FNO2d_large_step_cuda_fft", "(which path wins here)"),
                              ("2d_large", "BM_FNO2d_large_step_cuda_matrix", "(which path wins here)")]:
        if key in med:
            t = torch_res.get("FNO " + name)
            suffix = next((v for k, v in variant.items() if key.endswith(k)), "")
            print("| FNO %s step%s | %.2f ms, peak %.2f GiB | %s | %s | %s |" % (
                name, suffix, ms(med[key]), med[key]["peak_gib"], "%.2f ms, peak %.2f GiB" % (t["ms"], t["peak"]) if t else "n/a",
                "%.2f" % (ms(med[key]) / t["ms"]) if t else "n/a", target))


if __name__ == "__main__":
    sys.exit(main())
