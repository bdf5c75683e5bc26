"""Speed of this checkout against a base commit, side by side in one run.

Each case runs in a subprocess whose ``PYTHONPATH`` is the ``src`` folder of
one tree (one long-lived worker per tree, so the import is not timed): the
base commit (checked out into a temporary ``git worktree``) or this checkout.
Wall and CPU seconds are both reported (the worker's CPU time, or that of
the ``lssvm select`` process: less sensitive to other work on a shared
machine).
The two trees alternate (A B A B ...), each case ``--repeats`` times, and the
median of each tree's times counts; the ratio is new / base (above 1: this
checkout is slower).

Cases, for each family (``SparseLSSVR``, ``NystromLSSVR``, ``FixedSizeLSSVR``)
on m = 5,000 rows of d = 8 features with a basis of n = 500 (the pool size
``n_basis`` for fixed-size, which keeps its default ``max_size`` and its
default 10-fold size search):

* ``fit``: the fit;
* ``fit+loo20``: the fit and the exact LOO path over 20 alphas (``press``,
  else ``cv_residuals("loo", alpha=...)``, whichever the tree has);
* ``fit+cv10``: the fit and exact 10-fold CV over the same 20 alphas
  (``cv_error(cv=10, alpha=...)``; a fixed-size tree without it: the fit's
  own 10-fold curve over model sizes, ``cv_curve_``);
* ``cv+``: ``predict_interval(method="cv+")`` on 1,000 new rows of a model
  fitted (untimed) on m = 2,000 rows with a basis of n = 200 (at n = 500 the
  fixed-size case alone, ten refits with their size search, takes a minute);

and ``lssvm select`` with its defaults on MAGIC (``python -m lssvm.cli
select magic.csv.gz --target class --no-report``, the whole command).

A case uses the first of its methods that both trees have; where none is
common each tree runs its own first one and the row says so (its ratio then
compares different work).  A method neither tree has prints ``n/a``.

Run:  OMP_NUM_THREADS=1 python benchmarks/refactor_speed.py [--base REF] [--new REF]
      [--repeats 3] [--select-repeats 2] [--quick] [--cases sparse:fit magic:select ...]

``--base`` defaults to the main commit this work branched from; ``--new``
defaults to this checkout's working tree (give a ref to check one out
instead; ``--new main --base main`` measures the noise: ratios near 1).
``--quick``: m = 1,000, n = 100, CV+ at m = 500, n = 50 and ``select`` on the first
2,000 random rows of MAGIC.  Also prints the lines of Python under ``src/`` of
both trees.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_BASE = "8dc893f"
DATA = Path(os.environ.get("LSSVM_DATA", ROOT.parent / "shared" / "data"))
if not DATA.is_dir():
    DATA = Path("/work/shared/data")

FAMILIES = ("sparse", "nystrom", "fixed-size")
CLASS_NAMES = {"sparse": "SparseLSSVR", "nystrom": "NystromLSSVR", "fixed-size": "FixedSizeLSSVR"}
KINDS = ("fit", "fit+loo20", "fit+cv10", "cv+")
#: Per kind, the methods a case may use, in order of preference.
METHODS = {
    "fit": ("fit",),
    "fit+loo20": ("press", "cv_residuals"),
    "fit+cv10": ("cv_error", "cv_curve_"),
    "cv+": ("predict_interval",),
}
ALPHAS = np.logspace(-4, 1, 20)


# --------------------------------------------------------------- worker side
def _data(m, d, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, d))
    y = np.sin(X[:, 0] * 2) + X[:, 1] * X[:, 2] + 0.5 * np.cos(X[:, 3:].sum(axis=1)) + 0.3 * rng.standard_normal(m)
    return X, y


def _estimator(family, n):
    import lssvm

    return getattr(lssvm, CLASS_NAMES[family])(n_basis=n, random_state=0)


def _run_case(family, kind, method, m, n, m_cvplus, n_cvplus):
    """Time one case in this process; returns (wall seconds, CPU seconds of the process)."""
    import warnings

    warnings.simplefilter("ignore")
    if kind == "cv+":
        X, y = _data(m_cvplus + 1000, 8, 1)
        est = _estimator(family, n_cvplus).fit(X[:m_cvplus], y[:m_cvplus])
        t0, c0 = time.perf_counter(), time.process_time()
        est.predict_interval(X[m_cvplus:], method="cv+")
        return time.perf_counter() - t0, time.process_time() - c0
    X, y = _data(m, 8, 0)
    est = _estimator(family, n)
    t0, c0 = time.perf_counter(), time.process_time()
    est.fit(X, y)
    if method == "press":
        est.press(alpha=ALPHAS)
    elif method == "cv_residuals":
        est.cv_residuals("loo", alpha=ALPHAS)
    elif method == "cv_error":
        est.cv_error(cv=10, alpha=ALPHAS)
    elif method == "cv_curve_":
        est.cv_curve_  # noqa: B018 - the fit's own 10-fold curve over model sizes
    return time.perf_counter() - t0, time.process_time() - c0


def _probe():
    """The methods of METHODS each family's class has in the imported tree."""
    import lssvm

    found = {}
    for family, name in CLASS_NAMES.items():
        cls = getattr(lssvm, name)
        have = [meth for kind in KINDS for meth in METHODS[kind] if hasattr(cls, meth)]
        if family == "fixed-size":
            have.append("cv_curve_")  # an attribute of the fitted model, set by fit with cv
        found[family] = have
    return found


# --------------------------------------------------------------- driver side
class _Worker:
    """A subprocess importing lssvm from one tree's ``src``: it reads one case
    per line on stdin and answers its seconds as one JSON line (the import
    is paid once per tree, not per case)."""

    def __init__(self, src):
        env = dict(os.environ, PYTHONPATH=str(src))
        self.src = src
        self.proc = subprocess.Popen([sys.executable, __file__, "--serve"], env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)

    def ask(self, request):
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        if not answer:
            raise RuntimeError(f"the worker on {self.src} stopped at {request} (its error is printed above)")
        return json.loads(answer)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def _serve():
    for line in sys.stdin:
        request = json.loads(line)
        if request == "probe":
            answer = _probe()
        else:
            answer = _run_case(*request)
        print(json.dumps(answer), flush=True)


def _children_cpu():
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _select_seconds(src, table):
    env = dict(os.environ, PYTHONPATH=str(src))
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "lssvm.cli", "select", str(table), "--target", "class", "--no-report",
               "-o", str(Path(tmp) / "model.npz")]
        t0, c0 = time.perf_counter(), _children_cpu()
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False, cwd=tmp)
        seconds = time.perf_counter() - t0, _children_cpu() - c0
    if out.returncode != 0:
        raise RuntimeError(f"lssvm select on {src} failed:\n{out.stderr[-3000:]}")
    return seconds


def _src_lines(tree):
    return sum(len(p.read_text().splitlines()) for p in (tree / "src").rglob("*.py"))


def _checkout(ref, tmp, label):
    path = Path(tmp) / label
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(path), ref], check=True)
    return path


def _remove(path):
    subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(path)], check=False)


def _pick(kind, have_a, have_b):
    """(method for A, method for B): the first both have, else each its own first."""
    options = METHODS[kind]
    for meth in options:
        if meth in have_a and meth in have_b:
            return meth, meth
    first = lambda have: next((meth for meth in options if meth in have), None)  # noqa: E731
    return first(have_a), first(have_b)


def _magic_table(quick, tmp):
    table = DATA / "magic.csv.gz"
    if not quick:
        return table
    import pandas as pd

    small = Path(tmp) / "magic_sample.csv"
    pd.read_csv(table).sample(2000, random_state=0).to_csv(small, index=False)
    return small


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default=DEFAULT_BASE, help="git ref of the base tree (default: %(default)s)")
    parser.add_argument("--new", default=None, help="git ref of the new tree (default: this working tree)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--select-repeats", type=int, default=2, help="repeats of the lssvm select case")
    parser.add_argument("--quick", action="store_true", help="small sizes, for testing the script")
    parser.add_argument("--cases", nargs="*", default=None,
                        help="FAMILY:KIND (e.g. sparse:fit, fixed-size:cv+) or magic:select; default: all")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        _serve()
        return

    m, n, m_cvplus, n_cvplus = (1000, 100, 500, 50) if args.quick else (5000, 500, 2000, 200)
    cases = [f"{family}:{kind}" for family in FAMILIES for kind in KINDS] + ["magic:select"]
    if args.cases:
        unknown = set(args.cases) - set(cases)
        if unknown:
            parser.error(f"unknown cases {sorted(unknown)}; choose among {cases}")
        cases = [case for case in cases if case in args.cases]

    with tempfile.TemporaryDirectory() as tmp:
        trees, workers = {}, {}
        try:
            trees["base"] = _checkout(args.base, tmp, "base")
            trees["new"] = ROOT if args.new is None else _checkout(args.new, tmp, "new")
            srcs = {label: tree / "src" for label, tree in trees.items()}
            workers = {label: _Worker(src) for label, src in srcs.items()}
            have = {label: worker.ask("probe") for label, worker in workers.items()}
            table = _magic_table(args.quick, tmp) if "magic:select" in cases else None
            rows = []
            t_start = time.perf_counter()
            for case in cases:
                family, kind = case.split(":")
                if kind == "select":
                    picked = {"base": "select", "new": "select"}
                else:
                    picked = dict(zip(("base", "new"), _pick(kind, have["base"][family], have["new"][family]), strict=True))
                times = {"base": [], "new": []}
                for _ in range(args.select_repeats if kind == "select" else args.repeats):
                    for label in ("base", "new"):
                        meth = picked[label]
                        if meth is None:
                            continue
                        if kind == "select":
                            times[label].append(_select_seconds(srcs[label], table))
                        else:
                            times[label].append(workers[label].ask([family, kind, meth, m, n, m_cvplus, n_cvplus]))
                rows.append((case, picked, times))
                _print_row(case, picked, times)
            total = time.perf_counter() - t_start
            lines = {label: _src_lines(tree) for label, tree in trees.items()}
        finally:
            for worker in workers.values():
                worker.close()
            for tree in trees.values():
                if tree != ROOT:
                    _remove(tree)
    print()
    print(f"base = {args.base}, new = {args.new or 'working tree'}; m={m}, n={n}, d=8, CV+ at m={m_cvplus}, n={n_cvplus}; "
          f"{args.repeats} alternating repeats, median; OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}; "
          f"benchmark wall {total:.0f} s; load average {os.getloadavg()[0]:.2f}")
    for what, i in (("wall", 0), ("CPU", 1)):
        ratios = [_median(t["new"], i) / _median(t["base"], i) for _, p, t in rows
                  if t["base"] and t["new"] and p["base"] == p["new"]]
        if ratios:
            print(f"{what} ratio new/base over the {len(ratios)} like-for-like cases: min {min(ratios):.3f}, "
                  f"median {statistics.median(ratios):.3f}, max {max(ratios):.3f}")
    print("*: the trees ran different methods (no method common to both), so the ratio compares different work")
    print(f"lines of Python in src/: base {lines['base']}, new {lines['new']} "
          f"({lines['new'] - lines['base']:+d}, {lines['new'] / lines['base']:.3f}x)")


def _median(runs, i):
    return statistics.median(run[i] for run in runs)


_HEADER_DONE = []


def _print_row(case, picked, times):
    """One row: median wall and CPU seconds of each tree, their ratios, and each tree's wall range."""
    if not _HEADER_DONE:
        print(f"{'case':<22} {'method (base / new)':<24} {'base s':>7} {'new s':>7} {'ratio':>7} {'base cpu':>8} "
              f"{'new cpu':>8} {'ratio':>7}  {'wall range base':>15} {'wall range new':>15}")
        _HEADER_DONE.append(True)
    name = {label: picked[label] or "n/a" for label in picked}
    meth = name["base"] if name["base"] == name["new"] else f"{name['base']} / {name['new']}"
    if not (times["base"] and times["new"]):
        print(f"{case:<22} {meth:<24} {'n/a':>7}", flush=True)
        return
    mark = "" if picked["base"] == picked["new"] else "*"
    wall = {label: _median(t, 0) for label, t in times.items()}
    cpu = {label: _median(t, 1) for label, t in times.items()}
    span = {label: f"{min(r[0] for r in t):.2f}-{max(r[0] for r in t):.2f}" for label, t in times.items()}
    print(f"{case:<22} {meth:<24} {wall['base']:>7.2f} {wall['new']:>7.2f} {wall['new'] / wall['base']:>6.3f}{mark:1} "
          f"{cpu['base']:>8.2f} {cpu['new']:>8.2f} {cpu['new'] / cpu['base']:>6.3f}{mark:1}  {span['base']:>15} "
          f"{span['new']:>15}", flush=True)


if __name__ == "__main__":
    main()
