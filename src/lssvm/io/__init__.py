"""Files: reading tables, saving and loading models (no pickle)."""

from .model_io import FORMAT_VERSION, ModelFileError, SavedModel, load_model, save_model
from .tables import infer_task, input_matrix, read_table, split_xy
from .tabular import TabularEncoding, make_tabular_pipeline, make_tabular_preprocessor

__all__ = [
    "FORMAT_VERSION",
    "ModelFileError",
    "SavedModel",
    "TabularEncoding",
    "infer_task",
    "input_matrix",
    "load_model",
    "make_tabular_pipeline",
    "make_tabular_preprocessor",
    "read_table",
    "save_model",
    "split_xy",
]
