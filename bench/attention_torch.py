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
import math

import torch
import torch.nn.functional as F

import torch_side


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
        rows["BM_SDPAFwd"] = torch_side.median_time(lambda: sdpa(q, k, v))
    qg, kg, vg = (t.clone().requires_grad_() for t in (q, k, v))
    g = torch.randn(8, 8, 256, 64)
    rows["BM_SDPAFwdBwd"] = torch_side.median_time(lambda: torch.autograd.grad(sdpa(qg, kg, vg), (qg, kg, vg), g))
    rows["BM_SDPACausalFwdBwd"] = torch_side.median_time(
        lambda: torch.autograd.grad(sdpa(qg, kg, vg, True), (qg, kg, vg), g))
    m = torch.nn.MultiheadAttention(512, 8)
    x = torch.randn(256, 8, 512, requires_grad=True)
    gx = torch.randn(256, 8, 512)
    params = list(m.parameters()) + [x]
    rows["BM_MHAFwdBwd"] = torch_side.median_time(
        lambda: torch.autograd.grad(m(x, x, x, need_weights=False)[0], params, gx))
    return rows


if __name__ == "__main__":
    torch_side.run(torch_rows, header=f"torch {torch.__version__}, attention: "
                   + ("F.scaled_dot_product_attention" if SDPA else "math (no F.scaled_dot_product_attention)"))
