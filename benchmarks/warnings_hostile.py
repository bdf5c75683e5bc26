"""Hostile pass over the NumericalWarning handling.

Ill-conditioned sparse searches checked against brute-force leave-one-out refits, concurrent fits in threads, nested searches, user filters.  Prints the
count of cases, silent wrong answers, wrong answers with a warning, clear errors, crashes and hangs.

Run:  python benchmarks/warnings_hostile.py   (about 2 minutes on one core)
"""
import signal
import sys
import time
import traceback
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from sklearn.model_selection import GridSearchCV, cross_val_score

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from lssvm import NumericalWarning, NystromLSSVRCV, SparseLSSVCCV, SparseLSSVR, SparseLSSVRCV  # noqa: E402

counts = dict(cases=0, silent_wrong=0, wrong_warned=0, clear_errors=0, crashes=0, hangs=0, ok=0)
details = []
def record(name, kind, note=""):
    counts["cases"] += 1
    counts[kind] += 1
    if kind != "ok":
        details.append((name, kind, note[:200]))

def loo_brute(model, X, y):
    """Exact LOO of a fitted SparseLSSVR by refits on m-1 rows with the same basis points kept (fast LOO keeps them)."""
    Z = model.basis_vectors_
    e = np.empty(len(y))
    for i in range(len(y)):
        keep = np.arange(len(y)) != i
        mi = SparseLSSVR(kernel=model.kernel, gamma=model.gamma, alpha=model.alpha, basis=Z, rcond=model.rcond).fit(X[keep], y[keep])
        e[i] = y[i] - mi.predict(X[i:i+1])[0]
    return np.mean(e**2)

def run(name, func):
    t0 = time.perf_counter()
    signal.alarm(300)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            verdict = func()
        signal.alarm(0)
        nw = [w for w in caught if issubclass(w.category, NumericalWarning)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            kind, note = verdict(nw) if callable(verdict) else verdict
        record(name, kind, note)
    except TimeoutError:
        record(name, "hangs")
    except (ValueError, Warning, TypeError) as exc:
        signal.alarm(0)
        record(name, "clear_errors", repr(exc))
    except Exception:
        signal.alarm(0)
        record(name, "crashes", traceback.format_exc()[-300:])
    print(f"{name}: {time.perf_counter()-t0:.1f}s", details[-1] if details and details[-1][0] == name else "ok", flush=True)

def alarm(*_):
    raise TimeoutError
signal.signal(signal.SIGALRM, alarm)
rng = np.random.default_rng(7)

# 1. ill-conditioned sparse searches: the recorded LOO against brute force; a warning must come where they differ
for k in range(12):
    m = 40
    X = rng.uniform(-1, 1, (m, 1 + k % 3))
    y = np.sin(3 * X[:, 0]) + 0.1 * rng.standard_normal(m)
    if k % 4 == 1:  # duplicated rows with conflicting targets
        X[m // 2:] = X[: m // 2]
        y = np.sin(3 * X[:, 0]) + 0.1 * rng.standard_normal(m)
        y[m // 2:] += 1.0
    gam = [1e-4, 1.0, 1e2, 1e4][k % 4]
    alphas = [[1e-14], [1e-12, 1e-3], [1e-9], [1e-15, 1e-13]][k // 3 % 4]
    def f(X=X, y=y, gam=gam, alphas=alphas):
        est = SparseLSSVRCV(param_space={"gamma": [gam]}, alphas=alphas, basis="random", n_basis=m, random_state=k).fit(X, y)
        def verdict(nw):
            if not np.isfinite(est.best_score_):
                return ("wrong_warned" if nw else "silent_wrong", f"score {est.best_score_}")
            b = loo_brute(est.best_estimator_, X, y)
            rel = abs(-est.best_score_ - b) / b
            if rel > 1e-6:
                return ("wrong_warned" if nw else "silent_wrong", f"recorded {-est.best_score_:.6g} brute {b:.6g} rel {rel:.1e} warnings {len(nw)}")
            return ("ok", "")
        return verdict
    run(f"ill-{k} gamma={gam} alphas={alphas}", f)

# 2. threads: 24 mixed fits, a user's 'always' filter; filters unchanged, none fails
def threads():
    before = list(warnings.filters)
    def task(k):
        Xk = rng.uniform(-1, 1, (100, 3)); yk = np.sin(3 * Xk[:, 0])
        if k % 3 == 0:
            return SparseLSSVRCV(kernel="ard", search="gradient", n_basis=30, n_restarts=0, max_evaluations=10, random_state=k).fit(Xk, yk)
        if k % 3 == 1:
            return SparseLSSVR(gamma=1e-6, alpha=1e-3, basis="random", n_basis=40, random_state=k).fit(Xk, yk)
        return SparseLSSVRCV(random_state=k).fit(Xk, yk)
    with ThreadPoolExecutor(8) as pool:
        futs = [pool.submit(task, k) for k in range(24)]
        errs = [f.exception() for f in futs if f.exception() is not None]
    ok = not errs and list(warnings.filters) == before
    return ("ok", "") if ok else ("crashes", f"{len(errs)} failed; filters changed {list(warnings.filters) != before}")
run("threads-24", threads)

# 3. nested: cross_val_score of a search (joblib threads), GridSearchCV over a search
Xn = rng.uniform(-1, 1, (120, 2)); yn = np.sin(3 * Xn[:, 0]) + 0.1 * rng.standard_normal(120)
def nested_cv():
    s = cross_val_score(SparseLSSVRCV(random_state=0), Xn, yn, cv=3, n_jobs=2)
    return (lambda nw: ("ok", "") if np.all(np.isfinite(s)) and len(nw) <= 3 else ("silent_wrong", f"{s} {len(nw)}"))
run("nested-cross_val_score", nested_cv)
def nested_grid():
    g = GridSearchCV(SparseLSSVRCV(random_state=0), {"n_basis": [20, 40]}, cv=3).fit(Xn, yn)
    return (lambda nw: ("ok", "") if np.isfinite(g.best_score_) and len(nw) <= 6 else ("silent_wrong", f"{len(nw)} warnings"))
run("nested-GridSearchCV", nested_grid)

# 4. user filters: 'error' on a clean default search must not raise; on an affected one it raises a clear NumericalWarning
def user_error_clean():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        SparseLSSVRCV(random_state=0).fit(Xn, yn)
    return ("ok", "")
run("user-error-filter-clean", user_error_clean)
def user_error_affected():
    Xi = rng.uniform(-1, 1, (60, 1)); yi = np.sin(3 * Xi[:, 0]) + 0.1 * rng.standard_normal(60)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumericalWarning)
        try:
            SparseLSSVRCV(param_space={"gamma": [1e4]}, alphas=[1e-13], basis="random", n_basis=60).fit(Xi, yi)
        except NumericalWarning as exc:
            return ("clear_errors", str(exc)[:120])
    return ("silent_wrong", "no error under the user's error filter")
run("user-error-filter-affected", user_error_affected)
def user_ignore():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        before = list(warnings.filters)
        SparseLSSVRCV(param_space={"gamma": [1e4]}, alphas=[1e-13], basis="random", n_basis=60).fit(Xn[:60], yn[:60])
        same = list(warnings.filters) == before
    return ("ok", "") if same else ("crashes", "filters changed")
run("user-ignore-filter", user_ignore)

# 5. gradient search on ill-conditioned data (duplicates, a constant column) and the classifier
def grad_dups():
    Xd = np.repeat(rng.uniform(-1, 1, (30, 3)), 3, axis=0); yd = np.sin(3 * Xd[:, 0]) + 0.1 * rng.standard_normal(90)
    Xd[:, 2] = 1.0
    est = SparseLSSVRCV(kernel="ard", search="gradient", random_state=0, max_evaluations=20).fit(Xd, yd)
    loo = np.mean(est.best_estimator_.loo_residuals() ** 2)
    return (lambda nw: ("ok", "") if abs(-est.best_score_ - loo) <= 1e-10 * loo else (("wrong_warned" if nw else "silent_wrong"), f"{-est.best_score_} vs {loo}"))
run("gradient-duplicates-constant-column", grad_dups)
def grad_clf():
    yc = np.where(yn > 0, "p", "n")
    SparseLSSVCCV(kernel="ard", search="gradient", random_state=0, max_evaluations=20).fit(Xn, yc)
    return (lambda nw: ("ok", "") if len(nw) <= 1 else ("wrong_warned", f"{len(nw)} warnings"))
run("gradient-classifier", grad_clf)
def nystrom_ill():
    NystromLSSVRCV(param_space={"gamma": [1e4]}, alphas=[1e-14], random_state=0).fit(Xn, yn)
    return (lambda nw: ("ok", "") if len(nw) <= 1 else ("wrong_warned", f"{len(nw)} warnings"))
run("nystrom-ill", nystrom_ill)

print(counts)
for d in details:
    print(d)
