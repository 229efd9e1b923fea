"""What each part of the page says, computed from the run's records: plain numbers and
strings, no drawing and no HTML, so that each can be checked on its own."""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from automl_core.space import config_key
from automl_core.trial import Status
from automl_engine.history import StoredTrial, rank_key

#: A configuration key that names a stage's chosen component (``classifier:__choice__``).
CHOICE = "__choice__"
#: Stage names that hold the learning algorithm, as Mosaic's tree search takes them (its
#: root decision); the last choice stage otherwise.
MODEL_STAGES = ("estimator", "classifier", "regressor", "model", "learner")
#: A stage that only routes columns by type: not a choice worth showing.
ROUTING_CHOICES = ("feature_type",)
#: The statuses in the order the page lists them.
STATUS_ORDER = (*(s.value for s in Status), "running")


# -- pipelines ------------------------------------------------------------------------------
def _choices(config: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(stage, component, the prefix of its hyper-parameters) per choice of ``config``: a
    stage is named by the segment before ``__choice__`` (auto-sklearn's nested
    ``data_preprocessor:feature_type:...:rescaling:__choice__`` is the stage ``rescaling``).
    Routing choices are left out. The model's stage comes last, the others in the
    configuration's order: a pipeline space's stage order, which the configuration keeps
    apart from putting the model first."""
    found = []
    for key, value in config.items():
        if not key.endswith(f":{CHOICE}") or value in ROUTING_CHOICES:
            continue
        prefix = key[: -len(CHOICE)]
        stage = prefix.rstrip(":").rsplit(":", 1)[-1]
        found.append((stage, str(value), f"{prefix}{value}:"))
    model = next((c for c in found if c[0] in MODEL_STAGES), None)
    if model is None:
        return found
    return [c for c in found if c is not model] + [model]


def chosen_components(config: Mapping[str, Any]) -> dict[str, str]:
    """The component chosen in each stage, in pipeline order: ``{stage: name}``."""
    return {stage: component for stage, component, _ in _choices(config)}


def hyperparameters(config: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The configuration's values grouped by the chosen component they belong to
    (``stage:component``), the names relative to it; the others (a stage without a choice,
    such as ``balancing:strategy``) under ``""`` with their whole names."""
    prefixes = sorted(
        ((prefix, f"{stage}:{component}") for stage, component, prefix in _choices(config)),
        key=lambda pair: -len(pair[0]),
    )
    groups: dict[str, dict[str, Any]] = defaultdict(dict)
    for key, value in config.items():
        if key.endswith(f":{CHOICE}"):
            continue
        owner = next(((p, label) for p, label in prefixes if key.startswith(p)), None)
        if owner is None:
            groups[""][key] = value
        else:
            groups[owner[1]][key[len(owner[0]) :]] = value
    return dict(groups)


def model_stage(config: Mapping[str, Any]) -> str | None:
    """The stage that holds the learning algorithm, None for a configuration with none
    (a pool's candidate)."""
    stages = list(chosen_components(config))
    for stage in stages:
        if stage in MODEL_STAGES:
            return stage
    return stages[-1] if stages else None


def algorithm(config: Mapping[str, Any]) -> str:
    """The learning algorithm of a configuration (``"-"`` when it names none): the model's
    stage's component, which :func:`_choices` puts last."""
    choices = _choices(config)
    return choices[-1][1] if choices else "-"


def pipeline_text(config: Mapping[str, Any]) -> str:
    """``standardize > pca > random_forest``: the chosen components in pipeline order."""
    chosen = chosen_components(config)
    if chosen:
        return " > ".join(chosen.values())
    return ", ".join(f"{k}={_short(v)}" for k, v in config.items())


def _short(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


# -- the anytime curve ----------------------------------------------------------------------
@dataclass(frozen=True)
class Anytime:
    """Every finished trial in the order it finished: its id, seconds since the search
    started, loss (inf when it failed), status and budget; and the best loss so far after
    each. With budgets (multi-fidelity), the best so far counts only trials at the largest
    budget reached until then, as losses at different budgets are not comparable."""

    trial: list[int]
    seconds: list[float]
    loss: list[float]
    status: list[str]
    budget: list[float | None]
    best: list[float]


def anytime(trials: Sequence[StoredTrial], started_at: float) -> Anytime:
    done = sorted(
        (t for t in trials if t.finished), key=lambda t: (t.finished_at or 0.0, t.trial.id)
    )
    best: list[float] = []
    incumbent, top_budget = math.inf, -math.inf
    for stored in done:
        budget = math.inf if stored.trial.budget is None else stored.trial.budget
        if stored.ranks and budget > top_budget:
            top_budget, incumbent = budget, stored.loss
        elif stored.ranks and budget == top_budget:
            incumbent = min(incumbent, stored.loss)
        best.append(incumbent)
    return Anytime(
        trial=[t.trial.id for t in done],
        seconds=[max(0.0, (t.finished_at or started_at) - started_at) for t in done],
        loss=[t.loss if t.ranks else math.inf for t in done],
        status=[t.status for t in done],
        budget=[t.trial.budget for t in done],
        best=best,
    )


# -- the leaderboard ------------------------------------------------------------------------
@dataclass(frozen=True)
class Entry:
    """A row of the leaderboard."""

    rank: int
    trial: int
    loss: float
    score: float | None
    status: str
    budget: float | None
    duration: float | None
    origin: str
    pipeline: str
    hyperparameters: dict[str, dict[str, Any]]
    weight: float


def leaderboard(
    trials: Sequence[StoredTrial], metric: str, ensemble: Mapping[Any, float], top: int = 20
) -> list[Entry]:
    """The ``top`` finished trials in the run's ranking (:func:`automl_engine.history.rank_key`:
    the largest budget first, then the loss), each with its pipeline, its hyper-parameters
    and its weight in the final model."""
    weights = {int(k): float(v) for k, v in ensemble.items()}
    ranked = sorted((t for t in trials if t.finished), key=rank_key)[:top]
    return [
        Entry(
            rank=rank,
            trial=t.trial.id,
            loss=t.loss,
            score=t.metrics.get(metric),
            status=t.status,
            budget=t.trial.budget,
            duration=t.duration,
            origin=t.trial.origin,
            pipeline=pipeline_text(t.trial.config),
            hyperparameters=hyperparameters(t.trial.config),
            weight=weights.get(t.trial.id, 0.0),
        )
        for rank, t in enumerate(ranked, 1)
    ]


# -- how trials ended -----------------------------------------------------------------------
@dataclass
class ErrorGroup:
    """Trials that ended the same way with the same error (its last line)."""

    status: str
    error: str
    trials: list[int] = field(default_factory=list)
    example: str = ""


def status_counts(trials: Sequence[StoredTrial]) -> dict[str, int]:
    """How many trials ended in each way (``running`` for those in flight), in page order."""
    counts = Counter(t.status for t in trials)
    return {s: counts[s] for s in STATUS_ORDER if counts[s]} | {
        s: n for s, n in counts.items() if s not in STATUS_ORDER
    }


def error_groups(trials: Sequence[StoredTrial]) -> list[ErrorGroup]:
    """The failed trials grouped by status and by their error's last line (the exception
    and its message), the largest group first; each keeps one whole traceback."""
    groups: dict[tuple[str, str], ErrorGroup] = {}
    for stored in trials:
        if stored.status in (Status.OK.value, "running"):
            continue
        text = (stored.error or "").strip()
        last = text.splitlines()[-1] if text else "(no error text recorded)"
        group = groups.setdefault(
            (stored.status, last), ErrorGroup(stored.status, last, example=text)
        )
        group.trials.append(stored.trial.id)
    return sorted(groups.values(), key=lambda g: (-len(g.trials), g.status, g.error))


# -- time per algorithm ---------------------------------------------------------------------
@dataclass(frozen=True)
class AlgorithmTime:
    algorithm: str
    trials: int
    failed: int
    seconds: float
    best: float


def time_per_algorithm(trials: Sequence[StoredTrial]) -> list[AlgorithmTime]:
    """Trials, failures, seconds of evaluation and best loss per learning algorithm, the
    most time first."""
    rows: dict[str, list[StoredTrial]] = defaultdict(list)
    for stored in trials:
        if stored.finished:
            rows[algorithm(stored.trial.config)].append(stored)
    table = [
        AlgorithmTime(
            algorithm=name,
            trials=len(group),
            failed=sum(not t.ranks for t in group),
            seconds=sum(t.duration or 0.0 for t in group),
            best=min((t.loss for t in group if t.ranks), default=math.inf),
        )
        for name, group in rows.items()
    ]
    return sorted(table, key=lambda row: (-row.seconds, row.algorithm))


# -- multi-fidelity: rungs and promotions ---------------------------------------------------
@dataclass(frozen=True)
class Rung:
    budget: float
    trials: int
    promoted_in: int
    promoted_on: int
    best: float
    median: float


def rungs(trials: Sequence[StoredTrial]) -> list[Rung]:
    """Per budget, smallest first: trials evaluated there, how many came by promotion (their
    configuration was evaluated at a smaller budget before), how many went on to a larger
    budget, and the best and median loss there. Empty for a run without budgets."""
    finished = [t for t in trials if t.finished and t.trial.budget is not None]
    budgets_of: dict[str, list[float]] = defaultdict(list)
    for stored in finished:
        budgets_of[config_key(stored.trial.config)].append(float(stored.trial.budget or 0))
    by_budget: dict[float, list[StoredTrial]] = defaultdict(list)
    for stored in finished:
        by_budget[float(stored.trial.budget or 0)].append(stored)
    table = []
    for budget in sorted(by_budget):
        group = by_budget[budget]
        seen = [budgets_of[config_key(t.trial.config)] for t in group]
        losses = [t.loss for t in group if t.ranks]
        table.append(
            Rung(
                budget=budget,
                trials=len(group),
                promoted_in=sum(any(b < budget for b in s) for s in seen),
                promoted_on=sum(any(b > budget for b in s) for s in seen),
                best=min(losses, default=math.inf),
                median=statistics.median(losses) if losses else math.inf,
            )
        )
    return table


def promotion_paths(trials: Sequence[StoredTrial], top: int = 10) -> list[list[StoredTrial]]:
    """The configurations evaluated at the most budgets: each one's trials, smallest budget
    first (what successive halving kept), the longest and best first."""
    chains: dict[str, list[StoredTrial]] = defaultdict(list)
    for stored in trials:
        if stored.finished and stored.trial.budget is not None:
            chains[config_key(stored.trial.config)].append(stored)
    promoted = [sorted(c, key=lambda t: t.trial.budget or 0.0) for c in chains.values()]
    promoted = [c for c in promoted if len(c) > 1]
    return sorted(promoted, key=lambda c: (-len(c), c[-1].loss, c[0].trial.id))[:top]


# -- Mosaic's tree --------------------------------------------------------------------------
@dataclass
class TreeNode:
    """A k-pipeline structure: the components chosen in the first k decision stages. Its
    visits are the finished trials below it, its value the median of their losses (a
    failed trial counting as the worst finite loss), as Mosaic's nodes are valued."""

    path: tuple[str, ...]
    losses: list[float] = field(default_factory=list)
    tree_trials: int = 0
    on_best_path: bool = False

    @property
    def visits(self) -> int:
        return len(self.losses)

    def value(self, worst: float) -> float:
        return statistics.median(worst if not math.isfinite(x) else x for x in self.losses)


def decision_order(config: Mapping[str, Any]) -> list[str]:
    """The stages in Mosaic's decision order: the learning algorithm first, then the other
    choice stages from the model backwards (automl-mcts's default ``order``)."""
    stages = list(chosen_components(config))
    model = model_stage(config)
    if model is None:
        return []
    others = [stage for stage in stages if stage != model]
    return [model, *reversed(others)]


def mcts_tree(trials: Sequence[StoredTrial], max_depth: int | None = None) -> list[TreeNode]:
    """The tree as the trials spell it out, root first, each node followed by its children
    by visits. The run does not store the strategy's tree; every structure that a finished
    trial extends is a node here, which is the tree search's node statistic for each node it
    expanded (a node's losses are those of all evaluated pipelines compatible with it)."""
    finished = [t for t in trials if t.finished]
    if not finished:
        return []
    order = decision_order(finished[0].trial.config)
    depth = len(order) if max_depth is None else min(max_depth, len(order))
    nodes: dict[tuple[str, ...], TreeNode] = {}
    for stored in finished:
        chosen = chosen_components(stored.trial.config)
        structure = tuple(chosen.get(stage, "-") for stage in order)
        from_tree = stored.trial.origin.startswith("mcts")
        for k in range(depth + 1):
            node = nodes.setdefault(structure[:k], TreeNode(structure[:k]))
            node.losses.append(stored.loss if stored.ranks else math.inf)
            node.tree_trials += from_tree
    ranked = sorted((t for t in finished if t.ranks), key=rank_key)
    if ranked:
        chosen = chosen_components(ranked[0].trial.config)
        best = tuple(chosen.get(stage, "-") for stage in order)
        for k in range(depth + 1):
            nodes[best[:k]].on_best_path = True
    return _depth_first(nodes)


def _depth_first(nodes: dict[tuple[str, ...], TreeNode]) -> list[TreeNode]:
    children: dict[tuple[str, ...], list[TreeNode]] = defaultdict(list)
    for path, node in nodes.items():
        if path:
            children[path[:-1]].append(node)
    ordered: list[TreeNode] = []
    stack = [nodes[()]]
    while stack:
        node = stack.pop()
        ordered.append(node)
        below = sorted(children[node.path], key=lambda n: (-n.visits, n.path))
        stack.extend(reversed(below))
    return ordered


def tree_stages(trials: Sequence[StoredTrial]) -> list[str]:
    """The decision stages of the reconstructed tree, in order."""
    finished = [t for t in trials if t.finished]
    return decision_order(finished[0].trial.config) if finished else []
