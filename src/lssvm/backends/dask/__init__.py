"""Sparse LS-SVM training, exact LOO / k-fold CV and model selection on Dask
collections, block by block.

Nothing here is imported unless Dask input is given.  The package is split
by concern:

* :mod:`.rows` reads the input: Dask arrays and DataFrames as row blocks
  with aligned targets and groups (:class:`RowData`);
* :mod:`.passes` runs a pass: per-block tasks, a tree reduction, and
  ``dask.compute`` with BLAS limited to one thread and the reporters of
  :func:`report_passes` entered;
* :mod:`.folds` assigns folds (:func:`fold_spec`, giving the shared
  :class:`lssvm.cv.FoldSpec`);
* :mod:`.sparse` is the sparse model's fit / LOO / CV engine
  (:class:`DaskSparseFit`, the Dask implementation of
  :class:`lssvm.cv.SparseEngine`), the engine of every family: Nyström is
  the sparse fit with the rank-k map as its whitening, fixed size the
  sparse fit on its support (:mod:`.families` adds their column and pool
  draws and the fixed-size Gram sums);
* :mod:`.source` gives the shared sparse criterion
  (:class:`lssvm.selection.SparseLSSVMCV`) its rows (:class:`DaskRows`);
* :mod:`.intervals` streams conformal intervals of a Dask fit in passes,
  with exact order statistics from :mod:`.selection`, and gives
  ``predict_std`` / the evidence their one sum over the targets.

The arithmetic of a pass lives in :mod:`lssvm.solvers.row_blocks` and
:mod:`lssvm.cv.row_blocks` (NumPy, one row block at a time); this package
only builds the task graphs: one task per row chunk of the Dask array, a
tree reduction of the per-chunk moments, and ``dask.compute``.  It runs on
whatever scheduler is active: the threaded one by default, a
``dask.distributed`` cluster when a ``Client`` exists.  A task holds its
chunk plus O(``SUB_ROWS`` n + n^2) floats, so memory is bounded by the
chunk size, not by the number of rows.

Passes over the data:

* ``fit``: one (moments of the whitened kernel rows, split by fold when CV
  follows);
* exact LOO: one more (per-row residuals, or just their sums);
* k-fold / grouped CV: the moments pass split by fold, then one pass of
  out-of-fold predictions; with ``basis_in_holdout`` "remove" or "train",
  once per fit, one pass matching the basis points to the rows that hold
  them (their row index, or equal rows: the in-memory rule).

Folds on Dask data (:func:`fold_spec`), computed block by block: an int
``k`` is the in-memory rule (scikit-learn's ``check_cv``): unshuffled
``KFold(k)``, contiguous row ranges, for regressors and unshuffled
``StratifiedKFold(k)`` for classifiers (one pass of per-block class
counts); ``KFold(k)`` and ``StratifiedKFold(k)`` unshuffled likewise;
``GroupKFold(k)`` with ``groups`` assigns whole groups as scikit-learn does
(largest first, each to the lightest fold) and ``LeaveOneGroupOut()``
gives a fold per group.  Any other splitter (shuffled, stratified, ...)
or explicit (train, test) pairs is materialised as one fold label per row
(O(m) memory, the labels or groups it needs are loaded).
"""

from ...basis.random import DEFAULT_N_BASIS
from ...cv import FoldSpec
from .. import is_dask_collection
from .folds import fold_spec
from .passes import report_passes, run_pass, shared, tree_reduce
from .rows import (
    RowData,
    as_input_array,
    as_row_data,
    count_classes,
    decision_blocks,
    frame_to_arrays,
    take_rows,
)
from .source import DaskRows
from .sparse import (
    DaskFolds,
    DaskSparseFit,
    basis_context,
    check_mode,
    draw_basis,
    fit_sparse,
    moments_pass,
    resolve_dask_cv,
    total_moments,
)

__all__ = ["is_dask_collection", "RowData", "as_row_data", "as_input_array", "decision_blocks", "frame_to_arrays",
           "FoldSpec", "fold_spec", "DaskSparseFit", "fit_sparse", "DaskRows", "report_passes", "draw_basis",
           "basis_context", "count_classes", "moments_pass", "total_moments", "run_pass", "tree_reduce", "shared",
           "take_rows", "check_mode", "DEFAULT_N_BASIS", "DaskFolds",
           "resolve_dask_cv"]
