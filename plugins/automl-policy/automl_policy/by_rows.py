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

import attrs

from automl_core.contracts import Policy, PolicySelector, TaskDescription
from automl_spaces.options import integer, number


@attrs.define(slots=False, eq=False)
class BaggedByRows(PolicySelector):
    """Bagged k-fold CV up to ``max_bagged_rows`` training rows, a holdout above."""

    max_bagged_rows: int = attrs.field(default=5000, validator=integer(at_least=0))
    folds: int = attrs.field(default=5, validator=integer(at_least=2))
    many_folds: int = attrs.field(default=8, validator=integer(at_least=2))
    many_folds_below: int = attrs.field(default=1000, validator=integer(at_least=0))
    holdout: float = attrs.field(default=0.33, validator=number(above=0, below=1))
    #: bag above ``max_bagged_rows`` too when the holdout would validate on fewer rows of
    #: the rarest class than this (0: rows alone decide). With 3 % of a class in 1,200
    #: training rows, a 33 % holdout scores balanced accuracy on about 13 of its rows, and
    #: thousands of trials then pick a configuration that was lucky on them.
    min_holdout_class_rows: int = attrs.field(default=0, validator=integer(at_least=0))

    def select(self, task: TaskDescription, time_budget: float | None) -> Policy:
        rows = task.n_rows
        info: dict[str, object] = {"rows": rows, "max_bagged_rows": self.max_bagged_rows}
        if rows > self.max_bagged_rows and not self._rare_class_in_holdout(task, info):
            return Policy("holdout", {"holdout": self.holdout}, False, info)
        folds = self.many_folds if rows < self.many_folds_below else self.folds
        return Policy(f"bagged-cv{folds}", {"cv": folds, "bag": True}, False, info)

    def _rare_class_in_holdout(self, task: TaskDescription, info: dict[str, object]) -> bool:
        """Whether the holdout would hold fewer than ``min_holdout_class_rows`` rows of the
        rarest class (said in ``info``)."""
        if not self.min_holdout_class_rows or task.smallest_class_rows is None:
            return False
        expected = task.smallest_class_rows * self.holdout
        info["holdout_rarest_class_rows"] = round(expected, 1)
        return expected < self.min_holdout_class_rows
