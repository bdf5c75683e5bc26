"""The parameter and attribute sections of the fixed-size estimators' docstrings."""

__all__ = ["FIXED_SIZE_PARAMS_DOC", "FIXED_SIZE_ATTRS_DOC"]

FIXED_SIZE_PARAMS_DOC = """
    Parameters
    ----------
    kernel : {"rbf", "laplacian", "linear", "poly"} or lssvm.kernels.Kernel, default="rbf"
    gamma : float > 0 or "scale", default="scale"
        "scale": ``1 / (n_features * X.var())`` at fit, as scikit-learn's
        ``SVC`` (:func:`lssvm.kernels.resolve_gamma`); stored as ``gamma_``.
        Kernel width, ``exp(-gamma ||x - z||^2)`` for "rbf"; larger values
        give narrower kernels (1/sigma^2 in Karsmakers et al. 2011: Notes).
    alpha : float > 0, default=1.0
        Regularisation; larger values give smoother fits (LS-SVMlab's
        ``gam`` is ``1/alpha``: Notes).
    basis : {"pchol", "kcenter", "random", "renyi", "all"}, array-like of shape (M, n_features) or 1-D int array, default="pchol"
        The prototype pool SCDP picks from: pivoted Cholesky of the kernel
        matrix (on Dask input: among a uniform sample of 20 M rows,
        :func:`lssvm.basis.sampled_pivoted_cholesky`), Gonzalez
        farthest-point clustering, uniform distinct rows, maximal quadratic Rényi entropy (classic
        FS-LSSVM), every distinct training row, given points (they need
        not be training rows), or training-row indices.
    n_basis : int or float, optional
        Pool size M: a count, or a fraction of the training rows (the
        SCDP-FSLSSVM_PV of Karsmakers et al. 2011 uses 0.3; capped at the distinct rows); default
        ``min(distinct rows, 2000)``.
    solver : {"scdp", "scdpp", "direct"}, default="scdp"
        "scdp" grows the model one prototype at a time (Algorithm 3);
        "scdpp" scores only ``n_candidates`` random coordinates per step
        (§3.5.2); "direct" solves with all prototypes (classic FS-LSSVM).
    max_size : int, optional
        k_m: non-zeros (prototypes plus intercept) at most; default M + 1.
    cv : int, splitter, iterable of (train, test) or None, default=10
        Folds of the fast CV that picks the model size (an int k is
        unshuffled ``KFold(k)``, ``StratifiedKFold(k)`` for classifiers, as
        scikit-learn's ``check_cv``; pass a splitter to shuffle); None fits
        ``max_size`` non-zeros without CV.
    random_state : int, RandomState or None
        Seeds the prototype pool, the folds and SCDPP's draws (the same
        draws for every fold and hyper-parameter, Remark 8).
    n_candidates : int, optional
        rho of "scdpp"; default 59 (one of the top 5 % with probability 0.95, §3.5.2).
    nu : float > 0, default=1e-8
        Penalty on the intercept that makes the system positive definite.
    stop_window : int, default=10
        Delta_k of stopping rule (38).
    stop_tol : float or None, default=1e-4
        epsilon of rule (38): a fold's SCDP run stops once its validation
        score changes by less than this, relative to the mean of the
        ``stop_window`` previous ones; None runs every fold to ``max_size``.
    size_rule : float >= 0, default=0.1
        The final size is the smallest whose CV score is within
        ``size_rule`` standard deviations (over folds) of the best (§4.5).
    scoring : {"mse", "error_rate"} or None, default=None
        CV criterion for the model size and rule (38): mean squared error
        (PRESS / N, the paper's choice; None means "mse"), or the
        misclassification rate (classifiers with two classes).
    degree, coef0 : int, float
        Parameters of the "poly" kernel.
    normalize_kernel : bool, default=False
    block_size : int, default=2048
        Rows per kernel block at prediction.
    n_jobs : int or None, default=None
        As for :class:`lssvm.SparseLSSVR`.
"""

FIXED_SIZE_ATTRS_DOC = """
    Attributes
    ----------
    basis_vectors_ : ndarray of shape (M, n_features)
        The prototype pool.
    basis_indices_ : ndarray of shape (M,) or None
        Training rows of the pool (None for given points).
    n_basis_ : int
        M, the pool size.
    support_ : ndarray of shape (n_support_,)
        Indices into the pool of the prototypes the model uses, in the
        order SCDP chose them (sorted for several outputs).
    support_vectors_ : ndarray of shape (n_support_, n_features)
    n_support_ : int
        Prototypes used ("# PV" in Karsmakers et al. 2011).
    dual_coef_ : ndarray of shape (n_support_,) or (n_support_, n_outputs)
    intercept_ : float or ndarray of shape (n_outputs,)
    model_size_ : int or ndarray of shape (n_outputs,)
        SCDP steps kept: non-zeros among prototypes and intercept; M + 1 where
        the whole pool was kept because its CV score beats every size SCDP
        reached by more than ``size_rule`` standard deviations (solved
        directly; SCDP's runs stop early on ill-conditioned systems).
    selection_order_ : ndarray of shape (model_size_,) or list of them
        Coordinates in the order chosen (index M is the intercept).
    cv_curve_ : ndarray of shape (K,) or (n_outputs, K), or None
        CV score of the model with 1..K non-zeros.
    cv_curve_std_ : ndarray like ``cv_curve_``
        Standard deviation over folds of the per-fold scores.
    cv_score_ : float or ndarray of shape (n_outputs,), or None
        CV score at the chosen size (with all prototypes for "direct").
"""
