"""Oboe's models as configurations of the ``autosklearn-classification`` space.

Oboe (:mod:`.oboe`) measured 219 scikit-learn models on 418 OpenML datasets, densely: every
model on every dataset. auto-sklearn 2.0's greedy portfolio needs exactly such a matrix, but
for configurations of the space the search runs in. This source translates each Oboe model
into a full configuration of ``autosklearn-classification`` (plugin ``automl-sklearn``) and
keeps its column of Oboe's error and runtime matrices, so that a portfolio built from Oboe's
real measurements can warm-start a search of the default space.

What a translation keeps is the algorithm and the hyper-parameters Oboe tuned, under our
names (:data:`RULES` says how, per algorithm). The rest of the configuration is the space's
default: the preprocessing stages (mean imputation, one-hot encoding, standardisation, as
Oboe's own preprocessing did) and every hyper-parameter Oboe left at scikit-learn's default,
except where that default is a different model than ours and the space can say Oboe's
(*implied* settings: e.g. Oboe's decision tree grows without a depth limit). Then:

* a value outside our range is clipped into it (``info["clipped"]``);
* a setting our space cannot express at all (a fraction of the rows as ``min_samples_split``,
  an MLP trained by SGD, logistic regression's ``C``) drops the model (``info["dropped"]``);
* a setting our space has no counterpart for, but which does not stop the translation (GBT's
  ``max_features="log2"``), is recorded as an approximation (``info["approximated"]``);
* models that translate into the same configuration keep one column: the one measured
  closest to the translation (fewest clipped or approximated settings), the first of equals
  (``info["merged"]``). Without that rule GBT at learning rate 0.001, clipped to 0.01, would
  stand for the GBT Oboe measured at 0.01.

The result is a plain (not pool) meta-data: ``configs[j]`` is a validated configuration of
the space and ``info["source_configs"][j]`` the Oboe column it came from.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import metadata as distributions
from typing import Any

from ConfigSpace import (
    CategoricalHyperparameter,
    Constant,
    UniformFloatHyperparameter,
    UniformIntegerHyperparameter,
)
from ConfigSpace.util import deactivate_inactive_hyperparameters

from automl_core.contracts import MetaData
from automl_core.errors import AutoMLError, DatasetError
from automl_core.plugins import Plugins, registry_or_installed
from automl_core.space import config_key, pipeline_space
from automl_metadata.oboe import Oboe
from automl_metadata.store import MetaDataSource
from automl_spaces.pipeline_space import PipelineSpace

#: The space the configurations belong to (registered by the ``automl-sklearn`` plugin).
SPACE = "autosklearn-classification"
CLASSIFIER = "classifier"
#: The distribution that defines :data:`SPACE`: its version is part of the cache name, since a
#: change of a range or default there changes the translation.
SPACE_DISTRIBUTION = "automl-sklearn"

TRANSLATION = (
    "Each Oboe model becomes the autosklearn-classification configuration with the same "
    "classifier and Oboe's tuned hyper-parameters under our names (clipped into our ranges), "
    "every other setting at the space's default; models our space cannot express are dropped "
    "and models that translate alike keep the column measured closest to the translation."
)


class NotRepresentable(Exception):
    """An Oboe model that no configuration of the space expresses; the message says why."""


@dataclass
class Translation:
    """One Oboe model in our terms: the classifier, its hyper-parameters (names relative to the
    component), and what had to give."""

    classifier: str
    params: dict[str, Any] = field(default_factory=dict)
    #: (hyper-parameter, value asked for, value set) for each value clipped into our range.
    clipped: list[tuple[str, Any, Any]] = field(default_factory=list)
    #: Oboe hyper-parameter -> why our configuration only approximates it.
    approximated: dict[str, str] = field(default_factory=dict)
    #: Settings made for scikit-learn defaults Oboe relied on (names relative to the component).
    implied: dict[str, Any] = field(default_factory=dict)

    @property
    def alterations(self) -> int:
        """How far the translation is from what Oboe measured (for choosing among merges)."""
        return len(self.clipped) + len(self.approximated)


class _Target:
    """What a rule writes into: reads Oboe's settings (each must be read, so that none is lost
    silently) and sets ours, clipped into the component's ranges."""

    def __init__(self, space: PipelineSpace, classifier: str, settings: Mapping[str, Any]):
        self.space = space
        self.settings = dict(settings)
        self.unread = set(settings)
        self.result = Translation(classifier)

    def take(self, name: str) -> Any:
        self.unread.discard(name)
        return self.settings[name]

    def ignore(self, name: str) -> None:
        """An Oboe setting that does not change the model Oboe built (e.g. an SVM's ``coef0``
        with an RBF kernel)."""
        self.unread.discard(name)

    def approximate(self, name: str, why: str) -> None:
        self.unread.discard(name)
        self.result.approximated[name] = why

    def set(self, name: str, value: Any) -> None:
        self.result.params[name] = self._clipped(name, value)

    def imply(self, name: str, value: Any) -> None:
        self.set(name, value)
        self.result.implied[name] = self.result.params[name]

    def bound(self, name: str, which: str) -> Any:
        """``lower`` or ``upper`` of one of the component's numeric hyper-parameters."""
        return getattr(self._hyperparameter(name), which)

    def _hyperparameter(self, name: str) -> Any:
        full = _full_name(self.result, name)
        try:
            return self.space.configspace[full]
        except KeyError:
            raise DatasetError(f"the space {self.space.name!r} has no {full!r}") from None

    def _clipped(self, name: str, value: Any) -> Any:
        hyperparameter = self._hyperparameter(name)
        if isinstance(hyperparameter, (CategoricalHyperparameter, Constant)):
            return value
        if isinstance(hyperparameter, UniformIntegerHyperparameter):
            if float(value) != int(value):
                raise NotRepresentable(f"{name}={value!r} is not a count")
            kind: Callable[[Any], Any] = int
        elif isinstance(hyperparameter, UniformFloatHyperparameter):
            kind = float
        else:
            raise DatasetError(f"cannot set {name}: {type(hyperparameter).__name__}")
        lower, upper = kind(hyperparameter.lower), kind(hyperparameter.upper)
        inside = min(max(kind(value), lower), upper)
        if inside != kind(value):
            self.result.clipped.append((name, value, inside))
        return inside


# ---------------------------------------------------------------------------------------------
# The rules, one per Oboe algorithm (oboe/util.py names the scikit-learn classes)
# ---------------------------------------------------------------------------------------------


def _min_samples_split(target: _Target) -> None:
    value = target.take("min_samples_split")
    if isinstance(value, float):
        # scikit-learn reads a float as ceil(value * n_rows): a different count per dataset.
        raise NotRepresentable(
            "min_samples_split as a fraction of the rows (our space takes a count)"
        )
    target.set("min_samples_split", value)


def _adaboost(target: _Target) -> None:
    # scikit-learn's AdaBoost boosts stumps by default: our max_depth default 1 is the same.
    target.set("n_estimators", target.take("n_estimators"))
    target.set("learning_rate", target.take("learning_rate"))


def _decision_tree(target: _Target) -> None:
    _min_samples_split(target)
    # Oboe's tree has no depth limit; ours is max_depth_factor * n_features deep at most.
    target.imply("max_depth_factor", target.bound("max_depth_factor", "upper"))


def _forest(target: _Target) -> None:
    # max_features: scikit-learn's sqrt(n_features) is our default 0.5 (n_features ** 0.5).
    _min_samples_split(target)
    target.set("criterion", target.take("criterion"))


def _gradient_boosting(target: _Target) -> None:
    target.set("learning_rate", target.take("learning_rate"))
    # Our histogram boosting has no depth (a constant "None"); a depth-d tree has at most
    # 2 ** d leaves, which bounds the same capacity.
    target.set("max_leaf_nodes", 2 ** int(target.take("max_depth")))
    if target.take("max_features") is not None:
        target.approximate("max_features", "our gradient boosting splits on every feature")
    # scikit-learn's GradientBoostingClassifier lets a leaf hold one row (ours: 20).
    target.imply("min_samples_leaf", 1)


def _k_nearest_neighbors(target: _Target) -> None:
    target.set("n_neighbors", target.take("n_neighbors"))
    target.set("p", target.take("p"))


def _liblinear_svc(target: _Target) -> None:
    # LinearSVC's defaults (l2 penalty, squared hinge) are ours; dual or primal solve the
    # same problem.
    target.set("C", target.take("C"))


def _libsvm_svc(target: _Target) -> None:
    kernel = target.take("kernel")
    target.set("kernel", kernel)
    target.set("C", target.take("C"))
    if kernel in ("poly", "sigmoid"):
        target.set("coef0", target.take("coef0"))
    else:
        target.ignore("coef0")  # the RBF kernel has no coef0


def _logistic_regression(target: _Target) -> None:
    raise NotRepresentable(
        "the space has no logistic regression with C (sgd's log loss takes alpha, which is "
        "1 / (C * n_rows): a different value on every dataset)"
    )


def _mlp(target: _Target) -> None:
    if target.take("solver") != "adam":
        raise NotRepresentable("an MLP trained by SGD (our MLP is trained by adam)")
    target.ignore("learning_rate")  # scikit-learn reads it only for solver="sgd"
    target.set("learning_rate_init", target.take("learning_rate_init"))
    target.set("alpha", target.take("alpha"))
    # scikit-learn's MLPClassifier: one hidden layer of 100 units, stopped on the training
    # loss (early_stopping=False).
    target.imply("num_nodes_per_layer", 100)
    target.imply("early_stopping", "train")


def _perceptron(target: _Target) -> None:
    # scikit-learn documents Perceptron() as SGDClassifier(loss="perceptron", eta0=1,
    # learning_rate="constant", penalty=None); "no penalty" is our smallest alpha, and
    # without a penalty the step size only scales the weights.
    target.imply("loss", "perceptron")
    target.imply("learning_rate", "constant")
    target.imply("eta0", 1.0)
    target.imply("penalty", "l2")
    target.imply("alpha", 0.0)
    target.imply("tol", 1e-3)


#: scikit-learn defaults Oboe's models relied on that no setting of our space expresses: the
#: same for every model of the algorithm, so they shift its measurements as a whole. (The
#: scikit-learn version of Oboe's matrices is not recorded; its wheel asks for 0.22 or later.)
UNMATCHED_DEFAULTS: dict[str, str] = {
    "AB": "today's scikit-learn boosts by SAMME only (Oboe's defaulted to SAMME.R)",
    "ExtraTrees": "512 trees instead of scikit-learn's 100 (10 before 0.22)",
    "RF": "512 trees instead of scikit-learn's 100 (10 before 0.22)",
    "GBT": "512 iterations of histogram boosting instead of 100 exact-split trees",
    "kSVM": "gamma 0.1 instead of scikit-learn's data-dependent 'scale' ('auto' before 0.22)",
    "MLP": "up to 512 epochs, patience 32, instead of 200 and 10",
}


@dataclass(frozen=True)
class Rule:
    """How one Oboe algorithm is translated: into which of our classifiers, by which function
    (None: not at all)."""

    classifier: str | None
    apply: Callable[[_Target], None]


#: Oboe's abbreviation -> the rule. classification.json lists these twelve.
RULES: dict[str, Rule] = {
    "AB": Rule("adaboost", _adaboost),
    "DT": Rule("decision_tree", _decision_tree),
    "ExtraTrees": Rule("extra_trees", _forest),
    "RF": Rule("random_forest", _forest),
    "GBT": Rule("gradient_boosting", _gradient_boosting),
    "GNB": Rule("gaussian_nb", lambda target: None),
    "KNN": Rule("k_nearest_neighbors", _k_nearest_neighbors),
    "lSVM": Rule("liblinear_svc", _liblinear_svc),
    "kSVM": Rule("libsvm_svc", _libsvm_svc),
    "Logit": Rule(None, _logistic_regression),
    "MLP": Rule("mlp", _mlp),
    "Perceptron": Rule("sgd", _perceptron),
}


def translate(description: Mapping[str, Any], space: PipelineSpace) -> Translation:
    """One Oboe model (``{"algorithm": ..., "hyperparameters": {...}}``) in our terms.

    Raises :class:`NotRepresentable` (with the reason) for a model the space cannot express,
    and :class:`DatasetError` for an algorithm or hyper-parameter no rule knows: a rule that
    left a setting unread would translate it into a different model without saying so.
    """
    algorithm = description["algorithm"]
    rule = RULES.get(algorithm)
    if rule is None:
        raise DatasetError(f"no translation for Oboe's algorithm {algorithm!r}")
    target = _Target(space, rule.classifier or "", description["hyperparameters"])
    rule.apply(target)
    if target.unread:
        raise DatasetError(
            f"no translation for {algorithm}'s hyper-parameter(s) {sorted(target.unread)}"
        )
    return target.result


def full_config(translation: Translation, space: PipelineSpace) -> dict[str, Any]:
    """The whole configuration, validated: the space's default with the classifier replaced by
    the translated one, its settings over its defaults, and only the hyper-parameters active
    under them (the component's own small space decides which, fast: the same question put
    to the whole flattened space takes half a second per model)."""
    component = space.stage(CLASSIFIER).component(translation.classifier)
    subspace = component.hyperparameters()
    values = {name: hp.default_value for name, hp in subspace.items()}
    values.update(translation.params)
    active = dict(deactivate_inactive_hyperparameters(values, subspace)) if len(subspace) else {}
    config = {k: v for k, v in space.default().items() if not k.startswith(f"{CLASSIFIER}:")}
    config[f"{CLASSIFIER}:__choice__"] = translation.classifier
    config.update({_full_name(translation, k): v for k, v in active.items()})
    return space.validate(config)


def load_space(registry: Plugins) -> PipelineSpace:
    """The ``autosklearn-classification`` space (plugin ``automl-sklearn``) of ``registry``."""
    try:
        space = registry.create("space", SPACE, {})
    except AutoMLError as error:
        raise DatasetError(
            f"translating Oboe's models needs the space {SPACE!r} of the automl-sklearn "
            f"plugin: {error}"
        ) from error
    pipeline = pipeline_space(space)
    if pipeline is None:
        raise DatasetError(f"{SPACE!r} is a {type(space).__name__}, not a pipeline space")
    return pipeline


class OboeAutoSklearn(MetaDataSource):
    """Oboe's error and runtime matrices over its models translated into configurations of
    ``autosklearn-classification`` (see the module docstring for how, and what is lost).

    The same datasets, splits and meta-features as :class:`~automl_metadata.oboe.Oboe`; the
    columns of the models that translate (one per distinct configuration).
    """

    package = Oboe.package
    licence = Oboe.licence
    provenance = Oboe.provenance
    #: Bump when a rule changes what it translates into (2: Oboe's meta-features renamed).
    conversion = 2

    def __init__(self, registry: Plugins | None = None) -> None:
        #: where the space the models are translated into comes from: the registry that
        #: built this source (the run's, or the command's), else the installed plugins
        self.registry = registry

    def cache_name(self) -> str:
        """Also names the automl-sklearn version: its ranges and defaults shape the result."""
        try:
            version = distributions.version(SPACE_DISTRIBUTION)
        except distributions.PackageNotFoundError:
            version = "none"
        return f"{super().cache_name()}-{SPACE_DISTRIBUTION}-{version}"

    def build(self) -> MetaData:
        oboe = Oboe().load()
        space = load_space(registry_or_installed(self.registry))
        descriptions = oboe.pool.descriptions if oboe.pool is not None else None
        if not descriptions or len(descriptions) != len(oboe.configs):
            raise DatasetError("Oboe's meta-data has no model descriptions to translate")
        translated, dropped = self._translate_all(descriptions, space)
        groups: dict[str, list[int]] = {}
        for column, (config, _) in translated.items():
            groups.setdefault(config_key(config), []).append(column)
        keepers = {
            key: min(columns, key=lambda c: (translated[c][1].alterations, c))
            for key, columns in groups.items()
        }
        kept = sorted(keepers.values())
        merged = [
            {"kept": keepers[key], "merged": [c for c in columns if c != keepers[key]]}
            for key, columns in sorted(groups.items(), key=lambda item: keepers[item[0]])
            if len(columns) > 1
        ]
        algorithms = [d["algorithm"] for d in descriptions]
        kept_algorithms = {algorithms[c] for c in kept}
        return MetaData(
            datasets=list(oboe.datasets),
            configs=[translated[c][0] for c in kept],
            performance=oboe.performance[:, kept],
            runtimes=None if oboe.runtimes is None else oboe.runtimes[:, kept],
            metafeatures=oboe.metafeatures,
            splits=dict(oboe.splits),
            space=SPACE,
            pool=None,
            info={
                "source": f"{oboe.info.get('source', self.package)}, translated into {SPACE}",
                "metric": oboe.info.get("metric"),
                "runtime_unit": oboe.info.get("runtime_unit", "seconds"),
                "translation": TRANSLATION,
                "source_configs": kept,
                "classifiers": {a: RULES[a].classifier for a in dict.fromkeys(algorithms)},
                "kept": _count(algorithms, kept),
                "dropped": _count(algorithms, dropped),
                "dropped_why": {
                    algorithm: sorted({dropped[c] for c in dropped if algorithms[c] == algorithm})
                    for algorithm in _count(algorithms, dropped)
                },
                "clipped": _clip_records(translated, algorithms),
                "approximated": _approximations(translated, algorithms),
                "implied": _implied(translated, algorithms),
                "unmatched_defaults": {
                    a: why for a, why in UNMATCHED_DEFAULTS.items() if a in kept_algorithms
                },
                "merged": merged,
            },
        )

    @staticmethod
    def _translate_all(
        descriptions: list[dict[str, Any]], space: PipelineSpace
    ) -> tuple[dict[int, tuple[dict[str, Any], Translation]], dict[int, str]]:
        """Oboe column -> (configuration, translation), and column -> why it was dropped."""
        translated: dict[int, tuple[dict[str, Any], Translation]] = {}
        dropped: dict[int, str] = {}
        for column, description in enumerate(descriptions):
            try:
                translation = translate(description, space)
            except NotRepresentable as reason:
                dropped[column] = str(reason)
                continue
            translated[column] = (full_config(translation, space), translation)
        return translated, dropped


def _count(algorithms: list[str], columns: Any) -> dict[str, int]:
    counts = Counter(algorithms[c] for c in columns)
    return {a: counts[a] for a in dict.fromkeys(algorithms) if counts[a]}


def _full_name(translation: Translation, name: str) -> str:
    """The name in the whole space of the classifier's hyper-parameter ``name``."""
    return f"{CLASSIFIER}:{translation.classifier}:{name}"


def _clip_records(
    translated: Mapping[int, tuple[dict[str, Any], Translation]], algorithms: list[str]
) -> dict[str, list[dict[str, Any]]]:
    """``{algorithm: [{hyperparameter, from, to, columns}]}`` over every translated column
    (also those merged away; intersect with ``source_configs`` for the kept ones)."""
    records: dict[str, dict[tuple[str, Any, Any], list[int]]] = {}
    for column, (_, translation) in translated.items():
        for name, asked, got in translation.clipped:
            key = (_full_name(translation, name), asked, got)
            records.setdefault(algorithms[column], {}).setdefault(key, []).append(column)
    return {
        algorithm: [
            {"hyperparameter": name, "from": asked, "to": got, "columns": columns}
            for (name, asked, got), columns in clips.items()
        ]
        for algorithm, clips in records.items()
    }


def _approximations(
    translated: Mapping[int, tuple[dict[str, Any], Translation]], algorithms: list[str]
) -> dict[str, dict[str, Any]]:
    """``{algorithm: {Oboe hyper-parameter: {"why": ..., "columns": [...]}}}``."""
    records: dict[str, dict[str, Any]] = {}
    for column, (_, translation) in translated.items():
        for name, why in translation.approximated.items():
            entry = records.setdefault(algorithms[column], {}).setdefault(
                name, {"why": why, "columns": []}
            )
            entry["columns"].append(column)
    return records


def _implied(
    translated: Mapping[int, tuple[dict[str, Any], Translation]], algorithms: list[str]
) -> dict[str, dict[str, Any]]:
    """``{algorithm: {our hyper-parameter: value}}``: settings for scikit-learn defaults that
    Oboe relied on (the same for every model of an algorithm)."""
    records: dict[str, dict[str, Any]] = {}
    for column, (_, translation) in translated.items():
        for name, value in translation.implied.items():
            records.setdefault(algorithms[column], {})[_full_name(translation, name)] = value
    return records


__all__ = ["RULES", "SPACE", "NotRepresentable", "OboeAutoSklearn", "Translation", "translate"]
