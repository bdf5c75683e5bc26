"""Warnings and errors raised by lssvm."""

import contextvars
import warnings
from contextlib import contextmanager

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


# --- Where a NumericalWarning goes -----------------------------------------------------------
#
# Library code never changes the process-wide warnings filter: ``warnings.catch_warnings`` swaps
# the one global filter list (and ``showwarning``), so inside a thread pool one fit's
# ``simplefilter("error")`` turns another thread's warning into an exception, and a restore out
# of order leaves the filter changed for good.  Instead every NumericalWarning lssvm issues goes
# through :func:`warn_numerical`, which consults a context variable (one value per thread and
# per asyncio task): by default the warning is issued as usual (the user's filters decide); a
# search that needs it raised (stop this candidate), dropped, or collected (one summary at the
# end) sets a handler for the extent of a ``with`` block, in its own context only.

_numerical_handler = contextvars.ContextVar("lssvm_numerical_handler", default=None)


def warn_numerical(message, stacklevel=2, **details):
    """Issue a :class:`NumericalWarning`, or hand it to the handler in force.

    Parameters
    ----------
    message : str or NumericalWarning
        The text (or a warning already made, e.g. one collected and passed on).
    stacklevel : int, default=2
        As for :func:`warnings.warn`, counted from the caller of this function.
    **details
        Set as attributes of the warning (e.g. ``alphas``, the regularisation
        values whose result it concerns) for a handler that summarises.
    """
    w = message if isinstance(message, NumericalWarning) else NumericalWarning(message)
    for k, v in details.items():
        setattr(w, k, v)
    handler = _numerical_handler.get()
    if handler is None:
        warnings.warn(w, stacklevel=stacklevel + 1)
    else:
        handler(w)


def _raise(w):
    raise w


@contextmanager
def _handling(handler):
    token = _numerical_handler.set(handler)
    try:
        yield
    finally:
        _numerical_handler.reset(token)


def numerical_warnings_raise():
    """Inside, a :class:`NumericalWarning` from lssvm is raised as an exception
    (``except NumericalWarning``) instead of issued; in this context only."""
    return _handling(_raise)


def numerical_warnings_ignore():
    """Inside, :class:`NumericalWarning` from lssvm is dropped; in this context only."""
    return _handling(lambda w: None)


@contextmanager
def numerical_warnings_collect():
    """Inside, :class:`NumericalWarning` from lssvm is appended to the list
    yielded instead of issued (pass them on with :func:`warn_numerical`); in
    this context only."""
    caught = []
    with _handling(caught.append):
        yield caught


def with_numerical_handler(func):
    """``func`` wrapped to run under the caller's NumericalWarning handler, for
    a worker thread (threads start in a fresh context).  Call in the thread
    that owns the handler."""
    handler = _numerical_handler.get()
    if handler is None:
        return func

    def run(*args, **kwargs):
        with _handling(handler):
            return func(*args, **kwargs)

    return run
