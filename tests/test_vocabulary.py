"""One vocabulary across the twelve estimators (issue 18): every old name
raises an error that names the new one, no old name is a silent alias, and
the same name has the same default everywhere."""

import inspect
import json

import numpy as np
import pytest

from lssvm import (
    FixedSizeLSSVC,
    FixedSizeLSSVCCV,
    FixedSizeLSSVR,
    FixedSizeLSSVRCV,
    NystromLSSVC,
    NystromLSSVCCV,
    NystromLSSVR,
    NystromLSSVRCV,
    SparseLSSVC,
    SparseLSSVCCV,
    SparseLSSVR,
    SparseLSSVRCV,
)

ALL = [SparseLSSVR, SparseLSSVC, SparseLSSVRCV, SparseLSSVCCV, FixedSizeLSSVR, FixedSizeLSSVC, FixedSizeLSSVRCV,
       FixedSizeLSSVCCV, NystromLSSVR, NystromLSSVC, NystromLSSVRCV, NystromLSSVCCV]
SPARSE = [SparseLSSVR, SparseLSSVC, SparseLSSVRCV, SparseLSSVCCV]
FIXED = [FixedSizeLSSVR, FixedSizeLSSVC, FixedSizeLSSVRCV, FixedSizeLSSVCCV]
NYSTROM = [NystromLSSVR, NystromLSSVC, NystromLSSVRCV, NystromLSSVCCV]

#: (estimators that had it, old constructor keyword, the new one)
OLD_PARAMS = [
    (SPARSE, "basis_candidates", "n_candidates"),
    (FIXED, "prototypes", "basis"),
    (FIXED, "n_prototypes", "n_basis"),
    (NYSTROM, "sampling", "basis"),
    (NYSTROM, "n_components", "n_basis"),
]
OLD_CASES = [pytest.param(cls, old, new, id=f"{cls.__name__}-{old}") for classes, old, new in OLD_PARAMS
             for cls in classes]


@pytest.mark.parametrize("cls, old, new", OLD_CASES)
def test_old_constructor_keyword_raises_a_type_error_naming_the_new_one(cls, old, new):
    with pytest.raises(TypeError, match=rf"'{old}' is now '{new}'.*pass {new}="):
        cls(**{old: 5})


@pytest.mark.parametrize("cls, old, new", OLD_CASES)
def test_old_name_in_set_params_raises_a_type_error_naming_the_new_one(cls, old, new):
    est = cls()
    with pytest.raises(TypeError, match=rf"set_params.*'{old}' is now '{new}'"):
        est.set_params(**{old: 5})
    assert new in est.get_params() and old not in est.get_params()  # no silent alias


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_no_old_name_is_a_parameter(cls):
    params = set(cls().get_params())
    assert not params & {old for _, old, _ in OLD_PARAMS}
    assert {"basis", "n_basis", "random_state", "gamma", "kernel", "block_size", "n_jobs"} <= params


def _data(classification, m=40):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((m, 2))
    y = (X[:, 0] > 0).astype(int) if classification else np.sin(X[:, 0])
    return X, y


@pytest.mark.parametrize("cls", [NystromLSSVR, NystromLSSVC, NystromLSSVRCV, NystromLSSVCCV],
                         ids=lambda c: c.__name__)
def test_uniform_draw_is_now_called_random(cls):
    X, y = _data(issubclass(cls, (NystromLSSVC, NystromLSSVCCV)))
    kw = {"param_space": {"gamma": [0.5]}, "alphas": [0.1]} if cls.__name__.endswith("CV") else {"gamma": 0.5}
    with pytest.raises(ValueError, match=r"'uniform'.*'random'|uniform.*\"random\""):
        cls(basis="uniform", n_basis=10, **kw).fit(X, y)


@pytest.mark.parametrize("cls, cv", [(SparseLSSVR, 4), (SparseLSSVC, 4), (NystromLSSVR, 4), (NystromLSSVC, "loo")],
                         ids=lambda c: getattr(c, "__name__", str(c)))
def test_cv_error_metric_keyword_raises_a_type_error_naming_scoring(cls, cv):
    X, y = _data(cls in (SparseLSSVC, NystromLSSVC))
    est = cls(gamma=0.5, alpha=0.1, basis="random", n_basis=10, random_state=0).fit(X, y)
    with pytest.raises(TypeError, match=r"'metric' is now 'scoring'"):
        est.cv_error(cv, metric="mse")
    # one signature: cv, alpha, scoring positionally; the rest by keyword
    assert list(inspect.signature(cls.cv_error).parameters)[1:4] == ["cv", "alpha", "scoring"]
    assert est.cv_error(cv, 0.1, "press") == pytest.approx(est.cv_error(cv, 0.1, "mse") * X.shape[0])
    with pytest.raises(ValueError, match="scoring must be one of"):
        est.cv_error(cv, 0.1, "accuracy")


def test_nystrom_classifier_cv_error_rate_is_cv_error_with_scoring():
    X, y = _data(True)
    clf = NystromLSSVC(gamma=0.5, alpha=0.1, n_basis=10, random_state=0).fit(X, y)
    with pytest.raises(AttributeError, match=r"cv_error\(\.\.\., scoring='error_rate'\)"):
        clf.cv_error_rate("loo")
    # the default scoring of a classifier's cv_error is the error rate, as for SparseLSSVC
    rate = clf.cv_error("loo")
    F = clf.factorization_.Y[:, 0] - clf.cv_residuals("loo")  # two classes: one output
    assert rate == pytest.approx(np.mean((F > 0).astype(int) != np.searchsorted(clf.classes_, y)))


@pytest.mark.parametrize("cls, old, new", [
    (FixedSizeLSSVR, "prototypes_", "basis_vectors_"),
    (FixedSizeLSSVR, "prototype_indices_", "basis_indices_"),
    (NystromLSSVR, "components_", "basis_vectors_"),
    (NystromLSSVR, "component_indices_", "basis_indices_"),
])
def test_renamed_fitted_attributes(cls, old, new):
    X, y = _data(False)
    est = cls(gamma=0.5, alpha=0.1, basis="random", n_basis=10, random_state=0)
    if cls is FixedSizeLSSVR:
        est.set_params(cv=None)
    est.fit(X, y)
    with pytest.raises(AttributeError, match=rf"'{old}'.*renamed '{new}'"):
        getattr(est, old)
    assert not hasattr(est, old)
    assert getattr(est, new).shape[0] == est.n_basis_ == 10


def test_same_name_same_default():
    """Every parameter name shared by several of the twelve estimators has one
    default, except ``basis`` (each family's own method) and the ``cv`` of the
    fixed-size models (v-fold only: they have no LOO)."""
    defaults = {}
    for cls in ALL:
        for name, p in inspect.signature(cls.__init__).parameters.items():
            if name != "self":
                defaults.setdefault(name, {})[cls.__name__] = p.default
    exceptions = {"basis", "cv"}
    for name, by_cls in defaults.items():
        if name in exceptions or len(by_cls) < 2:
            continue
        values = list(by_cls.values())
        assert all(v is values[0] or v == values[0] for v in values), (name, by_cls)
    assert {defaults["basis"][c.__name__] for c in SPARSE} == {"pchol", "auto"}  # searches: auto (random if gradient)
    assert {defaults["basis"][c.__name__] for c in FIXED} == {"pchol"}
    assert {defaults["basis"][c.__name__] for c in NYSTROM} == {"random"}
    assert {defaults["cv"][c.__name__] for c in FIXED} == {10}
    assert {defaults["cv"][c.__name__] for c in SPARSE + NYSTROM if "cv" in defaults and c.__name__ in
            defaults["cv"]} == {"loo"}


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_positional_order_is_shared(cls):
    """kernel first; the basis, its size and the seed in one order in every family."""
    names = [n for n, p in inspect.signature(cls.__init__).parameters.items()
             if p.kind is p.POSITIONAL_OR_KEYWORD and n != "self"]
    assert names[0] == "kernel"
    assert names[-3:] == ["basis", "n_basis", "random_state"]


@pytest.mark.parametrize("cls", [SparseLSSVR, FixedSizeLSSVR, NystromLSSVC], ids=lambda c: c.__name__)
def test_model_file_saved_with_the_old_names_still_loads(tmp_path, monkeypatch, cls):
    """A format-3 file written before the rename (its parameters under the old
    names) loads, with the parameters under the new names."""
    from lssvm.io import SavedModel, load_model, model_io, save_model

    X, y = _data(cls is NystromLSSVC)
    kw = {"n_candidates": 7} if cls is SparseLSSVR else {"cv": None} if cls is FixedSizeLSSVR else {}
    est = cls(gamma=0.5, alpha=0.1, basis="random", n_basis=10, random_state=0, **kw).fit(X, y)
    old = {"n_candidates": "basis_candidates", "n_basis": {FixedSizeLSSVR: "n_prototypes"}.get(cls, "n_components"),
           "basis": {FixedSizeLSSVR: "prototypes"}.get(cls, "sampling")}
    to_json = model_io._json_params

    def old_names(params):  # what lssvm wrote before issue 18
        out = {}
        for k, v in to_json(params).items():
            if k in old and not (cls is SparseLSSVR and k != "n_candidates"):
                k, v = old[k], "uniform" if v == "random" and cls is NystromLSSVC else v
            out[k] = v
        return out

    monkeypatch.setattr(model_io, "_json_params", old_names)
    path = save_model(tmp_path / "old.npz", SavedModel(est, np.zeros(2), np.ones(2), ["a", "b"], "t"))
    monkeypatch.undo()
    with np.load(path, allow_pickle=False) as f:
        meta = json.loads(str(f["metadata"]))
    assert meta["format_version"] == 3
    saved = meta["params"] if cls is SparseLSSVR else meta["fitted_params"]
    assert old["n_candidates" if cls is SparseLSSVR else "n_basis"] in saved  # the file really has an old name
    loaded = load_model(path)
    np.testing.assert_allclose(loaded.estimator.decision_function(X) if cls is NystromLSSVC
                               else loaded.predict(X), est.decision_function(X) if cls is NystromLSSVC
                               else est.predict(X), rtol=1e-10, atol=1e-12)
    if cls is SparseLSSVR:
        assert loaded.estimator.n_candidates == 7
    else:
        assert loaded.fitted_params["n_basis"] == 10 and not set(loaded.fitted_params) & set(old.values())
        assert loaded.fitted_params["basis"] == "random"


@pytest.mark.filterwarnings("ignore::lssvm.NumericalWarning")
def test_nystrom_search_takes_rcond_as_its_model_does():
    """``rcond`` (shared by the sparse models, their searches and the Nyström
    models) reaches the Nyström search's criterion and its refit: the refitted
    model's own CV error is the search's score, at an rcond that changes it."""
    from sklearn.model_selection import KFold

    rng = np.random.default_rng(3)
    X = rng.standard_normal((60, 2))
    X[30:] = X[:30] + 1e-4 * rng.standard_normal((30, 2))  # near-duplicate columns: rcond matters
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.standard_normal(60)
    folds = list(KFold(4).split(X))
    scores = {}
    for rcond in (1e-10, 1e-3):
        ny = NystromLSSVRCV(param_space={"gamma": [2.0]}, alphas=[1e-4], cv=folds, basis="random", n_basis=40,
                            rank=1.0, random_state=0, rcond=rcond).fit(X, y)
        est = ny.best_estimator_
        assert est.rcond == rcond
        ref = NystromLSSVR(gamma=2.0, alpha=1e-4, basis=est.basis_indices_, rank=1.0, rcond=rcond)
        assert ref.fit(X, y).cv_error(folds) == pytest.approx(-ny.best_score_, rel=1e-10)
        scores[rcond] = ny.best_score_
    assert scores[1e-10] != pytest.approx(scores[1e-3], rel=1e-6)
