"""Model files: the versioned, checksummed, pickle-free format.

Every way a file can go wrong — another format version, truncation at any
byte, a flipped byte, an edited array with or without a recomputed
checksum, a schema violation, pickled content, a process killed while
saving — must end in :class:`ModelFileError` with a message saying what is
wrong, and never in executed code or a model that predicts differently.
"""

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from lssvm import SparseLSSVC, SparseLSSVR
from lssvm.io import FORMAT_VERSION, ModelFileError, SavedModel, load_model, save_model
from lssvm.io.model_io import _checksum


@pytest.fixture
def saved(tmp_path, rng):
    X = rng.standard_normal((50, 3))
    est = SparseLSSVR(gamma=0.5, alpha=0.1, basis="random", n_basis=20, random_state=0).fit(X, X[:, 0])
    path = save_model(tmp_path / "m.npz", SavedModel(est, np.zeros(3), np.ones(3), ["a", "b", "c"], "y"))
    return path, est, X


def _members(path):
    with np.load(path, allow_pickle=False) as data:
        return {k: data[k] for k in data.files}


def _rewrite(path, arrays, *, rehash=True):
    """Write ``arrays`` back as an .npz, with freshly declared shapes and a
    freshly computed checksum unless ``rehash`` is False (then the stored
    ones are kept)."""
    arrays = dict(arrays)
    if rehash:
        meta = json_loads(arrays["metadata"])
        meta["arrays"] = {k: [np.asarray(a).dtype.str, list(np.shape(a))] for k, a in arrays.items()
                          if k not in ("metadata", "checksum")}
        arrays["metadata"] = np.array(json_dumps(meta))
        arrays["checksum"] = np.array(_checksum(arrays))
    np.savez(path, **arrays)


def _edit_metadata(path, **changes):
    arrays = _members(path)
    meta = json_loads(arrays["metadata"])
    meta.update(changes)
    arrays["metadata"] = np.array(json_dumps(meta))
    _rewrite(path, arrays)


def json_loads(a):
    import json
    return json.loads(str(a))


def json_dumps(meta):
    import json
    return json.dumps(meta)


def test_file_holds_a_checksum_and_version(saved):
    path, est, X = saved
    arrays = _members(path)
    assert json_loads(arrays["metadata"])["format_version"] == FORMAT_VERSION == 3
    assert str(arrays["checksum"]).startswith("sha256:") and str(arrays["checksum"]) == _checksum(arrays)
    assert all(a.dtype != object for a in arrays.values())
    np.testing.assert_array_equal(load_model(path).predict(X), est.predict(X))


def test_saving_twice_gives_the_same_bytes(tmp_path, saved):
    path, est, _ = saved
    again = save_model(tmp_path / "again.npz", SavedModel(est, np.zeros(3), np.ones(3), ["a", "b", "c"], "y"))
    assert str(_members(again)["checksum"]) == str(_members(path)["checksum"])


@pytest.mark.parametrize("version, hint", [(2, "save it again, or refit"), (4, "upgrade lssvm"),
                                           ("3", "save it again")])
def test_other_format_versions_are_refused(saved, version, hint):
    path = saved[0]
    _edit_metadata(path, format_version=version)
    with pytest.raises(ModelFileError, match=f"format version {version!r}, but this lssvm reads version 3; .*{hint}"):
        load_model(path)


def test_every_truncation_is_refused(saved):
    path = saved[0]
    blob = path.read_bytes()
    cut = path.with_name("cut.npz")
    for n in sorted({0, 1, 10, 100, len(blob) // 3, len(blob) // 2, len(blob) - 100, len(blob) - 1,
                     *range(0, len(blob), max(1, len(blob) // 40))}):
        cut.write_bytes(blob[:n])
        with pytest.raises(ModelFileError, match="lssvm model file"):
            load_model(cut)


def test_flipped_bytes_never_give_another_model(saved, rng):
    path, est, X = saved
    blob = bytearray(path.read_bytes())
    bad = path.with_name("bad.npz")
    refused = 0
    for pos in rng.choice(len(blob), size=60, replace=False):
        flipped = bytearray(blob)
        flipped[pos] ^= 0xFF
        bad.write_bytes(bytes(flipped))
        try:  # refused (CRC, zip structure, array header or checksum), or a byte nothing reads (zip timestamps)
            model = load_model(bad)
        except ModelFileError:
            refused += 1
            continue
        np.testing.assert_array_equal(model.predict(X), est.predict(X))
        assert model.feature_names == ["a", "b", "c"] and model.target_name == "y"
    assert refused >= 40


def test_edited_arrays_fail_the_checksum(saved):
    path = saved[0]
    arrays = _members(path)
    arrays["dual_coef"] = arrays["dual_coef"] * 1.0001
    _rewrite(path, arrays, rehash=False)  # a consistent zip (fresh CRCs), stale checksum
    with pytest.raises(ModelFileError, match="checksum mismatch: the file was corrupted or modified"):
        load_model(path)
    arrays.pop("checksum")
    np.savez(path, **arrays)
    with pytest.raises(ModelFileError, match="has no checksum"):
        load_model(path)


@pytest.mark.parametrize("edit, message", [
    (lambda a, m: m.update(estimator="os.system"), "unknown estimator 'os.system'"),
    (lambda a, m: m["params"].update(__class__="x"), r"unknown SparseLSSVR parameter\(s\): \['__class__'\]"),
    (lambda a, m: m.update(kernel={"kernel": "eval", "gamma": 1}), "invalid kernel"),
    (lambda a, m: m.pop("feature_names"), "'feature_names' is missing"),
    (lambda a, m: m.update(feature_names=["a"]), "feature names do not match"),
    (lambda a, m: a.update(dual_coef=a["dual_coef"][:-1]), "shapes disagree"),
    (lambda a, m: a.update(intercept=np.array([np.nan])), "'intercept' holds NaN"),
    (lambda a, m: a.update(basis_vectors=a["basis_vectors"].astype(str)), "must be a 2-D float array"),
    (lambda a, m: a.pop("x_scale"), "'x_scale' is missing"),
    (lambda a, m: a.update(x_scale=np.zeros(3)), "input scaling"),
])
def test_schema_violations_are_refused_even_with_a_valid_checksum(saved, edit, message):
    path = saved[0]
    arrays = _members(path)
    meta = json_loads(arrays["metadata"])
    edit(arrays, meta)
    arrays["metadata"] = np.array(json_dumps(meta))
    _rewrite(path, arrays)
    with pytest.raises(ModelFileError, match=f"invalid lssvm model file: .*{message}"):
        load_model(path)


def test_classifier_schema(tmp_path, rng):
    X = rng.standard_normal((60, 2))
    y = np.array(["a", "b", "c"])[np.digitize(X[:, 0], [-0.4, 0.4])]
    est = SparseLSSVC(gamma=0.5, alpha=0.1).fit(X, y)
    path = save_model(tmp_path / "c.npz", SavedModel(est, np.zeros(2), np.ones(2), ["u", "v"], "y"))
    np.testing.assert_array_equal(load_model(path).predict(X), est.predict(X))
    arrays = _members(path)
    arrays["classes"] = arrays["classes"][:2]
    _rewrite(path, arrays)
    with pytest.raises(ModelFileError, match="2 classes but 3 output column"):
        load_model(path)


class _Trap:
    def __reduce__(self):
        return (os.mkdir, (str(_Trap.target),))


def test_pickled_content_is_never_executed(tmp_path, saved):
    path = saved[0]
    _Trap.target = tmp_path / "executed"
    arrays = _members(path)
    arrays["metadata"] = np.array([_Trap()], dtype=object)  # np.savez pickles object arrays
    np.savez(path, **arrays)
    with pytest.raises(ModelFileError):
        load_model(path)
    assert not _Trap.target.exists()


def test_unreadable_paths(tmp_path):
    with pytest.raises(ModelFileError, match="no such model file"):
        load_model(tmp_path / "none.npz")
    with pytest.raises(ModelFileError, match="is a folder"):
        load_model(tmp_path)
    if os.geteuid() != 0:  # root reads anything
        p = tmp_path / "locked.npz"
        p.write_bytes(b"x")
        p.chmod(0)
        with pytest.raises(ModelFileError, match="permission denied"):
            load_model(p)


_SAVER = textwrap.dedent("""
    import os
    import sys
    import time
    import numpy as np
    from lssvm import SparseLSSVR
    from lssvm.io import SavedModel, save_model

    path, i, pause = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "pause"
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 4000))  # a 9.6 MB basis: each save takes tens of milliseconds
    est = SparseLSSVR(kernel="linear", alpha=1.0, basis="random", n_basis=300, random_state=0).fit(X, X[:, 0])
    rename = os.replace

    def slow_rename(src, dst):  # the second save stops between its complete temporary file and the rename
        if pause and i > int(sys.argv[2]):
            print("renaming", flush=True)
            time.sleep(60)
        rename(src, dst)

    os.replace = slow_rename  # the rename of every atomic writer (lssvm.io.paths)
    while True:
        save_model(path, SavedModel(est, np.zeros(4000), np.ones(4000), [f"x{j}" for j in range(4000)], "y",
                                    {"i": i}))
        print(i, flush=True)
        i += 1
""")


def _kill_saver(path, start, pause, rng):
    """Run the saver, kill it mid-save; returns the saves it reported."""
    proc = subprocess.Popen([sys.executable, "-c", _SAVER, str(path), str(start), "pause" if pause else "random"],
                            stdout=subprocess.PIPE, text=True)
    done = [int(proc.stdout.readline())]  # one complete save first
    if pause:
        assert proc.stdout.readline().strip() == "renaming"
    else:
        time.sleep(rng.uniform(0.0, 0.3))
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return done + [int(line) for line in proc.stdout.read().split() if line.isdigit()]


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_a_process_killed_while_saving_leaves_the_old_model_or_the_new_one(tmp_path):
    path = tmp_path / "m.npz"
    rng = np.random.default_rng(0)
    start = 0
    for pause in (True, False, False, False):
        done = _kill_saver(path, start, pause, rng)
        model = load_model(path)  # never a broken file
        temps = [p for p in tmp_path.iterdir() if p != path]
        assert all(p.name.startswith(".m.npz.") and p.name.endswith(".tmp") for p in temps)
        if pause:  # killed with the new file complete but not renamed: the old model stays
            assert model.metadata["i"] == done[-1] and len(temps) == 1
        else:  # killed anywhere: the last reported save, or one renamed just before the kill
            assert model.metadata["i"] in (done[-1], done[-1] + 1)
        for p in temps:
            p.unlink()
        start = model.metadata["i"] + 1


def test_unreadable_file_without_chmod(saved, monkeypatch):
    """The permission path, also when the tests run as root (who reads anything)."""
    import lssvm.io._archive as model_io  # where the file is opened

    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(model_io, "open", denied, raising=False)
    with pytest.raises(ModelFileError, match="permission denied; cannot read the model file"):
        load_model(saved[0])
