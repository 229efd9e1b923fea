"""What SMAC searches: a PipelineSpace's own ConfigurationSpace, or the box of a pool."""

from __future__ import annotations

from typing import Any

from ConfigSpace import Configuration, ConfigurationSpace, Constant, Float

from automl_core.space import by_kind, plain_config
from automl_core.trial import Config
from automl_spaces.pipeline_space import PipelineSpace
from automl_spaces.pool_space import PoolSpace
from automl_spaces.snapping import PoolSnapper


class PipelineAdapter:
    """A :class:`PipelineSpace` is searched as it is: ``space.configspace`` is a conditional
    ConfigSpace 1.2 space, which SMAC understands natively (conditions and forbidden clauses
    included). A ``Configuration`` becomes the plain dict of ``space.validate``."""

    snaps = False

    def __init__(self, space: PipelineSpace) -> None:
        self.space = space
        self.configspace = space.configspace

    def configuration(self, config: Config) -> Configuration:
        """The ConfigSpace ``Configuration`` of a valid configuration (raises
        InvalidConfigurationError for one outside the space)."""
        return self.space.to_configuration(config)

    def config_of(self, configuration: Configuration) -> dict[str, Any]:
        """The configuration the run loop evaluates for one SMAC hands out."""
        return self.space.validate(plain_config(configuration))

    def snap(self, proposal: Configuration) -> Configuration | None:
        """Proposals are taken as they are."""
        return proposal

    def claim(self, config: Config) -> None:
        """Nothing to do: SMAC never proposes a configuration of its run history again."""


class PoolAdapter:
    """A :class:`PoolSpace` is searched as a box with one ``Float`` per encoding column (bounds:
    the offered candidates' min and max; a column constant over the pool is a ``Constant``),
    and each proposal is snapped to the nearest candidate not yet proposed (see
    :mod:`automl_spaces.snapping` and :class:`automl_smac3.components.SnappingConfigSelector`)."""

    snaps = True

    def __init__(self, space: PoolSpace) -> None:
        self.snapper = PoolSnapper(space)
        configspace = ConfigurationSpace()
        configspace.add([Float(name, (low, high)) for name, low, high in self.snapper.box("smac3")])
        configspace.add([Constant(n, v) for n, v in self.snapper.constants().items()])
        self.configspace = configspace
        self.candidates: dict[Configuration, int] = {}

    def configuration(self, config: Config) -> Configuration:
        """The box point of a candidate (raises InvalidConfigurationError for a bad one)."""
        candidate = self.snapper.candidate_of(config)
        values = {**self._inside(self.snapper.point_of(candidate)), **self.snapper.constants()}
        configuration = Configuration(self.configspace, values=values)
        self.candidates[configuration] = candidate
        return configuration

    def _inside(self, point: dict[str, float]) -> dict[str, float]:
        """``point`` within the box as ConfigSpace stores it: a ``Float``'s bounds are kept
        to fewer digits than the encodings have, so the candidate at a bound may lie a
        rounding error outside it, which ``Configuration`` refuses."""
        inside = {}
        for name, value in point.items():
            hyperparameter = self.configspace[name]
            inside[name] = min(max(value, hyperparameter.lower), hyperparameter.upper)
        return inside

    def config_of(self, configuration: Configuration) -> dict[str, Any]:
        return {"candidate": self.candidates[configuration]}

    def snap(self, proposal: Configuration) -> Configuration | None:
        """The nearest unclaimed candidate's point (claimed now); None when none is left."""
        candidate = self.snapper.snap(dict(proposal))
        if candidate is None:
            return None
        return self.configuration({"candidate": candidate})

    def claim(self, config: Config) -> None:
        """A candidate evaluated without SMAC asking (a replayed trial) is not offered again."""
        self.snapper.claim_config(config)


def make_adapter(space: object) -> PipelineAdapter | PoolAdapter:
    """The adapter for ``space``; a clear error for a kind of space SMAC cannot search."""

    def unsupported() -> PipelineAdapter | PoolAdapter:
        raise TypeError(
            f"smac3 searches a PipelineSpace or a PoolSpace, got {type(space).__name__}: "
            "SMAC needs a ConfigurationSpace (or a pool's numeric encodings) to search"
        )

    return by_kind(space, PipelineAdapter, PoolAdapter, unsupported)
