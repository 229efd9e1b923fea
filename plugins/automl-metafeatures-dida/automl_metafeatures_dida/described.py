"""The meta-data source ``dida``: a meta-data's datasets described by Dida's meta-features.

knd compares the task's meta-features with the meta-data's own table, column by column; a
run whose provider is ``dida`` has columns ``dida_0..`` that no downloaded meta-data has. This
source gives a meta-data (one whose datasets the project can load: ``keel-autosklearn``, or
``automl data build``'s) a table of the same provider's meta-features of each of its datasets::

    metafeatures: dida
    warmstart: {name: knd, params: {metadata: dida, metadata_params: {metadata: keel-autosklearn}}}

Describing a dataset loads it and runs the network on ``samples`` patches (under a second a
dataset); the table is cached under ``<cache>/dida/described/`` by a key of the network
file's bytes, the dataset ids and the provider's settings. The table of the shipped network
over ``keel-autosklearn`` ships too (``models/described-<key>.csv``): a run with the defaults
describes nothing before its first trial. Rebuilt by ``automl dida describe keel-autosklearn
--ship``.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd

from automl_core.contracts import MetaData
from automl_core.plugins import Plugins, registry_or_installed
from automl_engine.cache import cache_dir, content_key, write_atomically
from automl_engine.metastore import resolve_metadata
from automl_engine.sources import load_dataset
from automl_metafeatures_dida.provider import DidaMetaFeatures

log = logging.getLogger(__name__)

#: Where the tables of the shipped network ship.
SHIPPED_TABLES = Path(__file__).resolve().parent / "models"


class DidaMetaData:
    """``metadata`` with its meta-feature table replaced by the ``dida`` provider's (built with
    ``weights``, ``samples``, ``seed``) of each of its datasets."""

    def __init__(
        self,
        metadata: str | Path,
        metadata_params: Mapping[str, Any] | None = None,
        weights: str | Path | None = None,
        samples: int = 10,
        seed: int = 0,
        registry: Plugins | None = None,
    ) -> None:
        self.provider = DidaMetaFeatures(weights, samples, seed)
        self.metadata, self.metadata_params = metadata, dict(metadata_params or {})
        self.registry = registry

    def load(self) -> MetaData:
        self.registry = registry_or_installed(self.registry)
        source = resolve_metadata(self.metadata, self.metadata_params, self.registry)
        table = self.table(source.datasets)
        info = {**source.info, "source": f"dida({source.info.get('source', self.metadata)})"}
        return replace(source, metafeatures=table, info=info)

    def table(self, datasets: list[str]) -> pd.DataFrame:
        """The provider's meta-features of each of ``datasets`` (rows by id): the shipped
        table or the cached one when there is one, else computed and cached."""
        key = self.key(datasets)
        for path in (SHIPPED_TABLES / f"described-{key}.csv", described_folder() / f"{key}.csv"):
            if path.exists():
                return pd.read_csv(path, index_col=0)
        table = self.describe(datasets)
        path = described_folder() / f"{key}.csv"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, lambda tmp: table.to_csv(tmp))
        return table

    def key(self, datasets: list[str]) -> str:
        """What the table depends on: the network's bytes, the datasets, the settings."""
        weights = hashlib.sha256(self.provider.path.read_bytes()).hexdigest()
        document = {
            "weights": weights,
            "datasets": list(datasets),
            "samples": self.provider.samples,
            "seed": self.provider.seed,
        }
        return content_key(document)

    def describe(self, datasets: list[str]) -> pd.DataFrame:
        """Each dataset loaded and described; one that cannot be loaded is left out (knd then
        skips it: it has no meta-feature row), with a warning naming it."""
        self.registry = registry_or_installed(self.registry)
        rows = {}
        for name in datasets:
            try:
                dataset = load_dataset(self.registry, name)
            except Exception as error:  # a source's own failure, said and skipped
                log.warning("dida: %s left out of the table: %s", name, error)
                continue
            rows[name] = self.provider.compute(dataset.X, dataset.y, dataset.task)
        return pd.DataFrame.from_dict(rows, orient="index")


def described_folder() -> Path:
    """Where described tables are cached: ``<cache>/dida/described``."""
    return cache_dir() / "dida" / "described"
