"""Hostile pass over the predictive standard deviation, the calibrated
probabilities and the fixed-size direct solve: odd inputs on every family,
each answer checked against an independent reference.

Every case ends in one of:

* ``ok``: the answer equals the reference (or the check holds);
* ``warned``: a wrong answer that came with a ``NumericalWarning``;
* ``silent``: a wrong answer without a warning (the target is zero);
* ``error``: a clear error (``ValueError``, ``TypeError``, ``NotFittedError``);
* ``crash``: any other exception (a traceback the user cannot act on);
* ``hang``: no answer within ``--timeout`` seconds.

References: ``predict_std`` against the DTC posterior computed in 34 digits
from the float kernel values; the probabilities against their definition (``predict`` is
the argmax, rows in [0, 1] summing to 1, non-decreasing in the decision value,
Platt's parameters the likelihood's maximiser); the fixed-size direct solve
against a 60-digit solve of its normal equations.

Run: ``PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/attack_numerics.py [--seeds N]``.
"""

from __future__ import annotations

import argparse
import resource
import signal
import time
import traceback
import warnings
from collections import Counter

import mpmath
import numpy as np
from sklearn.exceptions import NotFittedError

from lssvm import (
    FixedSizeLSSVC,
    FixedSizeLSSVCCV,
    FixedSizeLSSVR,
    NystromLSSVC,
    NystromLSSVCCV,
    SparseLSSVC,
    SparseLSSVCCV,
    SparseLSSVR,
)
from lssvm.exceptions import NumericalWarning

OUTCOMES = ("ok", "warned", "silent", "error", "crash", "hang")


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout


def run_case(compute, verify, timeout):
    """Run ``compute()`` (the library, under the time limit) and
    ``verify(result) -> bool`` (the reference, untimed); classify the outcome."""
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout)
    try:
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            result = compute()
        warned = any(issubclass(w.category, NumericalWarning) for w in record)
    except _Timeout:
        return "hang", ""
    except np.linalg.LinAlgError as exc:  # a ValueError, but not one that names the bad input
        return "crash", f"{type(exc).__name__}: {str(exc)[:100]} @ {traceback.extract_tb(exc.__traceback__)[-1]}"
    except (ValueError, TypeError, NotFittedError) as exc:
        return "error", f"{type(exc).__name__}: {str(exc)[:100]}"
    except Exception as exc:  # noqa: BLE001 - every other exception is a crash to report
        return "crash", f"{type(exc).__name__}: {str(exc)[:100]} @ {traceback.extract_tb(exc.__traceback__)[-1]}"
    finally:
        signal.alarm(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        right = verify(result)
    return "ok" if right else ("warned" if warned else "silent"), ""


# ----------------------------------------------------------------- predict_std
def _mp(A):
    return mpmath.matrix(np.asarray(A, dtype=float).tolist())


def exact_dtc_std(est, X, Y, T, noise, rcond=1e-10):
    """DTC predictive sd in 34 digits from the float kernel values: whitened
    features ``Phi = K_B W`` on the range of ``K_BB`` (eigenvalues above
    ``rcond`` times the largest, as the library), the noise precision
    ``zeta = (m - 1) / S(alpha)``, the posterior of ``[c, b]`` (precision
    ``zeta [Phi 1]^T [Phi 1] + mu blockdiag(I, 0)``) and the kernel residual
    ``(k(x, x) - ||k_B(x) W||^2) / mu``; shape (t, v)."""
    Z, kern, alpha = est.basis_vectors_, est.kernel_, est.alpha
    Y = np.asarray(Y, dtype=float).reshape(X.shape[0], -1)
    m = X.shape[0]
    with mpmath.workdps(34):
        lam, U = mpmath.eigsy(_mp(kern(Z, Z)))
        top = max(lam[i] for i in range(lam.rows))
        cols = [i for i in range(lam.rows) if lam[i] > rcond * top]
        W = mpmath.matrix(U.rows, len(cols))
        for c, i in enumerate(cols):
            for r in range(U.rows):
                W[r, c] = U[r, i] / mpmath.sqrt(lam[i])
        Phi, PhiT = _mp(kern(X, Z)) * W, _mp(kern(T, Z)) * W
        r = len(cols)
        mean = [sum(Phi[i, c] for i in range(m)) / m for c in range(r)]
        Pc = mpmath.matrix(m, r)
        for i in range(m):
            for c in range(r):
                Pc[i, c] = Phi[i, c] - mean[c]
        G = Pc.T * Pc
        for c in range(r):
            G[c, c] += alpha
        Ginv = G ** -1 if r else G
        out = np.zeros((T.shape[0], Y.shape[1]))
        diag = kern.diag(T)
        for j in range(Y.shape[1]):
            yc = _mp(Y[:, j] - Y[:, j].mean())
            S = (yc.T * yc)[0] - ((Pc.T * yc).T * Ginv * (Pc.T * yc))[0] if r else (yc.T * yc)[0]
            if S <= 0:
                continue  # a constant output: zeta = inf, a spread of 0
            zeta = (m - 1) / S
            for t in range(T.shape[0]):
                phic = [PhiT[t, c] - mean[c] for c in range(r)]
                # [c, b] posterior, with the intercept separated exactly by the centring
                quad = sum(phic[a] * sum(Ginv[a, b] * phic[b] for b in range(r)) for a in range(r))
                var_w = (mpmath.mpf(1) / m + quad) / zeta
                resid = max(mpmath.mpf(float(diag[t])) - sum(PhiT[t, c] ** 2 for c in range(r)), 0)
                var = var_w + resid / (alpha * zeta) + (1 / zeta if noise else 0)
                out[t, j] = float(mpmath.sqrt(var))
        return out


def std_cases(rng, n):
    kernels = [dict(kernel="rbf", gamma=0.5), dict(kernel="laplacian", gamma=0.3), dict(kernel="linear"),
               dict(kernel="poly", degree=2, gamma=0.5), dict(kernel="rbf", gamma=0.5, normalize_kernel=True)]
    for i in range(n):
        m = int(rng.choice([1, 2, 3, 8, 20, 40]))
        d = int(rng.integers(1, 4))
        X = rng.standard_normal((m, d))
        kind = i % 8
        if kind == 1:
            X[1:] = X[0]  # every row the same
        elif kind == 2:
            X = X[rng.integers(0, max(1, m // 3), m)]  # duplicated rows
        y = np.sin(X.sum(axis=1)) + 0.1 * rng.standard_normal(m)
        if kind == 3:
            y = np.full(m, 2.5)  # constant target
        if kind == 4:
            y = np.column_stack([y, np.full(m, -1.0), 1e6 * y])  # several outputs, one constant
        params = dict(kernels[i % len(kernels)])
        params["alpha"] = float(10.0 ** rng.choice([-12, -6, -2, 0, 3, 12]))
        n_basis = 1 if kind == 5 else int(rng.integers(1, min(m, 15) + 1))
        if i % 4:  # mostly within the distinct rows; else the clear error that names them
            n_basis = min(n_basis, np.unique(X, axis=0).shape[0])
        params.update(basis="random", n_basis=n_basis, random_state=i)
        if kind == 6:
            params.update(basis=np.arange(min(m, 20)))  # every row in the basis (up to 20): the full GP
        T = rng.standard_normal((6, d))
        T = np.vstack([T, X[:2], 50.0 * T[:2] + 100.0])  # near, at the data, far
        if kind == 7:
            T = np.vstack([T, np.full((1, d), 1e150)])  # a point whose kernel values overflow (dot-product kernels)
        yield f"std[{i}] m={m} kind={kind} {params.get('kernel')} alpha={params['alpha']:g}", X, y, T, params


def compute_std(X, y, T, params):
    est = SparseLSSVR(**params).fit(X, y)
    return est, [np.asarray(est.predict_std(T, noise=noise)).reshape(T.shape[0], -1) for noise in (True, False)]


def verify_std(X, y, T, result):
    est, outs = result
    for noise, got in zip((True, False), outs, strict=True):
        if not np.all(np.isfinite(got)):
            return False
        want = exact_dtc_std(est, X, y, T, noise)
        if not np.all(np.abs(got - want) <= 1e-6 * np.abs(want) + 1e-12 * np.max(np.abs(want))):
            return False
    return True


# ----------------------------------------------------------------- calibration
def _platt_optimal(f, t, A, B):
    n_pos, n_neg = t.sum(), (~t).sum()
    target = np.where(t, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
    scale = max(float(np.max(np.abs(f - f.mean()))), 1e-300)
    g = (f - f.mean()) / scale
    a, c = A * scale, B + A * f.mean()
    r = target - 1.0 / (1.0 + np.exp(np.clip(a * g + c, -700, 700)))
    return bool(np.max(np.abs([r @ g, r.sum()])) < 1e-8 * len(f))


FAMILIES = {
    "sparse": lambda cal, ccv, nb: SparseLSSVC(gamma=1.0, alpha=0.05, basis="random", n_basis=nb, random_state=0,
                                           calibration=cal, calibration_cv=ccv),
    "nystrom": lambda cal, ccv, nb: NystromLSSVC(gamma=1.0, alpha=0.05, n_basis=nb, random_state=0, calibration=cal,
                                             calibration_cv=ccv),
    "fixed-size": lambda cal, ccv, nb: FixedSizeLSSVC(gamma=1.0, alpha=0.05, n_basis=nb, cv=3, random_state=0,
                                                  calibration=cal, calibration_cv=ccv),
    "fixed-size-direct": lambda cal, ccv, nb: FixedSizeLSSVC(gamma=1.0, alpha=0.05, n_basis=nb, cv=None, solver="direct",
                                                         random_state=0, calibration=cal, calibration_cv=ccv or 3),
    "sparse-search": lambda cal, ccv, nb: SparseLSSVCCV(param_space={"gamma": [0.5, 2.0]}, alphas=[0.01, 1.0],
                                                    basis="random", n_basis=nb, random_state=0, calibration=cal,
                                                    calibration_cv=ccv),
    "nystrom-search": lambda cal, ccv, nb: NystromLSSVCCV(param_space={"gamma": [0.5, 2.0]}, alphas=[0.01, 1.0],
                                                      n_basis=nb, random_state=0, calibration=cal,
                                                      calibration_cv=ccv),
    "fixed-size-search": lambda cal, ccv, nb: FixedSizeLSSVCCV(param_space={"gamma": [0.5, 2.0]}, alphas=[0.01, 1.0],
                                                           n_basis=nb, cv=3, random_state=0, calibration=cal,
                                                           calibration_cv=ccv),
}


def calibration_cases(rng, n):
    families = list(FAMILIES)
    for i in range(n):
        family = families[i % len(families)]
        calibration = ("sigmoid", "isotonic")[(i // len(families)) % 2]
        k = 2 + (i // (2 * len(families))) % 2
        kind = int(rng.integers(0, 7))
        m = int(rng.choice([12, 40, 90]))
        y = np.arange(m) % k
        X = rng.standard_normal((m, 2))
        if kind == 0:  # separable
            X += 3.0 * np.column_stack([np.cos(2 * np.pi * y / k), np.sin(2 * np.pi * y / k)])
        elif kind == 1:  # poorly separated
            X += 0.5 * np.column_stack([np.cos(2 * np.pi * y / k), np.sin(2 * np.pi * y / k)])
        elif kind == 2:  # random labels
            y = rng.integers(0, k, m)
            y[:k] = np.arange(k)
        elif kind == 3:  # imbalanced
            y = np.zeros(m, dtype=int)
            y[: 2 * (k - 1)] = np.repeat(np.arange(1, k), 2)
        elif kind == 4:  # duplicated rows
            X = X[rng.integers(0, m // 4 + 1, m)]
        elif kind == 5:  # extreme scale
            X *= 1e6
        elif kind == 6:  # constant features
            X[:] = 1.0
        labels = np.array(["a", "b", "c"])[y]
        ccv = None if i % 3 else 3
        T = np.vstack([rng.standard_normal((200, 2)) * (3.0 if kind != 5 else 3e6), X[:5]])
        yield f"cal[{i}] {family} {calibration} k={k} kind={kind} m={m}", family, calibration, ccv, X, labels, T


def compute_calibration(family, calibration, ccv, X, labels, T):
    distinct = np.unique(X, axis=0).shape[0]
    est = FAMILIES[family](calibration, ccv, max(1, min(15, distinct, X.shape[0] // 3))).fit(X, labels)
    P = est.predict_proba(T)
    D = est.decision_function(T) if est.classes_.size == 2 else None
    model = getattr(est, "best_estimator_", est)
    F = model.loo_decision_function() if family == "sparse" and ccv is None and est.classes_.size == 2 else None
    return est, P, est.predict(T), D, F


def verify_calibration(family, calibration, labels, result):
    est, P, pred, D, F = result
    ok = bool(np.all(np.isfinite(P)) and np.all((P >= 0) & (P <= 1)) and np.allclose(P.sum(axis=1), 1.0))
    ok &= bool(np.array_equal(pred, est.classes_[np.argmax(P, axis=1)]))
    if D is not None:
        ok &= bool(np.all(np.diff(P[np.argsort(D, kind="stable"), 1]) >= -1e-15))
    model = getattr(est, "best_estimator_", est)
    if calibration == "sigmoid":
        ok &= all(cal.params[0] <= 0 for cal in model.calibrators_)
        if F is not None:
            A, B = model.calibrators_[0].params
            finite = np.isfinite(F)
            if A < 0:  # not the flat fallback: the likelihood's maximiser
                ok &= _platt_optimal(F[finite], (labels == est.classes_[1])[finite], A, B)
    return ok


# ----------------------------------------------------------------- fixed-size direct
def exact_fixed_size(kernel, X, y, Z, alpha, T, nu=1e-8):
    K, K_ZZ, K_T = kernel(X, Z), kernel(Z, Z), kernel(T, Z)
    with mpmath.workdps(60):
        Ka = mpmath.matrix(np.hstack([K, np.ones((len(X), 1))]).tolist())
        A = Ka.T * Ka
        M = Z.shape[0]
        for i in range(M):
            for j in range(M):
                A[i, j] += mpmath.mpf(alpha) * mpmath.mpf(float(K_ZZ[i, j]))
        A[M, M] += mpmath.mpf(nu)
        try:
            w = mpmath.lu_solve(A, Ka.T * mpmath.matrix(y.tolist()))
        except ZeroDivisionError:
            return None  # exactly singular (a zero column): compared on the other prototypes
        p = mpmath.matrix(np.hstack([K_T, np.ones((len(T), 1))]).tolist()) * w
        return np.array([float(v) for v in p])


def fixed_size_cases(rng, n):
    for i in range(n):
        m, d = int(rng.integers(8, 60)), int(rng.integers(1, 4))
        X = rng.standard_normal((m, d))
        kind = i % 5
        if kind == 1:
            X[rng.integers(0, m)] = 0.0  # a zero row: k(z, z) = 0 for the dot-product kernels
        elif kind == 2:
            X = X[rng.integers(0, m // 2 + 1, m)]
        y = np.sin(2 * X.sum(axis=1)) + 0.2 * rng.standard_normal(m)
        name = ("rbf", "linear", "poly", "laplacian")[int(rng.integers(0, 4))]
        params = dict(kernel=name)
        if name != "linear":
            params["gamma"] = float(10.0 ** rng.uniform(-5, 1))
        if name == "poly":
            params.update(degree=int(rng.integers(1, 5)), coef0=float(rng.choice([0.0, 1.0])))
        params["alpha"] = float(10.0 ** rng.uniform(-20, 2))
        params.update(basis=("kcenter", "random", "all")[int(rng.integers(0, 3))], n_basis=int(rng.integers(1, 25)),
                      solver="direct", cv=(None, 3)[int(rng.integers(0, 2))], random_state=i)
        if i % 4:
            params["n_basis"] = min(params["n_basis"], np.unique(X, axis=0).shape[0])
        T = np.vstack([rng.standard_normal((15, d)) * 2, X[:3]])
        yield f"fs[{i}] kind={kind} {name} alpha={params['alpha']:.2g}", X, y, T, params


def compute_fixed_size(X, y, T, params):
    est = FixedSizeLSSVR(**params).fit(X, y)
    return est, est.predict(T)


def verify_fixed_size(X, y, T, params, result):
    est, got = result
    Z = est.basis_vectors_
    keep = est.kernel_.diag(Z) > 0  # a prototype with k(z, z) = 0 has a zero kernel column
    want = exact_fixed_size(est.kernel_, X, y, Z[keep], params["alpha"], T)
    if want is None:
        return True  # exactly singular otherwise too: no exact reference
    return bool(np.all(np.isfinite(got)) and np.max(np.abs(got - want)) <= 1e-6 * max(np.max(np.abs(want)), 1e-300))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=120, help="cases per subject")
    parser.add_argument("--timeout", type=int, default=120, help="seconds before a case counts as a hang")
    parser.add_argument("--verbose", action="store_true", help="print every case that is not ok")
    args = parser.parse_args()
    rng = np.random.default_rng(20261129)
    subjects = {
        "predict_std": (lambda c: (lambda: compute_std(*c[1:]), lambda r: verify_std(*c[1:4], r)),
                        std_cases(rng, args.seeds)),
        "calibration": (lambda c: (lambda: compute_calibration(*c[1:]), lambda r: verify_calibration(c[1], c[2], c[5], r)),
                        calibration_cases(rng, args.seeds)),
        "fixed-size direct": (lambda c: (lambda: compute_fixed_size(*c[1:]), lambda r: verify_fixed_size(*c[1:], r)),
                              fixed_size_cases(rng, args.seeds)),
    }
    print(f"{'subject':<20}" + "".join(f"{o:>8}" for o in ("cases",) + OUTCOMES) + f"{'seconds':>9}")
    totals = Counter()
    for subject, (make, cases) in subjects.items():
        counts, t0 = Counter(), time.perf_counter()
        for case in cases:
            outcome, why = run_case(*make(case), args.timeout)
            counts[outcome] += 1
            if outcome in ("silent", "crash", "hang") or (args.verbose and outcome != "ok"):
                print(f"  {outcome:<7} {case[0]} {why}")
        totals.update(counts)
        n = sum(counts.values())
        print(f"{subject:<20}{n:>8}" + "".join(f"{counts[o]:>8}" for o in OUTCOMES)
              + f"{time.perf_counter() - t0:>9.1f}")
    print(f"{'all':<20}{sum(totals.values()):>8}" + "".join(f"{totals[o]:>8}" for o in OUTCOMES))
    print(f"peak resident memory: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
