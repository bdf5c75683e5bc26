"""The command line reads every family-dependent choice from the model table
(``lssvm.estimators.MODELS``) and the presets' class attributes, so these checks
compare what ``lssvm select`` does with what each preset says of itself."""

from __future__ import annotations

import click
import pytest
from sklearn.utils._param_validation import InvalidParameterError

from lssvm.cli import select as select_module
from lssvm.estimators import MODELS

CASES = [("cv", "loo"), ("cv", 5), ("n_basis", 0.5), ("n_basis", 50), ("n_basis", "auto"), ("basis", "random"),
         ("basis", "fvs"), ("basis", "all"), ("search", "gradient"), ("time_budget", 1.0)]


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize(("param", "value"), CASES)
def test_accepts_is_the_constructor_validation(name, param, value):
    for preset in MODELS[name]:
        est = preset()
        if param not in est.get_params():
            assert not preset.accepts(**{param: value})
            continue
        est.set_params(**{param: value})
        try:
            est._validate_params()
            valid = True
        except InvalidParameterError:
            valid = False
        assert preset.accepts(**{param: value}) is valid, (preset.__name__, param, value)


@pytest.mark.parametrize("name", list(MODELS))
def test_cli_cv_default_and_loo_follow_the_preset(name):
    regressor = MODELS[name][0]
    assert select_module._parse_cv(None, name) == (regressor.search_family().default_cv, None)
    if regressor.accepts(cv="loo"):
        assert select_module._parse_cv("loo", name) == ("loo", None)
    else:
        with pytest.raises(click.BadParameter, match="need folds"):
            select_module._parse_cv("loo", name)


@pytest.mark.parametrize("name", list(MODELS))
def test_both_presets_of_a_model_share_one_family(name):
    regressor, classifier = MODELS[name]
    assert regressor.search_family() is classifier.search_family()
    assert regressor.search_family().dask_bases[0] in regressor.string_options("basis")
