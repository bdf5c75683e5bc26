"""Warnings and errors raised by lssvm."""

from sklearn.exceptions import NotFittedError

__all__ = ["NumericalWarning", "ConstantTargetWarning", "PerformanceWarning", "NotFittedError", "SearchEdgeWarning",
           "InputWarning"]


class NumericalWarning(UserWarning):
    """A numerical safeguard changed the computation (rank truncation, a
    dropped near-dependent basis point, a hat-matrix diagonal close to 1).

    The message says what was done and how much accuracy is at stake.
    """


class ConstantTargetWarning(UserWarning):
    """A regression target (or one output column) is constant: the fitted
    model is that constant and cross-validation cannot tell candidates apart."""


class PerformanceWarning(UserWarning):
    """A fast path is unavailable and a slower one gives the same results
    (for example SciPy's Cython BLAS/LAPACK pointers have another signature,
    as in an ILP64 build, so CV folds no longer run without the GIL)."""


class SearchEdgeWarning(UserWarning):
    """The best value of a searched parameter lies on the edge of its range:
    the optimum may lie outside it.  The message names the parameter and the
    direction in which to extend the range."""


class InputWarning(UserWarning):
    """Prediction inputs were changed so that the model can use them: missing
    values filled by the training imputation, or category levels unseen in
    training counted with the rare levels (or as no level).  The message
    names the columns and how many rows of each; the predictions of those
    rows rest on the filled-in values."""
