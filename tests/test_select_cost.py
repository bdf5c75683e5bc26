"""``lssvm select`` says what the search will cost before it starts, and
prints the search-edge warning."""

import pytest
from click.testing import CliRunner

from lssvm.basis import default_n_basis
from lssvm.cli._cost import MachineRates, estimate_cost, machine_rate, machine_rates
from lssvm.cli.main import cli


def test_cost_estimate_counts_the_default_sizes():
    m, n = 19_020, 700
    cost = estimate_cost("sparse", m, 10, 5, 21, rate=1e10)
    assert cost.size == default_n_basis(m) == n
    # dominated by the 5 factorisations' m n^2 products (the blocked whitening solve, SYRK, the GEMM
    # M = Phi V, the singular path's whitening GEMM); the refit reuses the search's factorisation: no work
    gemm, eigh, stream = cost.work["evaluations"]
    assert 6 * 5 * m * n**2 <= gemm <= 7 * 5 * m * n**2 and eigh == 5 * 18 * n**3 and stream == 5 * 20 * m * n
    assert cost.work["refit"] == (0.0, 0.0, 0.0)
    assert cost.flops == pytest.approx(sum(sum(w) for w in cost.work.values()))
    assert cost.seconds == pytest.approx(cost.flops / 1e10) == pytest.approx(cost.flops / cost.rate)
    small = estimate_cost("sparse", 1_000, 10, 5, 21, rate=1e10)
    assert small.seconds < cost.seconds / 50
    assert estimate_cost("low-rank", 5000, 8, 13, 21, n_basis=0.1, rate=1e10).size == 500
    assert estimate_cost("pool", 5000, 8, 13, 21, cv=10, rate=1e10).size == default_n_basis(5000)
    huge = estimate_cost("sparse", 10**9, 50, 13, 21, rate=1e10)
    assert huge.too_large(available=128 * 2**30) and "--chunk-rows" in huge.lines()[-1]
    assert not cost.too_large(available=8 * 2**30) and len(cost.lines()) == 1
    assert machine_rate() > 1e6


def test_cost_estimate_weighs_each_kind_of_work_by_its_own_rate():
    """eigh and element-wise passes run slower per operation than GEMM: each part is its work over its rate."""
    m, n = 12_680, 700
    slow = MachineRates(gemm=1e11, eigh=1e10, stream=1e9)
    cost = estimate_cost("sparse", m, 10, 5, 21, rate=slow)
    assert cost.seconds == pytest.approx(sum(cost.part_seconds(p) for p in ("basis", "evaluations", "refit")))
    gemm, eigh, stream = cost.work["evaluations"]
    assert cost.part_seconds("evaluations") == pytest.approx(gemm / 1e11 + eigh / 1e10 + stream / 1e9)
    assert cost.seconds > estimate_cost("sparse", m, 10, 5, 21, rate=1e11).seconds
    # linear in the evaluations; the basis selection is paid once
    twice = estimate_cost("sparse", m, 10, 10, 21, rate=slow)
    assert twice.part_seconds("evaluations") == pytest.approx(2 * cost.part_seconds("evaluations"))
    assert twice.part_seconds("basis") == cost.part_seconds("basis") > 0
    # pivoted Cholesky: O(m n^2) products and O(m n) passes, never the O(m^2 n) of exact FVS
    assert cost.work["basis"][0] < 3 * m * n**2 < estimate_cost("sparse", m, 10, 5, 21, basis="fvs", rate=slow).work["basis"][0]
    # the per-candidate fixed-size and the Nystrom refits are one more evaluation
    fs = estimate_cost("pool", 5000, 8, 5, 21, cv=10, basis="kcenter", rate=slow)
    assert fs.work["refit"] == pytest.approx(tuple(w / 5 for w in fs.work["evaluations"]))
    # the default fixed-size search scores the whole pool as the sparse LOO search does; SCDP runs in the refit
    fs = estimate_cost("pool", 5000, 8, 5, 21, cv=10, rate=slow)
    assert fs.work["evaluations"] == estimate_cost("sparse", 5000, 8, 5, 21, rate=slow).work["evaluations"]
    assert fs.work["refit"][0] > 0
    # on a shared machine the search gets a share of its cores: the wall time is the work over that share
    half = MachineRates(gemm=1e11, eigh=1e10, stream=1e9, share=0.5)
    assert estimate_cost("sparse", m, 10, 5, 21, rate=half).seconds == pytest.approx(2 * cost.seconds)
    assert "50% of the cores free" in estimate_cost("sparse", m, 10, 5, 21, rate=half).lines()[0]
    rates = machine_rates()
    assert min(rates.gemm, rates.eigh, rates.stream) > 1e6 and 0 < rates.share <= 1


def test_select_prints_cost_and_edge_warning(tmp_path):
    runner = CliRunner()
    res = runner.invoke(cli, ["select", "motorcycle", "--target", "accel", "--gammas", "0.01,0.02", "--no-report",
                              "-o", str(tmp_path / "m.npz")])
    assert res.exit_code == 0, res.output
    assert "cost       133 rows, model size 116, 2 evaluations x 21 alphas: about" in res.output
    assert "GFLOP/s measured now" in res.output
    assert "warning    the best gamma=0.02 lies on the upper edge" in res.output and "above (--gammas)" in res.output
