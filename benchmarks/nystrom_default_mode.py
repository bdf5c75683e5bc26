"""Cost of the Nyström models' basis_in_holdout default ("remove", every family's) against "keep":
k-fold CV, CV+ intervals and k-fold calibration, side by side in one run.

"remove" refits each fold that holds a sampled column on the kept columns (the rank-k map
re-truncated: O(m c k + c^3) per such fold); "keep" holds the fitted map (O(m k) per alpha).

    OMP_NUM_THREADS=1 python benchmarks/nystrom_default_mode.py [--m 5000] [--repeats 3]
"""

import argparse
import time

import numpy as np

from lssvm import NystromLSSVC, NystromLSSVR


def best_of(fn, repeats):
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--m", type=int, default=5000)
    parser.add_argument("--n-basis", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    m, d = args.m, 8
    X = rng.normal(size=(m, d))
    y = np.sin(X @ rng.normal(size=d)) + 0.2 * rng.normal(size=m)
    labels = (y > 0).astype(int)
    Xt = rng.normal(size=(200, d))
    kw = dict(gamma=0.1, alpha=0.1, n_basis=args.n_basis, random_state=0)
    reg = NystromLSSVR(**kw).fit(X, y)
    rows = []
    fit = best_of(lambda: NystromLSSVR(**kw).fit(X, y), args.repeats)
    rows.append(("fit (regressor)", fit, fit))
    for what, call in [
        ("cv_error(10)", lambda mode: reg.cv_error(10, basis_in_holdout=mode)),
        ("cv_error(10), 20 alphas", lambda mode: reg.cv_error(10, np.logspace(-3, 1, 20), basis_in_holdout=mode)),
        ("predict_interval cv+ (10 folds, 200 points)",
         lambda mode: reg.predict_interval(Xt, 0.9, "cv+", cv=10, basis_in_holdout=mode)),
    ]:
        rows.append((what, best_of(lambda: call("keep"), args.repeats), best_of(lambda: call("remove"), args.repeats)))
    plain = best_of(lambda: NystromLSSVC(**kw).fit(X, labels), args.repeats)
    loo = best_of(lambda: NystromLSSVC(**kw, calibration="sigmoid").fit(X, labels), args.repeats)
    rows.append(("fit (classifier), no calibration", plain, plain))
    rows.append(("fit (classifier), calibration LOO (basis kept)", loo, loo))
    clf = NystromLSSVC(**kw).fit(X, labels)
    kfold = best_of(lambda: NystromLSSVC(**kw, calibration="sigmoid", calibration_cv=5).fit(X, labels),
                    args.repeats)
    keep5 = best_of(lambda: clf.cv_decision_function(5, basis_in_holdout="keep"), args.repeats)
    rows.append(("fit (classifier), calibration_cv=5", plain + keep5, kfold))
    print(f"m = {m}, n_basis = {args.n_basis}, rank = {reg.rank_}, best of {args.repeats}")
    print(f"{'task':50s} {'keep (s)':>10s} {'remove (s)':>11s} {'ratio':>7s}")
    for what, keep, remove in rows:
        print(f"{what:50s} {keep:10.3f} {remove:11.3f} {remove / keep:7.2f}")
    print("(calibration_cv=5 'keep': the plain fit plus the kept-map k-fold decision values)")


if __name__ == "__main__":
    main()
