"""The ``initial-ids`` warm-starter: a meta-dataset's own initial pipelines for a dataset.

DeepPipe's meta-data ships, per split and dataset, the five pipelines every method of the
paper starts from (``info["init_ids"]``: PMF's from its authors' meta-feature procedure,
Tensor-OBOE's from a greedy initialisation). Starting a table-lookup search from them is
the paper's protocol: 5 initial pipelines, then the search's own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from automl_core.contracts import MetaData, SearchSpace, TaskDescription, WarmStart, WarmStarter
from automl_core.errors import AutoMLError
from automl_core.space import vector_space
from automl_engine.metastore import check_metadata_reference


class InitialIds(WarmStarter):
    """The candidates ``metadata.info["init_ids"][split][dataset]`` of the task's dataset
    (on a table-lookup task, the dataset's id in the benchmark), in their stored order.

    An id the meta-data has no score for on that dataset is left out (``info["unscored"]``):
    the table cannot evaluate it (PMF's ids miss a score on 43 of its 445 test pairs), and a
    grid of lookup runs would otherwise warn about it in every run. So is one the space does
    not offer (``info["not_offered"]``): a benchmark that drops a component drops the initial
    pipelines that use it, and the search starts from fewer."""

    def __init__(
        self,
        metadata: str | MetaData | None = None,
        metadata_params: Mapping[str, Any] | None = None,
        split: str | None = None,
    ) -> None:
        check_metadata_reference(metadata, metadata_params)
        self.metadata, self.metadata_params, self.split = metadata, metadata_params, split

    def suggest(self, task: TaskDescription, space: SearchSpace, n: int | None) -> WarmStart:
        reference = self.metadata if self.metadata is not None else task.benchmark
        if reference is None:
            raise AutoMLError(
                "initial-ids: set params.metadata (a table-lookup task names its own benchmark)"
            )
        metadata = (
            reference
            if isinstance(reference, MetaData)
            else task.metadata(reference, dict(self.metadata_params or {}) or None)
        )
        dataset = task.dataset.split(":", 1)[1] if ":" in task.dataset else task.dataset
        ids = self._ids(metadata, dataset, str(reference))
        scored, unscored = _split_by_score(metadata, dataset, ids)
        offered, not_offered = _split_by_offer(space, scored)
        chosen = offered if n is None else offered[:n]
        info = {"metadata": str(reference), "datasets": [dataset], "unscored": unscored}
        return WarmStart(
            configs=[{"candidate": int(i)} for i in chosen],
            info={**info, "not_offered": not_offered} if not_offered else info,
        )

    def _ids(self, metadata: MetaData, dataset: str, label: str) -> list[int]:
        stored = metadata.info.get("init_ids")
        if not isinstance(stored, Mapping):
            raise AutoMLError(f"initial-ids: the meta-data {label} has no init_ids")
        splits = [self.split] if self.split is not None else list(stored)
        for split in splits:
            ids = stored.get(split, {}).get(dataset)
            if ids is not None:
                return [int(i) for i in ids]
        where = f"split {self.split!r}" if self.split is not None else "any split"
        raise AutoMLError(
            f"initial-ids: {label} has no initial pipelines for dataset {dataset!r} in {where}"
        )


def _split_by_score(
    metadata: MetaData, dataset: str, ids: list[int]
) -> tuple[list[int], list[int]]:
    """(the ids scored on ``dataset``, those that are not); all scored when the meta-data has
    no row for it."""
    if dataset not in metadata.datasets:
        return ids, []
    losses = metadata.performance[metadata.row(dataset)]
    has_score = [0 <= i < len(losses) and bool(np.isfinite(losses[i])) for i in ids]
    return (
        [i for i, ok in zip(ids, has_score, strict=True) if ok],
        [i for i, ok in zip(ids, has_score, strict=True) if not ok],
    )


def _split_by_offer(space: SearchSpace, ids: list[int]) -> tuple[list[int], list[int]]:
    """(the ids ``space`` offers, those it does not); all offered when it is not a pool."""
    typed = vector_space(space)
    pool = typed.as_pool() if typed is not None else None
    if pool is None or pool.available is None:
        return ids, []
    offered = [0 <= i < len(pool.available) and bool(pool.available[i]) for i in ids]
    return (
        [i for i, ok in zip(ids, offered, strict=True) if ok],
        [i for i, ok in zip(ids, offered, strict=True) if not ok],
    )
