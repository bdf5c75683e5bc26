"""One prediction path for every family: the kernel expansion.

Every family's model predicts ``k(x, Z) W + b``
(:class:`lssvm.kernels.KernelExpansion`).  Each estimator says where its
``Z``, ``W`` and ``b`` are (``_expansion_arrays``); this mixin turns them into
the public :meth:`kernel_expansion` and evaluates it for ``predict`` and
``decision_function`` (``_decision_2d``), in memory or on Dask input.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import ClassifierMixin

from .._threads import uses_threads
from ..backends import is_dask_collection
from ..kernels import KernelExpansion
from ._validation import validate_input

__all__ = ["BestExpansionMixin", "ExpansionMixin", "ExpansionRegressorMixin", "FromExpansionMixin"]


class ExpansionMixin:
    """``kernel_expansion()`` and ``_decision_2d`` from ``_expansion_arrays()``
    (which raises ``NotFittedError`` before fit) and ``kernel_``,
    ``_single_output``, ``block_size``."""

    #: Whether ``predict`` takes scipy CSR input (the dot-product kernels of the sparse family).
    _predict_accepts_sparse = False

    def kernel_expansion(self):
        """The fitted model as ``f(x) = k(x, Z) W + b``.

        Returns
        -------
        lssvm.kernels.KernelExpansion
            ``centres`` Z (n, d), ``coef`` W (n, v), ``intercept`` b (v,),
            ``kernel`` and ``single_output``; ``predict`` and
            ``decision_function`` evaluate exactly this, and
            :func:`lssvm.io.save_model` stores it.
        """
        Z, W, b = self._expansion_arrays()
        return KernelExpansion(Z, W, np.asarray(b, dtype=float), self.kernel_, bool(self._single_output))

    @uses_threads
    def _decision_2d(self, X):
        """Outputs at ``X`` (m, d), shape (m, v): O(m n (d + v)) in row blocks
        of ``block_size``; lazily, block by block, for Dask input."""
        expansion = self.kernel_expansion()
        if is_dask_collection(X):
            from ..backends.dask import decision_blocks

            return decision_blocks(X, expansion.kernel, expansion.centres, expansion.coef, expansion.intercept)
        sparse = "csr" if self._predict_accepts_sparse else False
        X = validate_input(self, X, reset=False, dtype=np.float64, accept_sparse=sparse)
        return expansion(X, self.block_size)


class ExpansionRegressorMixin:
    """``predict`` of a regressor on ``_decision_2d``, with one output (``y`` was 1-D at fit: ``_y_1d``)
    or several, and scikit-learn's multi-output tag."""

    @property
    def _single_output(self):
        return self._y_1d

    @_single_output.setter
    def _single_output(self, value):  # the sparse fit, a loaded model and a target's sub-model set it
        self._y_1d = value

    def predict(self, X):
        """Predictions, shape (m,) or (m, n_outputs)."""
        F = self._decision_2d(X)
        return F[:, 0] if self._single_output else F

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags


class BestExpansionMixin:
    """``kernel_expansion()`` of a search: its ``best_estimator_``'s (``_best()``)."""

    def kernel_expansion(self):
        """``best_estimator_.kernel_expansion()`` (:class:`lssvm.kernels.KernelExpansion`)."""
        return self._best().kernel_expansion()


class FromExpansionMixin:
    """``from_kernel_expansion`` for the sparse estimators (``_validate_params_``,
    ``_set_coef``), the estimators every model file loads as."""

    @classmethod
    def from_kernel_expansion(cls, expansion, *, classes=None, calibration_maps=None, loo_data=None, **params):
        """A fitted model that predicts with ``expansion``, as
        :func:`lssvm.io.load_model` rebuilds a saved one.

        Parameters
        ----------
        expansion : lssvm.kernels.KernelExpansion
            Its ``centres`` become ``basis_vectors_`` (and the ``basis``
            parameter); ``kernel`` is ``kernel_``.
        classes : ndarray of shape (k,), optional
            Classifiers only: the labels, ``k`` = 2 for one output column, else
            one column per class.
        calibration_maps : list of ndarray, optional
            Classifiers with ``calibration``: per output, Platt's ``(A, B)``
            (2,) or the isotonic thresholds (2, L).  None, with no
            ``calibration`` in ``params``: an uncalibrated classifier.
        loo_data : tuple of ndarray, optional
            Regressors: ``(G, R, mu)`` of shapes (n, m), (m, v), (n,), what
            jackknife+ intervals need without the training data
            (:mod:`lssvm.io.uncertainty`).
        **params
            Constructor parameters; ``kernel`` becomes ``expansion.kernel``
            unless it names a kernel.

        Returns
        -------
        estimator
            Without a training factorisation: it predicts (and gives the
            stored intervals or probabilities), its CV methods raise
            ``NotFittedError`` until it is refitted.

        Raises
        ------
        ValueError
            For invalid parameters or arrays whose shapes disagree.
        """
        from ._calibration import CalibrationMap

        Z, W, b = expansion.centres, expansion.coef, expansion.intercept
        params = {**params, "basis": Z}
        if not isinstance(params.get("kernel"), str):
            params["kernel"] = expansion.kernel
        if issubclass(cls, ClassifierMixin) and calibration_maps is None and "calibration" not in params:
            params["calibration"] = None  # the expansion carries no calibration: the default one has no maps
        est = cls(**params)
        try:
            est._validate_params_()
        except (TypeError, ValueError) as exc:
            raise ValueError(f"invalid parameters: {exc}") from None
        classifier = issubclass(cls, ClassifierMixin)
        if classifier != (classes is not None):
            raise ValueError(f"{cls.__name__} {'needs' if classifier else 'takes no'} classes")
        est.kernel_ = expansion.kernel
        est.gamma_ = getattr(expansion.kernel, "gamma", None)
        est.basis_vectors_ = Z
        est.basis_indices_ = None
        est.n_basis_, est.n_features_in_ = Z.shape
        est.factorization_ = None
        if classifier:
            if W.shape[1] != (1 if classes.size == 2 else classes.size):
                raise ValueError(f"{classes.size} classes but {W.shape[1]} output column(s)")
            est.classes_ = classes
            maps = None if est.calibration is None else [CalibrationMap(est.calibration, params=p)
                                                          for p in calibration_maps or ()]
            if maps is not None and len(maps) != W.shape[1]:
                raise ValueError(f"calibration {est.calibration!r} needs {W.shape[1]} calibration map(s); "
                                 f"got {len(maps)}")
            est.calibrators_ = maps
        else:
            est._single_output = expansion.single_output
            est._saved_loo = loo_data
        est._set_coef(W, b)
        return est
