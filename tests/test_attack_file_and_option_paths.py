"""The hostile pass over file and command-line paths (benchmarks/attack_files.py):
bad output paths, special files, decompression bombs, edited model files and
odd option values give no silent wrong answer, no traceback and no hang."""

import importlib.util
import pathlib
import sys

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.skipif(sys.platform != "linux", reason="FIFOs, sockets, SIGALRM")]

SCRIPT = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "attack_files.py"


def test_hostile_file_and_option_cases(monkeypatch):
    spec = importlib.util.spec_from_file_location("attack_files", SCRIPT)
    attack = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(attack)
    monkeypatch.setenv("LSSVM_MAX_TABLE_BYTES", str(attack.BOUND))
    records, peak_mib = attack.run_cases()
    bad = [r for r in records if r[1] in ("silent", "crash", "hang")]
    assert not bad, "\n".join(f"{name}: {outcome}: {detail}" for name, outcome, detail, _ in bad)
    assert len(records) > 50 and sum(r[1] == "clear" for r in records) > 50
