"""auto-sklearn 1.0's k-nearest-datasets warm start for automl-core (warm-starter ``knd``)."""

from automl_warmstart_knd.knd import (
    KNearestDatasets,
    autosklearn_folder,
    knd_order,
    nearest_datasets,
    task_features,
)

__all__ = [
    "KNearestDatasets",
    "autosklearn_folder",
    "knd_order",
    "nearest_datasets",
    "task_features",
]
