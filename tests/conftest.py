import os
import sys
import zlib

# ``pytest -n N`` (pytest-xdist) runs N worker processes: one BLAS and OpenMP thread each, so that N
# workers on N cores do not oversubscribe them.  Set before NumPy and SciPy load their BLAS (each
# reads these once, at load); lssvm's thread rule then reads the limit as an outer limit in force.
if os.environ.get("PYTEST_XDIST_WORKER"):
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
        os.environ.setdefault(_var, "1")
    if "numpy" in sys.modules:  # a plugin loaded it first: limit the libraries already loaded
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=1)

import numpy as np  # noqa: E402
import pytest  # noqa: E402

#: ``pytest -m quick``: a representative subset for while you work, one file per layer or concern,
#: about half a minute on an idle machine (CONTRIBUTING.md).  Every test in these files gets the
#: ``quick`` marker; with ``-m quick`` alone the other files are not even imported.
QUICK_FILES = {
    "test_architecture.py",  # the layer rule
    "test_version.py",
    "test_doc_links.py",
    "test_kernels.py",  # kernels
    "test_kernel_diagonal.py",
    "test_fvs.py",  # bases
    "test_greedy.py",
    "test_basis_identity.py",
    "test_solver.py",  # solvers
    "test_loo.py",  # exact LOO against explicit refits
    "test_holdout.py",  # hold-out and k-fold without retraining
    "test_kfold_engine.py",
    "test_evidence.py",  # selection criteria
    "test_nystrom.py",  # another model family
    "test_hostile_model_files.py",  # files
    "test_function_validation.py",  # clear errors
    "test_clear_messages.py",
    "test_attack_arguments.py",
}


def pytest_ignore_collect(collection_path, config):
    if (config.getoption("markexpr", "") == "quick" and collection_path.suffix == ".py"
            and collection_path.name.startswith("test_") and collection_path.name not in QUICK_FILES):
        return True
    return None


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False, help="run slow tests")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.name in QUICK_FILES:
            item.add_marker(pytest.mark.quick)
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def cluster():
    """A two-process Dask ``LocalCluster``, started on first use and shared by every test of this process
    (each opens its own ``Client``): starting one costs several seconds of CPU in its worker processes."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cl:
        yield cl


@pytest.fixture
def rng(request):
    # a fresh, reproducible stream per test
    seed = zlib.crc32(request.node.nodeid.encode())
    return np.random.default_rng(seed)


def rel_err(a, b):
    """Relative error ||a - b|| / ||b||."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    return np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300)
