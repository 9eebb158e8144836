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
import torch
import torch.nn.functional as F

import torch_side


def torch_rows():
    torch.manual_seed(0)
    rows = {}
    x = torch.randn(4096, 1024)
    w, b = torch.ones(1024), torch.zeros(1024)
    with torch.no_grad():
        rows["BM_LayerNormFwd"] = torch_side.median_time(lambda: F.layer_norm(x, (1024,), w, b))
    xg, wg, bg = x.clone().requires_grad_(), w.clone().requires_grad_(), b.clone().requires_grad_()
    g = torch.randn(4096, 1024)
    rows["BM_LayerNormFwdBwd"] = torch_side.median_time(
        lambda: torch.autograd.grad(F.layer_norm(xg, (1024,), wg, bg), (xg, wg, bg), g))
    bn = torch.nn.BatchNorm2d(64)
    x4 = torch.randn(32, 64, 32, 32)
    with torch.no_grad():
        rows["BM_BatchNorm2dFwd"] = torch_side.median_time(lambda: bn(x4))
    x4g = x4.clone().requires_grad_()
    g4 = torch.randn(32, 64, 32, 32)
    rows["BM_BatchNorm2dFwdBwd"] = torch_side.median_time(
        lambda: torch.autograd.grad(bn(x4g), (x4g, bn.weight, bn.bias), g4))
    gn = torch.nn.GroupNorm(8, 64)
    rows["BM_GroupNormFwdBwd"] = torch_side.median_time(
        lambda: torch.autograd.grad(gn(x4g), (x4g, gn.weight, gn.bias), g4))
    p = torch.randn(20, 1, 1024, requires_grad=True)
    t = torch.randn(20, 1, 1024)

    def rel_l2():
        n = p.shape[0]
        loss = (torch.norm(p.reshape(n, -1) - t.reshape(n, -1), 2, 1) / torch.norm(t.reshape(n, -1), 2, 1)).mean()
        return torch.autograd.grad(loss, (p,))
    rows["BM_RelativeL2FwdBwd"] = torch_side.median_time(rel_l2)
    xc = torch.randn(1024, 100, requires_grad=True)
    tc = torch.randint(0, 100, (1024,))
    rows["BM_CrossEntropyFwdBwd"] = torch_side.median_time(lambda: torch.autograd.grad(F.cross_entropy(xc, tc), (xc,)))
    return rows


if __name__ == "__main__":
    torch_side.run(torch_rows)
