"""Saving fitted models without pickle: NumPy arrays plus JSON metadata in
one ``.npz`` file, loaded with ``allow_pickle=False``.

Every model of the package predicts with a kernel expansion
``f(x) = k(x, Z) W + b``, and only that is stored (points Z, coefficients,
intercept, kernel, input scaling); the training factorisation is not, so a
loaded model predicts but cannot cross-validate until refitted.  Sparse,
fixed-size and Nyström models (and the ``*CV`` estimators, through their
refitted ``best_estimator_``) load as the :class:`SparseLSSVR` /
:class:`SparseLSSVC` with that expansion, predicting identically;
``SavedModel.fitted_as`` and ``fitted_params`` record the estimator that
was fitted.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.base import is_classifier

from ..estimators import SparseLSSVC, SparseLSSVR
from ..estimators._base import BaseSparseLSSVM
from ..estimators.fixed_size import _BaseFixedSizeLSSVM
from ..estimators.nystrom import _BaseNystromLSSVM
from ..kernels import KERNELS as KERNEL_NAMES
from ..kernels import kernel_from_dict

__all__ = ["SavedModel", "save_model", "load_model", "FORMAT_VERSION"]

FORMAT_VERSION = 1
_ESTIMATORS = {"SparseLSSVR": SparseLSSVR, "SparseLSSVC": SparseLSSVC}


@dataclass
class SavedModel:
    """A fitted estimator with the input scaling and column names it was
    trained with.

    Attributes
    ----------
    estimator : SparseLSSVR or SparseLSSVC
    x_center, x_scale : ndarray of shape (d,)
        Inputs are transformed as ``(X - x_center) / x_scale`` before the
        estimator sees them.
    feature_names : list of str
    target_name : str or None
    metadata : dict
        Anything else (training summary), JSON-serialisable.
    fitted_as : str or None
        Class of the estimator that was fitted (set when loaded).
    fitted_params : dict or None
        Its parameters, as JSON values (set when loaded).
    """

    estimator: object
    x_center: np.ndarray
    x_scale: np.ndarray
    feature_names: list
    target_name: str | None = None
    metadata: dict = field(default_factory=dict)
    fitted_as: str | None = None
    fitted_params: dict | None = None

    def transform(self, X):
        """Apply the stored input scaling, shape (m, d) -> (m, d)."""
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[1] != self.x_center.size:
            raise ValueError(
                f"the model expects {self.x_center.size} input column(s) "
                f"({', '.join(self.feature_names)}); got an array of shape {X.shape}"
            )
        return (X - self.x_center) / self.x_scale

    def predict(self, X):
        """Predictions for raw (unscaled) inputs."""
        return self.estimator.predict(self.transform(X))


def save_model(path, model: SavedModel):
    """Write ``model`` to ``path`` (``.npz``) atomically: the file appears
    only once complete."""
    est = model.estimator
    fitted_as = type(est).__name__
    if hasattr(est, "best_estimator_"):  # a *CV estimator: save its refitted model
        est = est.best_estimator_
    Z, coef, intercept = _expansion(est)
    name = "SparseLSSVC" if is_classifier(est) else "SparseLSSVR"
    if isinstance(est, BaseSparseLSSVM):
        params = _json_params(est.get_params(deep=False))
    else:
        params = _json_params({k: getattr(est, k) for k in _PREDICT_PARAMS})
    meta = {
        "format": "lssvm-model",
        "format_version": FORMAT_VERSION,
        "estimator": name,
        "params": params,
        "kernel": est.kernel_.to_dict(),
        "feature_names": list(model.feature_names),
        "target_name": model.target_name,
        "single_output": bool(est._single_output),
        "metadata": model.metadata,
        "fitted_as": fitted_as,
        "fitted_params": _json_params(model.estimator.get_params(deep=False)),
    }
    if sp.issparse(Z):
        Z = sp.csr_matrix(Z)
        arrays_basis = {"basis_data": Z.data, "basis_indices": Z.indices, "basis_indptr": Z.indptr,
                        "basis_shape": np.asarray(Z.shape)}
    else:
        arrays_basis = {"basis_vectors": Z}
    arrays = {
        **arrays_basis,
        "dual_coef": coef,
        "intercept": intercept,
        "x_center": np.asarray(model.x_center, dtype=float),
        "x_scale": np.asarray(model.x_scale, dtype=float),
    }
    if name == "SparseLSSVC":
        classes = est.classes_
        meta["classes_kind"] = classes.dtype.kind
        arrays["classes"] = classes.astype(str) if classes.dtype.kind == "O" else classes
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".npz", dir=path.parent or ".")
    os.close(fd)
    try:
        np.savez(tmp, metadata=np.array(json.dumps(meta)), **arrays)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    return path


def load_model(path) -> SavedModel:
    """Read a model written by :func:`save_model`.

    Raises
    ------
    ValueError
        If the file is not an lssvm model file.
    """
    try:
        data = np.load(path, allow_pickle=False)
    except Exception as exc:  # OSError, ValueError, zipfile.BadZipFile, EOFError, ...
        raise ValueError(f"{path}: not a readable lssvm model file ({exc})") from None
    if not isinstance(data, np.lib.npyio.NpzFile):
        raise ValueError(f"{path}: not an lssvm model file (a single array, not an .npz archive)")
    try:
        with data:
            arrays = {k: data[k] for k in data.files}
    except Exception as exc:
        raise ValueError(f"{path}: not a readable lssvm model file ({exc})") from None
    try:
        meta = json.loads(str(arrays.pop("metadata")))
        assert meta.get("format") == "lssvm-model"
    except Exception:
        raise ValueError(f"{path}: not an lssvm model file (no lssvm metadata)") from None
    if meta["format_version"] > FORMAT_VERSION:
        raise ValueError(
            f"{path}: model format version {meta['format_version']} is newer than this "
            f"lssvm understands ({FORMAT_VERSION}); upgrade lssvm"
        )
    cls = _ESTIMATORS[meta["estimator"]]
    kernel = kernel_from_dict(meta["kernel"])
    if "basis_vectors" in arrays:
        Z = arrays["basis_vectors"]
    else:
        Z = sp.csr_matrix(
            (arrays["basis_data"], arrays["basis_indices"], arrays["basis_indptr"]),
            shape=tuple(arrays["basis_shape"]),
        )
    params = dict(meta["params"])
    params["basis"] = Z
    if params.get("kernel") not in KERNEL_NAMES:  # a Kernel object was passed
        params["kernel"] = kernel
    est = cls(**params)
    est.kernel_ = kernel
    est.basis_vectors_ = Z
    est.basis_indices_ = None
    est.n_basis_ = est.basis_vectors_.shape[0]
    est.n_features_in_ = est.basis_vectors_.shape[1]
    est.factorization_ = None
    if cls is SparseLSSVC:
        est.classes_ = arrays["classes"]
    else:
        est._single_output = meta["single_output"]
    est._set_coef(arrays["dual_coef"], arrays["intercept"])
    return SavedModel(
        estimator=est,
        x_center=arrays["x_center"],
        x_scale=arrays["x_scale"],
        feature_names=meta["feature_names"],
        target_name=meta["target_name"],
        metadata=meta["metadata"],
        fitted_as=meta.get("fitted_as", meta["estimator"]),
        fitted_params=meta.get("fitted_params", meta["params"]),
    )


_PREDICT_PARAMS = ("kernel", "gamma", "alpha", "degree", "coef0", "normalize_kernel", "block_size")


def _expansion(est):
    """``(Z, W, b)`` with ``f(x) = k(x, Z) W + b``: Z (n, d), W (n, v), b (v,)."""
    if isinstance(est, BaseSparseLSSVM):
        return est.basis_vectors_, est._dual_coef_2d, est._intercept_2d
    if isinstance(est, _BaseFixedSizeLSSVM):
        return est.support_vectors_, est._coef_2d, est._intercept_2d
    if isinstance(est, _BaseNystromLSSVM):
        if est.predictor == "exact":
            return est._X_fit, est._a, est._b
        return est.components_, est._beta, est._b
    raise TypeError(f"cannot save a {type(est).__name__}: not an lssvm estimator")


def _json_params(params):
    out = {}
    for k, v in params.items():
        if k == "basis" and not isinstance(v, str):
            v = "array"
        elif k == "kernel" and not isinstance(v, str):
            v = "object"
        elif isinstance(v, np.generic):
            v = v.item()
        elif not isinstance(v, (str, int, float, bool, type(None))):
            v = repr(v)
        out[k] = v
    return out
