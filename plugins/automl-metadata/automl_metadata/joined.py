"""The meta-data source ``joined``: one source's losses with another's meta-features.

Learned meta-features (Metabu) and rankers need both a performance matrix and a description
of each dataset, and the registry packages rarely ship both for the same datasets: Oboe has
219 configurations' errors on 418 OpenML datasets but only their two sizes; LCDB ships 64
OpenML meta-features per dataset. Joined by dataset id (OpenML ids, compared as text), they
give Oboe's errors on the 89 datasets LCDB describes::

    metadata: {name: joined, params: {performance: oboe, metafeatures: lcdb}}

Only the datasets both sides have are kept, in the order of ``performance``; everything but
the meta-feature table (configurations, pool, runtimes, splits restricted to the kept
datasets) comes from ``performance``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from automl_core.contracts import MetaData
from automl_core.plugins import Plugins, registry_or_installed
from automl_engine.metastore import is_metadata_folder, load_metadata


class JoinedMetaData:
    """``performance`` and ``metafeatures``: a registered meta-data source by name (``oboe``,
    ``lcdb``, ``pmf``..., or another plugin's) or a meta-data folder."""

    def __init__(
        self, performance: str, metafeatures: str, registry: Plugins | None = None
    ) -> None:
        self.performance, self.metafeatures = str(performance), str(metafeatures)
        #: where the named sources are built from: the registry that built this one (the
        #: run's, or the command's), else the installed plugins
        self.registry = registry

    def load(self) -> MetaData:
        registry = registry_or_installed(self.registry)
        losses = load_reference(self.performance, registry)
        described = load_reference(self.metafeatures, registry)
        if described.metafeatures is None or described.metafeatures.empty:
            raise ValueError(f"joined: {self.metafeatures!r} has no meta-features")
        table = described.metafeatures.set_axis(described.metafeatures.index.astype(str), axis=0)
        shared = [d for d in losses.datasets if str(d) in set(table.index)]
        if not shared:
            raise ValueError(
                f"joined: {self.performance!r} and {self.metafeatures!r} share no dataset id "
                f"(e.g. {losses.datasets[:3]} and {list(table.index[:3])})"
            )
        rows = [losses.row(d) for d in shared]
        kept = set(shared)
        return MetaData(
            datasets=shared,
            configs=losses.configs,
            performance=losses.performance[rows],
            metafeatures=table.loc[[str(d) for d in shared]],
            runtimes=None if losses.runtimes is None else losses.runtimes[rows],
            splits={k: [d for d in v if d in kept] for k, v in losses.splits.items()},
            space=losses.space,
            pool=losses.pool,
            budgets=losses.budgets,
            curves=None if losses.curves is None else np.asarray(losses.curves)[rows],
            info={
                "source": f"{self.performance} x {self.metafeatures}",
                "provenance": f"{self.performance}'s losses joined with "
                f"{self.metafeatures}'s meta-features by dataset id",
            },
        )


def load_reference(reference: str, registry: Plugins) -> MetaData:
    """A registered meta-data source by name, else a meta-data folder."""
    sources = registry.registry.names("metadata")
    if reference in sources:
        return registry.create("metadata", reference, {}).load()
    folder = Path(reference).expanduser()
    if is_metadata_folder(folder):
        return load_metadata(folder)
    raise ValueError(
        f"{reference!r} is neither a registered meta-data source ({sorted(sources)}) "
        "nor a meta-data folder"
    )
