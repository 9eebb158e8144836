#!/usr/bin/python3
"""Runs bench_core (phasor) and the same shapes with PyTorch, prints phasor vs torch tables.

Usage (from the repository root, after a Release build with -DPHASOR_BUILD_BENCH=ON):
    /usr/bin/python3 bench/compare_torch.py [--bench build/bench/bench_core] [--sessions 1]

Debian's /usr/bin/python3 has torch; a pyenv `python3` on PATH may not.

phasor side: the benchmark binary runs with --benchmark_format=json, --benchmark_repetitions
(default 3) and --benchmark_report_aggregates_only=true; we read the median aggregate of each
benchmark (real time).
torch side: each statement runs in a timeit loop (time.perf_counter, GC off) after a warm-up;
we keep the median over repeats. Dispatch rows loop the statement k times per repeat (k sized
to ~0.1 s), bandwidth rows time single calls.
--sessions N repeats both sides N times, alternating, and keeps per row the lowest median
(the run with the least interference from other processes on a shared machine); the spread
over sessions is printed as max/min.

Definitions (same as bench/bench_core.cpp):
  * dispatch rows: time per op; the 10-op chain reports (forward + sum + backward) / 10.
  * bandwidth rows: GB/s = bytes touched / time, each operand read or written once:
    a + b = 3 arrays, memcpy = 2 arrays, a (M,N) + b (1,N) = 2 arrays + one row, sum = 1 array.
    "% memcpy" divides by the C memcpy bandwidth at the same thread count.
  * ratio = phasor time / torch time (< 1: phasor faster).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import timeit

try:
    import torch
except ImportError:  # pragma: no cover - depends on the interpreter
    sys.exit("compare_torch.py needs torch: run it with Debian's /usr/bin/python3")

BIG = 1 << 24  # 16M elements
DIV = 1 << 20  # complex division rows: 1M elements
FMA = (33024, 1 << 20)  # multiply-add rows: a 256^2 half spectrum, 1M elements
LERP = 1 << 20  # lerp and where rows: 1M float32 elements
WHERE_STMTS = ("torch.where(m, x, e)", "torch.where(m, x, 0.0)", "x.masked_fill(m, 0.0)")
# BM_Unary1M's ops in its order (bench_core.cpp's unary_rows)
UNARY = [("relu", "x.relu()"), ("minimum", "torch.minimum(x, e)"), ("sign", "x.sign()"), ("floor", "x.floor()"),
         ("logical_not", "(x > 0.0).logical_not()"), ("sigmoid", "x.sigmoid()"), ("silu", "F.silu(x)"),
         ("exp", "x.exp()"), ("tanh", "x.tanh()"), ("clamp", "x.clamp(-1.0, 1.0)"),
         ("softplus", "F.softplus(x)"), ("sum", "x.sum()"), ("amax", "x.amax()"), ("round", "x.round()"),
         ("gelu", "F.gelu(x)"), ("gelu fwd+bwd", "F.gelu(x.detach().requires_grad_()).backward(e)"),
         ("remainder", "x.remainder(e)"), ("fmod", "x.fmod(e)"), ("hypot", "x.hypot(e)"),
         ("logaddexp", "x.logaddexp(e)"), ("xlogy", "x.xlogy(e)"), ("cumprod", "x.cumprod(0)"),
         ("sort", "x.sort()[0]"), ("topk 10", "x.topk(10)[0]"), ("cummax", "x.cummax(0)[0]"),
         ("logcumsumexp", "x.logcumsumexp(0)"), ("median", "x.median()"), ("quantile 3", "x.quantile(q)"),
         ("searchsorted", "torch.searchsorted(xs, e)"), ("nonzero", "(x > 0.0).nonzero()"),
         ("masked_select", "x.masked_select(x > 0.0)"), ("unique", "(x * 100.0).round().unique()"),
         ("scatter_reduce amax", "torch.zeros(1024).scatter_reduce(0, bins, x, 'amax')"),
         ("index_put acc", "torch.zeros(1024).index_put_((bins,), x, accumulate=True)"),
         ("scatter perm", "x.scatter(0, perm, e)"),
         ("index_put_ 1K in place", "acc.index_put_((idx1k,), x[:1024], accumulate=True)"),
         ("gather perm", "x.gather(0, perm)"),
         ("unique rows of 64", "torch.unique((x * 1.5).round().reshape(-1, 64), dim=0)"),
         ("lgamma", "x.lgamma()"), ("digamma", "x.digamma()"), ("erfinv of tanh", "x.tanh().erfinv()"),
         ("i0", "x.i0()"), ("log_ndtr", "torch.special.log_ndtr(x)"), ("igamma", "torch.igamma(x.abs(), e.abs())"),
         ("elu", "F.elu(x)"), ("selu", "F.selu(x)"), ("leaky_relu", "F.leaky_relu(x)"), ("hardswish", "F.hardswish(x)"),
         ("mish", "F.mish(x)"), ("logsigmoid", "F.logsigmoid(x)"), ("hardtanh", "F.hardtanh(x)"),
         ("softshrink", "F.softshrink(x)"), ("bessel_j0", "torch.special.bessel_j0(x * 5.0)"),
         ("modified_bessel_k0", "torch.special.modified_bessel_k0(x.abs())"), ("airy_ai", "torch.special.airy_ai(x)"),
         ("chebyshev_t 10", "torch.special.chebyshev_polynomial_t(x.tanh(), 10)"),
         ("legendre_p 10", "torch.special.legendre_polynomial_p(x.tanh(), 10)"),
         ("hermite_h 10", "torch.special.hermite_polynomial_h(x, 10)")]


# ---- phasor side --------------------------------------------------------------------------------
def run_phasor(bench, repetitions, min_time, bench_filter):
    cmd = [bench, "--benchmark_format=json", f"--benchmark_repetitions={repetitions}",
           "--benchmark_report_aggregates_only=true", f"--benchmark_min_time={min_time}"]
    if bench_filter:
        cmd.append(f"--benchmark_filter={bench_filter}")
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return parse_phasor(json.loads(out))


def parse_phasor(doc):
    """{run_name without '/real_time': {'ns': median real time in ns, counters...}}."""
    scale = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
    rows = {}
    for b in doc["benchmarks"]:
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        name = b.get("run_name", b["name"]).replace("/real_time", "")
        unit = scale[b.get("time_unit", "ns")]
        rows[name] = {"ns": b["real_time"] * unit, "cpu_ns": b["cpu_time"] * unit,
                      "bytes": b.get("bytes"), "ops": b.get("ops")}
    return rows


# ---- torch side ---------------------------------------------------------------------------------
def chain10(x, c):
    y = x * c
    y = y + c
    y = y.tanh()
    y = y.sin()
    y = y - c
    y = y.cos()
    y = y * c
    y = y.exp()
    y = y / c
    y = -y
    return y.sum()


def fwd_bwd(x, c):
    chain10(x, c).backward()
    x.grad = None


class Stamp:
    """Wall and thread-CPU clock read together (timeit subtracts two of these)."""
    __slots__ = ("wall", "cpu")

    def __init__(self, wall=None, cpu=None):
        self.wall = time.perf_counter() if wall is None else wall
        self.cpu = time.thread_time() if cpu is None else cpu

    def __sub__(self, o):
        return Stamp(self.wall - o.wall, self.cpu - o.cpu)


def time_stmt(stmt, env, per_call=False, repeats=7, target=0.1):
    """(median wall, median thread CPU) seconds per execution of `stmt` run with globals `env`."""
    t = timeit.Timer(stmt, globals=env, timer=Stamp)
    t.timeit(3)  # warm-up: allocator caches, lazy init, page faults
    number = 1
    if per_call:
        repeats = max(repeats, 9)
    else:
        while True:
            dt = t.timeit(number).wall
            if dt > 0.01:
                break
            number *= 4
        number = max(1, int(number * target / dt))
    runs = t.repeat(repeat=repeats, number=number)
    return (statistics.median(r.wall for r in runs) / number, statistics.median(r.cpu for r in runs) / number)


def torch_rows():
    """{phasor benchmark name: (wall, thread CPU) seconds per iteration} for the same shapes."""
    res = {}
    f32 = torch.float32
    torch.set_num_threads(1)
    a, b = torch.full((1,), 1.5, dtype=f32), torch.full((1,), 2.5, dtype=f32)
    ag = a.clone().requires_grad_()
    ai = torch.zeros(1, dtype=f32)
    bi = torch.full((1,), 1e-9, dtype=f32)
    x, c = torch.full((4,), 0.5, dtype=f32), torch.full((4,), 1.25, dtype=f32)
    xg = x.clone().requires_grad_()
    env = dict(torch=torch, a=a, b=b, ag=ag, ai=ai, bi=bi, x=x, xg=xg, c=c, chain10=chain10,
               fwd_bwd=fwd_bwd, f32=f32)
    res["BM_Add1"] = time_stmt("a + b", env)
    res["BM_Neg1"] = time_stmt("-a", env)
    res["BM_AddScalar1"] = time_stmt("a + 1.0", env)
    res["BM_AddInplace1"] = time_stmt("ai.add_(bi)", env)
    res["BM_Add1RecordGraph"] = time_stmt("ag + b", env)
    res["BM_Empty1"] = time_stmt("torch.empty(1, dtype=f32)", env)
    res["BM_Chain10FwdBwd"] = time_stmt("fwd_bwd(xg, c)", env)
    res["BM_Chain10Fwd"] = time_stmt("chain10(xg, c)", env)
    res["BM_Chain10NoGrad"] = time_stmt("chain10(x, c)", env)

    for threads in (1, 2):
        torch.set_num_threads(threads)
        big_a, big_b = torch.full((BIG,), 1.5, dtype=f32), torch.full((BIG,), 2.5, dtype=f32)
        out = torch.empty(BIG, dtype=f32)
        out.zero_()
        env = dict(torch=torch, a=big_a, b=big_b, out=out)
        res[f"BM_Memcpy/n:{BIG}/threads:{threads}"] = time_stmt("out.copy_(a)", env, per_call=True)
        res[f"BM_AddContig/n:{BIG}/threads:{threads}"] = time_stmt("a + b", env, per_call=True)
        res[f"BM_AddContig/n:{BIG}/threads:{threads}|out="] = time_stmt("torch.add(a, b, out=out)", env,
                                                                       per_call=True)
        res[f"BM_Sum/n:{BIG}/threads:{threads}"] = time_stmt("a.sum()", env, per_call=True)
        for cols in (4096, 64):
            m = big_a.view(BIG // cols, cols)
            row = torch.full((1, cols), 2.5, dtype=f32)
            env2 = dict(torch=torch, m=m, row=row, out=out.view(BIG // cols, cols))
            key = f"BM_AddBcastRow/N:{cols}/threads:{threads}"
            res[key] = time_stmt("m + row", env2, per_call=True)
            res[key + "|out="] = time_stmt("torch.add(m, row, out=out)", env2, per_call=True)
        del big_a, big_b, out, env
    torch.set_num_threads(1)
    for code, dt in ((0, torch.complex64), (1, torch.complex128)):
        g = torch.Generator().manual_seed(5)
        env = dict(a=torch.randn(DIV, dtype=dt, generator=g), b=torch.randn(DIV, dtype=dt, generator=g))
        res[f"BM_DivComplex/n:{DIV}/dtype:{code}"] = time_stmt("a / b", env, per_call=True)
    for n in FMA:
        g = torch.Generator().manual_seed(6)
        env = dict(torch=torch, x=torch.randn(n, dtype=torch.complex128, generator=g),
                   b=torch.randn(n, dtype=torch.complex128, generator=g),
                   r=torch.randn(n, dtype=torch.float64, generator=g))
        res[f"BM_AddcmulComplex/n:{n}"] = time_stmt("torch.addcmul(x, r, b)", env, per_call=True)
        res[f"BM_MulAddComplex/n:{n}"] = time_stmt("x + r * b", env, per_call=True)
    g = torch.Generator().manual_seed(7)
    env = dict(torch=torch, x=torch.randn(LERP, generator=g), e=torch.randn(LERP, generator=g))
    for form, stmt in enumerate(("torch.lerp(x, e, 0.1)", "x + 0.1 * (e - x)", "x.lerp_(e, 0.1)")):
        res[f"BM_Lerp/n:{LERP}/form:{form}"] = time_stmt(stmt, env, per_call=True)
    g = torch.Generator().manual_seed(8)
    env = dict(torch=torch, x=torch.randn(LERP, generator=g), e=torch.randn(LERP, generator=g))
    env["m"] = torch.randn(LERP, generator=g) > 0
    for form, stmt in enumerate(WHERE_STMTS):
        res[f"BM_WhereRandomMask/n:{LERP}/form:{form}"] = time_stmt(stmt, env, per_call=True)
    g = torch.Generator().manual_seed(9)
    env = dict(torch=torch, F=torch.nn.functional, x=torch.randn(LERP, generator=g), e=torch.randn(LERP, generator=g))
    env["xs"], env["q"] = env["x"].sort()[0], torch.tensor([0.25, 0.5, 0.75])
    env["bins"] = (env["e"].abs() * 300.0).floor().clamp(max=1023.0).long()
    env["perm"] = env["e"].argsort()
    env["acc"], env["idx1k"] = torch.zeros(LERP), torch.randint(0, LERP, (1024,))
    for k, (_, stmt) in enumerate(UNARY):
        res[f"BM_Unary1M/n:{LERP}/op:{k}"] = time_stmt(stmt, env, per_call=True)
    env = dict(a=torch.randn(4096, 256), b=torch.randn(64, 1024, 16), c=torch.randn(20, 32, 4096))
    for k, stmt in enumerate(REDUCE_DIMS):
        res[f"BM_ReduceDims/op:{k}"] = time_stmt(stmt, env, per_call=True)
    g = torch.Generator().manual_seed(11)
    f64 = torch.float64
    env = dict(torch=torch, a=torch.randn(256, 256, generator=g, dtype=f64) + 16.0 * torch.eye(256, dtype=f64),
               b=torch.randn(256, 64, generator=g, dtype=f64), small=torch.randn(4096, 4, 4, generator=g, dtype=f64),
               big=torch.randn(512, 512, generator=g, dtype=f64))
    env["spd"] = env["big"] @ env["big"].T + torch.eye(512, dtype=f64)
    for k, (_, stmt) in enumerate(LINALG):
        res[f"BM_Linalg/op:{k}"] = time_stmt(stmt, env, per_call=True)
    env = dict(torch=torch, lap=laplacian_csr(torch, 256), x=torch.randn(65536, dtype=f64),
               x16=torch.randn(65536, 16, dtype=f64), pos=torch.randint(0, 4096, (2, 1 << 20)),
               pv=torch.randn(1 << 20, dtype=f64))
    env["lap_coo"] = env["lap"].to_sparse_coo()
    for k, (_, stmt) in enumerate(SPARSE):
        res[f"BM_Sparse/op:{k}"] = time_stmt(stmt, env, per_call=True)
    g = torch.Generator().manual_seed(13)
    env = dict(torch=torch, a=torch.randn(512, 256, generator=g, dtype=f64), b=torch.randn(512, 16, generator=g, dtype=f64))
    hg, hsg = torch.randn(256, 256, generator=g, dtype=f64), torch.randn(1024, 8, 8, generator=g, dtype=f64)
    env["h"], env["hs"] = hg + hg.T, hsg + hsg.transpose(-1, -2)
    env["g"] = torch.randn(256, 256, generator=g, dtype=f64)
    env["glu"], env["b16"] = torch.linalg.lu_factor(env["g"]), torch.randn(256, 16, generator=g, dtype=f64)
    for k, (_, stmt) in enumerate(DECOMP):
        res[f"BM_Decomp/op:{k}"] = time_stmt(stmt, env, per_call=True)
    return res


def laplacian_csr(torch, g):
    """The 5-point Laplacian of a g x g grid as a float64 CSR tensor (bench_core.cpp's sparse_rows)."""
    r = torch.arange(g * g)
    i, j = r // g, r % g
    rows, cols, vals = [r], [r], [torch.full((g * g,), 4.0, dtype=torch.float64)]
    for ok, off in ((i > 0, -g), (j > 0, -1), (j + 1 < g, 1), (i + 1 < g, g)):
        rows.append(r[ok]), cols.append(r[ok] + off), vals.append(torch.full((int(ok.sum()),), -1.0, dtype=torch.float64))
    coo = torch.sparse_coo_tensor(torch.stack([torch.cat(rows), torch.cat(cols)]), torch.cat(vals), (g * g, g * g))
    return coo.coalesce().to_sparse_csr()


# ---- tables -------------------------------------------------------------------------------------
DISPATCH = [
    ("BM_Add1", "a + b, 1 elem", 0.5),
    ("BM_Neg1", "-a, 1 elem", None),
    ("BM_AddScalar1", "a + 1.0, 1 elem", None),
    ("BM_AddInplace1", "a += b, 1 elem", None),
    ("BM_Add1RecordGraph", "a + b, a requires grad", None),
    ("BM_Empty1", "empty({1})", None),
    ("BM_Chain10FwdBwd", "10-op chain fwd+bwd, 4 elem", 3.0),
    ("BM_Chain10Fwd", "10-op chain fwd (graph)", None),
    ("BM_Chain10NoGrad", "10-op chain fwd (no grad)", None),
]


def bandwidth_rows():
    rows = []
    for threads in (1, 2):
        rows += [
            (f"BM_Memcpy/n:{BIG}/threads:{threads}", "memcpy 64 MiB (torch: copy_)", threads),
            (f"BM_RawAddLoop/n:{BIG}/threads:{threads}", "plain C loop o=a+b (ref)", threads),
            (f"BM_RawAddLoopNT/n:{BIG}/threads:{threads}", "same, streaming stores (ref)", threads),
            (f"BM_AddContig/n:{BIG}/threads:{threads}", "a + b, 16M", threads),
            (f"BM_AddBcastRow/N:4096/threads:{threads}", "(4096,4096) + (1,4096)", threads),
            (f"BM_AddBcastRow/N:64/threads:{threads}", "(262144,64) + (1,64)", threads),
            (f"BM_Sum/n:{BIG}/threads:{threads}", "sum of 16M", threads),
        ]
    return rows


DIVISION = [
    (f"BM_RawDivComplexLibgcc/n:{DIV}/dtype:0", "raw loop, libgcc __divsc3 (ref)"),
    (f"BM_DivComplex/n:{DIV}/dtype:0", "a / b, complex64"),
    (f"BM_RawDivComplexLibgcc/n:{DIV}/dtype:1", "raw loop, libgcc __divdc3 (ref)"),
    (f"BM_DivComplex/n:{DIV}/dtype:1", "a / b, complex128"),
]


MULTIPLY_ADD = [(f"{name}/n:{n}", f"{label}, n = {n}") for n in FMA
                for name, label in (("BM_MulAddComplex", "x + r * b"), ("BM_AddcmulComplex", "addcmul(x, r, b)"))]
LERP_ROWS = [(f"BM_Lerp/n:{LERP}/form:{form}", label) for form, label in
             enumerate(("lerp(x, e, 0.1)", "x + 0.1 * (e - x)", "x.lerp_(e, 0.1)"))]
UNARY_ROWS = [(f"BM_Unary1M/n:{LERP}/op:{k}", name) for k, (name, _) in enumerate(UNARY)]
# BM_ReduceDims' statements in its order (bench_core.cpp's reduce_dim_rows)
REDUCE_DIMS = ["a.sum(0)", "b.sum(1)", "c.sum((0,2))", "a.amax(0)", "c.mean(2)"]
REDUCE_ROWS = [(f"BM_ReduceDims/op:{k}", stmt) for k, stmt in enumerate(REDUCE_DIMS)]
# BM_Linalg's calls in its order (bench_core.cpp's linalg_rows), float64, one thread
LINALG = [("solve(a, b), 256 x 256, 64 rhs", "torch.linalg.solve(a, b)"), ("inv(a), 256 x 256", "torch.linalg.inv(a)"),
          ("det of 4096 4 x 4", "torch.linalg.det(small)"), ("slogdet, 512 x 512", "torch.linalg.slogdet(big)[1]"),
          ("cholesky, 512 x 512", "torch.linalg.cholesky(spd)")]
LINALG_ROWS = [(f"BM_Linalg/op:{k}", label) for k, (label, _) in enumerate(LINALG)]
# BM_Sparse's calls in its order (bench_core.cpp's sparse_rows), float64, one thread
# (torch's CSR matrix-vector product needs MKL, which Debian's torch lacks: its COO product there)
SPARSE = [("CSR Laplacian 65536^2 @ x", "lap_coo @ x"), ("CSR Laplacian @ 16 columns", "lap @ x16"),
          ("coalesce 1M positions of 4096^2", "torch.sparse_coo_tensor(pos, pv, (4096, 4096)).coalesce().values()")]
SPARSE_ROWS = [(f"BM_Sparse/op:{k}", label) for k, (label, _) in enumerate(SPARSE)]
# BM_Decomp's calls in its order (bench_core.cpp's decomp_rows), float64, one thread
DECOMP = [("qr, 512 x 256", "torch.linalg.qr(a)[0]"), ("eigh, 256 x 256", "torch.linalg.eigh(h)[1]"),
          ("eigvalsh, 256 x 256", "torch.linalg.eigvalsh(h)"), ("eigh of 1024 8 x 8", "torch.linalg.eigh(hs)[1]"),
          ("svd, 512 x 256 reduced", "torch.linalg.svd(a, full_matrices=False)[0]"),
          ("svdvals, 512 x 256", "torch.linalg.svdvals(a)"),
          ("lstsq gelsd, 512 x 256, 16 rhs", "torch.linalg.lstsq(a, b, driver='gelsd').solution"),
          ("lstsq gels, 512 x 256, 16 rhs", "torch.linalg.lstsq(a, b, driver='gels').solution"),
          ("pinv, 256 x 256", "torch.linalg.pinv(h)"), ("eig, general 256 x 256", "torch.linalg.eig(g)[1]"),
          ("lu_factor, 256 x 256", "torch.linalg.lu_factor(g)[0]"),
          ("lu_solve, 256 x 256, 16 rhs", "torch.linalg.lu_solve(glu[0], glu[1], b16)")]
DECOMP_ROWS = [(f"BM_Decomp/op:{k}", label) for k, (label, _) in enumerate(DECOMP)]
WHERE_ROWS = [(f"BM_WhereRandomMask/n:{LERP}/form:{form}", label) for form, label in
              enumerate(("where(m, x, e)", "where(m, x, 0)", "x.masked_fill(m, 0)"))]


def fmt(v, width, prec=2, suffix=""):
    """Right-aligned number (or '-' when missing) in `width` characters."""
    return (f"{v:.{prec}f}{suffix}" if v is not None else "-").rjust(width)


def per_call_table(ph, th, title, unit, rows, per_second):
    """A table of (key, label) rows: phasor's and torch's seconds per iteration times `per_second`, and the ratio."""
    print("\n" + title)
    hdr = f"{'benchmark':<34}{'phasor ' + unit:>11}{'torch ' + unit:>10}{'phasor/torch':>14}"
    print(hdr)
    print("-" * len(hdr))
    for key, label in rows:
        p = ph.get(key)
        if p is None:
            continue
        p_v = p["ns"] * 1e-9 * per_second
        t_v = th[key][0] * per_second if key in th else None
        print(f"{label:<34}{fmt(p_v, 11)}{fmt(t_v, 10)}{fmt(p_v / t_v if t_v else None, 14)}")


def print_tables(ph, th, spread=None):
    spread = spread or {}
    print("\n(a) eager dispatch, 1 thread: time per op in us (chain rows: per-iteration time / 10);"
          " wall = real time, cpu = thread CPU time (robust to other load)")
    hdr = (f"{'benchmark':<30}{'phasor wall':>12}{'cpu':>8}{'torch wall':>12}{'cpu':>8}{'ratio wall':>11}"
           f"{'cpu':>7}{'target':>8}{'ok':>5}")
    print(hdr)
    print("-" * len(hdr))
    for key, label, target in DISPATCH:
        p = ph.get(key)
        if p is None:
            continue
        ops = p["ops"] or 1
        p_us, p_cpu = p["ns"] / ops / 1e3, p["cpu_ns"] / ops / 1e3
        t_us, t_cpu = (th[key][0] / ops * 1e6, th[key][1] / ops * 1e6) if key in th else (None, None)
        ok = ("yes" if p_us < target else "NO") if target else ""
        print(f"{label:<30}{fmt(p_us, 12, 3)}{fmt(p_cpu, 8, 3)}{fmt(t_us, 12, 3)}{fmt(t_cpu, 8, 3)}"
              f"{fmt(p_us / t_us if t_us else None, 11)}{fmt(p_cpu / t_cpu if t_cpu else None, 7)}"
              f"{fmt(target, 8, 1)}{ok:>5}")

    print("\n(b) bandwidth, float32, 16M elements (GB/s = bytes touched / time; % of C memcpy at the"
          " same thread count)")
    hdr = (f"{'benchmark':<32}{'thr':>4}{'phasor ms':>11}{'GB/s':>7}{'%memcpy':>9}{'torch ms':>10}"
           f"{'GB/s':>7}{'%memcpy':>9}{'torch out= ms':>15}{'phasor/torch':>14}")
    print(hdr)
    print("-" * len(hdr))
    for key, label, threads in bandwidth_rows():
        p = ph.get(key)
        if p is None:
            continue
        mem = ph.get(f"BM_Memcpy/n:{BIG}/threads:{threads}")
        mem_gbs = mem["bytes"] / mem["ns"] if mem else None
        p_ms, p_gbs = p["ns"] / 1e6, p["bytes"] / p["ns"]
        t_s = th[key][0] if key in th else None
        t_ms = t_s * 1e3 if t_s else None
        t_gbs = p["bytes"] / (t_s * 1e9) if t_s else None
        t_out = th[key + "|out="][0] if key + "|out=" in th else None
        is_ref = key.startswith(("BM_Memcpy", "BM_RawAdd"))
        ratio = p_ms / t_ms if (t_ms and not is_ref) else None
        pct = 100 * p_gbs / mem_gbs if mem_gbs else None
        tpct = 100 * t_gbs / mem_gbs if (mem_gbs and t_gbs) else None
        print(f"{label:<32}{threads:>4}{fmt(p_ms, 11)}{fmt(p_gbs, 7, 1)}{fmt(pct, 9, 0, '%')}{fmt(t_ms, 10)}"
              f"{fmt(t_gbs, 7, 1)}{fmt(tpct, 9, 0, '%')}{fmt(t_out * 1e3 if t_out else None, 15)}{fmt(ratio, 14)}")
    per_call_table(ph, th, "(c) complex division, 1M random elements, 1 thread (ns per element; ratio = phasor / torch)",
                   "ns", DIVISION, 1e9 / DIV)
    per_call_table(ph, th, "(d) x + r * b, complex128 x and b, float64 r, 1 thread (us per call; ratio = phasor / "
                   "torch)", "us", MULTIPLY_ADD, 1e6)
    per_call_table(ph, th, "(e) lerp, float32, 1M elements, 1 thread (us per call; ratio = phasor / torch)", "us",
                   LERP_ROWS, 1e6)
    per_call_table(ph, th, "(f) where / masked_fill, float32, 1M elements, random mask, 1 thread (us per call; ratio = "
                   "phasor / torch)", "us", WHERE_ROWS, 1e6)
    per_call_table(ph, th, "(g) elementwise and full reductions, float32, 1M elements, 1 thread (us per call; ratio = phasor / torch)",
                   "us", UNARY_ROWS, 1e6)
    per_call_table(ph, th, "(h) reductions over some dims, float32, 1 thread (us per call; ratio = phasor / torch)",
                   "us", REDUCE_ROWS, 1e6)
    per_call_table(ph, th, "(i) LU-based linalg and Cholesky, float64, 1 thread (us per call; ratio = phasor / torch)",
                   "us", LINALG_ROWS, 1e6)
    per_call_table(ph, th, "(j) sparse: CSR products and COO coalescing, float64, 1 thread (us per call; ratio = phasor / "
                   "torch)", "us", SPARSE_ROWS, 1e6)
    per_call_table(ph, th, "(k) QR, eigh, SVD, least squares, pseudo-inverse, eig, LU, float64, 1 thread (us per call; ratio = "
                   "phasor / torch)", "us", DECOMP_ROWS, 1e6)
    if spread:
        worst = sorted(spread.items(), key=lambda kv: -kv[1])[:5]
        print("\nlargest session spread (max/min of session medians): " +
              ", ".join(f"{k} {v:.2f}" for k, v in worst))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", default=os.path.join(here, "..", "build", "bench", "bench_core"))
    ap.add_argument("--repetitions", type=int, default=3)
    ap.add_argument("--min-time", type=float, default=0.5, help="--benchmark_min_time (seconds)")
    ap.add_argument("--filter", default="", help="--benchmark_filter for the phasor binary")
    ap.add_argument("--sessions", type=int, default=1)
    ap.add_argument("--phasor-json", help="read phasor results from this JSON file instead of running")
    ap.add_argument("--save", help="write the merged results (phasor ns, torch s) as JSON here")
    args = ap.parse_args()

    ph_runs, th_runs = [], []
    for s in range(args.sessions):
        if args.phasor_json:
            with open(args.phasor_json) as f:
                ph_runs.append(parse_phasor(json.load(f)))
        else:
            ph_runs.append(run_phasor(args.bench, args.repetitions, args.min_time, args.filter))
        th_runs.append(torch_rows())
        print(f"session {s + 1}/{args.sessions} done, load {os.getloadavg()[0]:.2f}", file=sys.stderr)

    ph = {k: min((r[k] for r in ph_runs if k in r), key=lambda v: v["ns"]) for k in ph_runs[0]}
    th = {k: min((r[k] for r in th_runs), key=lambda v: v[0]) for k in th_runs[0]}
    spread = {}
    if args.sessions > 1:
        for k in ph:
            v = [r[k]["ns"] for r in ph_runs if k in r]
            spread["phasor " + k] = max(v) / min(v)
        for k in th:
            v = [r[k][0] for r in th_runs]
            spread["torch " + k] = max(v) / min(v)

    print(f"torch {torch.__version__}, {os.cpu_count()} CPUs, sessions={args.sessions}, "
          f"phasor repetitions={args.repetitions} (median)")
    print_tables(ph, th, spread)
    if args.save:
        with open(args.save, "w") as f:
            json.dump({"phasor_ns": ph, "torch_s": th, "spread": spread}, f, indent=1)


if __name__ == "__main__":
    main()
