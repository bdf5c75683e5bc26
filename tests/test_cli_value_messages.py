"""Odd option values get one clear line that names the value and its real
cause, never a misleading one, a raw NumPy warning or a traceback."""

import re
import warnings

import pytest
from click.testing import CliRunner

from lssvm.cli.main import cli

FIT = ["fit", "motorcycle", "--target", "accel"]


@pytest.fixture
def run(tmp_path):
    def invoke(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)  # a raw NumPy warning fails the command
            return CliRunner().invoke(cli, [*args, "-o", str(tmp_path / "m.npz")])

    return invoke


@pytest.mark.parametrize("option, value", [("--alphas", "1e-320,1e-315"), ("--alphas", "5e-324:1e-3:4"),
                                           ("--alpha", "1e-320")])
def test_subnormal_alphas_are_named_as_subnormal(run, option, value):
    res = run(*FIT, option, value)
    assert res.exit_code == 2, res.output
    assert "subnormal" in res.output and "1e154" not in res.output and "Traceback" not in res.output


def test_loo_overflow_at_tiny_alphas_blames_the_alphas_not_the_target(run):
    res = run(*FIT, "--gamma", "1000", "--alphas", "1e-300,1e-290,1")
    assert res.exit_code == 1, res.output
    line = res.output.strip().splitlines()[-1]
    assert "not finite at alpha = 1e-300, 1e-290:" in line and "leverage 1" in line and "--alphas" in line
    assert "1e154" not in res.output


def test_loo_overflow_from_a_huge_target_still_blames_the_target(run, tmp_path):
    path = tmp_path / "big.csv"
    path.write_text("x,y\n" + "".join(f"{i},{(-1) ** i * 1e200 * (i + 1)}\n" for i in range(30)))
    res = run("fit", str(path), "--alphas", "1e-3,1")
    assert res.exit_code == 1 and "1e154" in res.output, res.output


def test_polynomial_degree_out_of_range(run):
    res = run(*FIT, "--kernel", "poly", "--degree", "1000000")
    assert res.exit_code == 2, res.output
    assert "1000000" in res.output and "between 1 and 100" in res.output and "zero norm" not in res.output
    assert run(*FIT, "--kernel", "poly", "--degree", "0").exit_code == 2


@pytest.mark.parametrize("command", [FIT, ["select", "motorcycle", "--target", "accel", "--no-report"]])
def test_fractional_n_basis_for_the_sparse_model(run, command):
    res = run(*command, "--n-basis", "0.5")
    assert res.exit_code == 2, res.output
    assert "0.5" in res.output and "whole number of basis points" in res.output
    assert "parameter of Sparse" not in res.output


def test_tiny_alpha_leaks_no_numpy_warning(run):
    res = run(*FIT, "--kernel", "poly", "--alpha", "1e-300")
    assert res.exit_code == 0, res.output
    assert "RuntimeWarning" not in res.output and "overflow encountered" not in res.output
    assert re.search(r"^warnings +\d+ NumericalWarning", res.output, re.M)  # one summary line


def test_the_saved_alpha_row_is_its_own_among_tiny_alphas(run):
    """Alphas below 1e-8 are not all "close" (np.isclose's default atol)."""
    res = run(*FIT, "--alphas", "1e-12,1e-10", "--alpha", "1e-9")
    assert res.exit_code == 0, res.output
    rows = [line.split() for line in res.output.splitlines() if re.match(r"^ *1e-(09|10|12) ", line)]
    assert [r[0] for r in rows] == ["1e-12", "1e-10", "1e-09"]
    assert [r[-1] == "*" for r in rows] == [False, False, True]
    saved = re.search(r"saved +alpha=1e-09 as given by --alpha \(loo_mse = ([0-9.e+-]+)\)", res.output)
    assert saved and saved.group(1) == rows[2][1], res.output
