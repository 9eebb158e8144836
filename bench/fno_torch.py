#!/usr/bin/python3
"""FNO training step, PyTorch vs phasor, side by side (bench/README.md "FNO").

Builds the same FNO-1D / FNO-2D models as bench/bench_fno.cpp in PyTorch (Debian python3-torch),
times the training step (forward, relative L2 loss, backward, Adam step) in float32 with 2 threads,
and runs each configuration -- PyTorch and phasor alike -- in a fresh process so that the peak
resident set size (ru_maxrss) belongs to that configuration alone. Runs alternate between the two
libraries and repeat; the table shows medians over the repeats of the per-process median step time.

  /usr/bin/python3 bench/fno_torch.py [--bench build/bench/bench_fno] [--repeats 3] [--seconds 4]
  /usr/bin/python3 bench/fno_torch.py --child 1d      # one PyTorch run, prints JSON
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

CONFIGS = {
    # name: (spatial dims, batch, in, out, width, modes, layers, grid)
    "1d": dict(d=1, batch=20, cin=1, cout=1, width=64, modes=16, layers=4, grid=(1024,)),
    "2d": dict(d=2, batch=20, cin=3, cout=1, width=32, modes=12, layers=4, grid=(64, 64)),
}
PROJECTION = 128
BENCH_NAME = {"1d": "BM_FNO1d_step", "2d": "BM_FNO2d_step"}


CONFIGS_LARGE = {
    # the large GPU model (bench/bench_cuda.cpp BM_FNO2d_large_step_cuda)
    "2d_large": dict(d=2, batch=32, cin=3, cout=1, width=64, modes=32, layers=4, grid=(256, 256)),
}


def make_fno(name, device="cpu"):
    """The FNO of config `name` on `device`, random input/target, and its training step (a function)."""
    import torch
    import torch.nn as nn

    c = {**CONFIGS, **CONFIGS_LARGE}[name]
    d = c["d"]

    class ChannelLinear(nn.Module):
        """1x1 convolution as one matmul (the same formulation as phasor's ChannelLinear)."""

        def __init__(self, cin, cout, bias=True):
            super().__init__()
            bound = 1.0 / cin ** 0.5
            self.weight = nn.Parameter(torch.empty(cout, cin).uniform_(-bound, bound))
            self.bias = nn.Parameter(torch.empty(cout).uniform_(-bound, bound)) if bias else None

        def forward(self, x):
            s = x.shape
            y = torch.matmul(self.weight, x.reshape(s[0], s[1], -1))
            if self.bias is not None:
                y = y + self.bias[:, None]
            return y.reshape(s[0], -1, *s[2:])

    class SpectralConv(nn.Module):
        """The original FNO's spectral convolution (weights1/weights2 for the +-k1 blocks), norm='forward'."""

        def __init__(self, cin, cout, modes, d):
            super().__init__()
            self.d, self.m = d, modes
            scale = 1.0 / (cin * cout)
            shape = (cin, cout) + (modes,) * d
            self.weights1 = nn.Parameter(scale * torch.rand(shape, dtype=torch.cfloat))
            if d == 2:
                self.weights2 = nn.Parameter(scale * torch.rand(shape, dtype=torch.cfloat))
            self.bias = nn.Parameter(torch.zeros(cout))
            self.cout = cout

        def forward(self, x):
            m = self.m
            if self.d == 1:
                n = x.shape[-1]
                xf = torch.fft.rfft(x, norm="forward")
                out = torch.zeros(x.shape[0], self.cout, n // 2 + 1, dtype=torch.cfloat, device=x.device)
                out[:, :, :m] = torch.einsum("bix,iox->box", xf[:, :, :m], self.weights1)
                y = torch.fft.irfft(out, n=n, norm="forward")
                return y + self.bias[:, None]
            n1, n2 = x.shape[-2:]
            xf = torch.fft.rfft2(x, norm="forward")
            out = torch.zeros(x.shape[0], self.cout, n1, n2 // 2 + 1, dtype=torch.cfloat, device=x.device)
            out[:, :, :m, :m] = torch.einsum("bixy,ioxy->boxy", xf[:, :, :m, :m], self.weights1)
            out[:, :, -m:, :m] = torch.einsum("bixy,ioxy->boxy", xf[:, :, -m:, :m], self.weights2)
            y = torch.fft.irfft2(out, s=(n1, n2), norm="forward")
            return y + self.bias[:, None, None]

    class FNO(nn.Module):
        def __init__(self):
            super().__init__()
            w = c["width"]
            self.lift = ChannelLinear(c["cin"] + d, w)
            self.convs = nn.ModuleList([SpectralConv(w, w, c["modes"], d) for _ in range(c["layers"])])
            self.skips = nn.ModuleList([ChannelLinear(w, w, bias=False) for _ in range(c["layers"])])
            self.proj0 = ChannelLinear(w, PROJECTION)
            self.proj1 = ChannelLinear(PROJECTION, c["cout"])

        def forward(self, x):
            b, grid = x.shape[0], x.shape[2:]
            parts = [x]
            for i, n in enumerate(grid):
                shape = [1, 1] + [1] * d
                shape[2 + i] = n
                parts.append((torch.arange(n, dtype=x.dtype, device=x.device) / n).reshape(shape).expand(b, 1, *grid))
            x = self.lift(torch.cat(parts, 1))
            for i, (conv, skip) in enumerate(zip(self.convs, self.skips)):
                x = conv(x) + skip(x)
                if i + 1 < len(self.convs):
                    x = torch.nn.functional.gelu(x)
            return self.proj1(torch.nn.functional.gelu(self.proj0(x)))

    model = FNO().to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(c["batch"], c["cin"], *c["grid"], device=device)
    y = torch.randn(c["batch"], c["cout"], *c["grid"], device=device)

    def step():
        opt.zero_grad(set_to_none=True)
        pred = model(x)
        b = pred.shape[0]
        loss = ((pred - y).reshape(b, -1).norm(dim=1) / y.reshape(b, -1).norm(dim=1)).mean()
        loss.backward()
        opt.step()
        return loss

    return model, x, y, step


def torch_child(name, seconds):
    import torch

    torch.set_num_threads(2)
    torch.manual_seed(0)
    model, x, y, step = make_fno(name)
    for _ in range(2):
        step()
    times, cpu = [], []
    t_end = time.perf_counter() + seconds
    while time.perf_counter() < t_end or len(times) < 5:
        t0, c0 = time.perf_counter(), time.process_time()
        step()
        cpu.append((time.process_time() - c0) * 1e3)
        times.append((time.perf_counter() - t0) * 1e3)
    params = sum(p.numel() for p in model.parameters())  # a complex element counts once (as phasor)
    print(json.dumps(dict(median_step_ms=statistics.median(times), median_cpu_ms=statistics.median(cpu),
                          steps=len(times),
                          peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
                          params=params, torch=torch.__version__)))


ENV = dict(os.environ)


def run_torch(name, seconds):
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", name, "--seconds", str(seconds)],
                         check=True, capture_output=True, text=True, env=ENV).stdout
    return json.loads(out.strip().splitlines()[-1])


def run_phasor(bench, name, seconds):
    out = subprocess.run([bench, "--benchmark_filter=^%s/" % BENCH_NAME[name], "--benchmark_format=json",
                          "--benchmark_min_time=%g" % seconds], check=True, capture_output=True, text=True,
                         env=ENV).stdout
    b = json.loads(out)["benchmarks"][0]
    return dict(median_step_ms=b["median_step_ms"], median_cpu_ms=b["median_cpu_ms"], steps=b["iterations"], peak_rss_mb=b["peak_rss_mb"],
                params=int(b["params"]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--child", choices=sorted(CONFIGS))
    ap.add_argument("--bench", default=os.path.join(os.path.dirname(__file__), "..", "build", "bench", "bench_fno"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--configs", default="1d,2d")
    ap.add_argument("--passive", action="store_true",
                    help="run both sides with OMP_WAIT_POLICY=PASSIVE (threads sleep at barriers; "
                         "helps on an oversubscribed machine)")
    a = ap.parse_args()
    if a.passive:
        ENV["OMP_WAIT_POLICY"] = "PASSIVE"
    if a.child:
        torch_child(a.child, a.seconds)
        return
    rows = []
    for name in a.configs.split(","):
        t, p = [], []
        for r in range(a.repeats):
            t.append(run_torch(name, a.seconds))
            p.append(run_phasor(a.bench, name, a.seconds))
            print("  %s run %d: torch %.1f ms (cpu %.1f, %.0f MB), phasor %.1f ms (cpu %.1f, %.0f MB)" % (
                name, r + 1, t[-1]["median_step_ms"], t[-1]["median_cpu_ms"], t[-1]["peak_rss_mb"],
                p[-1]["median_step_ms"], p[-1]["median_cpu_ms"], p[-1]["peak_rss_mb"]), flush=True)
        if t[0]["params"] != p[0]["params"]:
            print("WARNING: parameter counts differ: torch %d, phasor %d" % (t[0]["params"], p[0]["params"]))
        med = lambda rs, k: statistics.median(r[k] for r in rs)
        rows.append((name, t[0]["params"], med(t, "median_step_ms"), med(p, "median_step_ms"),
                     med(t, "median_cpu_ms"), med(p, "median_cpu_ms"), med(t, "peak_rss_mb"), med(p, "peak_rss_mb")))
    print()
    print("| model | params | torch step ms | phasor step ms | ratio | torch CPU ms | phasor CPU ms | CPU ratio"
          " | torch peak RSS MB | phasor peak RSS MB |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, params, tt, pt, tc, pc, tr, pr in rows:
        print("| FNO-%s | %d | %.1f | %.1f | %.2fx | %.1f | %.1f | %.2fx | %.0f | %.0f |" % (
            name.upper(), params, tt, pt, pt / tt, tc, pc, pc / tc, tr, pr))


if __name__ == "__main__":
    main()
