#!/usr/bin/python3
"""Times the functions of bench/bench_functional.cpp with torch.autograd.functional (a tanh network R^64 -> R^64,
width 128, float32; Rosenbrock in R^32, float64) and, when given the phasor binary, runs it and prints
phasor / torch ratios (< 1: phasor faster).

Usage: /usr/bin/python3 bench/functional_torch.py [--bench build/bench/bench_functional] [--threads 2] [--cpu-time]
The torch rows use torch's defaults (vectorize=False: one backward pass per Jacobian row, as phasor), except the
*Vectorized rows (vectorize=True, batched by vmap; phasor has no vmap, so they have no phasor column) and
BM_JacobianFwd (torch's forward mode needs vectorize=True; phasor's is one double-backward product per column).
"""
import torch
from torch.autograd import functional as F

import torch_side

N_IN, WIDTH, N_ROSEN = 64, 128, 32


def torch_rows():
    torch.manual_seed(0)
    W1 = torch.randn(WIDTH, N_IN) * 0.1
    b1 = torch.randn(WIDTH) * 0.1
    W2 = torch.randn(N_IN, WIDTH) * 0.1

    def net(x):
        return W2 @ torch.tanh(W1 @ x + b1)

    def rosenbrock(x):
        a, b = x[:-1], x[1:]
        return (100.0 * (b - a * a) ** 2 + (1.0 - a) ** 2).sum()

    x, v = torch.randn(N_IN), torch.randn(N_IN)
    xr, vr = torch.randn(N_ROSEN, dtype=torch.float64), torch.randn(N_ROSEN, dtype=torch.float64)
    t = torch_side.median_time
    return {
        "BM_JacobianRev": t(lambda: F.jacobian(net, x)),
        "BM_JacobianRevVectorized": t(lambda: F.jacobian(net, x, vectorize=True)),
        "BM_JacobianFwd": t(lambda: F.jacobian(net, x, vectorize=True, strategy="forward-mode")),
        "BM_Vjp": t(lambda: F.vjp(net, x, v)),
        "BM_Jvp": t(lambda: F.jvp(net, x, v)),
        "BM_HessianRosenbrock": t(lambda: F.hessian(rosenbrock, xr)),
        "BM_HessianRosenbrockVectorized": t(lambda: F.hessian(rosenbrock, xr, vectorize=True)),
        "BM_HvpRosenbrock": t(lambda: F.hvp(rosenbrock, xr, vr)),
    }


if __name__ == "__main__":
    torch_side.run(torch_rows, width=32)
