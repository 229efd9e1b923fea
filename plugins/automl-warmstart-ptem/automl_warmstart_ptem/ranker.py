"""The PTEM ranker: LambdaMART over meta-feature differences (Sec. 3.3, Algorithm 2).

A query is a (pseudo-)target dataset τ; its items are the source datasets s, each described
by the element-wise ``|x_τ − x_s|`` of the datasets' meta-features. The relevance of s for τ
comes from how well BO did on τ starting from s's PTEM (:mod:`automl_warmstart_ptem.labels`):
the best source of a query gets ``k``, the next ``k − 1``, ..., beyond the ``k``-th 0, and a
relevance ``r`` gains ``r²`` in NDCG, the paper's ``rel_r = (k − r + 1)²``. The paper leaves
``k``, the conversion of scores to labels and LightGBM's parameters open: ``k`` is 10 here
(the paper's 10 checkpoints and 10 restarts suggest the scale; a pick only needs the top),
and the trees are small (15 leaves, 5 rows a leaf) because a query has tens of items, not
thousands.

A trained ranker is saved as LightGBM's own text model plus a JSON header: loading one runs
no code.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import lightgbm as lgb
import numpy as np
import pandas as pd

from automl_engine.metastore import metafeature_value

#: Relevance of a query's best source (and how many sources get a relevance above 0).
TOP_K = 10
MODEL_FILE = "ranker.txt"
HEADER_FILE = "ranker.json"


def pair_features(
    table: pd.DataFrame, target: Mapping[str, float], sources: Sequence[str]
) -> np.ndarray:
    """One row per source: ``|x_target − x_source|`` over the table's columns (NaN where
    either side is missing: LightGBM sends missing values down a learned branch)."""
    values = table.loc[list(sources)].apply(pd.to_numeric, errors="coerce")
    row = np.array([metafeature_value(target.get(str(c), np.nan)) for c in table.columns])
    return np.abs(values.to_numpy(dtype=float) - row[None, :])


def relevance(scores: Mapping[str, float], k: int = TOP_K) -> dict[str, int]:
    """Integer relevance of each source from its score (lower is better: a mean regret):
    ``k`` for the best, one less for each next, 0 beyond the ``k``-th. Ties share the better
    relevance; a source without a finite score gets 0."""
    finite = sorted(v for v in scores.values() if np.isfinite(v))
    labels = {}
    for source, score in scores.items():
        if not np.isfinite(score):
            labels[source] = 0
            continue
        position = finite.index(score)  # the first of equal scores: ties share it
        labels[source] = max(0, k - position)
    return labels


class SourceRanker:
    """Ranks source datasets for a target by their meta-features (LightGBM's LGBMRanker)."""

    def __init__(
        self,
        k: int = TOP_K,
        n_estimators: int = 100,
        learning_rate: float = 0.05,
        num_leaves: int = 15,
        min_child_samples: int = 5,
        seed: int = 0,
    ) -> None:
        if not isinstance(k, int) or k < 1:
            raise ValueError(f"k: got {k!r}, expected a positive integer")
        self.k = k
        #: the constructor's other arguments: what a cache keys a trained ranker by
        self.settings: dict[str, Any] = {
            "n_estimators": n_estimators,
            "learning_rate": learning_rate,
            "num_leaves": num_leaves,
            "min_child_samples": min_child_samples,
            "seed": seed,
        }
        self.columns: list[str] = []
        self._booster: lgb.Booster | None = None

    def fit(self, table: pd.DataFrame, scores: Mapping[str, Mapping[str, float]]) -> SourceRanker:
        """Learn from ``scores[target][source]`` (lower is better) for the targets and
        sources that are rows of ``table`` (the meta-features, one row per dataset)."""
        self.columns = [str(c) for c in table.columns]
        table = table.set_axis(self.columns, axis=1)
        rows, labels, groups = [], [], []
        for target, by_source in scores.items():
            sources = [s for s in by_source if s != target and s in table.index]
            if len(sources) < 2 or target not in table.index:
                continue
            described = {c: metafeature_value(v) for c, v in table.loc[target].items()}
            rows.append(pair_features(table, described, sources))
            ranked = relevance({s: by_source[s] for s in sources}, self.k)
            labels.extend(ranked[s] for s in sources)
            groups.append(len(sources))
        if not groups:
            raise ValueError(
                "the ranker needs at least one target with two scored sources, all rows of "
                "the meta-feature table"
            )
        settings = {k: v for k, v in self.settings.items() if k != "seed"}
        model = lgb.LGBMRanker(
            objective="lambdarank",
            label_gain=[float(r**2) for r in range(self.k + 1)],
            random_state=self.settings["seed"],
            verbose=-1,
            n_jobs=1,
            **settings,
        )
        model.fit(np.vstack(rows), np.asarray(labels), group=groups)
        self._booster = model.booster_
        return self

    def scores(
        self, table: pd.DataFrame, target: Mapping[str, float], sources: Sequence[str]
    ) -> np.ndarray:
        """The ranker's score of each source for a target described by ``target`` (higher
        is better). ``table`` must have the columns the ranker was trained on."""
        if self._booster is None:
            raise RuntimeError("the ranker is not trained (fit or load it first)")
        missing = [c for c in self.columns if c not in table.columns.astype(str)]
        if missing:
            raise ValueError(f"the meta-feature table lacks the ranker's columns {missing}")
        table = table.set_axis([str(c) for c in table.columns], axis=1)[self.columns]
        return np.asarray(self._booster.predict(pair_features(table, target, sources)))

    def rank(
        self, table: pd.DataFrame, target: Mapping[str, float], sources: Sequence[str]
    ) -> list[tuple[str, float]]:
        """``(source, score)`` best first; ties keep the order of ``sources``."""
        scored = self.scores(table, target, sources)
        order = np.argsort(-scored, kind="stable")
        return [(sources[i], float(scored[i])) for i in order]

    def save(self, folder: Path) -> None:
        if self._booster is None:
            raise RuntimeError("the ranker is not trained: nothing to save")
        folder.mkdir(parents=True, exist_ok=True)
        self._booster.save_model(str(folder / MODEL_FILE))
        header = {"k": self.k, "settings": self.settings, "columns": self.columns}
        (folder / HEADER_FILE).write_text(json.dumps(header, indent=1))

    @classmethod
    def load(cls, folder: Path) -> SourceRanker:
        header = json.loads((folder / HEADER_FILE).read_text())
        ranker = cls(k=int(header["k"]), **header["settings"])
        ranker.columns = [str(c) for c in header["columns"]]
        ranker._booster = lgb.Booster(model_file=str(folder / MODEL_FILE))
        return ranker
