"""``metafeatures: metabu`` and the meta-data source ``metabu``: Metabu's meta-features of a
dataset, and a meta-data described by them.

The provider computes the dataset's basic representation with another provider (``basic``,
``handcrafted`` by default: the one that describes the meta-data's datasets) and maps it
through ψ, fitted on ``metadata`` (a source name or folder) at first use, or on what
:meth:`MetabuMetaFeatures.fit` is given. The source is that meta-data with its meta-feature
table replaced by Metabu's, so that a warm-starter comparing datasets (knd) compares them in
Metabu's space::

    metafeatures: {name: metabu, params: {metadata: ~/keel-metadata/metadata}}
    warmstart:
      starter: knd
      params: {metadata: metabu, metadata_params: {metadata: ~/keel-metadata/metadata}}

Both fit the same map (the cache key is the same), once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from automl_core.contracts import MetaData, MetaFeatureProvider
from automl_core.plugins import Plugins, registry_or_installed
from automl_engine.metastore import resolve_metadata
from automl_metafeatures_metabu.fitting import FittedMetabu, MetabuSettings, fit_metabu
from automl_metafeatures_metabu.learn import FGWSettings


class MetabuMetaFeatures(MetaFeatureProvider):
    """``metadata``: what ψ is fitted on (a meta-data source name, a folder, or a
    :class:`MetaData`; None: only what :meth:`fit` is given). ``basic``/``basic_params``: the
    provider of the basic representation. ``exclude``: datasets left out of the fit.
    ``dimension`` (None: TwoNN's), ``top``, ``alpha``, ``l1``: the thesis's constants."""

    def __init__(
        self,
        metadata: str | Path | MetaData | None = None,
        metadata_params: Mapping[str, Any] | None = None,
        basic: str = "handcrafted",
        basic_params: Mapping[str, Any] | None = None,
        exclude: Sequence[str] = (),
        top: int = 20,
        dimension: int | None = None,
        alpha: float = 0.5,
        l1: float = 1e-3,
        seed: int = 42,
        registry: Plugins | None = None,
    ) -> None:
        if not isinstance(top, int) or top < 1:
            raise ValueError(f"top: got {top!r}, expected a positive integer")
        if dimension is not None and (not isinstance(dimension, int) or dimension < 1):
            raise ValueError(f"dimension: got {dimension!r}, expected a positive integer or null")
        if not 0 <= alpha <= 1:
            raise ValueError(f"alpha: got {alpha!r}, expected a number in [0, 1]")
        self.metadata, self.metadata_params = metadata, dict(metadata_params or {})
        self.basic, self.basic_params = basic, dict(basic_params or {})
        self.exclude = [str(d) for d in exclude]
        fgw = FGWSettings(alpha=float(alpha), l1=float(l1), seed=int(seed))
        self.settings = MetabuSettings(top=top, dimension=dimension, fgw=fgw)
        self.fitted: FittedMetabu | None = None
        self._basic_provider: MetaFeatureProvider | None = None
        #: the registry the meta-data source and the basic provider are built from: the
        #: run's (given by the core when it builds this provider), else the installed plugins
        self.registry = registry

    def fit(self, metadata: MetaData) -> None:
        """Fit ψ on ``metadata`` (its meta-feature table is the basic representation)."""
        self.fitted = fit_metabu(metadata, self.settings, self.exclude)

    def compute(self, X: pd.DataFrame, y: np.ndarray, task: str) -> dict[str, float]:
        fitted = self.fitted_map()
        basic = self._basic().compute(X, y, task)
        row = pd.DataFrame([basic])
        mapped = fitted.transform(row).iloc[0]
        return {str(name): float(value) for name, value in mapped.items()}

    def fitted_map(self) -> FittedMetabu:
        """ψ: fitted by :meth:`fit`, or now on ``metadata``."""
        if self.fitted is None:
            if self.metadata is None:
                raise ValueError(
                    "metabu: no meta-data to fit on; set the provider's `metadata` parameter "
                    "(a source name such as a folder written by `automl data build`)"
                )
            self.fit(self._metadata())
        assert self.fitted is not None
        return self.fitted

    def _metadata(self) -> MetaData:
        if isinstance(self.metadata, MetaData):
            return self.metadata
        assert self.metadata is not None
        return resolve_metadata(self.metadata, self.metadata_params, self._registry())

    def _registry(self) -> Plugins:
        """The registry that built this provider (else the installed plugins, loaded once)."""
        self.registry = registry_or_installed(self.registry)
        return self.registry

    def _basic(self) -> MetaFeatureProvider:
        if self._basic_provider is None:
            provider = self._registry().create(
                "metafeature_provider", self.basic, dict(self.basic_params)
            )
            self._basic_provider = provider
        return self._basic_provider


class MetabuMetaData:
    """The meta-data source ``metabu``: ``metadata`` with its meta-features mapped by the
    Metabu map fitted on it (the provider's parameters, less ``basic``)."""

    def __init__(
        self,
        metadata: str | Path,
        metadata_params: Mapping[str, Any] | None = None,
        exclude: Sequence[str] = (),
        top: int = 20,
        dimension: int | None = None,
        alpha: float = 0.5,
        l1: float = 1e-3,
        seed: int = 42,
        registry: Plugins | None = None,
    ) -> None:
        self.provider = MetabuMetaFeatures(
            metadata,
            metadata_params,
            exclude=exclude,
            top=top,
            dimension=dimension,
            alpha=alpha,
            l1=l1,
            seed=seed,
            registry=registry,
        )

    def load(self) -> MetaData:
        source = self.provider._metadata()
        fitted = self.provider.fitted_map()
        assert source.metafeatures is not None
        table = source.metafeatures.set_axis(source.metafeatures.index.astype(str), axis=0)
        mapped = fitted.transform(table)
        info = {**source.info, "source": f"metabu({fitted.info.get('source', 'meta-data')})"}
        return dataclasses.replace(source, metafeatures=mapped, info=info)
