"""Checks of the components around a search: meta-feature providers, warm-starters,
ensemblers and dataset sources."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from automl_core.contracts import MetaData, TaskDescription, WarmStart
from automl_core.errors import AutoMLError, InvalidConfigurationError
from automl_engine.dataset import Dataset, check_dataset
from automl_engine.metrics import get_metric
from automl_engine.testing.components import Component, NotApplicable, check, describe_kind
from automl_engine.testing.spaces import pool_space


def small_frame(seed: int, rows: int = 60) -> tuple[pd.DataFrame, np.ndarray]:
    """A classification dataset with a numeric, a categorical and a column with missing
    values: what real tabular data looks like, in a few rows."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, rows)
    frame = pd.DataFrame(
        {
            "number": rng.normal(y, 1.0),
            "colour": pd.Categorical(rng.choice(["red", "green", "blue"], rows)),
            "gaps": np.where(rng.random(rows) < 0.2, np.nan, rng.random(rows)),
        }
    )
    return frame, y


# --- meta-feature providers ----------------------------------------------------------------

describe_kind("metafeature_provider", "Meta-feature providers")


@check("metafeature_provider")
def check_metafeatures_are_named_numbers(component: Component) -> None:
    """``compute`` returns a mapping of names to floats (NaN for one that cannot be
    computed), for numeric, categorical and missing values alike; warm-starters compare
    datasets by these."""
    frame, y = small_frame(0)
    features = component.build().compute(frame, y, "classification")
    assert features, "compute() returned no meta-features"
    wrong = {k: v for k, v in features.items() if not isinstance(k, str) or _not_float(v)}
    assert not wrong, f"meta-features that are not str -> float: {wrong}"


@check("metafeature_provider")
def check_metafeatures_have_the_same_names_on_every_dataset(component: Component) -> None:
    """Two datasets of one task but of different shapes (another row count, no column with
    missing values, two classes instead of three) get the same names: a vector that changes
    length cannot be compared across datasets."""
    provider = component.build()
    first = provider.compute(*small_frame(0), "classification")
    other_frame, _ = small_frame(1, rows=90)
    other = provider.compute(other_frame.iloc[:, :2], np.arange(90) % 2, "classification")
    assert set(first) == set(other), f"names differ: {sorted(set(first) ^ set(other))}"


@check("metafeature_provider")
def check_metafeatures_are_deterministic(component: Component) -> None:
    """The same data gives the same meta-features (NaN in the same places)."""
    frame, y = small_frame(3)
    first = component.build().compute(frame, y, "classification")
    again = component.build().compute(frame, y, "classification")
    differ = [k for k in first if not _same(first[k], again.get(k))]
    assert not differ, f"meta-features that changed between two computations: {differ}"


def _not_float(value: object) -> bool:
    return isinstance(value, bool) or not isinstance(value, (float, int, np.floating, np.integer))


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return bool(np.isclose(float(a), float(b))) if b is not None else False  # type: ignore[arg-type]


# --- warm-starters -------------------------------------------------------------------------

describe_kind("warmstarter", "Warm-starters")


def kit_metadata() -> MetaData:
    """Meta-data over the kit's pool: 6 datasets x its candidates, two meta-features, one
    cell not run. Handed to a warm-starter that takes a ``metadata`` parameter."""
    pool = pool_space()
    rng = np.random.default_rng(11)
    datasets = [f"d{i}" for i in range(6)]
    performance = rng.random((6, len(pool.encodings)))
    performance[0, 2] = np.nan
    metafeatures = pd.DataFrame(rng.random((6, 2)), index=datasets, columns=["rows", "classes"])
    return MetaData(
        datasets=datasets,
        configs=[{"candidate": j} for j in range(len(pool.encodings))],
        performance=performance,
        metafeatures=metafeatures,
        space=pool.name,
        pool=pool,
    )


def _warm_started(component: Component, n: int | None) -> WarmStart:
    if not component.accepts("metadata"):
        raise NotApplicable("the warm-starter takes no metadata parameter to check it on")
    task = TaskDescription(
        dataset="kit:new",
        task="classification",
        n_rows=100,
        n_features=4,
        metric="balanced_accuracy",
        metafeatures={"rows": 0.4, "classes": 0.6},
    )
    return component.build(metadata=kit_metadata()).suggest(task, pool_space(), n)


@check("warmstarter")
def check_warmstarter_suggests_valid_configurations(component: Component) -> None:
    """``suggest(task, space, n)`` returns a WarmStart of at most ``n`` configurations, each
    valid in the space (the run loop runs them first); a warm-starter that hands over only a
    pre-trained surrogate state suggests none, but then a state."""
    space = pool_space()
    for n in (3, None):
        suggested = _warm_started(component, n)
        assert isinstance(suggested, WarmStart), f"suggest() returned {type(suggested).__name__}"
        assert suggested.configs or suggested.surrogate_state is not None, (
            f"suggest(n={n}) suggested no configuration and no surrogate state"
        )
        assert n is None or len(suggested.configs) <= n, (
            f"suggest(n={n}) suggested {len(suggested.configs)} configurations"
        )
        for config in suggested.configs:
            try:
                space.validate(config)
            except InvalidConfigurationError as error:
                raise AssertionError(f"suggested an invalid configuration: {error}") from error


@check("warmstarter")
def check_warmstarter_is_deterministic(component: Component) -> None:
    """The same task and meta-data give the same configurations, in the same order."""
    first, again = _warm_started(component, 3), _warm_started(component, 3)
    assert first.configs == again.configs, (
        f"two calls suggested {first.configs}, then {again.configs}"
    )


# --- ensemblers ----------------------------------------------------------------------------

describe_kind("ensembler", "Ensemblers")
#: What the core hands an ensembler as its loss on class probabilities.
LOG_LOSS = get_metric("log_loss", "classification").loss


def _predictions(seed: int) -> tuple[list[np.ndarray], np.ndarray]:
    """Five members' class probabilities for 80 rows of 3 classes: one good, the rest
    noisier."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, 80)
    members = []
    for noise in (0.3, 1.0, 1.5, 2.0, 2.0):
        scores = np.eye(3)[y] + rng.normal(0, noise, (80, 3))
        exp = np.exp(scores - scores.max(axis=1, keepdims=True))
        members.append(exp / exp.sum(axis=1, keepdims=True))
    return members, y


@check("ensembler")
def check_ensembler_weights_are_a_distribution(component: Component) -> None:
    """``fit`` returns one non-negative weight per member, summing to 1."""
    members, y = _predictions(0)
    weights = np.asarray(component.build().fit(members, y, LOG_LOSS), dtype=float)
    assert weights.shape == (len(members),), (
        f"{len(weights)} weights for {len(members)} members: {weights}"
    )
    assert (weights >= 0).all(), f"negative weights: {weights}"
    assert np.isclose(weights.sum(), 1.0), f"weights sum to {weights.sum():.4f}, not 1: {weights}"


@check("ensembler")
def check_ensembler_is_no_worse_than_the_best_member(component: Component) -> None:
    """The blend's loss on the rows it was fitted on is at most the best member's (the
    single best is always one of its choices)."""
    members, y = _predictions(1)
    weights = np.asarray(component.build().fit(members, y, LOG_LOSS), dtype=float)
    blend = sum(w * p for w, p in zip(weights, members, strict=True))
    best = min(LOG_LOSS(y, p) for p in members)
    assert LOG_LOSS(y, blend) <= best + 1e-9, f"blend {LOG_LOSS(y, blend):.4f} > best {best:.4f}"


@check("ensembler")
def check_ensembler_takes_identical_members(component: Component) -> None:
    """Members with the same predictions (the same pipeline found twice) are no error."""
    members, y = _predictions(2)
    weights = np.asarray(component.build().fit([members[0]] * 3, y, LOG_LOSS), dtype=float)
    assert np.isclose(weights.sum(), 1.0), f"weights sum to {weights.sum():.4f}, not 1: {weights}"


# --- dataset sources -----------------------------------------------------------------------

describe_kind("dataset_source", "Dataset sources")


def _example(component: Component) -> str:
    if component.example is None:
        raise NotApplicable("no example reference given (Component(..., example=...))")
    return str(component.example)


@check("dataset_source")
def check_dataset_source_loads_a_valid_dataset(component: Component) -> None:
    """``load(reference, target=None, task=None)``, called as the core calls it, returns a
    :class:`Dataset` that passes ``check_dataset``, named ``source:reference`` (what the run
    folder records)."""
    reference = _example(component)
    loaded = component.factory_object()(reference, target=None, task=None)
    assert isinstance(loaded, Dataset), f"load() returned {type(loaded).__name__}"
    check_dataset(loaded)
    expected = f"{component.name}:{reference}"
    assert loaded.name == expected, f"the dataset is named {loaded.name!r}, expected {expected!r}"


@check("dataset_source")
def check_dataset_source_refuses_an_unknown_reference(component: Component) -> None:
    """A reference it does not know raises a :class:`DatasetError` (an ``AutoMLError``)
    saying so, which the CLI prints without a traceback."""
    try:
        component.factory_object()("no-such-dataset-of-the-conformance-kit", target=None, task=None)
    except AutoMLError:
        return
    except Exception as error:
        raise AssertionError(
            f"an unknown reference raised {type(error).__name__}: {error}; expected a "
            "DatasetError saying which reference is unknown"
        ) from error
    raise AssertionError("loading an unknown reference raised no AutoMLError")


@check("dataset_source")
def check_dataset_source_check_agrees_with_load(component: Component) -> None:
    """A source that offers ``check(reference)`` (a
    :class:`~automl_engine.sources.CheckedSource`, asked by ``automl validate``) finds nothing
    wrong with the example it loads, and says why for a reference it cannot load."""
    check = getattr(component.factory_object(), "check", None)
    if not callable(check):
        raise NotApplicable("the source has no check(reference)")
    found = check(_example(component))
    assert found is None, f"check() found a problem with the example it loads: {found}"
    unknown = check("no-such-dataset-of-the-conformance-kit")
    assert isinstance(unknown, str) and unknown, (
        f"check() of an unknown reference returned {unknown!r}, expected the reason"
    )
