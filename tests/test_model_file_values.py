"""Every value of a model file is checked on load, not only its checksum.

The checksum detects damage but not edits (whoever writes the file can
recompute it), so a file edited with a fresh checksum must still be
refused when its values cannot be a model: class labels that repeat, an
isotonic map outside [0, 1] or falling, a sigmoid that falls as the
decision value rises, coefficients whose predictions overflow, a
non-positive input scale.  And a FIFO named like a model file is refused at
once, never waited on.
"""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from click.testing import CliRunner

from lssvm import SparseLSSVC, SparseLSSVR
from lssvm.cli.main import cli
from lssvm.io import ModelFileError, SavedModel, load_model, save_model
from lssvm.io.model_io import _checksum


def _members(path):
    with np.load(path, allow_pickle=False) as data:
        return {k: data[k] for k in data.files}


def _edit(path, **changes):
    """Rewrite the model file with members replaced, the declared shapes and
    the checksum recomputed: an edit the checksum cannot see."""
    arrays = _members(path)
    arrays.update({k: np.asarray(v) for k, v in changes.items()})
    meta = json.loads(str(arrays["metadata"]))
    meta["arrays"] = {k: [a.dtype.str, list(a.shape)] for k, a in arrays.items() if k not in ("metadata", "checksum")}
    arrays["metadata"] = np.array(json.dumps(meta))
    arrays.pop("checksum")
    arrays["checksum"] = np.array(_checksum(arrays))
    np.savez(path, **arrays)
    return path


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 2))
    return X, X[:, 0] + 0.3 * rng.standard_normal(60)


def _classifier(tmp_path, data, calibration, kernel="rbf"):
    X, y = data
    est = SparseLSSVC(kernel=kernel, gamma=0.5, alpha=0.1, n_basis=15, calibration=calibration)
    est.fit(X, np.where(y > 0, "pos", "neg"))
    return save_model(tmp_path / f"c_{calibration}.npz", SavedModel(est, np.zeros(2), np.ones(2), ["a", "b"], "t")), X


def _regressor(tmp_path, data, kernel="rbf"):
    X, y = data
    est = SparseLSSVR(kernel=kernel, gamma=0.5, alpha=0.1, n_basis=15, random_state=0).fit(X, y)
    return save_model(tmp_path / f"r_{kernel}.npz", SavedModel(est, np.zeros(2), np.ones(2), ["a", "b"], "t")), X


def test_isotonic_map_outside_the_unit_interval_is_refused(tmp_path, data):
    path, X = _classifier(tmp_path, data, "isotonic")
    p = _members(path)["calibration_0"].copy()
    assert load_model(path).predict_proba(X).min() >= 0
    p[1] = np.linspace(-4.9, 5.9, p.shape[1])  # rising, but not probabilities
    with pytest.raises(ModelFileError, match=r"isotonic map leaves \[0, 1\]"):
        load_model(_edit(path, calibration_0=p))


def test_falling_isotonic_map_is_refused(tmp_path, data):
    path, _ = _classifier(tmp_path, data, "isotonic")
    p = _members(path)["calibration_0"].copy()
    p[1] = np.linspace(1.0, 0.0, p.shape[1])
    with pytest.raises(ModelFileError, match="isotonic map falls"):
        load_model(_edit(path, calibration_0=p))
    p = _members(path)["calibration_0"].copy()
    if p.shape[1] > 1:
        p[0] = p[0][::-1].copy()
        with pytest.raises(ModelFileError, match="thresholds are not sorted"):
            load_model(_edit(path, calibration_0=p))


def test_sigmoid_with_a_rising_slope_is_refused(tmp_path, data):
    path, X = _classifier(tmp_path, data, "sigmoid")
    A, B = _members(path)["calibration_0"]
    assert A <= 0  # as fitted: P(pos) rises with the decision value
    with pytest.raises(ModelFileError, match="sigmoid slope A = .* > 0"):
        load_model(_edit(path, calibration_0=np.array([abs(A) + 1.0, B])))


def test_repeated_class_labels_are_refused(tmp_path, data):
    path, _ = _classifier(tmp_path, data, "sigmoid")
    with pytest.raises(ModelFileError, match="class labels repeat"):
        load_model(_edit(path, classes=np.array(["n", "n"])))


@pytest.mark.parametrize("kernel", ["rbf", "linear", "poly"])
def test_coefficients_that_overflow_are_refused(tmp_path, data, kernel):
    # inputs scaled so that every basis point is long: for the linear kernel the bound on
    # |f(x)| scales with the basis points' norms, and short ones would keep 1e308 finite
    X, y = data
    path, X = _regressor(tmp_path, (10.0 * X, y), kernel)
    coef = _members(path)["dual_coef"]
    huge = np.full_like(coef, 1e308)
    with pytest.raises(ModelFileError, match="overflow|beyond float64"):
        load_model(_edit(path, dual_coef=huge))


def test_large_but_finite_coefficients_still_load(tmp_path, data):
    """A model of huge targets (1e200) is a model: only overflow is refused."""
    X, y = data
    est = SparseLSSVR(gamma=0.5, alpha=0.1, n_basis=15).fit(X, y * 1e200)
    path = save_model(tmp_path / "big.npz", SavedModel(est, np.zeros(2), np.ones(2), ["a", "b"], "t"))
    np.testing.assert_allclose(load_model(path).predict(X), est.predict(X), rtol=1e-12)


def test_non_positive_input_scale_is_refused(tmp_path, data):
    path, _ = _regressor(tmp_path, data)
    with pytest.raises(ModelFileError, match="x_scale must be > 0"):
        load_model(_edit(path, x_scale=np.array([1.0, -2.0])))


def test_a_valid_file_still_loads_and_predicts_the_same(tmp_path, data):
    for path, X in (_classifier(tmp_path, data, "isotonic"), _classifier(tmp_path, data, "sigmoid"),
                    _regressor(tmp_path, data, "poly")):
        model = load_model(path)
        assert np.all(np.isfinite(model.predict(X).astype(float) if model.predict(X).dtype.kind == "f"
                                  else model.decision_function(X)))


_LOAD_FIFO = textwrap.dedent("""
    import signal, sys
    from lssvm.io import load_model

    def blocked(signum, frame):
        raise TimeoutError

    # the clock starts after the import: a loaded machine can take a minute to start Python and lssvm
    signal.signal(signal.SIGALRM, blocked)
    signal.alarm(30)
    try:
        load_model(sys.argv[1])
    except ValueError as exc:
        print("refused:", exc)
    except TimeoutError:
        print("blocked")
""")


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs")
def test_a_fifo_named_like_a_model_file_is_refused_at_once(tmp_path):
    fifo = tmp_path / "m.npz"
    os.mkfifo(fifo)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    try:  # in a child: without the check it would wait for a writer forever
        out = subprocess.run([sys.executable, "-c", _LOAD_FIFO, str(fifo)], env=env, capture_output=True,
                             text=True, timeout=600)
    except subprocess.TimeoutExpired:
        pytest.fail("the child neither loaded lssvm nor returned from load_model in 600 s")
    assert "blocked" not in out.stdout, "load_model blocked on a FIFO"
    assert "refused:" in out.stdout and "FIFO" in out.stdout, out.stdout + out.stderr
    res = CliRunner().invoke(cli, ["predict", str(fifo), "motorcycle"])
    assert res.exit_code == 1 and "FIFO" in res.output and "Traceback" not in res.output, res.output
