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
import torch

import torch_side

L, N, H = 100, 32, 128


def torch_rows():
    torch.manual_seed(0)
    rows = {}
    lstm = torch.nn.LSTM(H, H, num_layers=2)
    x = torch.randn(L, N, H)
    with torch.no_grad():
        rows["BM_LSTMFwd"] = torch_side.median_time(lambda: lstm(x), repeats=5, budget=0.2)
    xg = x.clone().requires_grad_()
    g = torch.randn(L, N, H)
    wrt = tuple(lstm.parameters()) + (xg,)
    rows["BM_LSTMFwdBwd"] = torch_side.median_time(lambda: torch.autograd.grad(lstm(xg)[0], wrt, g), repeats=5,
                                                  budget=0.2)
    return rows


if __name__ == "__main__":
    torch_side.run(torch_rows, width=20)
