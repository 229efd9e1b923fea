"""Recipes: a whole search described in YAML, validated into typed objects.

Validation happens in two steps. :func:`parse_recipe` checks the shape (keys, types, ranges)
without looking at plugins; :func:`check_names` then resolves every component name against
the loaded plugins and checks the ``params`` each one is given. Every error is a
:class:`~automl_core.errors.RecipeError` that names the dotted path, the value and what was
expected; unknown keys and names come with the closest valid ones.
"""

from __future__ import annotations

import copy
import difflib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from automl_core.contracts import (
    AUTO_POLICY_SELECTOR,
    DATA_FIDELITY_KINDS,
    DEFAULT_DATA_FIDELITY,
    Fidelity,
)
from automl_core.documents import MAX_NODES, expanded_size, read_recipe_file, read_yaml_text
from automl_core.errors import DatasetError, PluginError, RecipeError, UnknownComponentError
from automl_core.plugins import Plugins, Registration
from automl_engine.evaluator import Resampling
from automl_engine.metrics import metric_names
from automl_engine.sources import parse_reference

TASK_TYPES = ("classification", "regression")
#: The dataset source of data held in memory (``task.dataset: memory:<name>``): the data is
#: handed to :func:`automl_engine.runner.run` (``dataset=``) by the caller, e.g.
#: ``AutoMLClassifier.fit``; the registered source of that name only says so.
MEMORY_SOURCE = "memory"


#: The longest time a budget may give, in seconds (~31.7 years): every clock a run uses
#: represents it (a thread's wait takes at most ``threading.TIMEOUT_MAX``, ~292 years on
#: 64-bit Linux; ``1.0e+12`` overflowed it), and no run needs more. Checked by a test.
MAX_SECONDS = 1e9
#: The largest count (trials, warm-start configurations): a signed 32-bit integer.
MAX_COUNT = 2**31 - 1
#: The largest memory limit, in MB (1 EB): what ``setrlimit`` takes in bytes fits in 63 bits.
MAX_MEMORY_MB = 2**40


@dataclass(frozen=True)
class ComponentRef:
    """A registered component by name, with the keyword arguments for its factory."""

    name: str
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TaskSpec:
    """What to search on: a dataset (``keel:german``), or a benchmark and one of its datasets
    (``{benchmark: pmf, dataset: "1049"}``), or a benchmark and a named split of its datasets
    (``{benchmark: pmf, suite: test}``: one run per dataset)."""

    dataset: str | None
    target: str | None = None
    type: str | None = None
    metric: str | None = None
    resampling: Resampling = field(default_factory=Resampling)
    test_size: float | None = None
    #: The seed of the test split; ``None`` uses the recipe's ``seed``. Fixing it gives every
    #: seed of an ablation (and every system) the same training and test rows.
    split_seed: int | None = None
    #: Search (and fit the final model) on at most this many of the training rows, a
    #: stratified sample drawn with the split's seed: a bound on the cost of every trial
    #: on large data. ``None``: all of them.
    max_rows: int | None = None
    benchmark: ComponentRef | None = None
    suite: str | None = None
    #: ``resampling: auto``: the policy selector that chooses the resampling (and whether
    #: to race candidates by successive halving) once the data's size is known.
    policy: ComponentRef | None = None


@dataclass(frozen=True)
class FidelitySpec:
    """``search.fidelity``: how a multi-fidelity budget is spent and its range.

    On a data task ``kind`` is ``iterations`` or ``subsample`` and ``min``/``max`` are
    fractions of full fidelity; on a benchmark task the benchmark fixes the kind and
    ``min``/``max`` (in its units, e.g. training rows) narrow its range.
    """

    kind: str | None = None
    min: float | None = None
    max: float | None = None


@dataclass(frozen=True)
class SearchSpec:
    strategy: ComponentRef
    surrogate: ComponentRef | None = None
    fidelity: FidelitySpec = FidelitySpec()


@dataclass(frozen=True)
class WarmStartSpec:
    starter: ComponentRef
    #: How many configurations to ask for; None lets the warm-starter decide (its own
    #: default: 25 nearest-dataset configurations, a whole portfolio...).
    configs: int | None = None
    #: ``optional: true``: when the warm-starter cannot serve (its meta-data cannot be
    #: fetched offline, its space does not fit), the search starts cold and the history says
    #: why, instead of the run failing. The default recipes set it: an estimator's first fit
    #: on a machine without a network still works.
    optional: bool = False


@dataclass(frozen=True)
class BudgetSpec:
    wall_time: float | None = None
    trials: int | None = None
    trial_time: float | None = None
    trial_memory_mb: int | None = None


@dataclass(frozen=True)
class Recipe:
    name: str
    task: TaskSpec
    #: None for a benchmark task: the benchmark's pool is the space.
    space: ComponentRef | None
    search: SearchSpec
    budget: BudgetSpec
    executor: ComponentRef = ComponentRef("sequential")
    metafeatures: ComponentRef | None = None
    warmstart: WarmStartSpec | None = None
    ensemble: ComponentRef | None = None
    seed: int = 0
    raw: dict[str, Any] = field(default_factory=dict, compare=False)


# ---------------------------------------------------------------------------------------------
# Reading and overriding
# ---------------------------------------------------------------------------------------------


def apply_overrides(data: Mapping[str, Any], overrides: Sequence[str]) -> dict[str, Any]:
    """A copy of ``data`` with ``path=value`` overrides applied (values read as YAML, with
    a recipe file's bounds). ``PATH=null`` (or ``PATH=``) removes the key, so that its
    default applies again. A section's older word for its component's name is read as
    ``name`` on both sides (:func:`with_one_name_key`): ``--set search.strategy=mcts`` sets
    the name of a ``search: {name: smbo}`` section."""
    result = with_one_name_key(copy.deepcopy(dict(data)))
    for override in overrides:
        path, sep, text = override.partition("=")
        if not sep or not path.strip():
            raise RecipeError("--set", override, "PATH=VALUE, e.g. search.params.c_ucb=1.3")
        value = read_yaml_text(text, f"--set {path.strip()}") if text.strip() else None
        keys = path.strip().split(".")
        if len(keys) == 2 and OLDER_NAME_KEYS.get(keys[0]) == keys[1]:
            keys[1] = "name"
        node = result
        for depth, key in enumerate(keys[:-1]):
            child = node.get(key)
            if child is None or isinstance(child, str):  # "strategy: random" -> mapping
                child = {} if child is None else _expand_shorthand(keys[: depth + 1], child)
                node[key] = child
            if not isinstance(child, dict):
                raise RecipeError(".".join(keys[: depth + 1]), child, "a mapping to set keys in")
            node = child
        if value is None:
            node.pop(keys[-1], None)
        else:
            node[keys[-1]] = value
    result = with_one_name_key(result)  # a section set whole, in the older words
    nodes = expanded_size(result)
    if nodes > MAX_NODES:
        raise RecipeError(
            "--set", f"{nodes:,}+ values in the recipe", f"at most {MAX_NODES:,} values"
        )
    return result


def with_one_name_key(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` with each section's older word for its component's name (``search:
    {strategy: x}``, :data:`OLDER_NAME_KEYS`) written as ``name``, as overrides and
    comparisons of recipes see it; a section that has both is left for the parser to
    refuse."""
    result = dict(data)
    for section, older in OLDER_NAME_KEYS.items():
        value = result.get(section)
        if isinstance(value, Mapping) and older in value and "name" not in value:
            renamed = {("name" if key == older else key): item for key, item in value.items()}
            result[section] = renamed
    return result


def _expand_shorthand(path: list[str], value: str) -> dict[str, Any]:
    """``space: x`` -> ``{name: x}`` (``search: x`` too), so ``--set space.params.y=1``
    works on a recipe written with the shorthand."""
    return {"name": value}


def load_recipe(
    reference: str | Path, overrides: Sequence[str] = (), plugins: Plugins | None = None
) -> Recipe:
    """The recipe in the file ``reference`` or, with ``plugins``, the named recipe of that
    name when no such file exists, with ``overrides`` applied."""
    return parse_recipe(apply_overrides(read_recipe(reference, plugins), overrides))


def read_recipe(reference: str | Path, plugins: Plugins | None = None) -> dict[str, Any]:
    """A recipe's mapping from a file, else (given ``plugins``) from a registered name.

    A file wins over a name, so a recipe file is never shadowed by a plugin. When neither
    exists the error says both were looked for and lists the registered names."""
    path = Path(reference)
    if path.is_file() or path.is_dir() or plugins is None:
        return read_recipe_file(path)
    name = str(reference)
    if name in plugins.registry.names("recipe"):
        return named_recipe(name, plugins)
    raise RecipeError(
        name,
        name,
        "an existing recipe file or a registered recipe name",
        f"No such file (looked from {str(Path.cwd())!r}) and no such recipe; "
        f"registered recipes: {', '.join(plugins.registry.names('recipe')) or NO_RECIPES}",
    )


#: What a list of registered recipes says when it is empty.
NO_RECIPES = (
    "(none: the default recipes come with the `automl` distribution; in this repository: "
    "make install, or pip install -e plugins/automl)"
)


def named_recipe(name: str, plugins: Plugins, path: str = "recipe") -> dict[str, Any]:
    """A copy of the mapping registered as recipe ``name``; ``path`` is where the name was
    given, for the error that lists the registered names."""
    try:
        registration = plugins.get("recipe", name)
    except UnknownComponentError as error:
        hint = f"Did you mean {', '.join(map(repr, error.close))}? " if error.close else ""
        hint += f"Registered recipes: {', '.join(error.known) if error.known else NO_RECIPES}"
        raise RecipeError(path, name, "a registered recipe name", hint) from None
    except PluginError as error:
        raise RecipeError(
            path, name, "a recipe name registered by one plugin", str(error)
        ) from None
    return copy.deepcopy(dict(registration.obj))


# ---------------------------------------------------------------------------------------------
# Shape validation
# ---------------------------------------------------------------------------------------------

TOP_KEYS = (
    "name",
    "task",
    "space",
    "search",
    "budget",
    "executor",
    "metafeatures",
    "warmstart",
    "ensemble",
    "seed",
)


def _check_keys(path: str, data: Mapping[str, Any], allowed: Sequence[str]) -> None:
    for key in data:
        if key not in allowed:
            close = difflib.get_close_matches(str(key), allowed, n=1)
            hint = f"Did you mean {close[0]!r}?" if close else ""
            raise RecipeError(
                _join(path, str(key)), data[key], f"one of the keys {list(allowed)}", hint
            )


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _mapping(path: str, value: Any, what: str = "a mapping") -> dict[str, Any]:
    if not isinstance(value, dict):
        raise RecipeError(path, value, what)
    return value


def _number(
    path: str,
    value: Any,
    *,
    low: float,
    high: float = math.inf,
    integer: bool = False,
    low_open: bool = False,
) -> float:
    kind = "an integer" if integer else "a number"
    ok_type = isinstance(value, int) if integer else isinstance(value, (int, float))
    if isinstance(value, bool) or not ok_type or not math.isfinite(value):
        raise RecipeError(path, value, kind, number_text_hint(value, integer))
    too_low = value <= low if low_open else value < low
    if too_low or value > high:
        bounds = f"{'>' if low_open else '>='} {low}" + (
            "" if high == math.inf else f" and <= {high}"
        )
        raise RecipeError(path, value, f"{kind} {bounds}")
    return value


def number_text_hint(value: Any, integer: bool = False) -> str:
    """What to write instead, when ``value`` is a number YAML read as text: YAML 1.1 takes
    ``1e3`` (no dot, no exponent sign) for a string."""
    if not isinstance(value, str):
        return ""
    try:
        number = float(value)
    except ValueError:
        return ""
    if not math.isfinite(number):
        return ""
    written = str(int(number)) if integer and number.is_integer() else f"{number:.1e}"
    return f"YAML reads {value!r} as text; write {written}"


def _string(path: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise RecipeError(path, value, "a non-empty string")
    return value


#: The older word some sections used for their component's name (``search: {strategy:
#: random}``): still read, so that recipes written before ``name`` was the one key keep working.
OLDER_NAME_KEYS = {
    "search": "strategy",
    "warmstart": "starter",
    "metafeatures": "provider",
    "ensemble": "ensembler",
}


def _component(path: str, value: Any, extra_keys: Sequence[str] = ()) -> ComponentRef:
    """``name`` or ``{name: name, params: {...}}`` (the section's older word for ``name``
    is read too, :data:`OLDER_NAME_KEYS`); ``extra_keys`` are the section's other keys,
    read by the caller."""
    if isinstance(value, str):
        return ComponentRef(_string(path, value))
    data = _mapping(path, value, "a name or a mapping with 'name' and 'params'")
    older = OLDER_NAME_KEYS.get(path)
    _check_keys(path, data, ("name", *((older,) if older else ()), "params", *extra_keys))
    params = data.get("params") or {}
    _mapping(_join(path, "params"), params)
    return ComponentRef(_component_name(path, data, older), dict(params))


def _component_name(path: str, data: Mapping[str, Any], older: str | None) -> str:
    """The name under ``name``, or under the section's older key ``older``; not both."""
    given = [key for key in ("name", older) if key is not None and key in data]
    if len(given) > 1:
        raise RecipeError(
            _join(path, str(older)), data[str(older)], f"'name' or {older!r}, not both (one name)"
        )
    if not given:
        what = {"search": "a search strategy name"}.get(path, "a component name")
        raise RecipeError(_join(path, "name"), None, f"{what} (this key is required)")
    return _string(_join(path, given[0]), data[given[0]])


def parse_recipe(data: Mapping[str, Any]) -> Recipe:
    """Check the recipe's shape and build the typed :class:`Recipe`."""
    data = _mapping("", data, "a mapping of recipe keys")
    _check_keys("", data, TOP_KEYS)
    for required in ("task", "budget"):
        if required not in data:
            raise RecipeError(required, None, f"a {required!r} section (it is required)")
    task = _task(data["task"])
    space = _space(data.get("space"), task)
    search = _search(data.get("search", "random"))
    if task.benchmark is None:
        _check_data_fidelity(search.fidelity)
    budget = _budget(data["budget"])
    return Recipe(
        name=_run_name(data.get("name", "run")),
        task=task,
        space=space,
        search=search,
        budget=budget,
        executor=_component("executor", data.get("executor", default_executor(task, budget))),
        metafeatures=_optional(data, "metafeatures"),
        warmstart=_warmstart(data.get("warmstart")),
        ensemble=_optional(data, "ensemble"),
        seed=int(_number("seed", data.get("seed", 0), low=0, high=2**31 - 1, integer=True)),
        raw=copy.deepcopy(dict(data)),
    )


def _run_name(value: Any) -> str:
    """The recipe's ``name``: a run folder is named after it (``runs/<name>-<time>``), so it
    is a name, not a path: a ``/``, a ``\\``, a leading ``.`` or a control character would
    put the folder elsewhere (``../../x``, ``/tmp/x``) or hide it. Refused, not rewritten, so
    the user knows where the run goes."""
    name = _string("name", value)
    bad = [c for c in name if c in "/\\" or not c.isprintable()]
    if bad or name.startswith(".") or len(name) > 200:
        raise RecipeError(
            "name",
            name,
            "a name for the run folder: no '/', '\\' or control characters, not starting "
            "with '.', at most 200 characters",
            "Choose where the run goes with --out PATH instead",
        )
    return name


def default_executor(task: TaskSpec, budget: BudgetSpec) -> Any:
    """The executor of a recipe that names none: ``sequential`` (no start-up cost, plain
    tracebacks), unless trials on data must be stoppable: a trial can be stopped at the
    run's wall time, or at its own time or memory limit, only in a process of its own, so
    a data task with any of those limits gets ``processes`` with one worker."""
    limited = (budget.wall_time, budget.trial_time, budget.trial_memory_mb) != (None,) * 3
    if task.benchmark is None and limited:
        return {"name": "processes", "params": {"workers": 1}}
    return "sequential"


def _optional(data: Mapping[str, Any], key: str) -> ComponentRef | None:
    value = data.get(key)
    return None if value is None else _component(key, value)


DATASET_TASK_KEYS = (
    "dataset",
    "target",
    "type",
    "metric",
    "resampling",
    "test_size",
    "split_seed",
    "max_rows",
)
BENCHMARK_TASK_KEYS = ("benchmark", "dataset", "suite")


def _task(value: Any) -> TaskSpec:
    data = _mapping("task", value, "a mapping with 'dataset', or 'benchmark' and 'dataset'")
    if "benchmark" in data:
        return _benchmark_task(data)
    _check_keys("task", data, DATASET_TASK_KEYS)
    if "dataset" not in data:
        raise RecipeError("task.dataset", None, "a dataset such as 'keel:german' (required)")
    task_type = data.get("type")
    if task_type is not None and task_type not in TASK_TYPES:
        raise RecipeError("task.type", task_type, f"one of {list(TASK_TYPES)}")
    metric = data.get("metric")
    allowed = metric_names(task_type)
    if metric is not None and metric not in allowed:
        close = difflib.get_close_matches(str(metric), allowed, n=1)
        raise RecipeError(
            "task.metric",
            metric,
            f"one of {allowed}",
            f"Did you mean {close[0]!r}?" if close else "",
        )
    test_size = data.get("test_size")
    if test_size is not None:
        _number("task.test_size", test_size, low=0, high=0.9, low_open=True)
    split_seed = data.get("split_seed")
    if split_seed is not None:
        split_seed = int(
            _number("task.split_seed", split_seed, low=0, high=2**31 - 1, integer=True)
        )
    max_rows = data.get("max_rows")
    if max_rows is not None:
        max_rows = int(_number("task.max_rows", max_rows, low=10, high=2**31 - 1, integer=True))
    target = data.get("target")
    return TaskSpec(
        dataset=_string("task.dataset", data["dataset"]),
        target=None if target is None else _string("task.target", target),
        type=task_type,
        metric=metric,
        resampling=(
            Resampling()
            if _policy(data.get("resampling")) is not None
            else parse_resampling(data.get("resampling", {"holdout": 0.33}))
        ),
        policy=_policy(data.get("resampling")),
        test_size=test_size,
        split_seed=split_seed,
        max_rows=max_rows,
    )


def _benchmark_task(data: Mapping[str, Any]) -> TaskSpec:
    """``{benchmark: pmf, dataset: "1049"}`` or ``{benchmark: pmf, suite: test}``."""
    for key in data:
        if key not in BENCHMARK_TASK_KEYS:
            raise RecipeError(
                f"task.{key}",
                data[key],
                f"one of {list(BENCHMARK_TASK_KEYS)} (a benchmark task)",
                "A benchmark fixes its datasets, splits and loss, so dataset options do not apply.",
            )
    benchmark = _component("task.benchmark", data["benchmark"])
    has_dataset, has_suite = "dataset" in data, "suite" in data
    if has_dataset == has_suite:
        raise RecipeError(
            "task",
            dict(data),
            "exactly one of 'dataset' (one of the benchmark's dataset ids) "
            "or 'suite' (a split of the benchmark, e.g. test)",
        )
    dataset = data.get("dataset")
    if isinstance(dataset, int) and not isinstance(dataset, bool):
        dataset = str(dataset)  # OpenML ids are written as numbers in YAML
    return TaskSpec(
        dataset=None if dataset is None else _string("task.dataset", dataset),
        benchmark=benchmark,
        suite=None if not has_suite else _string("task.suite", data["suite"]),
    )


def _space(value: Any, task: TaskSpec) -> ComponentRef | None:
    if task.benchmark is not None:
        if value is not None:
            raise RecipeError(
                "space",
                value,
                "no 'space' in a benchmark task",
                f"The benchmark {task.benchmark.name!r} offers its own pool of candidates.",
            )
        return None
    if value is None:
        raise RecipeError("space", None, "a 'space' section (it is required)")
    return _component("space", value)


def _policy(value: Any) -> ComponentRef | None:
    """``auto``, ``{auto: <selector name>}`` or ``{auto: {name: <selector>, params: {...}}}``:
    let a policy selector choose the resampling (the parameters reach its factory, so a
    recipe can set, say, the rows below which ``bagged-by-rows`` bags)."""
    if value == "auto":
        return ComponentRef(AUTO_POLICY_SELECTOR)
    if isinstance(value, dict) and list(value) == ["auto"]:
        return _component("task.resampling.auto", value["auto"])
    return None


def parse_resampling(value: Any) -> Resampling:
    """``{holdout: f}``, ``{cv: k}`` or ``{cv: k, bag: true}``: k-fold cross-validation whose
    fold models are kept, the final model their average (bagging: no refit)."""
    expected = (
        "{holdout: <fraction in (0, 1)>}, {cv: <folds >= 2>} (add 'bag: true' to keep the "
        "fold models as the final model), or auto (a policy selector chooses)"
    )
    if not isinstance(value, dict) or not 1 <= len(value) <= 2:
        raise RecipeError("task.resampling", value, expected)
    value = dict(value)
    bag = value.pop("bag", False)
    if not isinstance(bag, bool):
        raise RecipeError("task.resampling.bag", bag, "true or false")
    if len(value) != 1:
        raise RecipeError("task.resampling", value, expected)
    ((kind, amount),) = value.items()
    if bag and kind != "cv":
        raise RecipeError(
            "task.resampling.bag",
            bag,
            "bag only with cv",
            "Bagging averages the k fold models of a cross-validation; a holdout has one",
        )
    if kind == "holdout":
        fraction = _number("task.resampling.holdout", amount, low=0, high=0.9, low_open=True)
        return Resampling("holdout", fraction=fraction)
    if kind == "cv":
        folds = _number("task.resampling.cv", amount, low=2, high=100, integer=True)
        return Resampling("cv", folds=int(folds), bag=bag)
    raise RecipeError(f"task.resampling.{kind}", amount, expected)


def _search(value: Any) -> SearchSpec:
    if isinstance(value, str):
        return SearchSpec(ComponentRef(_string("search", value)))
    data = _mapping("search", value, "a strategy name or {name, params, surrogate, fidelity}")
    strategy = _component("search", value, extra_keys=("surrogate", "fidelity"))
    surrogate = data.get("surrogate")
    return SearchSpec(
        strategy,
        None if surrogate is None else _component("search.surrogate", surrogate),
        _fidelity(data.get("fidelity")),
    )


def data_fidelity(wanted: FidelitySpec) -> Fidelity:
    """A data task's budget range: the recipe's ``search.fidelity`` over the default."""
    default = DEFAULT_DATA_FIDELITY
    return Fidelity(
        wanted.kind or default.kind,
        default.min if wanted.min is None else wanted.min,
        default.max if wanted.max is None else wanted.max,
    )


def _check_data_fidelity(wanted: FidelitySpec) -> None:
    """On a data task the kind is one the evaluator knows and budgets are fractions."""
    if wanted.kind is not None and wanted.kind not in DATA_FIDELITY_KINDS:
        raise RecipeError(
            "search.fidelity.kind", wanted.kind, f"one of {', '.join(DATA_FIDELITY_KINDS)}"
        )
    resolved = data_fidelity(wanted)
    if not 0 < resolved.min < resolved.max <= 1:
        raise RecipeError(
            "search.fidelity",
            {"min": resolved.min, "max": resolved.max},
            "0 < min < max <= 1 on a data task (fractions of full fidelity)",
        )


def _fidelity(value: Any) -> FidelitySpec:
    if value is None:
        return FidelitySpec()
    if isinstance(value, str):
        value = {"kind": value}
    data = _mapping("search.fidelity", value, "iterations, subsample, or {kind, min, max}")
    _check_keys("search.fidelity", data, ("kind", "min", "max"))
    kind = data.get("kind")
    if kind is not None:
        _string("search.fidelity.kind", kind)
    low, high = data.get("min"), data.get("max")
    if low is not None:
        _number("search.fidelity.min", low, low=0, low_open=True)
    if high is not None:
        _number("search.fidelity.max", high, low=0, low_open=True)
    if low is not None and high is not None and not low < high:
        raise RecipeError("search.fidelity", data, "min < max")
    return FidelitySpec(kind, low, high)


def _warmstart(value: Any) -> WarmStartSpec | None:
    if value is None:
        return None
    if isinstance(value, str):
        return WarmStartSpec(ComponentRef(_string("warmstart", value)))
    data = _mapping("warmstart", value, "a warm-starter name or {name, params, configs, optional}")
    starter = _component("warmstart", data, extra_keys=("configs", "optional"))
    optional = data.get("optional", False)
    if not isinstance(optional, bool):
        raise RecipeError("warmstart.optional", optional, "true or false")
    if data.get("configs") is None:
        return WarmStartSpec(starter, optional=optional)
    configs = _number("warmstart.configs", data["configs"], low=1, high=MAX_COUNT, integer=True)
    return WarmStartSpec(starter, int(configs), optional)


def _budget(value: Any) -> BudgetSpec:
    data = _mapping("budget", value, "a mapping with 'wall_time' (seconds) and/or 'trials'")
    _check_keys("budget", data, ("wall_time", "trials", "trial_time", "trial_memory_mb"))
    if data.get("wall_time") is None and data.get("trials") is None:
        raise RecipeError("budget", data, "at least one of 'wall_time' (seconds) or 'trials'")

    def get(key: str, high: float, integer: bool = False) -> Any:
        raw = data.get(key)
        if raw is None:
            return None
        return _number(f"budget.{key}", raw, low=0, high=high, integer=integer, low_open=True)

    return BudgetSpec(
        wall_time=get("wall_time", MAX_SECONDS),
        trials=get("trials", MAX_COUNT, integer=True),
        trial_time=get("trial_time", MAX_SECONDS),
        trial_memory_mb=get("trial_memory_mb", MAX_MEMORY_MB, integer=True),
    )


# ---------------------------------------------------------------------------------------------
# Name resolution against the loaded plugins
# ---------------------------------------------------------------------------------------------


def component_refs(recipe: Recipe) -> list[tuple[str, str, ComponentRef]]:
    """Every component the recipe names: (recipe path, kind, reference)."""
    refs = [
        ("search", "search_strategy", recipe.search.strategy),
        ("executor", "executor", recipe.executor),
    ]
    if recipe.space is not None:
        refs.insert(0, ("space", "space", recipe.space))
    if recipe.task.benchmark is not None:
        refs.insert(0, ("task.benchmark", "benchmark", recipe.task.benchmark))
    if recipe.search.surrogate:
        refs.append(("search.surrogate", "surrogate", recipe.search.surrogate))
    if recipe.metafeatures:
        refs.append(("metafeatures", "metafeature_provider", recipe.metafeatures))
    if recipe.warmstart:
        refs.append(("warmstart", "warmstarter", recipe.warmstart.starter))
    if recipe.task.policy:
        refs.append(("task.resampling", "policy_selector", recipe.task.policy))
    if recipe.ensemble:
        refs.append(("ensemble", "ensembler", recipe.ensemble))
    return refs


def check_names(recipe: Recipe, plugins: Plugins) -> None:
    """Raise a RecipeError for the first name no plugin registered, or a bad parameter."""
    refs = component_refs(recipe)
    if recipe.task.benchmark is None:
        assert recipe.task.dataset is not None
        try:
            source, _ = parse_reference(recipe.task.dataset)
        except DatasetError as error:
            raise RecipeError(
                "task.dataset", recipe.task.dataset, "source:name", str(error)
            ) from None
        refs.append(("task.dataset", "dataset_source", ComponentRef(source)))
    for path, kind, ref in refs:
        try:
            registration = plugins.get(kind, ref.name)
        except UnknownComponentError as error:
            hint = f"Did you mean {', '.join(map(repr, error.close))}? " if error.close else ""
            hint += f"Registered: {', '.join(error.known) if error.known else '(none)'}"
            hint += broken_plugins_note(plugins)
            raise RecipeError(
                path, ref.name, f"a registered {kind.replace('_', ' ')}", hint
            ) from None
        except PluginError as error:
            raise RecipeError(
                path, ref.name, "a name registered by one plugin", str(error)
            ) from None
        if kind != "dataset_source":
            _check_params(f"{path}.params", registration, ref.params)


def broken_plugins_note(plugins: Plugins) -> str:
    """The plugins that failed to load, for an error about a name that is not registered:
    the component may be one of theirs."""
    if not plugins.broken:
        return ""
    named = "; ".join(
        f"{b.name} ({b.distribution}): {str(b.error).splitlines()[0] if b.error else '?'}"
        for b in plugins.broken
    )
    return f". These plugins failed to load, and may provide it: {named}"


def _check_params(path: str, registration: Registration, params: Mapping[str, Any]) -> None:
    if registration.accepts_any_parameter():
        return
    accepted = list(registration.parameters())
    for key, value in params.items():
        if key not in accepted:
            close = difflib.get_close_matches(key, accepted, n=1)
            hint = f"Did you mean {close[0]!r}? " if close else ""
            raise RecipeError(
                f"{path}.{key}", value, f"one of the parameters {accepted}", hint.strip()
            )
