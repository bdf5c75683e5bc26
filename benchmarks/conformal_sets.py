"""Conformal prediction sets: ``predict_set`` against MAPIE 1.x at 90 %.

    python benchmarks/conformal_sets.py [--splits 5] [--m 2000] [--jackknife-refits 50]
        [--sets magic,adult,banana,image,splice]

Per data set and random split: ``--m`` training rows, up to 5,000 test rows,
inputs standardised on the training rows; SparseLSSVC (RBF, ``gamma = 1 /
n_features``, 200 random basis points, alpha 1, Platt calibration on the
exact LOO decision values).  Columns:

- ``lssvm lac`` / ``lssvm aps``: ``fit`` + ``predict_set`` (sets from the
  exact LOO scores, no refit);
- ``mapie cross lac``: MAPIE's ``CrossConformalClassifier(cv=10,
  conformity_score="lac")`` around the same classifier (10 refits);
- ``mapie jackknife lac``: MAPIE's leave-one-out variant (its "jackknife",
  ``CrossConformalClassifier(cv=LeaveOneOut())``), whose calibration scores
  are the same leave-one-out scores as ours, obtained by m refits.  Its time
  is estimated (``--jackknife-refits`` R, default 50): R of the refits it
  runs (fit on m - 1 rows, the held-out row's probabilities, the test rows'
  probabilities, which its cross-conformal sets need from every fold model),
  timed and scaled by m / R; MAPIE's own bookkeeping is left out, so the
  ratio is a lower bound.  0 skips it;
- ``same-score check``: MAPIE's ``SplitConformalClassifier(prefit=True,
  conformity_score="lac")`` handed our held-out probabilities as its
  calibration set: the count of set entries that differ from ours
  (0 means the same sets from the same scores).

Prints coverage, mean set size, seconds and the time ratio MAPIE / lssvm,
with the load average.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from intervals import DATA, loadavg, md, standardise  # noqa: E402

from lssvm import SparseLSSVC  # noqa: E402

COVERAGE = 0.9


def dataset(name):
    if name == "adult":
        import paper002_large

        paper002_large.DATA = DATA
        X, y, _ = paper002_large.load("adult")
        return X, (y > 0).astype(int)
    file = DATA / (f"{name}.csv.gz" if name == "magic" else f"ida_{name}.csv.gz")
    df = pd.read_csv(file)
    return df.iloc[:, :-1].to_numpy(float), df.iloc[:, -1].to_numpy()


class _Lookup(ClassifierMixin, BaseEstimator):
    """A prefit classifier whose probabilities are rows of a table, indexed by X[:, 0]."""

    def __init__(self, P=None, classes=None):
        self.P, self.classes = P, classes

    def fit(self, X, y):
        self.classes_ = self.classes
        return self

    def predict_proba(self, X):
        return self.P[X[:, 0].astype(int)]

    def predict(self, X):
        return self.classes_[self.predict_proba(X).argmax(1)]


def model(d):
    return SparseLSSVC(gamma=1.0 / d, alpha=1.0, basis="random", n_basis=200, random_state=0,
                       calibration="sigmoid")


def jackknife_seconds(d, Xtr, ytr, Xte, refits):
    """Seconds MAPIE's leave-one-out cross-conformal classifier spends in its estimator, from ``refits`` refits.

    Each of its m fold models is fitted on m - 1 rows and asked for the held-out row's probabilities and the
    test rows' (its sets aggregate every fold model's test probabilities); ``refits`` of them are timed and the
    sum is scaled by m / refits.
    """
    m = len(ytr)
    rows = np.linspace(0, m - 1, refits).astype(int)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the fits' warnings are the ones the timed lssvm fit already showed
        for i in rows:
            keep = np.ones(m, bool)
            keep[i] = False
            est = model(d).fit(Xtr[keep], ytr[keep])
            est.predict_proba(Xtr[i: i + 1])
            est.predict_proba(Xte)
    return (time.perf_counter() - t0) * m / refits


def main(args):
    from mapie.classification import CrossConformalClassifier, SplitConformalClassifier

    rows = []
    for name in args.sets:
        X, y = dataset(name)
        rng = np.random.default_rng(0)
        for s in range(args.splits):
            p = rng.permutation(len(y))
            tr, te = p[: args.m], p[args.m: args.m + 5000]
            Xtr, Xte = standardise(X[tr], X[te])
            ytr, yte = y[tr], y[te]
            res = {}
            for method in ("lac", "aps"):
                t0 = time.perf_counter()
                est = model(X.shape[1]).fit(Xtr, ytr)
                S = est.predict_set(Xte, COVERAGE, method)
                res[f"lssvm {method}"] = (S, time.perf_counter() - t0)
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                mp = CrossConformalClassifier(model(X.shape[1]), confidence_level=COVERAGE, conformity_score="lac",
                                              cv=10, random_state=0).fit_conformalize(Xtr, ytr)
                S = mp.predict_set(Xte)[1][:, :, 0]
            res["mapie cross lac"] = (S, time.perf_counter() - t0)
            if args.jackknife_refits:
                res["mapie jackknife lac (est.)"] = (None, jackknife_seconds(X.shape[1], Xtr, ytr, Xte,
                                                                          args.jackknife_refits))
            # same scores: our held-out (LOO) probabilities as MAPIE's calibration set
            F, codes = est._held_out
            P = np.vstack([est._proba_from_decisions(F), est.predict_proba(Xte)])
            idx = np.arange(P.shape[0], dtype=float)[:, None]
            sp = SplitConformalClassifier(_Lookup(P, est.classes_).fit(None, None), confidence_level=COVERAGE,
                                          conformity_score="lac", prefit=True)
            sp.conformalize(idx[: len(ytr)], ytr)
            differ = int(np.sum(sp.predict_set(idx[len(ytr):])[1][:, :, 0] != est.predict_set(Xte, COVERAGE, "lac")))
            codes_te = np.searchsorted(est.classes_, yte)
            for key, (S, dt) in res.items():
                # the estimated MAPIE leave-one-out run forms no sets: its coverage and size are not shown
                rows.append(dict(data=name, split=s, method=key, seconds=dt, differ=differ,
                                 coverage=np.nan if S is None else S[np.arange(len(yte)), codes_te].mean(),
                                 size=np.nan if S is None else S.sum(1).mean()))
            print(f"  {name} split {s}: " + ", ".join(f"{k} {r['coverage']:.3f}/{r['size']:.2f}/{r['seconds']:.2f}s"
                                                      for k, r in zip(res, rows[-len(res):], strict=True)) + f"; differ {differ}",
                  flush=True)
    df = pd.DataFrame(rows)
    table = df.groupby(["data", "method"]).agg(splits=("split", "count"), coverage=("coverage", "mean"),
                                               set_size=("size", "mean"), seconds=("seconds", "mean"),
                                               same_score_differ=("differ", "max"))
    print(f"\n{COVERAGE:.0%} sets, m = {args.m}: mean coverage, mean set size, seconds (fit + sets)")
    print(md(table))
    piv = df.pivot_table(index=["data", "split"], columns="method", values="seconds")
    print("\nTime ratio MAPIE cross (lac) / lssvm (lac), mean over splits")
    print(md((piv["mapie cross lac"] / piv["lssvm lac"]).groupby("data").mean().rename("ratio").to_frame()))
    if args.jackknife_refits:
        print(f"\nTime ratio MAPIE jackknife (lac, estimated from {args.jackknife_refits} of its m refits) / lssvm (lac)")
        print(md((piv["mapie jackknife lac (est.)"] / piv["lssvm lac"]).groupby("data").mean().rename("ratio")
                 .to_frame()))
    print(loadavg())


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--splits", type=int, default=5)
    ap.add_argument("--m", type=int, default=2000)
    ap.add_argument("--jackknife-refits", type=int, default=50,
                    help="refits timed to estimate MAPIE's leave-one-out variant (0 skips it)")
    ap.add_argument("--sets", type=lambda s: s.split(","), default=["magic", "adult", "banana", "image", "splice"])
    main(ap.parse_args())
