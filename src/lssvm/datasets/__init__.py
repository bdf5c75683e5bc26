"""Small data sets shipped with lssvm (motorcycle, Boston housing, Ripley)."""

from ._loaders import DATASETS, load_boston, load_dataset, load_motorcycle, load_ripley

__all__ = ["DATASETS", "load_boston", "load_dataset", "load_motorcycle", "load_ripley"]
