"""``lssvm select`` estimates the whole command's wall time (start,
reading, search and refit, the gradient stage, report and model file) in
seconds for every search kind, and prints the actual time beside the
estimate at the end."""

import re

import pytest
from click.testing import CliRunner

from lssvm.cli._cost import (
    CommandClock,
    MachineRates,
    after_search_seconds,
    gradient_stage_seconds,
    process_seconds,
)
from lssvm.cli.main import cli

SEARCHES = {
    "grid": ["--gammas", "0.5,2"],
    "nelder-mead": ["--max-evaluations", "4"],
    "csa": ["--max-evaluations", "5"],
    "gradient": ["--max-evaluations", "3"],
}


@pytest.mark.parametrize("search", list(SEARCHES))
def test_every_search_gets_a_whole_command_estimate_in_seconds_and_the_actual_time(search, tmp_path):
    res = CliRunner().invoke(cli, ["select", "ripley", "--search", search, *SEARCHES[search], "--basis", "random",
                                   "--n-basis", "30", "--alphas", "1e-3:10:4", "--no-report",
                                   "-o", str(tmp_path / "m.npz")])
    assert res.exit_code == 0, res.output
    total = re.search(r"^total +about ([0-9.]+) (s|min) for the whole command: ([0-9.]+) s so far", res.output, re.M)
    assert total, res.output
    if search == "gradient":  # the L-BFGS-B stage gets its own seconds
        assert re.search(r"^gradient +then L-BFGS-B: .*: about [0-9.]+ (s|min)$", res.output, re.M)
    final = re.search(r"^wall time +([0-9.]+) s for the whole command \(estimated ([0-9.]+) s, ([0-9.]+)x the "
                      r"estimate\)$", res.output, re.M)
    assert final, res.output
    assert res.output.rstrip().splitlines()[-1].startswith("wall time")
    assert float(final.group(2)) == pytest.approx(float(total.group(1)), rel=0.06, abs=0.06)
    assert float(final.group(1)) >= float(total.group(3))  # the actual time includes what was spent before


def test_the_estimate_adds_its_parts():
    rates = MachineRates(gemm=1e10, eigh=1e10, stream=1e9)
    one = gradient_stage_seconds("sparse", 2000, 20, 20, 3, 30, rates, False)
    assert gradient_stage_seconds("sparse", 2000, 20, 20, 3, 60, rates, False) == pytest.approx(2 * one)
    # one width: L-BFGS-B stops well before the cap
    assert gradient_stage_seconds("sparse", 2000, 20, 1, 3, 60, rates, False) < one / 2
    assert gradient_stage_seconds("sparse", 8000, 20, 20, 3, 30, rates, False) > 3 * one
    assert after_search_seconds(1000, report=True) > after_search_seconds(1000, report=False) > 0
    clock = CommandClock()
    before = process_seconds()
    assert before is None or before > 0
    total, line = clock.estimate_line(10.0, 2.0)
    assert total == pytest.approx(clock.elapsed() + 12.0, abs=0.5) and "about 12 s for the whole command" in line
    assert "estimated 12.0 s" in clock.final_line(12.0)
