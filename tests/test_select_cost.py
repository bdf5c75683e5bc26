"""``lssvm select`` says what the search will cost before it starts, and
prints the search-edge warning (issue 17)."""

import pytest
from click.testing import CliRunner

from lssvm.basis import default_n_basis
from lssvm.cli._cost import estimate_cost, machine_rate
from lssvm.cli.main import cli


def test_cost_estimate_counts_the_default_sizes():
    cost = estimate_cost("sparse", 19_020, 10, 13, 21, rate=1e10)
    assert cost.size == default_n_basis(19_020) == 700
    # dominated by the 14 factorisations' 4 m n^2 (TRSM, SYRK, 2 for the GEMM; 13 evaluations and the refit)
    assert 4 * 14 * 19_020 * 700**2 <= cost.flops <= 6 * 14 * 19_020 * 700**2
    assert cost.seconds == pytest.approx(cost.flops / 1e10)
    small = estimate_cost("sparse", 1_000, 10, 13, 21, rate=1e10)
    assert small.seconds < cost.seconds / 50
    assert estimate_cost("nystrom", 5000, 8, 13, 21, n_basis=0.1, rate=1e10).size == 500
    assert estimate_cost("fixed-size", 5000, 8, 13, 21, cv=10, rate=1e10).size == default_n_basis(5000)
    huge = estimate_cost("sparse", 10**9, 50, 13, 21, rate=1e10)
    assert huge.too_large(available=128 * 2**30) and "--chunk-rows" in huge.lines()[-1]
    assert not cost.too_large(available=8 * 2**30) and len(cost.lines()) == 1
    assert machine_rate() > 1e6


def test_select_prints_cost_and_edge_warning(tmp_path):
    runner = CliRunner()
    res = runner.invoke(cli, ["select", "motorcycle", "--target", "accel", "--gammas", "0.01,0.02", "--no-report",
                              "-o", str(tmp_path / "m.npz")])
    assert res.exit_code == 0, res.output
    assert "cost       133 rows, model size 116, 2 evaluations x 21 alphas: about" in res.output
    assert "GFLOP/s measured now" in res.output
    assert "warning    the best gamma=0.02 lies on the upper edge" in res.output and "above (--gammas)" in res.output
