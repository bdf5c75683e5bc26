"""``lssvm select --search gradient`` with a model other than the sparse
one: a clear error before any work, never a traceback."""

import pytest
from click.testing import CliRunner

from lssvm.cli.main import cli


@pytest.mark.parametrize("model", ["nystrom", "fixed-size"])
def test_gradient_search_names_the_model_it_serves(tmp_path, model):
    out = tmp_path / "m.npz"
    res = CliRunner().invoke(cli, ["select", "motorcycle", "--model", model, "--search", "gradient", "--no-report",
                                   "-o", str(out)])
    assert res.exit_code == 1, res.output
    assert "--search gradient is for --model sparse" in res.output
    assert "Traceback" not in res.output and not isinstance(res.exception, AttributeError)
    assert not out.exists()
