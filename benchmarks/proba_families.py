"""Calibrated probabilities of every classifier family:
held-out log-loss, Brier score and ECE of ``calibration="sigmoid"`` /
``"isotonic"`` for the sparse, fixed-size and Nyström classifiers, and what
the calibration adds to the fit time (ratio against the same fit with
``calibration=None``, interleaved, best of ``--repeats``), beside
``CalibratedClassifierCV(SVC(), cv=5)``.

    python benchmarks/proba_families.py [--splits 2] [--magic-rows 5000] [--n-basis 200]

Inputs standardised on the training split, RBF kernel with ``gamma = 1 /
n_features``, ``alpha = 0.1`` (no search: the point is the calibration), a
random basis / pool / columns of ``--n-basis`` rows; the fixed-size model
chooses its size by its own 10-fold CV (SCDP).  The machine is shared with
other work: the load average is printed.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from lssvm import FixedSizeLSSVC, NystromLSSVC, SparseLSSVC  # noqa: E402

DATA = Path("/work/shared/data")


def ece(p, y, bins=10):
    """Expected calibration error of the positive-class probability."""
    idx = np.minimum((p * bins).astype(int), bins - 1)
    return sum(abs(p[idx == b].mean() - y[idx == b].mean()) * (idx == b).mean() for b in range(bins) if np.any(idx == b))


def data_sets(magic_rows, seed=0):
    ripley = pd.concat([pd.read_csv(DATA / "synth_tr.csv.gz"), pd.read_csv(DATA / "synth_te.csv.gz")],
                       ignore_index=True)
    magic = pd.read_csv(DATA / "magic.csv.gz")
    magic = magic.iloc[np.random.default_rng(seed).permutation(len(magic))[:magic_rows]]
    for name, df in (("ripley", ripley), (f"magic ({magic_rows})", magic)):
        lab = df.iloc[:, -1].astype(str).to_numpy()
        yield name, df.iloc[:, :-1].to_numpy(float), (lab == lab[0]).astype(int)


def models(d, n_basis, seed):
    common = dict(gamma=1.0 / d, alpha=0.1, basis="random", n_basis=n_basis, random_state=seed)
    return {
        "SparseLSSVC": lambda **kw: SparseLSSVC(**common, **kw),
        "FixedSizeLSSVC": lambda **kw: FixedSizeLSSVC(**common, **kw),
        "NystromLSSVC": lambda **kw: NystromLSSVC(**common, **kw),
    }


def timed_fit(est, X, y):
    t0 = time.perf_counter()
    est.fit(X, y)
    return est, time.perf_counter() - t0


def main():
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.metrics import brier_score_loss, log_loss
    from sklearn.svm import SVC

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--splits", type=int, default=2)
    p.add_argument("--magic-rows", type=int, default=5000)
    p.add_argument("--n-basis", type=int, default=200)
    p.add_argument("--repeats", type=int, default=2)
    args = p.parse_args()
    warnings.simplefilter("ignore")
    rows = []
    for name, X, y in data_sets(args.magic_rows):
        rng = np.random.default_rng(2)
        for s in range(args.splits):
            perm = rng.permutation(X.shape[0])
            tr, te = perm[: int(0.8 * X.shape[0])], perm[int(0.8 * X.shape[0]):]
            mu, sd = X[tr].mean(0), X[tr].std(0)
            Xtr, Xte = (X[tr] - mu) / sd, (X[te] - mu) / sd
            for family, make in models(X.shape[1], args.n_basis, s).items():
                plain, cal = [], []
                for _ in range(args.repeats):  # interleaved: the load drifts
                    plain.append(timed_fit(make(), Xtr, y[tr])[1])
                    est, t = timed_fit(make(calibration="sigmoid"), Xtr, y[tr])
                    cal.append(t)
                iso, t_iso = timed_fit(make(calibration="isotonic"), Xtr, y[tr])
                for label, mod, t in ((f"{family} sigmoid", est, min(cal)), (f"{family} isotonic", iso, t_iso)):
                    pr = mod.predict_proba(Xte)[:, 1]
                    rows.append(dict(data=name, model=label, log_loss=log_loss(y[te], pr),
                                     brier=brier_score_loss(y[te], pr), ece=ece(pr, y[te]), fit_s=t,
                                     fit_ratio=t / min(plain)))
            svc, t = timed_fit(CalibratedClassifierCV(SVC(), cv=5), Xtr, y[tr])
            pr = svc.predict_proba(Xte)[:, 1]
            rows.append(dict(data=name, model="CalibratedClassifierCV(SVC(), cv=5)", log_loss=log_loss(y[te], pr),
                             brier=brier_score_loss(y[te], pr), ece=ece(pr, y[te]), fit_s=t, fit_ratio=np.nan))
            print(f"  {name} split {s} done", flush=True)
    df = pd.DataFrame(rows).groupby(["data", "model"], sort=False).mean(numeric_only=True).reset_index()
    print(f"\nHeld-out 20 %, mean over {args.splits} split(s); fit_ratio = fit with calibration / without")
    print("| " + " | ".join(df.columns) + " |")
    print("|" + "---|" * len(df.columns))
    for r in df.itertuples(index=False):
        print("| " + " | ".join(f"{v:.4g}" if isinstance(v, float) else str(v) for v in r) + " |")
    print("load average %.1f %.1f %.1f" % os.getloadavg())


if __name__ == "__main__":
    main()
