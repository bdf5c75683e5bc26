"""Saving fitted models without pickle: NumPy arrays plus JSON metadata in
one ``.npz`` file, loaded with ``allow_pickle=False``.

Every model of the package predicts with a kernel expansion
``f(x) = k(x, Z) W + b``, and only that is stored (points Z, coefficients,
intercept, kernel, input scaling); the training factorisation is not, so a
loaded model predicts but cannot cross-validate until refitted.  The models
of every family (and the ``*CV`` estimators, through their refitted
``best_estimator_``) load as the :class:`SparseLSSVR` /
:class:`SparseLSSVC` with that expansion, predicting identically;
``SavedModel.fitted_as`` and ``fitted_params`` record the estimator that
was fitted.

File format (version 3, documented in ``docs/model_format.md``): a ZIP
archive of uncompressed ``.npy`` members (NumPy's ``.npz``), none of
object dtype —

* ``metadata``: a 0-d unicode array holding a JSON object with
  ``format = "lssvm-model"``, ``format_version``, ``estimator``,
  ``params``, ``kernel``, ``feature_names``, ``target_name``,
  ``single_output``, ``metadata``, ``fitted_as``, ``fitted_params``,
  ``arrays`` (every other member's dtype and shape, except ``checksum``)
  (and ``classes_kind`` for classifiers, ``preprocessing`` for a stored
  tabular encoding, :mod:`lssvm.io.tabular`, ``target_transform`` for a
  regressor fitted on a log or Box-Cox target: ``{"name", "lmbda", "low",
  "high"}``, predictions mapped back by its inverse; ``input_transform``
  for a per-column transform of the scaled or encoded inputs:
  ``{"method", "n_features_in"}`` with the ``input_transform_*`` arrays,
  :meth:`lssvm.estimators.input_transform.InputTransform.to_stored`);
* ``basis_vectors`` (n, d) — or ``basis_data``/``basis_indices``/
  ``basis_indptr``/``basis_shape`` for a CSR basis —, ``dual_coef`` (n, v),
  ``intercept`` (v,), ``x_center`` (d,), ``x_scale`` (d,), ``classes``
  (classifiers), the ``pre_*`` arrays of a tabular encoding, and the
  ``basis_curve_*`` arrays of a basis grown by exact CV
  (:mod:`lssvm.io.basis_curve`);
* ``checksum``: ``"sha256:<hex>"`` over every other member (name, dtype,
  shape and bytes, in name order).

Loading never unpickles or evaluates anything, reads every member under
size bounds known before its data is read (no decompression; see
``_archive``), checks the version, the checksum and the schema (names, dtypes, shapes, finiteness, parameter
names), and raises :class:`ModelFileError` (a ``ValueError``) saying what
is wrong.  The checksum detects truncation, corruption and edits; it is not
a signature (whoever can write the file can recompute it).  Saving writes a
temporary file in the target folder, flushes it to disk and renames it over
the target, so an interrupted save leaves the old file or none; the target
must be a new path or a regular file (:mod:`lssvm.io.paths`), never a
device, FIFO, socket or folder.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import scipy.sparse as sp
from sklearn.base import is_classifier

from ..estimators import SparseLSSVC, SparseLSSVR
from ..estimators.input_transform import InputTransform
from ..estimators.target_transform import TargetTransform
from ..kernels import KERNELS as KERNEL_NAMES
from ..kernels import KernelExpansion, kernel_from_dict
from ._archive import ModelFileError, read_archive
from .basis_curve import CURVE_ARRAYS, basis_curve_arrays, stored_basis_curve
from .paths import atomic_write
from .saved_model import SavedModel
from .tabular import TabularEncoding
from .uncertainty import stored_uncertainty, uncertainty_arrays

__all__ = ["SavedModel", "ModelFileError", "save_model", "load_model", "FORMAT_VERSION"]

FORMAT_NAME = "lssvm-model"
FORMAT_VERSION = 3  # 3: kernel "ard" with a vector gamma (a JSON list)
_ESTIMATORS = {"SparseLSSVR": SparseLSSVR, "SparseLSSVC": SparseLSSVC}


def save_model(path, model: SavedModel):
    """Write ``model`` to ``path`` (``.npz``) atomically.

    The archive is written to a temporary file in the same folder, flushed
    to disk (``fsync``) and renamed over ``path``: a reader, or a process
    killed mid-save, sees the old file or the complete new one, never a
    partial one.

    Parameters
    ----------
    path : str or Path
    model : SavedModel

    Returns
    -------
    Path

    Raises
    ------
    ValueError
        If the model holds NaN or infinity (or a zero ``x_scale``): such a
        file could not be loaded, so none is written.
    lssvm.io.paths.OutputPathError
        (a ``ValueError``) If ``path`` is a folder, device, FIFO or socket:
        only a new path or a regular file is written
        (:func:`lssvm.io.paths.check_output_file`).
    FileNotFoundError
        If the folder to save in does not exist.
    """
    if not isinstance(model, SavedModel):  # a bare estimator, or the arguments swapped
        raise TypeError(f"save_model(path, model) takes a SavedModel (the fitted estimator with its input scaling "
                        f"and column names) as its second argument; got {type(model).__name__}")
    est = model.estimator
    fitted_as = type(est).__name__
    if hasattr(est, "best_estimator_") and est.refit:  # a *CV estimator: save its refitted model (not an earlier fit's)
        est = est.best_estimator_
    expansion = _expansion(est)
    Z, coef, intercept = expansion.centres, expansion.coef, expansion.intercept
    name = "SparseLSSVC" if is_classifier(est) else "SparseLSSVR"
    if isinstance(est, (SparseLSSVR, SparseLSSVC)):
        params = _json_params(est.get_params(deep=False))
    else:
        params = _json_params({k: getattr(est, k) for k in _PREDICT_PARAMS})
    params.update(_calibration_params(est))
    meta = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "estimator": name,
        "params": params,
        "kernel": est.kernel_.to_dict(),
        "feature_names": [str(f) for f in model.feature_names],
        "target_name": None if model.target_name is None else str(model.target_name),
        "single_output": expansion.single_output,
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
    if model.preprocessing is not None:
        meta["preprocessing"], pre_arrays = model.preprocessing.to_stored()
        arrays.update(pre_arrays)
    arrays.update(uncertainty_arrays(est))  # version 3: intervals / probabilities
    transform = getattr(model, "target_transform", None)
    if transform is not None and transform.name != "identity":
        if name != "SparseLSSVR":
            raise ValueError("cannot save the model: a target transform is for regression models")
        meta["target_transform"] = transform.to_dict()
    inputs = getattr(model, "input_transform", None)
    if inputs is not None and inputs.transformer_ is not None:
        meta["input_transform"], input_arrays = inputs.to_stored()
        arrays.update(input_arrays)
    curve_meta, curve_arrays = basis_curve_arrays(model.estimator, model.basis_curve)  # the CV error per size
    if curve_meta is not None:
        meta["basis_curve"] = curve_meta
        arrays.update(curve_arrays)
    if name == "SparseLSSVC":
        classes = est.classes_
        meta["classes_kind"] = classes.dtype.kind
        arrays["classes"] = classes.astype(str) if classes.dtype.kind == "O" else classes
    arrays = {k: np.asarray(v, order="C") for k, v in arrays.items()}
    for k, a in arrays.items():  # never write a file that load_model refuses
        if a.dtype.kind == "f" and not np.isfinite(a).all() and k not in CURVE_ARRAYS.values():  # +inf: a failed size
            raise ValueError(f"cannot save the model: its {k!r} holds NaN or infinity (inputs or targets "
                             "too large for float64?); rescale the data and refit")
    if np.any(arrays["x_scale"] <= 0):
        raise ValueError("cannot save the model: x_scale holds zeros or negative values (inputs are divided by it)")
    try:  # nor one whose predictions overflow
        _check_predictions_finite(expansion)
    except ModelFileError as exc:
        raise ValueError(f"cannot save the model: {exc}") from None
    meta["arrays"] = {k: [a.dtype.str, list(a.shape)] for k, a in arrays.items()}
    try:
        arrays["metadata"] = np.array(json.dumps(meta, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"model metadata must be JSON-serialisable without NaN/inf: {exc}") from None
    arrays["checksum"] = np.array(_checksum(arrays))
    return atomic_write(path, lambda fh: np.savez(fh, **arrays), "model")


def load_model(path) -> SavedModel:
    """Read a model written by :func:`save_model`.

    Nothing in the file is unpickled or executed: arrays are read with
    ``allow_pickle=False`` and the metadata is JSON.

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    SavedModel

    Raises
    ------
    ModelFileError
        (a ``ValueError``) if the file is missing, unreadable, not an lssvm
        model, of another format version, truncated, corrupted or edited
        (checksum mismatch), or inconsistent with the schema.
    """
    meta, arrays = read_archive(path, lambda meta: _check_version(meta, path))
    stored = arrays.pop("checksum", None)
    if stored is None or stored.shape != () or stored.dtype.kind != "U":
        raise ModelFileError(f"{path}: the model file has no checksum; it is damaged or was not written by lssvm")
    if str(stored) != _checksum(arrays):
        raise ModelFileError(
            f"{path}: checksum mismatch: the file was corrupted or modified after it was saved; "
            "do not use it (refit and save the model again)"
        )
    arrays.pop("metadata")
    try:
        return _build(meta, arrays)
    except ModelFileError as exc:
        raise ModelFileError(f"{path}: invalid lssvm model file: {exc}") from None


def _checksum(arrays):
    """``"sha256:<hex>"`` over name, dtype, shape and bytes of every member
    except ``checksum`` itself, in name order.  O(file size)."""
    h = hashlib.sha256()
    for name in sorted(arrays):
        if name == "checksum":
            continue
        a = np.asarray(arrays[name], order="C")
        h.update(json.dumps([name, a.dtype.str, list(a.shape)]).encode())
        h.update(a.tobytes())
    return "sha256:" + h.hexdigest()


def _check_version(meta, path):
    if not isinstance(meta, dict) or meta.get("format") != FORMAT_NAME:
        raise ModelFileError(f"{path}: not an lssvm model file (no lssvm metadata)")
    version = meta.get("format_version")
    if version != FORMAT_VERSION:
        hint = ("upgrade lssvm" if isinstance(version, int) and version > FORMAT_VERSION
                else "load it with the lssvm release that wrote it and save it again, or refit")
        raise ModelFileError(
            f"{path}: model format version {version!r}, but this lssvm reads version "
            f"{FORMAT_VERSION}; {hint}"
        )


_META_TYPES = {
    "estimator": str, "params": dict, "kernel": dict, "feature_names": list,
    "target_name": (str, type(None)), "single_output": bool, "metadata": dict,
    "fitted_as": str, "fitted_params": dict,
}


def _float_array(arrays, name, ndim):
    a = arrays.get(name)
    if a is None:
        raise ModelFileError(f"array {name!r} is missing")
    if a.dtype.kind != "f" or a.ndim != ndim:
        raise ModelFileError(f"array {name!r} must be a {ndim}-D float array; got {a.dtype} of shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ModelFileError(f"array {name!r} holds NaN or infinity")
    return a


def _build(meta, arrays):
    """Check the schema and rebuild the estimator; raises ModelFileError."""
    for key, kind in _META_TYPES.items():
        if key not in meta or not isinstance(meta[key], kind):
            raise ModelFileError(f"metadata field {key!r} is missing or of the wrong type")
    if meta["estimator"] not in _ESTIMATORS:
        raise ModelFileError(f"unknown estimator {meta['estimator']!r}")
    cls = _ESTIMATORS[meta["estimator"]]
    try:
        kernel = kernel_from_dict(meta["kernel"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelFileError(f"invalid kernel {meta['kernel']!r}: {exc}") from None
    if "basis_vectors" in arrays:
        Z = _float_array(arrays, "basis_vectors", 2)
    else:
        parts = [arrays.get(k) for k in ("basis_data", "basis_indices", "basis_indptr", "basis_shape")]
        if any(p is None for p in parts):
            raise ModelFileError("the basis is missing")
        _float_array(arrays, "basis_data", 1)
        try:
            Z = sp.csr_matrix((parts[0], parts[1], parts[2]), shape=tuple(int(s) for s in parts[3]))
            Z.check_format(full_check=True)
        except (TypeError, ValueError) as exc:
            raise ModelFileError(f"the sparse basis is inconsistent: {exc}") from None
    n, d = Z.shape
    coef = _float_array(arrays, "dual_coef", 2)
    intercept = _float_array(arrays, "intercept", 1)
    x_center = _float_array(arrays, "x_center", 1)
    x_scale = _float_array(arrays, "x_scale", 1)
    if n < 1 or coef.shape[0] != n or intercept.shape != (coef.shape[1],):
        raise ModelFileError(
            f"shapes disagree: basis {Z.shape}, dual_coef {coef.shape}, intercept {intercept.shape}"
        )
    if x_center.shape != (d,) or x_scale.shape != (d,) or len(meta["feature_names"]) != d:
        raise ModelFileError(f"the input scaling or feature names do not match the {d} basis column(s)")
    if np.any(x_scale <= 0):
        raise ModelFileError(f"the input scaling x_scale must be > 0 (inputs are divided by it); it holds {float(x_scale.min()):.3g}")
    gamma = getattr(kernel, "gamma", None)
    if getattr(kernel, "name", None) == "ard" and np.ndim(gamma) == 1 and np.size(gamma) != d:
        raise ModelFileError(f"the 'ard' kernel has {np.size(gamma)} widths but the basis has {d} columns")
    params = dict(meta["params"])
    unknown = set(params) - set(cls().get_params(deep=False))
    if unknown:
        raise ModelFileError(f"unknown {cls.__name__} parameter(s): {sorted(unknown)}")
    if not isinstance(params.get("kernel"), str) or params["kernel"] not in KERNEL_NAMES:
        params["kernel"] = kernel  # a Kernel object was passed
    classes = None
    if cls is SparseLSSVC:
        classes = arrays.get("classes")
        if classes is None or classes.ndim != 1 or classes.dtype.kind not in "biufU" or classes.size < 2:
            raise ModelFileError("a classifier needs a 1-D array 'classes' of at least two labels")
        if classes.dtype.kind == "f" and not np.all(np.isfinite(classes)):
            raise ModelFileError("the class labels hold NaN or infinity")
        if np.unique(classes).size != classes.size:
            raise ModelFileError(f"the class labels repeat: {classes.tolist()[:10]}; each class is named once")
        single = coef.shape[1] == 1  # checked against the classes by from_kernel_expansion
    else:
        single = meta["single_output"]
        if single and coef.shape[1] != 1:
            raise ModelFileError(f"a single-output model with {coef.shape[1]} output columns")
    try:
        expansion = KernelExpansion(Z, coef, intercept, kernel, single)
        _check_predictions_finite(expansion)
        uncertainty = stored_uncertainty(cls, params.get("calibration"), coef.shape, arrays, ModelFileError)
        est = cls.from_kernel_expansion(expansion, classes=classes, **uncertainty, **params)
    except ModelFileError:
        raise
    except (TypeError, ValueError) as exc:
        raise ModelFileError(str(exc)) from None
    pre = None
    if "preprocessing" in meta:
        try:
            pre = TabularEncoding.from_stored(meta["preprocessing"], arrays)
        except ValueError as exc:
            raise ModelFileError(f"invalid tabular encoding: {exc}") from None
        if pre.feature_names != [str(f) for f in meta["feature_names"]]:
            raise ModelFileError("the tabular encoding's columns do not match the feature names")
    basis_curve = stored_basis_curve(meta.get("basis_curve"), arrays, ModelFileError)
    transform = _check_target_transform(meta, cls is SparseLSSVC)
    inputs = None
    if "input_transform" in meta:
        try:
            inputs = InputTransform.from_stored(meta["input_transform"], arrays)
        except ValueError as exc:
            raise ModelFileError(f"invalid input transform: {exc}") from None
        if inputs.n_features_in_ != len(meta["feature_names"]):
            raise ModelFileError("the input transform's columns do not match the feature names")
    return SavedModel(
        estimator=est,
        x_center=x_center,
        x_scale=x_scale,
        feature_names=[str(f) for f in meta["feature_names"]],
        target_name=meta["target_name"],
        metadata=meta["metadata"],
        fitted_as=meta["fitted_as"],
        fitted_params=dict(meta["fitted_params"]),
        preprocessing=pre,
        basis_curve=basis_curve,
        target_transform=transform,
        input_transform=inputs,
    )


def _check_target_transform(meta, is_classifier):
    """The stored target transform (None without one); ``ModelFileError`` for a classifier's or an invalid one."""
    if "target_transform" not in meta:
        return None
    if is_classifier:
        raise ModelFileError("a target transform is for regression models; this file holds a classifier")
    try:
        return TargetTransform.from_dict(meta["target_transform"])
    except ValueError as exc:
        raise ModelFileError(f"invalid target transform: {exc}") from None


def _check_predictions_finite(expansion):
    """Refuse coefficients whose predictions overflow float64.

    For a bounded kernel (rbf, laplacian, ard, normalised: ``|k| <= c``)
    every prediction obeys ``|f(x)| <= c sum_i |W_i| + |b|``; for the linear
    kernel and the polynomial one with ``coef0 >= 0`` (positive
    semi-definite, ``k(x, x)`` growing with ``|x|``), Cauchy-Schwarz gives
    ``|f(x)| <= sqrt(k_max) sum_i |W_i| sqrt(k(z_i, z_i)) + |b|`` for every
    ``x`` no longer than the longest basis point, ``k_max`` its ``k(z, z)``.
    That bound must be finite: then no input in the stored basis's range
    gives inf.  Cost O(n d).  A polynomial kernel with ``coef0 < 0`` (not
    positive semi-definite) is checked by its predictions at the basis
    points, in blocks, O(n^2 d).  Raises ModelFileError.
    """
    Z, W, b, kernel = expansion.centres, np.abs(expansion.coef), np.abs(expansion.intercept), expansion.kernel
    with np.errstate(over="ignore", invalid="ignore"):
        if getattr(kernel, "max_diag", None) is not None:
            bound = kernel.max_diag * W.sum(axis=0) + b
        elif kernel.name == "poly" and getattr(kernel, "coef0", 0.0) < 0:
            return _check_basis_predictions(expansion)
        else:
            diag = np.asarray(kernel.diag(Z), dtype=float)
            root = np.sqrt(np.maximum(diag, 0.0))
            bound = root.max() * (root @ W) + b
        total = float(W.sum(axis=0).max())
    if not np.all(np.isfinite(bound)):
        raise ModelFileError(
            f"dual_coef sums to {total:.3g}: predictions of the {kernel.name} kernel can reach beyond float64 "
            "(about 1.8e308) for inputs like the basis points; the coefficients are damaged or edited"
        )


#: Basis rows whose kernel rows are evaluated at once by :func:`_check_basis_predictions`.
_CHECK_BLOCK = 1024


def _check_basis_predictions(expansion):
    """Refuse an expansion whose predictions at its own basis points are not
    finite; O(n^2 d) in blocks of :data:`_CHECK_BLOCK` rows."""
    Z, kernel = expansion.centres, expansion.kernel
    for start in range(0, Z.shape[0], _CHECK_BLOCK):
        try:
            with np.errstate(over="ignore", invalid="ignore"):
                F = kernel(Z[start:start + _CHECK_BLOCK], Z) @ expansion.coef + expansion.intercept
        except ValueError as exc:  # the kernel values themselves overflow
            raise ModelFileError(f"the kernel values at the stored basis points overflow: {exc}") from None
        if not np.all(np.isfinite(F)):
            raise ModelFileError(
                "the predictions at the stored basis points overflow float64 (dual_coef up to "
                f"{float(np.abs(expansion.coef).max()):.3g}); the coefficients are damaged or edited"
            )


_PREDICT_PARAMS = ("kernel", "gamma", "alpha", "degree", "coef0", "normalize_kernel", "block_size")


def _calibration_params(est):
    """``calibration`` / ``calibration_cv`` of the loaded classifier (any
    family): the method where the file keeps its maps (``calibrators_``),
    else None (a Dask fit has none); the folds only as a number (a splitter
    is not JSON, and a loaded model predicts without them)."""
    if not is_classifier(est):
        return {}
    cv = getattr(est, "calibration_cv", None)
    return {"calibration": getattr(est, "calibration", None) if getattr(est, "calibrators_", None) else None,
            "calibration_cv": cv if isinstance(cv, int) and not isinstance(cv, bool) else None}


def _expansion(est):
    """``est.kernel_expansion()``: ``f(x) = k(x, Z) W + b`` (:class:`lssvm.kernels.KernelExpansion`)."""
    if not callable(getattr(est, "kernel_expansion", None)):
        raise TypeError(f"cannot save a {type(est).__name__}: not an lssvm estimator")
    return est.kernel_expansion()


def _is_number_vector(v):
    if not isinstance(v, (list, tuple, np.ndarray)) or isinstance(v, str):
        return False
    a = np.asarray(v)
    return a.ndim == 1 and a.size > 0 and a.dtype.kind in "iuf"


def _json_params(params):
    out = {}
    for k, v in params.items():
        if k == "basis" and not isinstance(v, str):
            v = "array"
        elif k == "kernel" and not isinstance(v, str):
            v = "object"
        elif isinstance(v, np.generic):
            v = v.item()
        elif _is_number_vector(v):  # e.g. the width vector of the "ard" kernel
            v = [float(x) for x in v]
        elif not isinstance(v, (str, int, float, bool, type(None))):
            v = repr(v)
        out[k] = v
    return out
