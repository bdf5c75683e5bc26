"""Class probabilities for every classifier (sparse, fixed-size, Nyström and
their ``*CV`` searches), calibrated on each model's exact leave-one-out (or
k-fold) decision values: no extra training of the model itself.

Platt's sigmoid is hand-written (scikit-learn keeps its own private); the
isotonic map is scikit-learn's :class:`~sklearn.isotonic.IsotonicRegression`.
"""

from __future__ import annotations

import inspect
from contextlib import contextmanager

import numpy as np
from scipy.special import expit
from sklearn.isotonic import IsotonicRegression
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from ..exceptions import warn_numerical
from ._conformal_sets import ConformalSetMixin

__all__ = [
    "CALIBRATIONS",
    "CALIBRATION_DOC",
    "CALIBRATION_PARAMS",
    "CalibrationMap",
    "ProbaMixin",
    "SearchProbaMixin",
    "calibrated_init",
    "calibration_maps",
    "fit_platt",
    "signature_with",
    "with_calibration",
]

CALIBRATIONS = ("sigmoid", "isotonic")

#: ``_parameter_constraints`` of the two calibration parameters.
CALIBRATION_PARAMS = {
    "calibration": [StrOptions(set(CALIBRATIONS)), None],
    "calibration_cv": ["cv_object"],
}


def signature_with(init, **extra):
    """The signature of ``init`` with keyword-only parameters ``extra`` (name:
    default) appended: lets a subclass add parameters to a shared
    constructor without copying its list (scikit-learn reads parameters from
    ``inspect.signature``, which honours ``__signature__``)."""
    sig = inspect.signature(init)
    params = list(sig.parameters.values())
    params += [inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=v) for k, v in extra.items()]
    return sig.replace(parameters=params)


def calibrated_init(base_init):
    """``base_init`` plus the keyword-only ``calibration="sigmoid"`` and
    ``calibration_cv=None``, with the signature scikit-learn reads
    (:func:`signature_with`)."""

    def __init__(self, *args, calibration="sigmoid", calibration_cv=None, **kwargs):
        base_init(self, *args, **kwargs)
        self.calibration = calibration
        self.calibration_cv = calibration_cv

    __init__.__signature__ = signature_with(base_init, calibration="sigmoid", calibration_cv=None)
    return __init__


#: The two parameters in a numpydoc Parameters section.
CALIBRATION_DOC = """    calibration : {"sigmoid", "isotonic", None}, default="sigmoid"
        Map from decision value to probability for ``predict_proba``:
        Platt's sigmoid (the default) or isotonic regression
        (scikit-learn's), one per one-vs-rest output, fitted on the model's
        own out-of-sample decision values.  None: no ``predict_proba`` and
        no ``predict_set`` (as ``SVC(probability=False)``), and ``predict``
        is the sign (argmax) of the decision values.  With a map, ``predict`` returns the
        class of largest calibrated probability (never disagreeing with
        ``predict_proba``; near the boundary it may differ from the sign of
        ``decision_function``).
    calibration_cv : None, int or scikit-learn splitter, default=None
        Where those decision values come from: None
        CV_TEXT (fitted with ``sample_weight``: one unit of each row's
        weight left out, ``min(w_i, 1)``, so that integer weights calibrate
        as repeated rows and zero weights as removed ones);
        else the out-of-fold values of these folds, computed the same way.
"""


def with_calibration(cv_text, before="\n    Attributes\n", attribute=True):
    """Class decorator: ``calibration`` and ``calibration_cv`` appended to the
    inherited constructor (:func:`calibrated_init`), to the parameter
    constraints, and to the docstring (:data:`CALIBRATION_DOC` before
    ``before``, ``cv_text`` saying where ``calibration_cv=None`` takes its
    values; with ``attribute``, ``calibrators_`` after ``classes_``)."""

    def decorate(cls):
        cls._parameter_constraints = {**cls._parameter_constraints, **CALIBRATION_PARAMS}
        cls.__init__ = calibrated_init(cls.__init__)
        doc = cls.__doc__.replace(before, CALIBRATION_DOC.replace("CV_TEXT", cv_text) + before, 1)
        if attribute:
            classes = "    classes_ : ndarray of shape (n_classes,)\n"
            doc = doc.replace(classes, classes + "    calibrators_ : list or None\n        One calibration map per "
                              "one-vs-rest output (one for two classes); None with ``calibration=None``.\n", 1)
        cls.__doc__ = doc
        return cls

    return decorate


class _PlattObjective:
    """Platt's smoothed-target negative log-likelihood of ``z = A g + B``,
    with its gradient and Hessian in ``(A, B)``, for fixed rows.

    Parameters
    ----------
    g : ndarray of shape (m,)
        Decision values (centred and scaled by the caller).
    target : ndarray of shape (m,)
        Smoothed targets, ``P(positive)`` to fit.
    w : ndarray of shape (m,) or None
        Row weights (None: all one).

    Notes
    -----
    The loss is ``sum_i w_i (log(1 + e^z_i) - (1 - target_i) z_i)``.  Everything linear in ``z`` is
    summed once here: ``sum w (1 - target) z = A sum w (1 - target) g + B sum w (1 - target)``,
    ``max(z, 0) = (z + |z|) / 2``, and the gradient's ``sum w g target``.  An evaluation is then one
    exponential and one ``log1p`` per row, ``e = exp(-|z|)``, ``log(1 + e^z) = max(z, 0) + log1p(e)``,
    ``s = 1 / (1 + e)``, ``P(positive) = 1 / (1 + e^z) = (1 - tanh(z / 2)) / 2`` with ``tanh(|z| / 2) =
    s - e s`` given the sign of ``z`` (no branch per row), ``p (1 - p) = e s^2``, and one product of the
    (3, m) rows ``w g^2, w g, w`` with ``tanh(z / 2)`` and ``p (1 - p)`` for the gradient and the Hessian: about ten passes over m values in
    buffers allocated once (fresh pages cost more than the arithmetic here).  The same values as
    ``logaddexp`` and ``expit`` to rounding.
    """

    def __init__(self, g, target, w=None):
        m = g.size
        self.g = g
        self.design = np.empty((3, m))
        np.multiply(g, g, out=self.design[0])
        self.design[1] = g
        self.design[2] = 1.0
        if w is not None:
            self.design *= w
        # sums of the terms linear in z
        self.sum_w, self.sum_wg = float(self.design[2].sum()), float(self.design[1].sum())
        negative = 1.0 - target
        self.neg_w, self.neg_wg = float(self.design[2] @ negative), float(self.design[1] @ negative)
        self.target_moments = self.design[1:] @ target  # (sum w g t, sum w t)
        self.half_moments = np.array([self.sum_wg, self.sum_w])  # 2 sum w g p = these - sum w g tanh(z / 2)
        self.w = w
        self.z, self.absz, self.e = np.empty(m), np.empty(m), np.empty(m)
        self.pq = np.empty((2, m))  # tanh(z / 2) = 1 - 2 P(positive), p (1 - p)

    def loss(self, A, B):
        """The loss at ``(A, B)``; leaves ``z``, ``|z|`` and ``e = exp(-|z|)`` in the buffers."""
        z, absz, e = self.z, self.absz, self.e
        np.multiply(self.g, A, out=z)
        z += B
        np.abs(z, out=absz)
        np.negative(absz, out=e)
        np.exp(e, out=e)
        terms = self.pq[0]
        np.log1p(e, out=terms)
        if self.w is None:
            curved, spread = float(terms.sum()), float(absz.sum())
        else:
            curved, spread = float(self.w @ terms), float(self.w @ absz)
        linear = A * self.sum_wg + B * self.sum_w  # sum w z
        return curved + 0.5 * (linear + spread) - (A * self.neg_wg + B * self.neg_w)

    def derivatives(self):
        """Gradient (2,) and Hessian (sum w g^2 c, sum w g c, sum w c) with ``c = p (1 - p)`` at the
        point of the last :meth:`loss`."""
        e, pq = self.e, self.pq
        s, c = pq
        np.add(e, 1.0, out=s)
        np.divide(1.0, s, out=s)  # 1 / (1 + e), the larger of p and 1 - p
        e *= s  # e / (1 + e), the smaller
        np.multiply(e, s, out=c)  # p (1 - p)
        np.subtract(s, e, out=s)  # tanh(|z| / 2)
        np.copysign(s, self.z, out=s)  # tanh(z / 2) = 1 - 2 p, without a branch per row
        moments = self.design @ pq.T  # (3, 2)
        grad = self.target_moments - 0.5 * (self.half_moments - moments[1:, 0])
        return grad, moments[:, 1]


#: Newton decrement per unit of weight below which the loss's rounding may hide the decrease of a
#: full step: there the step is judged by the gradient instead (:func:`_platt_newton`).
_PLATT_NEAR = 1e-9


def _platt_newton(g, target, B0, w=None):
    """Minimise :class:`_PlattObjective` by Newton's method with a
    backtracking line search (Lin, Lin and Weng 2007, Algorithm 1), to the
    last digits: the objective is strictly convex in two unknowns, so
    Newton converges quadratically and stops when a step no longer lowers it, or, where the loss's
    rounding hides the decrease (decrement below ``_PLATT_NEAR`` per unit weight), the gradient.
    O(m) per iteration (about ten passes over the rows); one evaluation per
    iteration where the full step is taken, the usual case."""
    objective = _PlattObjective(g, target, w)
    A, B = 0.0, B0
    loss = objective.loss(A, B)
    grad, (haa, hab, hbb) = objective.derivatives()
    scale = max(1.0, objective.sum_w)
    for _ in range(200):
        # the Hessian is singular only for constant g (handled by the caller); the shift keeps
        # the solve defined where the sigmoid saturates (Lin et al.: 1e-12); a 2 x 2 solve by hand
        haa, hbb = haa + 1e-12, hbb + 1e-12
        det = haa * hbb - hab * hab
        step_a = -(hbb * grad[0] - hab * grad[1]) / det
        step_b = -(haa * grad[1] - hab * grad[0]) / det
        decrement = -(grad[0] * step_a + grad[1] * step_b)
        if not (np.isfinite(decrement) and decrement > 0.0):
            break
        if decrement < 1e-16 * scale:  # in the quadratic region: the full step is exact to rounding
            A, B = A + step_a, B + step_b
            break
        if decrement < _PLATT_NEAR * scale:
            # the loss's rounding may hide a decrease this small: in the quadratic region the full
            # Newton step is taken as long as it lowers the gradient's norm (the decrement)
            new_loss = objective.loss(A + step_a, B + step_b)
            new_grad, new_hess = objective.derivatives()
            haa, hab, hbb = new_hess[0] + 1e-12, new_hess[1], new_hess[2] + 1e-12
            new_decrement = ((hbb * new_grad[0] - 2.0 * hab * new_grad[1]) * new_grad[0]
                             + haa * new_grad[1] ** 2) / (haa * hbb - hab * hab)
            if not new_decrement < decrement:
                break
            A, B, loss = A + step_a, B + step_b, new_loss
            grad, (haa, hab, hbb) = new_grad, new_hess
            continue
        t = 1.0
        while t >= 1e-10:
            new_loss = objective.loss(A + t * step_a, B + t * step_b)
            if new_loss <= loss - 1e-4 * t * decrement:
                break
            t /= 2.0
        else:
            break  # no decrease left: at the minimum to rounding
        A, B = A + t * step_a, B + t * step_b
        loss = new_loss
        grad, (haa, hab, hbb) = objective.derivatives()
    return A, B


def fit_platt(f, t, weights=None, what="the positive class"):
    """Platt's sigmoid ``P(t = 1 | f) = 1 / (1 + exp(A f + B))``, constrained
    to increase in ``f`` (``A <= 0``).

    Parameters
    ----------
    f : ndarray of shape (m,)
        Decision values (out-of-sample: LOO or k-fold).
    t : ndarray of shape (m,) of bool
        Whether each row belongs to the positive class.
    weights : ndarray of shape (m,), optional
        Row weights: the class counts and the loss are weighted sums (an
        integer weight is a repeated row).
    what : str
        The class or output named in the warning.

    Returns
    -------
    A, B : float
        ``A < 0`` (strictly increasing), or ``A = 0`` and ``B`` the log-odds
        of the smoothed class frequency (flat) after a ``NumericalWarning``.

    Notes
    -----
    Maximum likelihood with Platt's smoothed targets ``(N+ + 1)/(N+ + 2)``
    and ``1/(N- + 2)`` (J. Platt 1999; H.-T. Lin, C.-J. Lin and R. Weng 2007),
    which keep ``A`` finite on separable data.  With ``z = A f + B`` the
    loss is ``sum log(1 + e^z) - (1 - t) z``, strictly convex; Newton's
    method with a line search (Lin et al. 2007, Algorithm 1) converges to
    rounding, the same maximiser scikit-learn's ``_SigmoidCalibration``
    approaches by L-BFGS.  O(m) per iteration, a few tens of iterations.

    When the maximiser has ``A >= 0`` (held-out decision values that do not
    rise with the class, e.g. poorly separated classes), the likelihood's
    maximiser under the constraint ``A <= 0`` lies on ``A = 0`` (the
    objective is convex): the flat map at the smoothed class frequency,
    with a ``NumericalWarning``; likewise for constant decision values.
    """
    f = np.asarray(f, dtype=float)
    pos = np.asarray(t, dtype=bool)
    if weights is None:  # counts and means without an m-vector of ones
        w = None
        n_pos = int(np.count_nonzero(pos))
        n_neg = f.size - n_pos
        total, centre = float(f.size), float(f.mean()) if f.size else 0.0
    else:
        w = np.asarray(weights, dtype=float)
        n_pos, n_neg = float(w[pos].sum()), float(w[~pos].sum())
        total = float(w.sum())
        centre = float(w @ f / total) if f.size else 0.0
    target = np.where(pos, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
    mean_target = (n_pos * (n_pos + 1.0) / (n_pos + 2.0) + n_neg / (n_neg + 2.0)) / total if f.size else 0.5
    flat_B = float(np.log1p(-mean_target) - np.log(mean_target))  # 1 / (1 + e^B) = mean target
    spread = max(float(f.max()) - centre, centre - float(f.min())) if f.size else 0.0
    if not spread > 0.0:
        warn_numerical(
            f"the {f.size} out-of-sample decision values of {what} are all equal: the sigmoid calibration is "
            f"the flat map P = {mean_target:.3g} (the smoothed class frequency) and predict follows it; "
            "try other kernel parameters or alpha, or more data", stacklevel=3)
        return 0.0, flat_B
    # Newton in a unit-scale variable (affine invariant in exact arithmetic; better rounded)
    scale = spread
    g = np.subtract(f, centre)
    g /= scale
    a, c = _platt_newton(g, target, float(np.log((n_neg + 1.0) / (n_pos + 1.0))), w)
    A, B = a / scale, c - a * centre / scale
    if not A < 0.0:
        warn_numerical(
            f"Platt's sigmoid for {what} came out non-increasing in the decision value (A = {A:.3g} >= 0): "
            "its out-of-sample decision values do not rise with the class, so the map is the flat class "
            f"frequency P = {1.0 / (1.0 + np.exp(flat_B)):.3g} and predict follows it; the model does not "
            "separate that class out of sample: try other kernel parameters or alpha, more data, or "
            "calibration='isotonic'", stacklevel=3)
        return 0.0, flat_B
    return float(A), float(B)


class CalibrationMap:
    """One class's map from decision value to probability: Platt's ``(A, B)``
    or the isotonic fit's thresholds (evaluated as scikit-learn's
    ``IsotonicRegression(out_of_bounds="clip").predict``: linear
    interpolation, constant outside)."""

    def __init__(self, method, f=None, t=None, *, params=None, what="the positive class", weights=None):
        self.method = method
        if params is not None:  # restored from a model file
            self.params = np.asarray(params, dtype=float)
        elif method == "sigmoid":
            self.params = np.array(fit_platt(f, t, weights, what))
        else:
            iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(f, t.astype(float),
                                                                                    sample_weight=weights)
            self.params = np.vstack([iso.X_thresholds_, iso.y_thresholds_])

    def __call__(self, f):
        if self.method == "sigmoid":
            return expit(-(self.params[0] * f + self.params[1]))
        return np.interp(f, self.params[0], self.params[1])


@contextmanager
def _group_folds_message():
    """The Dask fold rule's "needs groups" as the in-memory "splits by group"
    error, which :meth:`ProbaMixin._fit_calibration` turns into its advice."""
    try:
        yield
    except ValueError as exc:
        if "needs groups" not in str(exc):
            raise
        raise ValueError(f"{exc}: the splitter splits by group") from None


def _calibrated(est):
    if getattr(est, "calibration", None) is None:
        raise AttributeError(
            f"{type(est).__name__} was built with calibration=None, which switches class probabilities off "
            "(predict_proba, predict_log_proba and predict_set); leave calibration at its default 'sigmoid' "
            "(or set 'isotonic') and refit, or use decision_function"
        )
    return True


class _if_calibrated:
    """A method present only with ``calibration`` set: on an instance with
    ``calibration=None`` the attribute lookup raises :func:`_calibrated`'s
    ``AttributeError``, whose message says why (``hasattr`` stays False, as
    scikit-learn's ``available_if``, whose message would only say that the
    attribute is missing); on the class, the function (for documentation)."""

    def __init__(self, fn):
        self.fn = fn
        self.__doc__, self.__name__, self.__wrapped__ = fn.__doc__, fn.__name__, fn

    def __get__(self, obj, owner=None):
        if obj is None:
            return self.fn
        _calibrated(obj)
        return self.fn.__get__(obj, owner)


def calibration_maps(method, F, codes, n_classes, weights=None):
    """One :class:`CalibrationMap` per one-vs-rest output (one for two
    classes), fitted on out-of-sample decision values.

    Parameters
    ----------
    method : {"sigmoid", "isotonic"}
    F : ndarray of shape (m,) or (m, v)
        Out-of-sample decision values of the coded outputs (v = 1 for two
        classes, else n_classes).  Rows with a non-finite value (leverage
        ~ 1, warned about where computed) carry no information and are left out.
    codes : ndarray of shape (m,) of int
        Class index of every row (``classes_`` order).
    n_classes : int
    weights : ndarray of shape (m,), optional
        Row weights of a weighted fit: rows of weight 0 are left out, the
        others weigh in the fit (:func:`fit_platt`, weighted isotonic regression).

    Returns
    -------
    list of CalibrationMap
    """
    F = np.asarray(F, dtype=float).reshape(len(codes), -1)
    ok = np.all(np.isfinite(F), axis=1)
    w = None
    if weights is not None:
        ok &= np.asarray(weights) > 0
        w = np.asarray(weights, dtype=float)[ok]
    if n_classes == 2:
        return [CalibrationMap(method, F[ok, 0], codes[ok] == 1, what="the second class (classes_[1])", weights=w)]
    return [CalibrationMap(method, F[ok, k], codes[ok] == k, what=f"class index {k} against the rest", weights=w)
            for k in range(n_classes)]


class ProbaMixin(ConformalSetMixin):
    """``predict_proba`` and ``predict_set`` for the calibrated classifiers (a mixin; needs
    ``classes_``, ``_codes``, ``calibration``, ``calibration_cv``,
    ``_decision_2d`` and :meth:`_calibration_decisions`, whose default is
    the sparse model's)."""

    def _calibration_engine(self):
        """The engine whose held-out values calibrate (:class:`lssvm.cv.SparseEngine`): the fitted model's."""
        return self._fitted_engine()

    def _calibration_decisions(self, groups=None):
        """Out-of-sample decision values (m, v) of the fitted model at the fitted alpha, from its engine
        (every family: the model at its fitted basis, the Nyström model with its rank-k map, the fixed-size
        model at its support): exact LOO with the basis kept (``calibration_cv=None``, O(m r) after the
        fit), or the exact out-of-fold values of ``calibration_cv`` at the default ``basis_in_holdout``
        ("remove"), the numbers of :meth:`cv_decision_function`; ``groups`` reach a group splitter.
        Fitted on Dask: a pair (values, class index of every row), computed in one more pass (two for
        k-fold) and held on the client: O(m v) floats, since Platt's fit iterates over all of them and the
        isotonic fit sorts them."""
        engine = self._calibration_engine()
        alphas = np.array([float(self.alpha)])
        if self.calibration_cv is None:  # a weighted fit leaves one unit of weight out: repeated rows' values
            loo = getattr(engine, "loo_residuals_one_unit", engine.loo_residuals)
            F = engine.targets() - loo(alphas)[0]
        else:
            with _group_folds_message():
                folds = engine.resolve_cv(self.calibration_cv, groups, classifier=True)
            F = engine.cv_outputs(folds, alphas, self._holdout_mode(None))[0]
        if engine.rows_in_memory:
            return F
        from ..backends.dask import run_pass

        F, Y = run_pass("calibration pass", (F, engine.targets()))
        return F, (Y[:, 0] > 0).astype(int) if Y.shape[1] == 1 else Y.argmax(axis=1)

    def _fit_calibration(self, *args):
        """Calibrators on :meth:`_calibration_decisions` (``args`` passed on); no refit.  Returns self."""
        try:
            F = None if self.calibration is None else self._calibration_decisions(*args)
        except ValueError as exc:
            if "would have no basis" in str(exc):  # a fold holds every basis point of the fitted model
                raise ValueError(
                    f"calibration_cv={self.calibration_cv!r}: {exc}. The calibration folds take the basis points "
                    "their rows hold out of the model (basis_in_holdout='remove'); use calibration_cv=None (exact "
                    "leave-one-out, the basis kept), more folds, or a model with more basis points") from None
            if "splits by group" not in str(exc):
                raise
            raise ValueError(
                f"calibration_cv={type(self.calibration_cv).__name__}(...) splits by group, but no groups reached "
                f"{type(self).__name__}'s calibration (groups reach it only from a fit on rows in memory whose signature "
                "takes them; the *CV searches do not pass theirs to the refit): give the folds themselves, calibration_cv=list(splitter.split(X, y, "
                "groups)), or an int"
            ) from None
        codes = getattr(self, "_codes", None)
        if isinstance(F, tuple):  # fitted on Dask: the values come with the rows' classes
            F, codes = F
        # calibration=None: no predict_proba; None decision values: it says why
        self.calibrators_ = None if F is None else calibration_maps(self.calibration, F, codes,
                                                                     self.classes_.size,
                                                                     getattr(self, "_fit_weights", None))
        # predict_set's calibration scores: the same held-out values, O(m v) floats
        self._held_out = None if F is None else (np.asarray(F, dtype=float).reshape(len(codes), -1), codes)
        return self

    def predict(self, X):
        """Predicted labels, shape (t,).

        With ``calibration`` set, the class of largest calibrated probability,
        ``classes_[argmax predict_proba(X)]``, so that ``predict`` and
        :meth:`predict_proba` never disagree (as scikit-learn's
        ``CalibratedClassifierCV``); this can differ from the sign (argmax)
        of :meth:`decision_function` near the boundary, or everywhere for a
        class whose map fell back to flat (a ``NumericalWarning`` at fit says
        so).  Without calibration, the sign (argmax) of the decision values.
        """
        if getattr(self, "calibration", None) is None or getattr(self, "calibrators_", None) is None:
            return super().predict(X)
        F = self._decision_2d(X)
        if hasattr(F, "map_blocks"):  # Dask input: block by block, one chunk across the outputs
            return F.rechunk({1: -1}).map_blocks(self._labels_of_decisions, drop_axis=1, dtype=self.classes_.dtype)
        return self._labels_of_decisions(F)

    def _labels_of_decisions(self, F):
        """``classes_[argmax]`` of the calibrated probabilities of decision values F (t, v)."""
        return self.classes_[np.argmax(self._proba_from_decisions(np.asarray(F, dtype=float)), axis=1)]

    @_if_calibrated
    def predict_proba(self, X):
        """Class probabilities calibrated on out-of-sample decision values.

        Parameters
        ----------
        X : array-like of shape (t, d)

        Returns
        -------
        ndarray of shape (t, n_classes)
            Columns in ``classes_`` order; rows sum to 1.

        Notes
        -----
        Each class's calibration map (``calibration``: Platt's sigmoid, or
        isotonic regression) is fitted at ``fit`` on the exact leave-one-out
        decision values (or the exact k-fold ones with ``calibration_cv``),
        so the map sees the decision values of models that did not train on
        the row, as Platt recommends, without any refit.  Two classes: the
        map of ``classes_[1]``, and 1 - p for ``classes_[0]``.  More: one
        map per one-vs-rest output, rows normalised (uniform where every map
        gives 0).  The sigmoid is strictly increasing in the decision value
        (flat, with a ``NumericalWarning`` at fit, where the out-of-sample
        values do not rise with the class: :func:`fit_platt`); the isotonic
        map is non-decreasing.  O(t n d) like ``decision_function``.

        Only with ``calibration`` set (as ``SVC(probability=True)``); with it
        :meth:`predict` returns the class of largest probability.  The
        calibrated probabilities need not cross 1/2 (binary) or peak
        (one-vs-rest) where the decision values do, so near the boundary
        ``predict`` may differ from the sign of :meth:`decision_function`.
        """
        check_is_fitted(self, "classes_")
        if getattr(self, "calibrators_", None) is None:  # fitted on Dask
            raise ValueError(
                "predict_proba is not available for a model fitted on Dask collections; use "
                "decision_function, or fit on a NumPy sample to get calibrated probabilities"
            )
        return self._proba_from_decisions(self._decision_2d(X))

    def _proba_from_decisions(self, F):
        """Calibrated probabilities (t, n_classes) of decision values F (t, v)."""
        if self.classes_.size == 2:
            p1 = self.calibrators_[0](F[:, 0])
            return np.column_stack([1.0 - p1, p1])
        P = np.column_stack([cal(F[:, k]) for k, cal in enumerate(self.calibrators_)])
        total = P.sum(axis=1, keepdims=True)
        zero = total[:, 0] <= 0
        P[zero] = 1.0
        total[zero] = P.shape[1]
        return P / total

    @_if_calibrated
    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`, shape (t, n_classes)."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))


class SearchProbaMixin:
    """``calibration`` / ``calibration_cv`` for the classifier searches
    (``SparseLSSVCCV``, ``FixedSizeLSSVCCV``, ``NystromLSSVCCV``): passed
    to the refit of the best model, which calibrates itself on its own
    exact out-of-sample decision values at the chosen alpha (the search
    adds no training); ``predict_proba`` delegates to ``best_estimator_``."""

    def _model_params(self):
        return {**super()._model_params(), "calibration": self.calibration, "calibration_cv": self.calibration_cv}

    @_if_calibrated
    def predict_proba(self, X):
        """``best_estimator_.predict_proba(X)``: shape (t, n_classes), rows sum to 1."""
        return self._best().predict_proba(X)

    @_if_calibrated
    def predict_log_proba(self, X):
        """``best_estimator_.predict_log_proba(X)``, shape (t, n_classes)."""
        return self._best().predict_log_proba(X)

    def predict_set(self, X, coverage=0.9, method="lac", mondrian=False, random_state=0):
        """``best_estimator_.predict_set(...)``: conformal prediction sets, bool (t, n_classes)."""
        return self._best().predict_set(X, coverage, method, mondrian, random_state)
