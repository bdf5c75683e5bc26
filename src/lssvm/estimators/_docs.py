"""Docstring text shared by the estimator families."""

__all__ = ["PARAMETER_NAMES_NOTE"]

#: The Notes paragraph mapping the papers' and LS-SVMlab's parameter names to ours
#: (indented for a class docstring).
PARAMETER_NAMES_NOTE = """\
    Parameter names differ between papers and toolboxes: Cawley & Talbot
    (2004) write the RBF kernel ``exp(-sigma^-2 ||x - z||^2)`` and the
    regularisation ``gamma = 1 / (2 alpha)``; Karsmakers et al. (2011) and
    Ding & Liao (2012) use ``gamma = 1 / alpha`` with
    ``exp(-||x - z||^2 / sigma^2)``, so ``sigma^2 = 1 / gamma``; LS-SVMlab
    1.8 has ``gam = 1 / alpha`` and ``exp(-||x - z||^2 / (2 sig2))``, so
    ``sig2 = 1 / (2 gamma)``; Pahikkala et al. (2012) use
    ``lambda = alpha`` and our ``gamma``.  The documentation's "Coming
    from other libraries" and "Mathematics" pages have the details.
"""

#: The attributes every ``*CV`` search sets (appended to their docstrings).
RESULT_DOC = """
    Attributes
    ----------
    best_params_ : dict
        Kernel parameters and ``alpha`` of the best candidate.
    best_score_ : float
        Its CV score, higher is better as in scikit-learn: ``-MSE`` or
        ``1 - error rate``.
    best_index_ : int
        Its row in ``cv_results_``.
    scoring_ : str
        The criterion minimised ("mse" or "error_rate").
    cv_results_ : dict of ndarray
        One row per (kernel parameters, alpha) evaluated, shaped like
        ``GridSearchCV.cv_results_``: ``params``, ``param_<name>``,
        ``param_alpha``, ``mean_test_score`` (higher is better),
        ``rank_test_score``, ``mean_test_mse`` and ``mean_test_error_rate``
        (classification) as the CV engine computed them, plus the model's
        size (``n_basis``, ``model_size``) where it varies.
    alpha_, gamma_ : float
        Chosen regularisation and width (``gamma_`` None if not searched).
    best_estimator_ : estimator
        Refitted on all data with the best parameters and the same rows
        (basis, pool, columns) the criterion used.
    n_evaluations_ : int
        Criterion calls (each covers every alpha).
    cv_folds_ : list of ndarray or None
        Test indices of the folds every candidate was scored on (None for LOO).
    search_time_, refit_time_ : float
        Seconds.
    numerical_notes_ : list of str
        Every NumericalWarning text of the search and refit; ``fit`` issues one
        warning only when some concerns the fitted model (``lssvm.estimators._numerical_notes``).
    n_features_in_ : int
"""
