"""Docstring text shared by the estimator families."""

__all__ = ["KERNEL_DOC", "PARAMETER_NAMES_NOTE", "PER_TARGET_RESULT_DOC", "RESULT_DOC", "SEARCH_DOC", "SPARSE_SEARCH_DOC"]

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


#: The kernel parameters of the Nyström and fixed-size estimators (the sparse ones add "ard"), opening
#: their Parameters section; the other kernel parameters are as for ``SparseLSSVR``.
KERNEL_DOC = """
    Parameters
    ----------
    kernel : {"rbf", "laplacian", "linear", "poly"} or lssvm.kernels.Kernel, default="rbf"
    gamma : float > 0 or "scale", default="scale"
        "scale": ``1 / (n_features * X.var())`` at fit, as scikit-learn's
        ``SVC`` (:func:`lssvm.kernels.resolve_gamma`); stored as ``gamma_``.
        Kernel width, ``exp(-gamma ||x - z||^2)`` for "rbf"; larger values
        give narrower kernels (the papers' names for it: Notes).
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

#: The sparse searches' parameters (``SparseLSSVRCV``, ``SparseLSSVCCV``).
SPARSE_SEARCH_DOC = """
    Parameters
    ----------
    kernel : {"rbf", "laplacian", "linear", "poly"}, default="rbf"
    cv : "loo", int, splitter or iterable of (train, test), default="loo"
        "loo": exact LOO (Cawley & Talbot 2004; O(m n) per alpha); k-fold and group
        splitters: exact hold-outs (Pahikkala et al. 2012), held-out basis points
        treated by ``basis_in_holdout``.  An int k is unshuffled ``KFold(k)``
        (``StratifiedKFold(k)`` for classifiers), used for every candidate.
    basis : {"auto", "pchol", "fvs", "random", "greedy", "kcenter", "renyi"} or 1-D int array, default="auto"
        "auto": "pchol" for grid, nelder-mead and csa, "random" for gradient (``gradient_basis_``).  "random",
        "kcenter", "pchol" (at the scale width if the width is searched; gradient: at the best grid width) are
        drawn once; "fvs", "renyi", "greedy" are redrawn per candidate from one seed ("greedy" ranks at ``alpha``).
    n_basis : int, "auto" or None, default="auto"
        None, the fixed size rule: "pchol" regression 448 at m = 2000, 500 from 2500; "random" 200; "auto"
        gradient: 300 from 900.  "auto": below; where it does not apply (Dask input, ``search="gradient"``, another
        basis, sparse X, ``sample_weight``, ``alpha_per_target=True``, ``refit=False``) the fixed rule, with
        ``basis_curve_["stop_reason"]`` "not applicable: <why>".
    random_state : int, RandomState or None
        Seeds the basis draws and "csa" (an int ``cv`` is unshuffled: no seed).
    basis_in_holdout : {"remove", "keep", "train"}, default="remove"
    gamma : float or "scale", default="scale"
        Used only when "gamma" is not searched.
    alpha : float, default=1.0
        The alpha at which ``basis="greedy"`` ranks candidates.
    degree, coef0, basis_tol, pivot_tol, n_candidates, rcond, block_size, normalize_kernel, n_jobs
        As for :class:`lssvm.SparseLSSVR`.
    n_restarts, hyper_penalty, selection_rule : int (default 2), bool (default False), {"one-se", "min"}
        ``search="gradient"`` (``kernel="ard"`` or "rbf", basis "auto", "random", "kcenter", "pchol" or rows): restarts,
        Cawley-Talbot penalty, and the point kept: "one-se" (default; exact LOO, no penalty): of all points
        evaluated (+ a short evidence search, ~1.3x the time) within one standard error (at most 2 %) of the lowest
        LOO error, the highest evidence (one-SE rule, ESL 7.10); "min": the lowest criterion.  Sets ``gamma_``,
        ``feature_relevance_``, ``gradient_trace_``, ``gradient_selection_``; :mod:`lssvm.estimators.gradient_search`.
    alpha_per_target : bool, default=False
        Regression: give each target (column of ``y``) its own alpha.  The kernel parameters stay shared,
        chosen by the mean over targets of each target's lowest CV error along the path; each target then
        takes the alpha that minimises its own exact LOO, k-fold or grouped CV error at those parameters.
        ``alpha_`` has shape (n_targets,); scoring "mse" only; not with ``search="gradient"`` or Dask input.
    store_cv_results : bool, default=False
        With ``alpha_per_target``: keep every target's whole CV path in ``cv_results_["per_target_test_mse"]``.
    n_targets_batch : "auto" or int, default="auto"
        Targets per batch of the CV error sums; "auto" sizes it from the free memory (at most 512 MiB of
        buffers), so that nothing of size m x n_targets is held beyond ``y``.
"""

#: What ``alpha_per_target=True`` adds to a search's attributes.
PER_TARGET_RESULT_DOC = """    alpha_ (with ``alpha_per_target=True``) : ndarray of shape (n_targets,)
        Each target's alpha at the chosen kernel parameters (also ``best_params_["alpha"]``);
        ``best_estimator_`` is a ``SparseLSSVR`` fitted with it.
    best_score_per_target_ : ndarray of shape (n_targets,)
        With ``alpha_per_target``: each target's CV score at its alpha (minus its MSE); ``best_score_`` is
        their mean, and so is ``mean_test_score`` in ``cv_results_`` for every alpha of a candidate (the
        shared-alpha path stays in ``mean_test_mse``).  ``cv_results_["per_target_test_mse"]``, shape
        (n_rows, n_targets), with ``store_cv_results=True``: every target's MSE on every row.
"""

#: The parameters of the search itself, shared by the six ``*CV`` estimators.
SEARCH_DOC = """
    Other Parameters
    ----------------
    alphas : array-like of float > 0, optional
        The regularisation path scored at every candidate (free: one
        factorisation serves all of it); default ``DEFAULT_CV_ALPHAS``,
        ``10^-6 ... 10^4`` (21 values).
    param_space : dict, optional
        Kernel parameters to search.  For ``search="grid"`` each maps to
        its values; for "nelder-mead" and "csa" to ``(low, high)`` (or
        values, whose min and max are used), searched in log2.  Default
        ``{"gamma": s * DEFAULT_CV_GAMMA_FACTORS}`` (s 2^-6 ... s 2^6, s = gamma_scale(X)), or ``{}`` for the
        linear kernel (alpha path only); a best value on an edge warns (``lssvm.SearchEdgeWarning``).
        The default grid is searched coarse-to-fine (``lssvm.selection.coarse_to_fine_search``), a given one in full.
    search : {"grid", "nelder-mead", "csa"}, default="grid"
        Exhaustive grid (as Ding & Liao 2012), SciPy's Nelder-Mead from the middle of
        the box (as Cawley & Talbot 2004), or coupled simulated annealing then Nelder-Mead
        (as Karsmakers et al. 2011 and LS-SVMlab).
    scoring : {"mse", "error_rate", "gcv", "evidence"}, optional
        CV criterion to minimise; default "error_rate" for classifiers (ties
        to the lower MSE), "mse" (PRESS / n) for regression; SparseLSSVRCV: "gcv" or -log "evidence" too.
    max_evaluations : int or None, default=None
        Most criterion calls of "nelder-mead" (it stops once converged: simplex within 0.05 in log2, values within
        1e-3 relative) and of each "csa" stage, None: 30; "gradient": per L-BFGS-B start, None: ``max(60, 3 (d' + 1))``
        (d' non-constant inputs).  At most ``lssvm.selection.MAX_EVALUATIONS`` (10,000); the grid evaluates all points.
    refit : bool, default=True
        Refit the best model on all data as ``best_estimator_``.
"""
