"""Small data sets shipped with lssvm (motorcycle, Boston housing, Ripley), and a
reader for the IDA benchmarks kept in a data folder."""

from ._loaders import DATASETS, load_boston, load_dataset, load_motorcycle, load_ripley
from .ida import IDA_NAMES, ida_realisations, load_ida

__all__ = ["IDA_NAMES", "ida_realisations", "load_ida", "DATASETS", "load_boston", "load_dataset", "load_motorcycle", "load_ripley"]
