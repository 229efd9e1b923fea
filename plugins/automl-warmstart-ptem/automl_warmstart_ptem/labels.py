"""The ranker's labels: how well BO does on a pseudo-target from each source's PTEM.

Algorithm 2 of the paper: every source dataset τ in turn is a pseudo-target; for every other
source s, BO runs on τ with the latent surrogate starting from s's PTEM, and s is scored by
the incumbent's quality averaged over restarts and over checkpoints of the run ("10
different initializations and every 20 iterations out of T = 200"). The paper does not say
how the S(S − 1) × 10 runs were evaluated; here, as it presumably did, by table lookup: the
runs are ordinary runs of the core's runner on the meta-data's table-lookup benchmark,
searched by the recipe section :attr:`LabelRuns.search` (smbo and the ``latent`` surrogate
named by its registry name, so this plugin never imports it).

A score is the mean normalised regret ((incumbent − best) / (worst − best) on τ) at
``checkpoints`` evenly spaced trials of each of ``runs`` runs; lower is better. Run ``r`` of
every source uses seed ``seed + r``: the sources of a target are compared on the same
initial designs. Scores are cached per (meta-data, settings) and written after every pair,
so an interrupted labelling resumes where it stopped.
"""

from __future__ import annotations

import json
import math
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from automl_core.contracts import Benchmark
from automl_core.plugins import Plugins
from automl_engine.cache import cache_dir, content_key, write_atomically
from automl_engine.history import RunHistory
from automl_engine.metrics import normalised_regret
from automl_engine.recipe import parse_recipe
from automl_engine.run_folder import HISTORY_FILE
from automl_engine.runner import run


def default_search() -> dict[str, Any]:
    """The label runs' search: smbo with 5 random trials first (a small initial design, so
    that most trials are the surrogate's and the PTEM's effect shows), the latent surrogate
    with 50 fitting steps."""
    return {
        "strategy": "smbo",
        "params": {"initial_design": 5},
        "surrogate": {"name": "latent", "params": {"steps": 50}},
    }


@dataclass(frozen=True)
class LabelRuns:
    """How each (pseudo-target, source) pair is scored. The paper's scale is 10 runs of 200
    trials and 10 checkpoints; the defaults are 2 runs of 30 trials (on Tensor-OBOE, 56
    pairs of one such run took 540 s with their 8 PTEMs on two cores: docs/benchmarks.md)."""

    trials: int = 30
    runs: int = 2
    checkpoints: int = 10
    seed: int = 0
    search: Mapping[str, Any] = field(default_factory=default_search)

    def __post_init__(self) -> None:
        for name in ("trials", "runs", "checkpoints"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"label {name}: got {value!r}, expected a positive integer")
        surrogate = dict(self.search).get("surrogate")
        if not isinstance(surrogate, Mapping) or "name" not in surrogate:
            raise ValueError(
                "label search: needs a surrogate mapping ({name: latent, params: {...}}): the "
                "runs hand it each source's meta-data and dataset"
            )


def pair_score(
    benchmark: Benchmark,
    metadata: tuple[str, Mapping[str, Any]],
    target: str,
    source: str,
    settings: LabelRuns,
    plugins: Plugins | None = None,
) -> float:
    """The score of ``source``'s PTEM on the pseudo-target ``target`` (lower is better):
    ``settings.runs`` runs on ``benchmark`` (whose meta-data ``metadata``, a reference and
    its parameters, names for the surrogate)."""
    best_loss, worst_loss = benchmark.loss_range(target) or (0.0, 1.0)
    regrets = []
    for repeat in range(settings.runs):
        recipe = _label_recipe(metadata, target, source, settings, settings.seed + repeat)
        with tempfile.TemporaryDirectory(prefix="ptem-label-") as folder:
            run(recipe, Path(folder) / "run", plugins=plugins, benchmark=benchmark)
            with RunHistory(Path(folder) / "run" / HISTORY_FILE) as history:
                losses = [t.loss for t in sorted(history.trials(), key=lambda t: t.trial.id)]
        incumbent = np.minimum.accumulate(np.where(np.isfinite(losses), losses, worst_loss))
        read = incumbent[checkpoint_trials(len(incumbent), settings)]
        regrets.extend(normalised_regret(read, best_loss, worst_loss))
    return float(np.mean(regrets))


def checkpoint_trials(done: int, settings: LabelRuns) -> list[int]:
    """The positions (0-based) of the trials at which a run's incumbent is read: every
    ``trials / checkpoints`` trials, the last trial included (those a short run reached)."""
    step = settings.trials / settings.checkpoints
    wanted = [math.ceil(step * (i + 1)) - 1 for i in range(settings.checkpoints)]
    return sorted({min(position, done - 1) for position in wanted})


def _label_recipe(
    metadata: tuple[str, Mapping[str, Any]],
    target: str,
    source: str,
    settings: LabelRuns,
    seed: int,
) -> Any:
    reference, params = metadata
    search = json.loads(json.dumps(dict(settings.search)))  # a deep, plain copy
    surrogate = search["surrogate"]
    surrogate["params"] = {
        **surrogate.get("params", {}),
        "metadata": reference,
        "metadata_params": dict(params),
        "source": source,
    }
    return parse_recipe(
        {
            "name": f"ptem-label-{target}-{source}",
            "task": {
                "benchmark": {"name": "table", "params": {"path": reference}},
                "dataset": target,
            },
            "search": search,
            "budget": {"trials": settings.trials},
            "seed": seed,
        }
    )


class LabelStore:
    """The scores measured so far for one meta-data and one :class:`LabelRuns`, in a JSON
    file of the cache: ``{target: {source: score}}``."""

    def __init__(self, fingerprint: str, name: str, settings: LabelRuns) -> None:
        self.fingerprint, self.settings = fingerprint, settings
        key = content_key({"metadata": fingerprint, "settings": asdict(settings)})
        self.path = cache_dir() / "ptem" / "labels" / f"{name}-{key}.json"
        self.scores: dict[str, dict[str, float]] = {}
        # the cache's (it grows as labels are measured), else the package's shipped ones
        shipped = Path(__file__).resolve().parent / "shipped" / "labels" / self.path.name
        for path in (self.path, shipped):
            if path.exists():
                stored = json.loads(path.read_text())
                self.scores = {t: {s: float(v) for s, v in by.items()} for t, by in stored.items()}
                break

    def get(self, target: str, source: str) -> float | None:
        return self.scores.get(target, {}).get(source)

    def put(self, target: str, source: str, score: float) -> None:
        """Store one score, at once (an interrupted labelling keeps what it measured)."""
        self.scores.setdefault(target, {})[source] = score
        text = json.dumps(self.scores, indent=1, sort_keys=True)
        write_atomically(self.path, lambda path: path.write_text(text))


def leave_one_out_scores(
    benchmark: Benchmark,
    metadata: tuple[str, Mapping[str, Any]],
    sources: Sequence[str],
    settings: LabelRuns,
    store: LabelStore,
    plugins: Plugins | None = None,
) -> dict[str, dict[str, float]]:
    """``scores[τ][s]`` for every pseudo-target τ and every other source s of ``sources``,
    measured where ``store`` lacks them."""
    scores: dict[str, dict[str, float]] = {}
    for target in sources:
        for source in sources:
            if source == target:
                continue
            score = store.get(target, source)
            if score is None:
                score = pair_score(benchmark, metadata, target, source, settings, plugins)
                store.put(target, source, score)
            scores.setdefault(target, {})[source] = score
    return scores
