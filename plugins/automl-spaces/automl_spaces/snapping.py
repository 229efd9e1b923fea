"""Running a continuous optimiser on a finite pool: search a box, evaluate the nearest candidate.

Optimisers such as SMAC3 and Optuna's TPE search continuous spaces; a table-lookup benchmark
(HPO-B style) offers a finite pool of candidates with numeric encodings. The usual way to run
such an optimiser on a pool is used here: it searches the bounding box of the offered
candidates' encodings (one float per column), and each proposal is *snapped* to the nearest
offered candidate not proposed before. Distances are Euclidean on the encodings scaled to
[0, 1] per column, so that a column with a wide range does not dominate; a column constant
over the pool carries no information and is not searched.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from automl_core.errors import InvalidConfigurationError
from automl_spaces.pool_space import PoolSpace


class PoolSnapper:
    """The box of a pool's available encodings, and nearest-candidate snapping within it."""

    def __init__(self, space: PoolSpace) -> None:
        assert space.available is not None
        self.space = space
        self.indices = np.flatnonzero(space.available)
        if len(self.indices) == 0:
            raise ValueError(f"pool {space.name!r} offers no candidate")
        encodings = space.encodings[self.indices]
        if not np.all(np.isfinite(encodings)):
            raise ValueError(f"pool {space.name!r}: encodings of offered candidates must be finite")
        self.names = [column.name for column in space.columns()]
        self.low = encodings.min(axis=0)
        self.high = encodings.max(axis=0)
        span = self.high - self.low
        #: Columns that vary over the pool: the only ones an optimiser searches.
        self.varying = span > 0
        self.scaled = (encodings - self.low) / np.where(self.varying, span, 1.0)
        self.claimed = np.zeros(len(self.indices), dtype=bool)

    # -- the box ---------------------------------------------------------------------------------
    def bounds(self) -> list[tuple[str, float, float]]:
        """(name, low, high) of every column that varies over the pool."""
        return [
            (name, float(low), float(high))
            for name, low, high, varies in zip(
                self.names, self.low, self.high, self.varying, strict=True
            )
            if varies
        ]

    def box(self, searcher: str) -> list[tuple[str, float, float]]:
        """:meth:`bounds`, for ``searcher`` (a name for the message) to search; a ValueError
        when no column varies: every offered candidate has the same encoding."""
        bounds = self.bounds()
        if not bounds:
            raise ValueError(
                f"pool {self.space.name!r}: every offered candidate has the same encoding, "
                f"so there is no box for {searcher} to search"
            )
        return bounds

    def constants(self) -> dict[str, float]:
        """The columns that are the same for every offered candidate, with their value."""
        return {
            name: float(low)
            for name, low, varies in zip(self.names, self.low, self.varying, strict=True)
            if not varies
        }

    def point_of(self, candidate: int) -> dict[str, float]:
        """A candidate's encoding as a point of the box (varying columns only)."""
        row = self.space.encodings[candidate]
        return {
            name: float(value)
            for name, value, varies in zip(self.names, row, self.varying, strict=True)
            if varies
        }

    def point_of_config(self, config: Mapping[str, object]) -> dict[str, float]:
        """:meth:`point_of` the candidate of a pool configuration (raises
        InvalidConfigurationError for a bad one)."""
        return self.point_of(self.candidate_of(config))

    # -- snapping --------------------------------------------------------------------------------
    def snap(self, point: Mapping[str, float]) -> int | None:
        """Claim and return the nearest unclaimed candidate to ``point`` (a mapping of the
        varying columns' values); ``None`` once every candidate is claimed. Ties go to the
        candidate listed first, so snapping is deterministic."""
        free = np.flatnonzero(~self.claimed)
        if len(free) == 0:
            return None
        target = self._scaled_point(point)
        distances = np.sum((self.scaled[free][:, self.varying] - target) ** 2, axis=1)
        position = free[int(np.argmin(distances))]
        self.claimed[position] = True
        return int(self.indices[position])

    def claim(self, candidate: int) -> bool:
        """Mark ``candidate`` as proposed; False if it already was (or is not offered)."""
        positions = np.flatnonzero(self.indices == candidate)
        if len(positions) == 0 or self.claimed[positions[0]]:
            return False
        self.claimed[positions[0]] = True
        return True

    def claim_config(self, config: Mapping[str, object]) -> bool:
        """:meth:`claim` the candidate of a pool configuration proposed without snapping (warm
        start, replay); raises InvalidConfigurationError for a bad one."""
        return self.claim(self.candidate_of(config))

    @property
    def remaining(self) -> int:
        """How many candidates were not proposed yet."""
        return int(np.count_nonzero(~self.claimed))

    def candidate_of(self, config: Mapping[str, object]) -> int:
        """The candidate index of a pool configuration ``{"candidate": i}`` (validated)."""
        return int(self.space.validate(config)["candidate"])

    def _scaled_point(self, point: Mapping[str, float]) -> np.ndarray:
        values = []
        for name, low, high in self.bounds():
            if name not in point:
                raise InvalidConfigurationError(f"pool {self.space.name!r}: point lacks {name!r}")
            values.append((float(point[name]) - low) / (high - low))
        return np.asarray(values, dtype=float)
