"""Fitting Metabu on a meta-data (the thesis's Algorithm 5), and the cache of fitted maps.

From a ``MetaData`` with a performance matrix and a meta-feature table:

1. the basic representation: the table's columns that are numbers somewhere and not constant;
   a missing value is imputed by the column's median over the training datasets (the
   medians are kept, so a new dataset's missing meta-feature is imputed the same way);
2. the target: each dataset's top configurations (``top``, 20) encoded as points
   (:mod:`automl_metafeatures_metabu.encoding`); their optimal-transport distances; the
   intrinsic dimension of those (TwoNN) unless ``dimension`` is given; MDS to it, standardised;
3. ψ, linear, trained by the Fused Gromov-Wasserstein objective, stopped early on NDCG@10 of
   a seeded ``validation_share`` of the datasets (their ψ-distances to the others against
   their target distances).

The thesis draws 1,000 bootstrap resamples of each dataset and recomputes their hand-crafted
meta-features; a meta-data table holds one row per dataset, so here each dataset is one point
(``replicates`` lets a caller who has the raw data pass more).

A fitted map is cached under ``<cache>/metabu/`` by a key of (the meta-data's fingerprint,
the datasets left out, the settings): fitting again with the same settings loads it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from automl_core.contracts import MetaData
from automl_engine.cache import cache_dir, content_key, load_arrays, save_arrays
from automl_engine.metastore import metadata_fingerprint
from automl_metafeatures_metabu.encoding import configuration_matrix
from automl_metafeatures_metabu.learn import (
    FGWSettings,
    MetabuMap,
    fit_map,
    intrinsic_dimension,
    ndcg_at_k,
    pairwise_distances,
    target_distances,
    target_embedding,
    top_configurations,
)

#: Bumped when fitting changes in a way that makes cached maps wrong.
FORMAT = 1
#: The share of the training datasets whose NDCG@10 stops the training early.
VALIDATION_SHARE = 0.2


@dataclass(frozen=True)
class MetabuSettings:
    """What a fit depends on besides the meta-data (the thesis's defaults)."""

    top: int = 20
    #: the output dimension; None: TwoNN's intrinsic dimension of the target distances
    dimension: int | None = None
    validation_share: float = VALIDATION_SHARE
    fgw: FGWSettings = field(default_factory=FGWSettings)


@dataclass
class FittedMetabu:
    """A fitted map and what it reads: the basic meta-features by name, their imputation."""

    map: MetabuMap
    columns: list[str]
    medians: np.ndarray
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def dimension(self) -> int:
        return int(self.map.weights.shape[0])

    def names(self) -> list[str]:
        return [f"metabu_{i}" for i in range(self.dimension)]

    def transform(self, table: pd.DataFrame) -> pd.DataFrame:
        """Each row's Metabu meta-features from its basic ones (named like the fit's; a
        missing value is imputed by the training median; a missing column is an error)."""
        absent = [c for c in self.columns if c not in table.columns]
        if absent:
            raise ValueError(
                f"metabu: the basic meta-features lack {absent[:5]}"
                f"{' ...' if len(absent) > 5 else ''} ({len(absent)} of the {len(self.columns)} "
                "the map was fitted on): compute them with the same provider as the meta-data's"
            )
        basic = table[self.columns].apply(pd.to_numeric, errors="coerce").to_numpy(float)
        basic = np.where(np.isfinite(basic), basic, self.medians)
        return pd.DataFrame(self.map.transform(basic), index=table.index, columns=self.names())

    def importances(self) -> pd.Series:
        """|ψ| per basic meta-feature (see :meth:`MetabuMap.importances`), largest first."""
        values = self.map.importances()
        return pd.Series(values, index=self.columns).sort_values(ascending=False)

    def save(self, path: Path) -> None:
        header = {"columns": self.columns, "info": self.info, "format": FORMAT}
        save_arrays(path, header, {**self.map.to_arrays(), "medians": self.medians})

    @classmethod
    def load(cls, path: Path) -> FittedMetabu:
        header, arrays = load_arrays(path)
        medians = arrays.pop("medians")
        return cls(MetabuMap.from_arrays(arrays), list(header["columns"]), medians, header["info"])


def fit_metabu(
    metadata: MetaData,
    settings: MetabuSettings | None = None,
    exclude: Sequence[str] = (),
    replicates: Mapping[str, np.ndarray] | None = None,
) -> FittedMetabu:
    """Metabu fitted on ``metadata`` without the datasets ``exclude`` names, from the cache
    when it was fitted before with the same settings."""
    settings = settings or MetabuSettings()
    key = content_key(
        {
            "format": FORMAT,
            "metadata": metadata_fingerprint(metadata),
            # the fingerprint covers the losses and configurations, not the meta-features
            "metafeatures": _table_fingerprint(metadata.metafeatures),
            "exclude": sorted(str(d) for d in exclude),
            "settings": asdict(settings),
            "replicates": replicates is not None,
        }
    )
    path = cache_folder() / f"{key}.npz"
    if path.exists() and replicates is None:
        return FittedMetabu.load(path)
    fitted = _fit(metadata, settings, set(map(str, exclude)), replicates or {})
    fitted.info["key"] = key
    if replicates is None:
        fitted.save(path)
    return fitted


def _table_fingerprint(table: pd.DataFrame | None) -> str | None:
    if table is None:
        return None
    hashed = pd.util.hash_pandas_object(table, index=True).to_numpy()
    columns = [str(c) for c in table.columns]
    return hashlib.sha256(hashed.tobytes() + repr(columns).encode()).hexdigest()[:16]


def cache_folder() -> Path:
    return cache_dir() / "metabu"


def _fit(
    metadata: MetaData,
    settings: MetabuSettings,
    exclude: set[str],
    replicates: Mapping[str, np.ndarray],
) -> FittedMetabu:
    datasets, table = training_datasets(metadata, exclude)
    columns = basic_columns(table)
    basic = table[columns].to_numpy(float)
    medians = np.nanmedian(basic, axis=0)
    basic = np.where(np.isfinite(basic), basic, medians)
    encodings = configuration_matrix(metadata)
    rows = [metadata.row(d) for d in datasets]
    targets = top_configurations(metadata.performance[rows], encodings, settings.top)
    distances = target_distances(targets)
    # TwoNN can exceed what n points embed (twin datasets make its ratios explode)
    dimension = min(settings.dimension or intrinsic_dimension(distances), len(datasets) - 1)
    embedding = target_embedding(distances, dimension, settings.fgw.seed)
    validation = _validation_rows(len(datasets), settings.validation_share, settings.fgw.seed)
    fitted_rows = [i for i in range(len(datasets)) if i not in set(validation)]
    points = [
        np.atleast_2d(replicates[datasets[i]]) if datasets[i] in replicates else basic[i : i + 1]
        for i in fitted_rows
    ]
    psi, history = fit_map(
        points,
        embedding[fitted_rows],
        settings.fgw,
        validation_basic=basic[validation] if validation else None,
        validation_target_distances=distances[np.ix_(validation, fitted_rows)]
        if validation
        else None,
    )
    mapped = psi.transform(basic)
    info = {
        "datasets": datasets,
        "validation": [datasets[i] for i in validation],
        "dimension": dimension,
        "top": settings.top,
        "epochs": len(history),
        "ndcg10_all": ndcg_at_k(pairwise_distances(mapped), distances, 10),
        "ndcg10_basic": ndcg_at_k(pairwise_distances(_standardised(basic)), distances, 10),
        "source": str(metadata.info.get("source") or metadata.space or "meta-data"),
    }
    return FittedMetabu(psi, columns, medians, info)


def training_datasets(metadata: MetaData, exclude: set[str]) -> tuple[list[str], pd.DataFrame]:
    """The datasets with meta-features and at least one observed loss, minus ``exclude``
    (compared case-insensitively), and their meta-feature rows."""
    if metadata.metafeatures is None or metadata.metafeatures.empty:
        raise ValueError("metabu: the meta-data has no meta-features (its basic representation)")
    table = metadata.metafeatures.set_axis(metadata.metafeatures.index.astype(str), axis=0)
    left_out = {d.lower() for d in exclude}
    observed = np.isfinite(metadata.performance).any(axis=1)
    datasets = [
        d
        for i, d in enumerate(metadata.datasets)
        if observed[i] and str(d) in table.index and str(d).lower() not in left_out
    ]
    if len(datasets) < 5:
        raise ValueError(
            f"metabu: {len(datasets)} datasets have both meta-features and losses; at least 5 "
            "are needed to learn a topology"
        )
    numeric = table.loc[[str(d) for d in datasets]].apply(pd.to_numeric, errors="coerce")
    return datasets, numeric


def basic_columns(table: pd.DataFrame) -> list[str]:
    """The meta-features that are a number for some dataset and vary between datasets."""
    values = table.to_numpy(float)
    finite = np.isfinite(values)
    keep = []
    for j, name in enumerate(table.columns):
        column = values[finite[:, j], j]
        if len(column) and np.ptp(column) > 0:
            keep.append(str(name))
    if not keep:
        raise ValueError("metabu: no meta-feature varies between the meta-data's datasets")
    return keep


def _validation_rows(count: int, share: float, seed: int) -> list[int]:
    held = round(share * count)
    if held < 2 or count - held < 3:
        return []
    return sorted(int(i) for i in np.random.default_rng(seed).permutation(count)[:held])


def _standardised(matrix: np.ndarray) -> np.ndarray:
    spread = matrix.std(axis=0)
    return (matrix - matrix.mean(axis=0)) / np.where(spread > 0, spread, 1.0)
