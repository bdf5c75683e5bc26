"""Property test of the conditioning guards: zero silent wrong answers on the fast paths.

Random problems across kernels, conditioning (``lambda_max / alpha`` from 1
to 1e16), ``basis_in_holdout`` modes and families (sparse hold-out, k-fold
and LOO; fixed-size direct and SCDP; Nystrom low-rank prediction and LOO).
Each fast result must equal a brute-force refit -- a Householder QR solve of
the augmented least-squares problem, sharing no code with lssvm, and where
that disagrees, a 50-digit mpmath solve of the same problem -- to ``TOL``
relative to the larger of the largest prediction and the targets' standard
deviation, or carry a :class:`lssvm.NumericalWarning`.

The suite runs ``FAST`` problems; ``--runslow`` runs ``FULL`` (about 10
minutes on one core) and prints the counts.
"""

import warnings

import numpy as np
import pytest

from lssvm import FixedSizeLSSVR, NumericalWarning, NystromLSSVR, SparseLSSVR
from lssvm.kernels import make_kernel

from _reference import lstsq_solve

TOL = 1e-6
FAST, FULL = 120, 5000
FAMILIES = ["holdout", "kfold", "loo", "fixed-size", "nystrom-predict", "nystrom-loo"]


def _mp_ridge(A, P, y, A_query):
    """``A_query x`` with ``(A^T A + P) x = A^T y`` solved in 50-digit arithmetic."""
    import mpmath as mp

    with mp.workdps(50):
        Am, Pm, ym = mp.matrix(A.tolist()), mp.matrix(P.tolist()), mp.matrix(y.tolist())
        x = mp.lu_solve(Am.T * Am + Pm, Am.T * ym)
        return np.array([float(v) for v in mp.matrix(A_query.tolist()) * x])


class Ridge:
    """``min ||y - F w - b||^2 + alpha w^T G w + nu b^2`` on given features."""

    def __init__(self, F, G, y, alpha, nu=0.0):
        self.F, self.G, self.y, self.alpha, self.nu = F, G, y, alpha, nu

    def predict(self, Fq, exact=False):
        if exact:
            k = self.F.shape[1]
            A = np.hstack([self.F, np.ones((self.F.shape[0], 1))])
            P = np.zeros((k + 1, k + 1))
            P[:k, :k] = self.alpha * self.G
            P[k, k] = self.nu
            return _mp_ridge(A, P, self.y, np.hstack([Fq, np.ones((Fq.shape[0], 1))]))
        w, b = lstsq_solve(self.F, self.G, self.y, self.alpha, nu=self.nu)
        return Fq @ w.ravel() + b[0]


def _problem(rng):
    kname = rng.choice(["rbf", "laplacian", "poly", "linear"])
    m = int(rng.integers(8, 31))
    d = int(rng.integers(1, 4))
    X = rng.normal(size=(m, d)) * rng.choice([0.3, 1.0, 3.0])
    y = np.sin(X[:, 0]) + rng.normal(size=m) * rng.choice([0.01, 0.3])
    params = {"kernel": str(kname), "gamma": float(10 ** rng.uniform(-2, 2)) if kname != "linear" else 1.0,
              "degree": int(rng.integers(2, 5)), "coef0": 1.0}
    return X, y, params


def _kernel(params):
    return make_kernel(params["kernel"], gamma=params["gamma"], degree=params["degree"], coef0=params["coef0"])


def _cases(rng, family, X, y, params):
    """Yield ``(fast, [Ridge, query features, ...] pairs, scale)`` lazily:
    ``fast()`` returns the fast result (predictions), ``refs`` a list of
    (Ridge, F_query) whose predictions, concatenated, are the reference."""
    m = X.shape[0]
    kern = _kernel(params)
    cond = 10 ** rng.uniform(0, 16)
    if family in ("holdout", "kfold", "loo"):
        n = int(rng.integers(2, m))
        basis = np.sort(rng.choice(m, n, replace=False))
        est = SparseLSSVR(alpha=1.0, basis=basis, **params).fit(X, y)
        alpha = max(est.factorization_.eigenvalues.max(), 1e-300) / cond
        mode = str(rng.choice(["remove", "keep", "train"])) if family != "loo" else "keep"
        if family == "holdout":
            H = np.sort(rng.choice(m, int(rng.integers(1, m - 1)), replace=False))
            folds = [H]
        elif family == "kfold":
            folds = np.array_split(rng.permutation(m), int(rng.choice([2, 3, 5])))
        else:
            folds = [np.array([i]) for i in range(m)]
        refs = []
        for H in folds:
            train = np.ones(m, dtype=bool)
            train[H] = False
            keep = np.ones(n, dtype=bool)
            if mode == "remove":
                keep &= ~np.isin(basis, H)
            elif mode == "train":
                train[basis[np.isin(basis, H)]] = True
            if not keep.any():
                return None  # refused with a clear error (every basis point held out)
            Z = X[basis[keep]]
            refs.append((H, Ridge(kern(X[train], Z), kern(Z, Z), y[train], alpha), kern(X[H], Z)))
        order = np.concatenate([H for H, _, _ in refs])

        def fast():
            if family == "holdout":
                return np.ravel(est.holdout_predict(folds[0], alpha=alpha, basis_in_holdout=mode))
            if family == "kfold":
                tr = [(np.setdiff1d(np.arange(m), f), f) for f in folds]
                return np.ravel(est.cv_predict(tr, alpha=alpha, basis_in_holdout=mode))[order]
            return (y - np.ravel(est.loo_residuals(alpha)))[order]

        return fast, [(r, F) for _, r, F in refs], alpha
    if family == "fixed-size":
        n = int(rng.integers(2, m))
        protos = np.sort(rng.choice(m, n, replace=False))
        K = kern(X, X[protos])
        Ka = np.hstack([K, np.ones((m, 1))])
        alpha = max(np.linalg.norm(Ka, 2) ** 2, 1e-300) / cond
        solver = str(rng.choice(["direct", "scdp"]))
        est = FixedSizeLSSVR(alpha=alpha, basis=protos, solver=solver, cv=None, **params)
        return (lambda: np.ravel(est.fit(X, y).predict(X))), [(Ridge(K, K[protos], y, alpha, nu=1e-8), K)], alpha
    c = int(rng.integers(2, m + 1))
    S = np.sort(rng.choice(m, c, replace=False))
    k = int(rng.integers(1, c + 1))
    probe = NystromLSSVR(alpha=1.0, basis=S, rank=k, predictor="low-rank", **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumericalWarning)
        probe.fit(X, y)
    F = kern(X, X[S]) @ probe.factorization_.whitener  # the rank-k features: K~ = F F^T
    alpha = max(np.linalg.eigvalsh(F.T @ F).max(), 1e-300) / cond
    est = NystromLSSVR(alpha=alpha, basis=S, rank=k, predictor="low-rank", **params)
    if family == "nystrom-predict":
        def fast():
            est.fit(X, y)
            P = est.factorization_.whitener
            fast.refs = [(Ridge(kern(X, X[S]) @ P, np.eye(P.shape[1]), y, alpha), kern(X, X[S]) @ P)]
            return np.ravel(est.predict(X))
        return fast, None, alpha

    def fast():
        est.fit(X, y)
        F = kern(X, X[S]) @ est.factorization_.whitener
        fast.refs = [(Ridge(F[np.arange(m) != i], np.eye(F.shape[1]), y[np.arange(m) != i], alpha), F[i:i + 1])
                     for i in range(m)]
        return y - np.ravel(est.loo_residuals())
    return fast, None, alpha


def run_problem(seed):
    """One random problem: returns (family, outcome, error) with outcome in
    {"ok", "warned", "skipped", "FAIL"}."""
    rng = np.random.default_rng(seed)
    family = FAMILIES[seed % len(FAMILIES)]
    X, y, params = _problem(rng)
    with warnings.catch_warnings(record=True) as rec:  # the fit's warnings count too
        warnings.simplefilter("always")
        case = _cases(rng, family, X, y, params)
        if case is None:
            return family, "skipped", 0.0
        fast, refs, _ = case
        try:
            f = fast()
        except ValueError as exc:  # a clear refusal is not a silent wrong answer
            return family, "skipped" if "alpha" in str(exc) or "basis" in str(exc) else "FAIL", 0.0
    leaked = [w for w in rec if "LinAlgWarning" in type(w.message).__name__]
    warned = any(issubclass(w.category, NumericalWarning) for w in rec)
    refs = refs if refs is not None else fast.refs

    def error(exact):
        ref = np.concatenate([r.predict(F, exact=exact) for r, F in refs])
        scale = max(np.abs(ref).max(), y.std(), 1e-300)
        return np.abs(f - ref).max() / scale

    err = error(False)
    if not err <= TOL and not warned:
        err = error(True)  # the QR reference may be the inaccurate one: ask mpmath
    if leaked:
        return family, "FAIL", err
    if warned:
        return family, "warned", err
    return family, ("ok" if err <= TOL else "FAIL"), err


def _check(seeds):
    results = [(s,) + run_problem(s) for s in seeds]
    fails = [r for r in results if r[2] == "FAIL"]
    return results, fails


def test_guarded_fast_paths_fast_subset():
    _, fails = _check(range(FAST))
    assert not fails, fails[:5]


@pytest.mark.slow
def test_guarded_fast_paths_full(capsys):
    results, fails = _check(range(FULL))
    with capsys.disabled():
        for fam in FAMILIES:
            sel = [r for r in results if r[1] == fam]
            counts = {o: sum(r[2] == o for r in sel) for o in ("ok", "warned", "skipped", "FAIL")}
            worst = max((r[3] for r in sel if r[2] == "ok"), default=0.0)
            print(f"\n{fam:16s} {len(sel):5d} problems {counts} max error unwarned {worst:.1e}")
    assert not fails, fails[:5]
