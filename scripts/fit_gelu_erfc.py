#!/usr/bin/env python3
"""Fits Q(t), the polynomial of Note [vector gelu] (src/core/activation_kernels.cpp).

erfc(z) = t Q(t) e^(-z^2), t = 1 / (1 + z / 2): Q approximates erfc(z) e^(z^2) / t, smooth on t in [0, 1]
(its limit at t = 0 is 1 / (2 sqrt(pi))). Relative least squares on Chebyshev nodes with Lawson reweighting
(towards the minimax fit); the coefficients are rounded to float one at a time, lowest first, the rest
refitted after each rounding. Prints them, highest first (Horner order), and the largest relative error
on a grid of 40001 points, in float64 with the float coefficients and in float Horner arithmetic.

Needs Debian's python3-numpy and python3-mpmath:  /usr/bin/python3 scripts/fit_gelu_erfc.py
"""
import mpmath as mp
import numpy as np

DEGREE, NODES = 10, 800
mp.mp.dps = 40


def target(t):
    t = mp.mpf(t)
    if t == 0:
        return 1 / (2 * mp.sqrt(mp.pi))
    z = 2 * (1 / t - 1)
    return mp.erfc(z) * mp.exp(z * z) / t


def main():
    nodes = np.array([float((1 - mp.cos(mp.pi * (k + 0.5) / NODES)) / 2) for k in range(NODES)])
    vals = np.array([float(target(t)) for t in nodes])
    coef = []
    for j in range(DEGREE + 1):
        done = sum(c * nodes**i for i, c in enumerate(coef))
        a = np.array([[t**k for k in range(j, DEGREE + 1)] for t in nodes]) / vals[:, None]
        b = 1 - done / vals
        w = np.ones(NODES)
        for _ in range(30):
            c, *_ = np.linalg.lstsq(a * np.sqrt(w)[:, None], b * np.sqrt(w), rcond=None)
            w *= np.abs(a @ c - b) + 1e-30
            w /= w.sum()
        coef.append(float(np.float32(c[0])))
    c32 = np.array(coef, dtype=np.float32)
    ts = np.linspace(0, 1, 40001)
    ref = np.array([float(target(t)) for t in ts])
    exact = np.polyval(c32.astype(np.float64)[::-1], ts)
    t32, q = ts.astype(np.float32), np.full(ts.shape, c32[-1], dtype=np.float32)
    for k in range(DEGREE - 1, -1, -1):
        q = (q * t32 + c32[k]).astype(np.float32)
    print("relative error: %.2e (float coefficients, exact arithmetic), %.2e (float Horner)"
          % (np.max(np.abs(exact / ref - 1)), np.max(np.abs(q / ref - 1))))
    for k in range(DEGREE, -1, -1):
        print("  t^%-2d %.9ef" % (k, c32[k]))


if __name__ == "__main__":
    main()
