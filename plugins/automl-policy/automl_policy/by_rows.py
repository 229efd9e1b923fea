"""The ``bagged-by-rows`` policy selector: bag small data, hold out on large data.

With few rows a single holdout decides everything on a few dozen validation rows (issue 44:
a 33 % holdout of 150-200 rows collapsed the default on three small datasets where other
seeds did not), while k-fold cross-validation validates every configuration on every row
and, with bagging, keeps the k fold models as the final model at no refit cost. With many
rows a holdout is already reliable and k-fold costs k fits per trial, k times fewer trials
in the same wall time. This selector draws that line by the training rows: up to
``max_bagged_rows``, ``{cv: folds, bag: true}`` (more folds below ``many_folds_below``
rows); above, ``{holdout: 0.33}``. Its thresholds are parameters, so a recipe or a benchmark
can set them (``{auto: {name: bagged-by-rows, params: {...}}}``). Issue 44's grid measured
them at 60 s (docs/benchmarks.md): for regression these defaults ranked first of 11 systems
(``default-regression`` uses them); for classification 5-fold bagging paid only below 500
training rows (``default-classification`` sets ``max_bagged_rows: 500, many_folds_below: 0``).
"""

from __future__ import annotations

from automl_core.contracts import Policy, PolicySelector, TaskDescription


class BaggedByRows(PolicySelector):
    """Bagged k-fold CV up to ``max_bagged_rows`` training rows, a holdout above."""

    def __init__(
        self,
        max_bagged_rows: int = 5000,
        folds: int = 5,
        many_folds: int = 8,
        many_folds_below: int = 1000,
        holdout: float = 0.33,
    ) -> None:
        for name, value, low in (
            ("max_bagged_rows", max_bagged_rows, 0),
            ("folds", folds, 2),
            ("many_folds", many_folds, 2),
            ("many_folds_below", many_folds_below, 0),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
        if not 0 < holdout < 1:
            raise ValueError(f"holdout must be a fraction in (0, 1), got {holdout!r}")
        self.max_bagged_rows, self.folds = max_bagged_rows, folds
        self.many_folds, self.many_folds_below = many_folds, many_folds_below
        self.holdout = holdout

    def select(self, task: TaskDescription, time_budget: float | None) -> Policy:
        rows = task.n_rows
        info = {"rows": rows, "max_bagged_rows": self.max_bagged_rows}
        if rows > self.max_bagged_rows:
            return Policy("holdout", {"holdout": self.holdout}, False, info)
        folds = self.many_folds if rows < self.many_folds_below else self.folds
        return Policy(f"bagged-cv{folds}", {"cv": folds, "bag": True}, False, info)
