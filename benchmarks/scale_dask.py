"""Out-of-core scaling of the Dask backend.

Data: the speed benchmarks' synthetic regression (d = 10 Gaussian inputs,
target ``sin(x0) + x1 x2`` + noise) written to Parquet in files of
``--file-rows`` rows (default 100 000), up to the largest m asked for
(10^7 rows: 100 files, about 0.9 GB).  For each m the first m rows are
read.  Model: ``SparseLSSVR`` with the RBF kernel (gamma = 0.1) on n = 1000
uniformly drawn basis rows, then exact LOO for 20 alphas
(``press(alphas)``): one training pass and one LOO pass over the files,
nothing of size m kept in memory.

Every configuration runs in its own process; reported: wall time of the
whole job (reading included), time per pass, peak resident memory of the
process (``ru_maxrss``), throughput in rows/s, and the GFLOP/s of the
dominant work (5 m n^2 flops: whitening + Gram in the first pass,
whitening + eigenbasis product in the second).  The in-memory NumPy path
(``SparseLSSVR(...).fit(X, y)`` on arrays, then ``press``) runs at
m = 10^6 with the same basis rows, for the throughput ratio, and its PRESS
values are compared with the Dask ones.

Targets (2 cores): peak memory <= 4 GiB at m = 10^7; Dask throughput at
least half the in-memory one at m = 10^6; time linear in m.

Fixed-size and Nyström models, ``--families 1e6,1e7``: the same
regression generated block by block inside the Dask graph (chunks of
``--family-chunk`` rows, each from its own seed, never all in memory, no
files); ``FixedSizeLSSVR(basis="random", n_basis=200,
cv=KFold(10))`` (one pass of per-fold Gram sums, then SCDP and the v-fold
curves by downdates) and ``NystromLSSVR(n_basis=200)`` (rank 100) fit,
then its exact LOO error for the 20 alphas (a training and a LOO pass).
Each model runs in its own process; reported: seconds per 10^6 rows and
peak resident memory (``ru_maxrss``), with the load average.

Run:  python benchmarks/scale_dask.py [--sizes 1e5,1e6,1e7] [--no-numpy]
      python benchmarks/scale_dask.py --sizes "" --families 1e6,1e7
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
D = 10
GAMMA = 0.1
ALPHAS = np.logspace(-3, 3, 20)


def write_data(folder, m_max, file_rows, seed=0):
    """Parquet files part-00000.parquet ... of ``file_rows`` rows each."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    n_files = -(-m_max // file_rows)
    for i in range(n_files):
        path = folder / f"part-{i:05d}.parquet"
        if path.exists():
            continue
        rng = np.random.default_rng([seed, i])
        X = rng.standard_normal((file_rows, D))
        y = np.sin(X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(file_rows)
        cols = {f"x{j}": X[:, j] for j in range(D)}
        cols["y"] = y
        pq.write_table(pa.table(cols), path, row_group_size=file_rows)
    return sorted(folder.glob("part-*.parquet"))[:n_files]


def basis_rows(m, n, seed=1):
    return np.sort(np.random.default_rng(seed).choice(m, n, replace=False))


def _peak_gib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB -> GiB


def worker(kind, m, n, folder, file_rows):
    files = sorted(Path(folder).glob("part-*.parquet"))[: m // file_rows]
    idx = basis_rows(m, n)
    t0 = time.perf_counter()
    if kind == "dask":
        import dask
        import dask.dataframe as dd

        from lssvm import SparseLSSVR
        from lssvm.backends.dask import report_passes

        times = {}

        class Timer:
            def __init__(self, label):
                self.label = label

            def __enter__(self):
                self.t = time.perf_counter()

            def __exit__(self, *exc):
                times[self.label] = times.get(self.label, 0.0) + time.perf_counter() - self.t

        with dask.config.set(scheduler="threads"), report_passes(Timer):
            ddf = dd.read_parquet([str(f) for f in files])
            arr = ddf.to_dask_array(lengths=True)
            X, y = arr[:, :D], arr[:, D]
            t1 = time.perf_counter()
            est = SparseLSSVR(gamma=GAMMA, alpha=1.0, basis=idx).fit(X, y)
            t2 = time.perf_counter()
            press = est.press(ALPHAS)
            t3 = time.perf_counter()
    else:
        import pandas as pd

        from lssvm import SparseLSSVR

        df = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
        X, y = df[[f"x{j}" for j in range(D)]].to_numpy(), df["y"].to_numpy()
        del df
        t1 = time.perf_counter()
        est = SparseLSSVR(gamma=GAMMA, alpha=1.0, basis=idx).fit(X, y)
        t2 = time.perf_counter()
        press = est.press(ALPHAS)
        t3 = time.perf_counter()
        times = {}
    out = {"kind": kind, "m": m, "n": n, "read": t1 - t0, "fit": t2 - t1, "loo": t3 - t2, "wall": t3 - t0,
           "peak_gib": _peak_gib(), "press": press.tolist(), "passes": times}
    print(json.dumps(out))


def synthetic(m, chunk, seed=0):
    """X (m, D) and y (m,) as Dask arrays whose chunks are generated in their
    tasks (each from its own seed): nothing of size m is ever in memory."""
    import dask
    import dask.array as da

    def block(i, rows, what):
        X = np.random.default_rng([seed, i, 0]).standard_normal((rows, D))
        if what == "X":
            return X
        return np.sin(X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * np.random.default_rng([seed, i, 1]).standard_normal(rows)

    sizes = [min(chunk, m - lo) for lo in range(0, m, chunk)]
    X = da.concatenate([da.from_delayed(dask.delayed(block, pure=True)(i, r, "X"), (r, D), float)
                        for i, r in enumerate(sizes)])
    y = da.concatenate([da.from_delayed(dask.delayed(block, pure=True)(i, r, "y"), (r,), float)
                        for i, r in enumerate(sizes)])
    return X, y


def family_worker(kind, m, chunk):
    import dask
    from sklearn.model_selection import KFold

    from lssvm import FixedSizeLSSVR, NystromLSSVR

    t0 = time.perf_counter()
    with dask.config.set(scheduler="threads"):
        X, y = synthetic(m, chunk)
        if kind == "fixed-size":
            est = FixedSizeLSSVR(gamma=GAMMA, alpha=1.0, basis="random", n_basis=200, cv=KFold(10),
                                 random_state=0).fit(X, y)
            t1 = time.perf_counter()
            info = {"model_size": int(est.model_size_), "cv_mse": float(est.cv_score_)}
        else:
            est = NystromLSSVR(gamma=GAMMA, alpha=1.0, n_basis=200, random_state=0).fit(X, y)
            t1 = time.perf_counter()
            mse = est.cv_error("loo", ALPHAS)
            info = {"rank": int(est.rank_), "loo_mse": float(mse.min()), "best_alpha": float(ALPHAS[np.argmin(mse)])}
    t2 = time.perf_counter()
    print(json.dumps({"kind": kind, "m": m, "fit": t1 - t0, "cv": t2 - t1, "wall": t2 - t0,
                      "peak_gib": _peak_gib(), "load": os.getloadavg(), **info}))


def run_family(kind, m, chunk):
    cmd = [sys.executable, __file__, "--family-worker", kind, "--m", str(m), "--family-chunk", str(chunk)]
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        sys.stderr.write(res.stderr)
        raise SystemExit(f"{kind} at m={m} failed")
    return json.loads(res.stdout.strip().splitlines()[-1])


def families(sizes, chunk):
    print(f"load average before: {os.getloadavg()}")
    rows = [run_family(kind, m, chunk) for m in sizes for kind in ("fixed-size", "nystrom")]
    print()
    print(f"d = {D}, RBF gamma = {GAMMA}, generated in chunks of {chunk} rows; fixed size: 200 random prototypes, "
          f"SCDP, 10-fold CV curves; Nystrom: 200 columns, rank 100, exact LOO for {ALPHAS.size} alphas")
    print("| model | m | fit (s) | CV (s) | wall (s) | s per 10^6 rows | peak memory (GiB) | load avg (1 min) | "
          "result |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        res = (f"size {r['model_size']}, CV MSE {r['cv_mse']:.5f}" if r["kind"] == "fixed-size"
               else f"rank {r['rank']}, LOO MSE {r['loo_mse']:.5f} at alpha {r['best_alpha']:.3g}")
        print(f"| {r['kind']} | {r['m']:.0e} | {r['fit']:.1f} | {r['cv']:.1f} | {r['wall']:.1f} | "
              f"{r['wall'] / r['m'] * 1e6:.1f} | {r['peak_gib']:.2f} | {r['load'][0]:.1f} | {res} |")


def run(kind, m, n, folder, file_rows):
    cmd = [sys.executable, __file__, "--worker", kind, "--m", str(m), "--n-basis", str(n), "--data", str(folder),
           "--file-rows", str(file_rows)]
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        sys.stderr.write(res.stderr)
        raise SystemExit(f"{kind} at m={m} failed")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", default="1e5,1e6,1e7")
    p.add_argument("--n-basis", type=int, default=1000)
    p.add_argument("--file-rows", type=int, default=100_000)
    p.add_argument("--data", default=str(HERE / "out" / "scale_dask_data"))
    p.add_argument("--no-numpy", action="store_true", help="skip the in-memory run at m = 10^6")
    p.add_argument("--families", default="", help="sizes for the fixed-size and Nystrom runs, e.g. 1e6,1e7")
    p.add_argument("--family-chunk", type=int, default=100_000)
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--family-worker", help=argparse.SUPPRESS)
    p.add_argument("--m", type=int, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.worker:
        worker(a.worker, a.m, a.n_basis, a.data, a.file_rows)
        return
    if a.family_worker:
        family_worker(a.family_worker, a.m, a.family_chunk)
        return
    if a.families:
        families([int(float(s)) for s in a.families.split(",")], a.family_chunk)
    if not a.sizes:
        return
    sizes = [int(float(s)) for s in a.sizes.split(",")]
    folder = Path(a.data)
    t = time.perf_counter()
    write_data(folder, max(sizes), a.file_rows)
    print(f"data: {folder} ({time.perf_counter() - t:.0f} s to write what was missing)")
    sys.path.insert(0, str(HERE))
    from _common import gemm_rate

    rate = gemm_rate(4000, a.n_basis)
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"DGEMM {rate:.0f} GFLOP/s (4000 x {a.n_basis} @ {a.n_basis} x {a.n_basis}, all cores)")
    n = a.n_basis
    rows = []
    for m in sizes:
        rows.append(run("dask", m, n, folder, a.file_rows))
        if m == 1_000_000 and not a.no_numpy:
            rows.append(run("numpy", m, n, folder, a.file_rows))
    print()
    print(f"n = {n} basis rows, d = {D}, RBF gamma = {GAMMA}, {ALPHAS.size} alphas, exact LOO")
    print("| path | m | read (s) | fit (s) | LOO, 20 alphas (s) | wall (s) | rows/s | GFLOP/s | peak memory (GiB) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        work = r["fit"] + r["loo"]
        gf = 5 * r["m"] * n * n / work / 1e9 if r["kind"] == "dask" else 4 * r["m"] * n * n / work / 1e9
        print(f"| {r['kind']} | {r['m']:.0e} | {r['read']:.1f} | {r['fit']:.1f} | {r['loo']:.1f} | {r['wall']:.1f} | "
              f"{r['m'] / r['wall']:,.0f} | {gf:.0f} | {r['peak_gib']:.2f} |")
    by = {(r["kind"], r["m"]): r for r in rows}
    if ("numpy", 1_000_000) in by and ("dask", 1_000_000) in by:
        dk, npy = by["dask", 1_000_000], by["numpy", 1_000_000]
        ratio = (dk["m"] / dk["wall"]) / (npy["m"] / npy["wall"])
        agree = np.max(np.abs(np.subtract(dk["press"], npy["press"])) / np.abs(npy["press"]))
        print(f"\nm = 10^6: Dask throughput / in-memory = {ratio:.2f} (target >= 0.5); "
              f"PRESS agreement {agree:.1e} (relative, max over alphas)")
    dks = [r for r in rows if r["kind"] == "dask"]
    if len(dks) > 1:
        per = [r["wall"] / r["m"] * 1e6 for r in dks]
        print("Dask seconds per 10^6 rows: " + ", ".join(f"{r['m']:.0e}: {p:.1f}" for r, p in zip(dks, per, strict=True)))
    for r in dks:
        best = int(np.argmin(r["press"]))
        print(f"m = {r['m']:.0e}: LOO-best alpha {ALPHAS[best]:.3g}, LOO MSE {r['press'][best] / r['m']:.5f}, "
              f"passes: " + ", ".join(f"{k} {v:.1f} s" for k, v in r["passes"].items()))


if __name__ == "__main__":
    main()
