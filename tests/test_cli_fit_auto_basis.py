"""``lssvm fit --n-basis auto``: the basis size chosen by exact CV, then the
saved model refitted at the best alpha on exactly those basis points."""

import re

import numpy as np
from click.testing import CliRunner

from lssvm.cli.main import cli
from lssvm.io import load_model


def test_fit_with_an_automatic_basis_size_saves_the_model_on_the_chosen_points(tmp_path):
    out = tmp_path / "m.npz"
    res = CliRunner().invoke(cli, ["fit", "motorcycle", "--n-basis", "auto", "-o", str(out)])
    assert res.exit_code == 0, res.output
    n_points = int(re.search(r"basis\s+pchol: (\d+) points", res.output).group(1))
    model = load_model(out)
    centres = model.estimator.kernel_expansion().centres
    assert centres.shape[0] == n_points
    alpha = float(re.search(r"saved\s+alpha=([0-9.e+-]+)", res.output).group(1))
    assert np.isclose(model.estimator.alpha, alpha, rtol=1e-3)
