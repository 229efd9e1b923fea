"""Turning a recipe's dataset value into a :class:`~automl_engine.dataset.Dataset`.

A value has the form ``source:reference`` -- ``keel:german``, ``sklearn:iris``,
``csv:data/train.csv`` -- where ``source`` names a dataset source registered by a plugin
through ``register_dataset_sources`` (the core registers ``sklearn``, ``csv`` and ``keel``,
see :mod:`automl_engine.builtins.sources`). A bare path ending in ``.csv`` is accepted as
shorthand for ``csv:<path>``, because that is what people type first.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from automl_core.errors import DatasetError, PluginError
from automl_core.plugins import Plugins
from automl_engine.dataset import Dataset, check_dataset

#: A source name: a letter, then letters, digits, ``_``, ``.`` or ``-``; at least two
#: characters, so that a Windows drive (``C:\\data.csv``) is not mistaken for a source.
_SOURCE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]+")

_FORM = (
    "A dataset is written 'source:name', e.g. 'keel:german', 'sklearn:iris' or "
    "'csv:path/to/file.csv' (a bare path ending in .csv also works)"
)


def parse_reference(value: str) -> tuple[str, str]:
    """Split a dataset value into ``(source, reference)``.

    ``"keel:german"`` -> ``("keel", "german")``; ``"data/train.csv"`` -> ``("csv",
    "data/train.csv")``. Only the first colon separates, so references may contain colons
    (``csv:/data/run:1/x.csv``). Anything else raises :class:`DatasetError` explaining the
    ``source:name`` form, rather than guessing a source.
    """
    if not isinstance(value, str) or not value.strip():
        raise DatasetError(f"dataset {value!r} is empty or not a string. {_FORM}")
    text = value.strip()
    source, colon, reference = text.partition(":")
    if colon and _SOURCE_NAME.fullmatch(source):
        if not reference.strip():
            raise DatasetError(f"dataset {value!r} names no dataset after '{source}:'. {_FORM}")
        return source, reference.strip()
    if text.lower().endswith(".csv"):
        return "csv", text
    raise DatasetError(f"dataset {value!r} does not say which source it comes from. {_FORM}")


@dataclass(frozen=True)
class CheckedSource:
    """A dataset source that can also say, without loading anything large, why a reference
    cannot be loaded: ``check(reference)`` returns the reason, or None when it finds none.
    ``automl validate`` asks it, so a missing file or a mistyped name is found before a run.
    Register it like the plain loader: ``register("csv", CheckedSource(load_csv,
    csv_problem), "...")``."""

    load: Callable[..., Dataset]
    check: Callable[[str], str | None]
    #: ``task_of(reference)``: the dataset's task (classification, regression) when the
    #: source knows it without loading the data, else None; lets ``automl validate`` refuse
    #: a regression space on a classification dataset before the data is loaded.
    task_of: Callable[[str], str | None] | None = None

    def __call__(
        self, reference: str, *, target: str | None = None, task: str | None = None
    ) -> Dataset:
        return self.load(reference, target=target, task=task)


def check_reference(plugins: Plugins, value: str) -> str | None:
    """Why the dataset ``value`` cannot be loaded, as far as its source can tell without
    loading it (None: nothing found wrong, or a source without a check)."""
    source, reference = parse_reference(value)
    check = getattr(plugins.get("dataset_source", source).obj, "check", None)
    return check(reference) if callable(check) else None


def known_task(plugins: Plugins, value: str) -> str | None:
    """The task of the dataset ``value`` when its source can tell without loading it."""
    source, reference = parse_reference(value)
    task_of = getattr(plugins.get("dataset_source", source).obj, "task_of", None)
    return task_of(reference) if callable(task_of) else None


def load_dataset(
    plugins: Plugins, value: str, *, target: str | None = None, task: str | None = None
) -> Dataset:
    """Load the dataset a recipe names, through the source plugin registered for it.

    Raises :class:`~automl_core.errors.UnknownComponentError` for a source no plugin
    registered (the message lists the registered ones), and checks the result again with
    :func:`~automl_engine.dataset.check_dataset`, because a third-party source may not have.
    """
    source, reference = parse_reference(value)
    registration = plugins.get("dataset_source", source)
    dataset = registration.obj(reference, target=target, task=task)
    if not isinstance(dataset, Dataset):
        raise PluginError(
            f"dataset source {source!r} from {registration.origin} returned "
            f"{type(dataset).__name__}, not a Dataset, for {value!r}"
        )
    return check_dataset(dataset)
