"""One vocabulary across the twelve estimators (issue 18): the names that
were renamed before 1.0, and the clear errors their old spellings raise.

The three families now say the same thing the same way: fixed-size
prototypes and Nyström columns are *bases* (``basis`` / ``n_basis``), the
uniform draw is ``"random"``, the candidates scored per selection step are
``n_candidates``, and a criterion is a ``scoring``.  An old name is not a
silent alias: it raises a ``TypeError`` (a string value: a ``ValueError``)
that names the new one.
"""

from __future__ import annotations

import functools

__all__ = [
    "CLASSIFICATION_SCORINGS",
    "REGRESSION_SCORINGS",
    "RENAMED_METHODS",
    "check_scoring_name",
    "RENAMED_ATTRIBUTES",
    "RENAMED_KEYWORDS",
    "RENAMED_PARAMS",
    "RENAMED_VALUES",
    "RenamedNamesMixin",
    "check_renamed_values",
    "renamed_keywords",
]

#: Constructor / ``set_params`` names: old -> new.
RENAMED_PARAMS = {
    "prototypes": "basis",
    "n_prototypes": "n_basis",
    "sampling": "basis",
    "n_components": "n_basis",
    "basis_candidates": "n_candidates",
}
#: Method keywords: old -> new (``cv_error(metric=...)``).
RENAMED_KEYWORDS = {"metric": "scoring"}
#: String values of a parameter: (parameter, old value) -> new value.
RENAMED_VALUES = {("basis", "uniform"): "random"}
#: Methods: old -> the call that replaces it.
RENAMED_METHODS = {"cv_error_rate": "cv_error(..., scoring='error_rate')"}
#: ``scoring`` of the ``cv_error`` methods; the first is the default (None).
REGRESSION_SCORINGS = ("mse", "press")
CLASSIFICATION_SCORINGS = ("error_rate", "mse", "press")
#: Fitted attributes: old -> new.
RENAMED_ATTRIBUTES = {
    "prototypes_": "basis_vectors_",
    "prototype_indices_": "basis_indices_",
    "components_": "basis_vectors_",
    "component_indices_": "basis_indices_",
}


def _raise_renamed(where, names, table, what):
    old = sorted(set(names) & set(table))
    if old:
        news = ", ".join(f"{o!r} is now {table[o]!r}" for o in old)
        raise TypeError(
            f"{where}: {what} renamed before lssvm 1.0 (one vocabulary across the estimators): {news}; "
            f"pass {', '.join(f'{table[o]}=...' for o in old)} instead"
        )


def check_renamed_values(estimator):
    """Raise a ``ValueError`` naming the new value for a renamed string value
    (``basis="uniform"`` is ``basis="random"``)."""
    params = estimator.get_params(deep=False)
    for (name, old), new in RENAMED_VALUES.items():
        value = params.get(name)
        if isinstance(value, str) and value == old:
            raise ValueError(
                f"{type(estimator).__name__}: {name}={old!r} was renamed {new!r} before lssvm 1.0 (one "
                f"vocabulary across the estimators); pass {name}={new!r}"
            )


class RenamedNamesMixin:
    """Old parameter and attribute names raise errors that name the new ones.

    ``__new__`` sees the constructor's keywords before ``__init__`` does, so
    ``FixedSizeLSSVR(n_prototypes=50)`` raises a ``TypeError`` naming
    ``n_basis`` instead of Python's bare "unexpected keyword argument";
    ``set_params`` does the same, and reading a renamed fitted attribute or
    method raises an ``AttributeError`` naming the new one.
    """

    def __new__(cls, *args, **kwargs):
        _raise_renamed(cls.__name__, kwargs, RENAMED_PARAMS, "parameter(s)")
        return super().__new__(cls)

    def set_params(self, **params):
        _raise_renamed(f"{type(self).__name__}.set_params", params, RENAMED_PARAMS, "parameter(s)")
        return super().set_params(**params)



def _renamed_attribute(old, new):
    def get(self):
        raise AttributeError(
            f"{type(self).__name__} has no attribute {old!r}: it was renamed {new!r} before lssvm 1.0 "
            "(one vocabulary across the estimators)"
        )

    return property(get, doc=f"Renamed {new!r} (raises AttributeError).")


# properties, not __getattr__: a __getattr__ would replace the AttributeError
# that scikit-learn's available_if raises (and its explanation) with its own
for _old, _new in {**RENAMED_ATTRIBUTES, **RENAMED_METHODS}.items():
    setattr(RenamedNamesMixin, _old, _renamed_attribute(_old, _new))


def check_scoring_name(estimator, scoring, allowed):
    """The ``scoring`` of a ``cv_error`` method: ``allowed[0]`` for None."""
    if scoring is None:
        return allowed[0]
    if not (isinstance(scoring, str) and scoring in allowed):
        hint = "" if isinstance(scoring, str) else (
            " (before lssvm 1.0 the third positional argument was groups: pass groups=... by keyword)")
        got = repr(scoring) if isinstance(scoring, str) else f"a {type(scoring).__name__}"
        raise ValueError(
            f"{type(estimator).__name__}.cv_error: scoring must be one of {', '.join(map(repr, allowed))} "
            f"or None (meaning {allowed[0]!r}); got {got}{hint}"
        )
    return scoring


def renamed_keywords(method):
    """Decorate a method so that a renamed keyword (``metric=``) raises a
    ``TypeError`` naming the new one (``scoring=``)."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        _raise_renamed(f"{type(self).__name__}.{method.__name__}", kwargs, RENAMED_KEYWORDS, "keyword(s)")
        if method.__name__ == "cv_error" and len(args) > 3:
            raise TypeError(
                f"{type(self).__name__}.cv_error takes (cv, alpha, scoring) by position; got {len(args)} "
                "positional arguments: pass groups=... and basis_in_holdout=... by keyword (before lssvm 1.0 "
                "they came third and fourth)"
            )
        return method(self, *args, **kwargs)

    return wrapper
