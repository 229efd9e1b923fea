"""What the peers' tests share. The strategies (``automl-smac3``, ``automl-optuna``): the real
oboe benchmark and a cheap version of auto-sklearn's space, both searched through the real run
loop; each package's own ``conftest.py`` names its plugin module in the ``peer_plugin``
fixture. The whole systems (``automl-flaml``, ``automl-tpot``): their plugins (each package's
``conftest.py`` names its distribution in the ``system_distribution`` fixture) and small real
datasets with the categorical columns and missing values an ablation hands them; their checks
are in ``system_checks.py``."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_diabetes, load_wine
from sklearn.model_selection import train_test_split

from automl_core.plugins import Plugins, load_plugins
from automl_spaces.pipeline_space import PipelineSpace

sys.path.insert(0, str(Path(__file__).parent))  # peer_checks, system_checks

#: Two cheap classifiers: every stage of auto-sklearn's space stays, so conditions and
#: forbidden clauses are all there, but each evaluation takes milliseconds.
CHEAP = {"classifier": ["decision_tree", "k_nearest_neighbors"]}


@pytest.fixture(scope="module")
def plugins(peer_plugin: str) -> Plugins:
    """The core's defaults, the installed automl-metadata (the oboe benchmark) and
    automl-sklearn (the auto-sklearn space) through their entry points, and the peer's
    plugin module."""
    pytest.importorskip("automl_metadata", reason="the oboe benchmark needs automl-metadata")
    pytest.importorskip("automl_sklearn", reason="the pipeline space needs automl-sklearn")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AUTOML_LOAD_PLUGINS", "metadata,sklearn")
        loaded = load_plugins(extra=[importlib.import_module(peer_plugin)])
    assert not loaded.broken, loaded.broken
    return loaded


@pytest.fixture(scope="module")
def cheap_include() -> dict[str, list[str]]:
    """The ``include`` parameter of the cheap space, for recipes."""
    return {stage: list(names) for stage, names in CHEAP.items()}


@pytest.fixture(scope="module")
def cheap_space(plugins: Plugins, cheap_include: dict[str, list[str]]) -> PipelineSpace:
    """auto-sklearn's classification space with only the cheap classifiers."""
    return plugins.create("space", "autosklearn-classification", {"include": cheap_include})


@pytest.fixture(scope="module")
def system_plugins(system_distribution: str) -> Plugins:
    """The core's built-ins, automl-bench (whose ``register_systems`` hook the system
    implements) and a whole system's distribution, through their entry points only."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AUTOML_LOAD_PLUGINS", f"bench,{system_distribution}")
        loaded = load_plugins()
    assert not loaded.broken, loaded.broken
    return loaded


def with_categories_and_gaps(X: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """``X`` with a categorical column, an object column with None, and 10 % NaN in the first
    numeric column: what an ablation's ``fit`` is handed."""
    rng = np.random.default_rng(seed)
    X = X.copy()
    X["colour"] = pd.Categorical(rng.choice(["red", "green", "blue"], len(X)))
    X["origin"] = pd.Series(rng.choice(["north", "south", None], len(X)), dtype=object)
    X.loc[rng.random(len(X)) < 0.1, X.columns[0]] = np.nan
    return X


@pytest.fixture(scope="session")
def wine() -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray, np.ndarray]:
    """Wine (178 rows, 3 classes) with categorical columns and NaNs: X_train, X_test,
    y_train, y_test, stratified, seeded."""
    X, y = load_wine(return_X_y=True, as_frame=True)
    X = with_categories_and_gaps(X)
    return tuple(train_test_split(X, y.to_numpy(), test_size=0.3, stratify=y, random_state=0))


@pytest.fixture(scope="session")
def diabetes() -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray, np.ndarray]:
    """Diabetes (442 rows, a float target) with categorical columns and NaNs."""
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    X = with_categories_and_gaps(X)
    return tuple(train_test_split(X, y.to_numpy(), test_size=0.3, random_state=0))
