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
