"""The warm-starter ``ptem``: the ranker picks the source whose PTEM the surrogate starts from.

Algorithm 1 of the shared-latent-space paper begins: compute the target's meta-features,
pick ``s_best = argmax_s f_rank(x_meta, x_s_meta)``, load that source's pre-trained
embeddings. This warm-starter does the first two; the third is the surrogate's: the
:class:`~automl_core.contracts.WarmStart` it returns carries no configurations (the search's
own initial design comes first, 2 per algorithm in the paper: smbo's
``initial_per_component``) and, as its ``surrogate_state``, the mapping ``{"metadata",
"metadata_params", "source"}`` that the ``latent`` surrogate pre-trains on (cached) — so the
two plugins share a recipe, never an import.

The ranker (:class:`~automl_warmstart_ptem.ranker.SourceRanker`) is trained the first time it
is needed and cached: on ``sources`` datasets of the meta-data (``max_sources`` drawn from
its ``split``, the same draw for every target), labelled by BO runs among them
(:mod:`automl_warmstart_ptem.labels`), less the datasets the task must not learn from (its
own, ``exclude``): a target that is one of the sources is ranked by a ranker that never saw
it, leave-one-out.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from automl_core.contracts import MetaData, TaskDescription, WarmStart, WarmStarter
from automl_core.errors import AutoMLError
from automl_core.plugins import Plugins, registry_or_installed
from automl_core.space import SearchSpace, vector_space
from automl_engine.cache import cache_dir, content_key
from automl_engine.metastore import (
    check_dataset_ids,
    check_metadata_reference,
    left_out_datasets,
    metadata_fingerprint,
    save_metadata,
    task_metafeatures,
)
from automl_engine.run_folder import safe_folder_name
from automl_metadata.lookup import TableBenchmark
from automl_spaces.component_rows import ComponentSelector
from automl_spaces.pool_space import PoolSpace
from automl_warmstart_ptem.labels import LabelRuns, LabelStore, leave_one_out_scores
from automl_warmstart_ptem.ranker import TOP_K, SourceRanker

log = logging.getLogger(__name__)

#: What ships with the package, in the cache's layout: the ranker and the labels of the
#: default sources of keel-autosklearn (README, "Shipped"), so that a run on a user's
#: dataset trains nothing; a ranker leaving one of those sources out is refitted from the
#: shipped labels in a second.
SHIPPED = Path(__file__).resolve().parent / "shipped"

#: How many sources the ranker is trained on (and chooses among) when none are named.
DEFAULT_SOURCES = 12
#: How the source is picked: by the ranker, or at random (the paper's Fig. 7 ablation).
PICKS = ("ranker", "random")


class RankedPTEM(WarmStarter):
    """Picks the source dataset whose PTEM the ``latent`` surrogate starts from.

    ``metadata`` (with ``metadata_params``): the meta-data the PTEMs are pre-trained on, with
    meta-features and either a pool of pipelines or configurations of the run's pipeline
    space (None: in a table-lookup task, the benchmark's own). ``sources``: the candidate
    source datasets, named; else ``max_sources`` drawn with ``seed`` from ``split`` (None:
    the meta-data's ``train`` split when it has one, else every dataset). ``label_*``: how
    the ranker's labels are measured (:class:`~automl_warmstart_ptem.labels.LabelRuns`);
    ``k``: the relevance of a query's best source. ``exclude`` / ``exclude_self``: datasets
    never used as sources (see :func:`~automl_engine.metastore.left_out_datasets`). ``pick:
    random`` draws the source at random instead (seeded by ``seed`` and the target's name; no
    ranker is trained): the paper's ablation of the ranker.
    """

    def __init__(
        self,
        metadata: str | Path | MetaData | None = None,
        metadata_params: Mapping[str, Any] | None = None,
        sources: Sequence[str] | None = None,
        max_sources: int = DEFAULT_SOURCES,
        split: str | None = None,
        label_trials: int = 30,
        label_runs: int = 2,
        label_checkpoints: int = 10,
        label_search: Mapping[str, Any] | None = None,
        k: int = TOP_K,
        exclude: Sequence[str] = (),
        exclude_self: bool = True,
        pick: str = "ranker",
        seed: int = 0,
        registry: Plugins | None = None,
    ) -> None:
        check_metadata_reference(metadata, metadata_params)
        if sources is not None:
            sources = check_dataset_ids("sources", sources)
            if len(set(sources)) < 3:
                raise ValueError(
                    f"sources: got {sources!r}, expected at least 3 datasets (a ranker learns "
                    "from each one's ranking of the others)"
                )
        if not isinstance(max_sources, int) or isinstance(max_sources, bool) or max_sources < 3:
            raise ValueError(f"max_sources: got {max_sources!r}, expected an integer >= 3")
        if pick not in PICKS:
            raise ValueError(f"pick: got {pick!r}, expected one of {', '.join(PICKS)}")
        if not isinstance(exclude_self, bool):
            raise ValueError(f"exclude_self: got {exclude_self!r}, expected true or false")
        self.labels = LabelRuns(
            trials=label_trials,
            runs=label_runs,
            checkpoints=label_checkpoints,
            seed=seed,
            **({"search": dict(label_search)} if label_search is not None else {}),
        )
        if not isinstance(k, int) or k < 1:
            raise ValueError(f"k: got {k!r}, expected a positive integer")
        self.k = k
        self.metadata, self.metadata_params = metadata, dict(metadata_params or {})
        self.sources, self.max_sources, self.split = sources, max_sources, split
        self.exclude = check_dataset_ids("exclude", exclude)
        self.exclude_self, self.pick, self.seed = exclude_self, pick, seed
        #: the registry the label runs are built from: the run's (given by the core when it
        #: builds this warm-starter), else the installed plugins
        self.registry = registry

    def suggest(self, task: TaskDescription, space: SearchSpace, n: int | None) -> WarmStart:
        """No configurations; the surrogate state names the ranker's pick."""
        metadata, name, table, sources, left_out = self._task_sources(task)
        if len(sources) < 3:
            raise AutoMLError(
                f"ptem: {len(sources)} source datasets of {name!r} are left once the "
                f"task's own and the excluded are removed; the ranker needs at least 3"
            )
        if self.pick == "random":
            ranked, came_from = self._drawn(task, sources), "a random draw"
        else:
            described, came_from = task_metafeatures(task, table)
            _check_shared(described, table, came_from, name)
            ranker = self.trained_ranker(metadata, name, table, sources, space)
            ranked = ranker.rank(table, described, sources)
        best = ranked[0][0]
        log.info("ptem: the %s picks source %r of %s", self.pick, best, name)
        return WarmStart(
            configs=[],
            surrogate_state={
                "metadata": metadata if isinstance(self.metadata, MetaData) else name,
                "metadata_params": self.metadata_params,
                "source": best,
            },
            info={
                "starter": "ptem",
                "pick": self.pick,
                "metadata": name,
                "source": best,
                "features_from": came_from,
                "state": f"the PTEM of source {best!r} ({self.pick}'s pick)",
                "ranked": [{"dataset": s, "score": score} for s, score in ranked[:5]],
                "sources": len(sources),
                "excluded": sorted(left_out),
            },
        )

    def _drawn(self, task: TaskDescription, sources: Sequence[str]) -> list[tuple[str, float]]:
        """The sources in a random order, seeded by ``seed`` and the target's name (each
        target its own draw, the same every time), scored 0."""
        name = int.from_bytes(hashlib.sha256(task.dataset.encode()).digest()[:4], "little")
        order = np.random.default_rng([self.seed, name]).permutation(len(sources))
        return [(sources[i], 0.0) for i in order]

    def candidate_sources(self, metadata: MetaData, table: pd.DataFrame) -> list[str]:
        """The named ``sources``, or ``max_sources`` datasets of the split drawn with the
        seed (those with meta-features and losses), sorted; the same for every target."""
        if self.sources is not None:
            unknown = [s for s in self.sources if s not in set(metadata.datasets)]
            if unknown:
                raise AutoMLError(f"ptem: sources {unknown} are not datasets of the meta-data")
            return list(self.sources)
        split = self.split or ("train" if "train" in metadata.splits else None)
        if split is not None and split not in metadata.splits:
            raise AutoMLError(
                f"ptem: split {split!r} is not one of the meta-data's {sorted(metadata.splits)}"
            )
        pool = metadata.splits[split] if split is not None else metadata.datasets
        performed = np.isfinite(np.asarray(metadata.performance, dtype=float)).any(axis=1)
        usable = [d for d in pool if d in table.index and performed[metadata.row(d)]]
        rng = np.random.default_rng(self.seed)
        drawn = rng.permutation(len(usable))[: self.max_sources]
        return sorted(usable[i] for i in drawn)

    def trained_ranker(
        self,
        metadata: MetaData,
        name: str,
        table: pd.DataFrame,
        sources: Sequence[str],
        space: SearchSpace | None = None,
    ) -> SourceRanker:
        """The ranker trained on ``sources`` (from the cache when it was trained before),
        labelled by BO runs among them (measured where the label cache lacks them). The
        runs look losses up in the meta-data's pool; meta-data without one, whose
        configurations are of the run's pipeline ``space`` (oboe-autosklearn's are of
        ``autosklearn-classification``), is given one (:func:`with_pool`)."""
        ranker = SourceRanker(k=self.k, seed=self.seed)
        labelled = metadata if metadata.pool is not None else with_pool(metadata, space, name)
        fingerprint = metadata_fingerprint(labelled)
        folder = self._ranker_folder(fingerprint, name, table, sources, ranker)
        stored = _stored_ranker(folder)
        if stored is not None:
            return SourceRanker.load(stored)
        store = LabelStore(fingerprint, _stem(name), self.labels)
        log.info("ptem: labelling %d sources by BO runs (cached in %s)", len(sources), store.path)
        scores = leave_one_out_scores(
            TableBenchmark(labelled),
            self._recipe_reference(labelled, name, as_told=labelled is metadata),
            sources,
            self.labels,
            store,
            registry_or_installed(self.registry),
        )
        ranker.fit(table, scores).save(folder)
        return ranker

    def training_before_search(self, task: TaskDescription, space: SearchSpace) -> str | None:
        """The ranker's training, when neither the cache nor the package holds it and its
        labels are not all measured: BO runs of minutes to hours, which no wall time bounds.
        (A ranker refitted from labels all measured takes a second: not training.)"""
        if self.pick == "random":
            return None
        metadata, name, table, sources, _ = self._task_sources(task)
        if len(sources) < 3:
            return None  # suggest says so
        labelled = metadata if metadata.pool is not None else with_pool(metadata, space, name)
        fingerprint = metadata_fingerprint(labelled)
        ranker = SourceRanker(k=self.k, seed=self.seed)
        if _stored_ranker(self._ranker_folder(fingerprint, name, table, sources, ranker)):
            return None
        store = LabelStore(fingerprint, _stem(name), self.labels)
        missing = sum(
            store.get(target, source) is None
            for target in sources
            for source in sources
            if source != target
        )
        if not missing:
            return None
        pairs = len(sources) * (len(sources) - 1)
        return (
            f"ptem would first measure {missing} of its ranker's {pairs}"
            f" labels by BO runs ({self.labels.runs} of {self.labels.trials} trials each) on "
            f"{len(sources)} sources of {name!r}, which the wall time does not bound: run the "
            "recipe once without a wall time (e.g. budget: {trials: 1}) to cache them, or use "
            "the settings shipped for keel-autosklearn (max_sources: 6, label_runs: 1, "
            "label_trials: 20; the plugin's README)"
        )

    def _ranker_folder(
        self,
        fingerprint: str,
        name: str,
        table: pd.DataFrame,
        sources: Sequence[str],
        ranker: SourceRanker,
    ) -> Path:
        """Where the ranker of these sources and settings is cached (the package ships some
        under the same folder name)."""
        key = content_key(
            {
                "metadata": fingerprint,
                "sources": sorted(sources),
                "labels": asdict(self.labels),
                "ranker": {"k": ranker.k, **ranker.settings},
                "columns": [str(c) for c in table.columns],
            }
        )
        return cache_dir() / "ptem" / "rankers" / f"{_stem(name)}-{key}"

    def _task_sources(
        self, task: TaskDescription
    ) -> tuple[MetaData, str, pd.DataFrame, list[str], set[str]]:
        """The meta-data, its name, its meta-feature table, the sources the ranker chooses
        among for ``task`` (its own dataset and ``exclude`` removed) and those removed."""
        metadata, name = self._metadata(task)
        table = _metafeature_table(metadata, name)
        left_out = set(left_out_datasets(metadata.datasets, task, self.exclude, self.exclude_self))
        sources = [s for s in self.candidate_sources(metadata, table) if s not in left_out]
        return metadata, name, table, sources, left_out

    def _metadata(self, task: TaskDescription) -> tuple[MetaData, str]:
        """The meta-data, and its name (the reference a recipe names it by; for a MetaData
        object given directly, its source or space)."""
        if isinstance(self.metadata, MetaData):
            return self.metadata, str(self.metadata.info.get("source") or self.metadata.space)
        if self.metadata is None:
            if task.benchmark is None:
                raise AutoMLError(
                    "ptem: name the meta-data the PTEMs are pre-trained on (the `metadata` "
                    "parameter); only a table-lookup task has its own"
                )
            reference: str = task.benchmark
        else:
            reference = str(self.metadata)
        return task.metadata(reference, self.metadata_params or None), reference

    def _recipe_reference(
        self, metadata: MetaData, name: str, as_told: bool
    ) -> tuple[str, dict[str, Any]]:
        """How the label runs' recipes name the meta-data: as this warm-starter was told, or,
        for a MetaData object (given, or given a pool here), the folder it is saved into once
        (a recipe holds no object)."""
        if not isinstance(self.metadata, MetaData) and as_told:
            return name, self.metadata_params
        folder = cache_dir() / "ptem" / "metadata" / metadata_fingerprint(metadata)[:16]
        if not folder.exists():
            save_metadata(metadata, folder)
        return str(folder), {}


def _stem(name: str) -> str:
    """The meta-data's name in cache file names: a folder's own name, not its path."""
    return safe_folder_name(Path(name).name or name)


def _stored_ranker(folder: Path) -> Path | None:
    """The ranker cached in ``folder``, else the one the package ships under its name."""
    for stored in (folder, SHIPPED / "rankers" / folder.name):
        if stored.exists():
            return stored
    return None


def with_pool(metadata: MetaData, space: SearchSpace | None, name: str) -> MetaData:
    """``metadata``, whose configurations are of the pipeline ``space``, as a table lookup:
    its configurations become a pool of the space's encodings, each candidate's stages and
    components those of its pipeline, so that label runs search the configurations it ran.
    (The label runs' PTEMs are pre-trained on the pool's encoding; the run's own PTEM, on the
    space's: the ranker learns which source helps, whatever the encoding.)"""
    typed = vector_space(space)
    pipelines = typed.as_pipeline() if typed is not None else None
    if typed is None or pipelines is None or metadata.space not in ("", typed.name):
        raise AutoMLError(
            f"ptem: meta-data {name!r} has no pool of pipelines to look the ranker's label "
            f"runs up in, and its configurations are not of the run's space (theirs: "
            f"{metadata.space or 'unnamed'!r})"
        )
    rows = typed.encode(metadata.configs)
    stages = typed.blocks().stages
    choices = ComponentSelector(typed, "ptem")(rows)
    pool = PoolSpace(
        typed.name,
        rows,
        stage_names=tuple(stage.name for stage in stages),
        stage_choices=choices,
        descriptions=[
            {stage.name: stage.components[c].name for stage, c in zip(stages, row, strict=True)}
            for row in choices
        ],
    )
    return replace(metadata, configs=pool.candidates(), pool=pool)


def _check_shared(
    described: Mapping[str, float], table: pd.DataFrame, came_from: str, name: str
) -> None:
    """The target must have a finite value in some column of the sources' table: else the
    ranker would score every source alike, from missing values only."""
    shared = [c for c in table.columns if np.isfinite(described.get(str(c), np.nan))]
    if not shared:
        raise AutoMLError(
            f"ptem: the task's meta-features ({came_from}: {', '.join(sorted(described)[:6])}"
            f"{'...' if len(described) > 6 else ''}) share no column with those of "
            f"{name!r} ({', '.join(map(str, table.columns[:6]))}): the ranker cannot compare "
            "them; name a `metafeatures:` provider whose features the meta-data has"
        )


def _metafeature_table(metadata: MetaData, name: str) -> pd.DataFrame:
    if metadata.metafeatures is None or metadata.metafeatures.empty:
        raise AutoMLError(f"ptem: meta-data {name!r} has no meta-features to rank sources by")
    table = metadata.metafeatures
    return table.set_axis(table.index.astype(str), axis=0)
