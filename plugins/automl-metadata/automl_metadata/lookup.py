"""Table-lookup benchmarks: any :class:`~automl_core.contracts.MetaData` of a finite pool of
pipelines becomes an objective whose evaluation is a look-up.

A candidate is offered on a dataset only where the meta-data has its loss (a not-run cell
is never offered), so a strategy's choices are always answerable at the full budget. For
meta-data with learning curves (``budgets`` and ``curves``), a trial's budget selects the
curve point: the loss at the largest stored budget not above the one asked for.

A benchmark can offer fewer components than its table holds (``include`` / ``exclude``,
``{stage: [component names]}``, the stages of the pool's blocks): DeepPipe's Experiment 4
searches a pool from which one estimator has been dropped. The loss range (and so the
regret) is then that of the candidates offered.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

import numpy as np

from automl_core.contracts import Benchmark, Evaluator, Fidelity, MetaData
from automl_core.errors import AutoMLError
from automl_core.trial import Result, Status, Trial
from automl_spaces.pool_space import PoolSpace

#: The split every table benchmark has: all its datasets.
ALL = "all"


class TableBenchmark(Benchmark):
    """A :class:`Benchmark` over the pool of ``metadata`` (which must have one), offering the
    candidates whose components ``include`` keeps and ``exclude`` does not drop."""

    def __init__(
        self,
        metadata: MetaData,
        name: str | None = None,
        include: Mapping[str, Sequence[str]] | None = None,
        exclude: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        if metadata.pool is None:
            raise AutoMLError(
                f"meta-data {metadata.space!r} has no pool of candidates: a table-lookup "
                "benchmark needs one (MetaData.pool)"
            )
        self.metadata = metadata
        self.name = name or metadata.space
        self.pool: PoolSpace = _restricted(metadata.pool, include, exclude, self.name)
        self.metric = str(metadata.info.get("metric", "loss"))

    def datasets(self, split: str | None = None) -> list[str]:
        """All datasets (``split`` None or ``"all"``), or those of one of the source's splits."""
        if split is None or (split == ALL and ALL not in self.metadata.splits):
            return list(self.metadata.datasets)
        if split not in self.metadata.splits:
            known = ", ".join(self.splits())
            raise AutoMLError(f"benchmark {self.name!r} has no split {split!r}; splits: {known}")
        return list(self.metadata.splits[split])

    def splits(self) -> list[str]:
        """The source's own splits, and ``all``."""
        return sorted({*self.metadata.splits, ALL})

    def space(self, dataset: str) -> PoolSpace:
        """The candidates with a stored loss at the full budget on ``dataset``."""
        return self.pool.restrict(
            available=np.isfinite(self.metadata.performance[self.row(dataset)])
        )

    def evaluator(self, dataset: str, seed: int = 0) -> LookupEvaluator:
        row = self.row(dataset)
        curves = None
        if self.metadata.curves is not None and self.metadata.budgets is not None:
            curves = (self.metadata.budgets, self.metadata.curves[row])
        runtimes = None if self.metadata.runtimes is None else self.metadata.runtimes[row]
        return LookupEvaluator(self.metadata.performance[row], runtimes, curves)

    def loss_range(self, dataset: str) -> tuple[float, float] | None:
        """The best and worst stored loss of the candidates offered on ``dataset``."""
        losses = self.metadata.performance[self.row(dataset)]
        assert self.pool.available is not None
        finite = losses[np.isfinite(losses) & self.pool.available]
        if finite.size == 0:
            return None
        return float(finite.min()), float(finite.max())

    def fidelity(self, dataset: str) -> Fidelity | None:
        if self.metadata.curves is None or self.metadata.budgets is None:
            return None
        measured = np.isfinite(self.metadata.curves[self.row(dataset)]).any(axis=0)
        if not measured.any():
            return None
        budgets = self.metadata.budgets[measured]
        kind = str(self.metadata.info.get("fidelity", "budget"))
        return Fidelity(kind=kind, min=float(budgets.min()), max=float(budgets.max()))

    def row(self, dataset: str) -> int:
        try:
            return self.metadata.row(dataset)
        except KeyError:
            raise AutoMLError(
                f"benchmark {self.name!r} has no dataset {dataset!r} "
                f"({len(self.metadata.datasets)} datasets; `automl data show {self.name}` "
                "lists them)"
            ) from None


def _restricted(
    pool: PoolSpace,
    include: Mapping[str, Sequence[str]] | None,
    exclude: Mapping[str, Sequence[str]] | None,
    name: str,
) -> PoolSpace:
    """``pool`` offering only the components ``include`` / ``exclude`` leave, or a clear error
    naming the benchmark and the stages it has."""
    if not include and not exclude:
        return pool
    stages = {stage.name: stage.names for stage in pool.blocks().stages}
    for option, given in (("include", include), ("exclude", exclude)):
        for stage, names in (given or {}).items():
            if stage not in stages:
                raise AutoMLError(
                    f"benchmark {name!r}: {option} names stage {stage!r}; its stages are "
                    f"{', '.join(stages)}"
                )
            unknown = sorted(set(names) - set(stages[stage]))
            if unknown:
                raise AutoMLError(
                    f"benchmark {name!r}: {option} names {unknown} in stage {stage!r}; its "
                    f"components are {', '.join(stages[stage])}"
                )
    try:
        return pool.restrict(include, exclude)
    except ValueError as error:
        raise AutoMLError(f"benchmark {name!r}: {error}") from None


class LookupEvaluator(Evaluator):
    """Answers a trial on one dataset with the stored loss (and runtime, if stored)."""

    def __init__(
        self,
        losses: np.ndarray,
        runtimes: np.ndarray | None = None,
        curves: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> None:
        self.losses = losses
        self.runtimes = runtimes
        self.curves = curves

    def evaluate(self, trial: Trial) -> Result:
        started = time.perf_counter()
        index = trial.config.get("candidate")
        if not isinstance(index, (int, np.integer)) or not 0 <= index < len(self.losses):
            return Result.failure(Status.CRASHED, f"not a candidate of this pool: {trial.config}")
        loss, budget = self._loss(int(index), trial.budget)
        if not np.isfinite(loss):
            where = "" if trial.budget is None else f" at budget {trial.budget}"
            return Result.failure(Status.CRASHED, f"candidate {index} was not run{where}")
        fit_time = float(self.runtimes[index]) if self.runtimes is not None else 0.0
        info = {} if budget is None else {"budget_used": budget}
        return Result(
            status=Status.OK,
            loss=float(loss),
            fit_time=fit_time if np.isfinite(fit_time) else 0.0,
            duration=time.perf_counter() - started,
            info=info,
        )

    def _loss(self, index: int, budget: float | None) -> tuple[float, float | None]:
        """The loss at ``budget`` (None: the full budget) and the stored budget it came from."""
        if budget is None or self.curves is None:
            return float(self.losses[index]), None
        budgets, curves = self.curves
        measured = np.flatnonzero(np.isfinite(curves[index]) & (budgets <= budget))
        if measured.size == 0:
            return float("nan"), None
        last = measured[-1]
        return float(curves[index, last]), float(budgets[last])
