"""The pool space: a finite set of candidates with vector encodings (the pipelines of a
meta-dataset); a configuration is ``{"candidate": index}``. It implements the protocol of
:mod:`automl_core.space` without ConfigSpace.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from automl_core.errors import InvalidConfigurationError
from automl_core.space import (
    INACTIVE,
    ComponentBlock,
    EncodingBlocks,
    EncodingColumn,
    StageBlock,
    VectorSpace,
    config_key,
)
from automl_core.trial import Config


@dataclass
class PoolSpace:
    """A finite pool of candidates; a configuration is ``{"candidate": index}``.

    ``encodings`` has one row per candidate. ``stage_choices`` (optional, one column per stage
    in ``stage_names``) gives the component chosen in each stage, for tree search and for
    :meth:`blocks`. ``available`` masks out candidates that may not be offered (e.g. never run
    on the dataset). ``descriptions`` (optional) says what each candidate is, e.g. its
    algorithm and hyper-parameters, for people and for surrogates that read pipelines.

    The :class:`VectorSpace` protocol on a pool: distances (neighbours, decoding a row that is
    no candidate's) are Euclidean on the encodings scaled to [0, 1] per column over the
    offered candidates (as :class:`~automl_spaces.snapping.PoolSnapper` scales them), so that a
    wide column does not dominate; ties go to the lower candidate index. A pool has no
    default (:meth:`default` is None).
    """

    name: str
    encodings: np.ndarray
    stage_names: tuple[str, ...] = ()
    stage_choices: np.ndarray | None = None
    available: np.ndarray | None = None
    descriptions: list[dict[str, Any]] | None = None
    #: (what the blocks were derived from, the blocks): derived once, again if a field changes
    _blocks: tuple[tuple[Any, ...], EncodingBlocks] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        self.encodings = np.asarray(self.encodings, dtype=float)
        if self.available is None:
            self.available = np.ones(len(self.encodings), dtype=bool)

    @property
    def size(self) -> int:
        assert self.available is not None
        return int(np.count_nonzero(self.available))

    def candidates(self) -> list[dict[str, Any]]:
        assert self.available is not None
        return [{"candidate": int(i)} for i in np.flatnonzero(self.available)]

    def sample(self, rng: np.random.Generator, n: int) -> list[dict[str, Any]]:
        assert self.available is not None
        pool = np.flatnonzero(self.available)
        chosen = rng.choice(pool, size=min(n, len(pool)), replace=False)
        return [{"candidate": int(i)} for i in chosen]

    def validate(self, config: Config) -> dict[str, Any]:
        assert self.available is not None
        index = config.get("candidate") if isinstance(config, Mapping) else None
        if not isinstance(index, (int, np.integer)) or not 0 <= index < len(self.encodings):
            raise InvalidConfigurationError(
                f"pool {self.name!r}: expected {{'candidate': 0..{len(self.encodings) - 1}}}, "
                f"got {config!r}"
            )
        if not self.available[index]:
            raise InvalidConfigurationError(f"pool {self.name!r}: candidate {index} not offered")
        return {"candidate": int(index)}

    def encode(self, configs: Sequence[Config]) -> np.ndarray:
        indices = [self.validate(c)["candidate"] for c in configs]
        return self.encodings[indices]

    def key(self, config: Config) -> str:
        return config_key(config)

    def columns(self) -> list[EncodingColumn]:
        """Every column of a pool's encoding is a number; one that holds ``INACTIVE`` for some
        candidates is conditional."""
        inactive = (self.encodings == INACTIVE).any(axis=0)
        return [EncodingColumn(f"x{i}", conditional=bool(flag)) for i, flag in enumerate(inactive)]

    def restrict(
        self,
        include: Mapping[str, Iterable[str]] | None = None,
        exclude: Mapping[str, Iterable[str]] | None = None,
        *,
        available: npt.ArrayLike | None = None,
    ) -> PoolSpace:
        """The same pool offering fewer candidates: those offered here, of ``available``
        (a mask over all candidates) when given, and whose active component in each stage of
        :meth:`blocks` is included (or not excluded). A KeyError names an unknown stage; a
        ValueError says when ``include``/``exclude`` leave no candidate."""
        assert self.available is not None
        mask = self.available.copy()
        if available is not None:
            mask &= np.asarray(available, dtype=bool)
        if include or exclude:
            blocks, choices = self.blocks(), self._choice_matrix()
            included = {k: set(v) for k, v in (include or {}).items()}
            excluded = {k: set(v) for k, v in (exclude or {}).items()}
            for stage_name in [*included, *excluded]:
                blocks.stage(stage_name)  # KeyError names an unknown stage
            for position, stage in enumerate(blocks.stages):
                keep = np.array(
                    [
                        (stage.name not in included or name in included[stage.name])
                        and name not in excluded.get(stage.name, set())
                        for name in stage.names
                    ]
                )
                mask &= keep[choices[:, position]]
            if not mask.any():
                raise ValueError(f"pool {self.name!r} would have no candidates left")
        restricted = replace(self, available=mask)
        restricted._blocks = self._blocks  # blocks describe every candidate, offered or not
        return restricted

    def describe(self, config: Config) -> dict[str, Any]:
        """What candidate ``config`` is: its description, or its index when there is none."""
        index = self.validate(config)["candidate"]
        if self.descriptions is None:
            return {"candidate": index}
        return dict(self.descriptions[index])

    # -- the rest of the VectorSpace protocol --------------------------------------------------
    def as_pipeline(self) -> None:
        return None

    def as_pool(self) -> PoolSpace:
        return self

    def default(self) -> None:
        """None: a pool has no prior default. Any one candidate (the first, a medoid) would be
        an arbitrary choice that strategies would then try first on every dataset; they start
        from the warm start or at random instead."""
        return None

    def sample_vectors(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """The encodings of :meth:`sample`'s candidates (the same random draws)."""
        return self.encode(self.sample(rng, n))

    def decode(self, vector: np.ndarray) -> dict[str, Any]:
        """The offered candidate whose encoding is ``vector``, else the nearest one (a row of
        a continuous optimiser snaps to a candidate). Candidates with equal encodings are
        not told apart: the lowest index is returned."""
        indices, scaled, low, span = self._scaled()
        target = (np.asarray(vector, dtype=float) - low) / span
        distances = np.sum((scaled - target) ** 2, axis=1)
        return {"candidate": int(indices[int(np.argmin(distances))])}

    def neighbours(
        self, config: Config, rng: np.random.Generator, n: int = 4
    ) -> list[dict[str, Any]]:
        """The ``n`` offered candidates nearest to ``config``'s, nearest first: a pool's
        stand-in for "one value changed", since its candidates are not one change apart.
        ``rng`` is not used (the answer is deterministic)."""
        index = self.validate(config)["candidate"]
        indices, scaled, _, _ = self._scaled()
        others = indices != index
        order = self._nearest(scaled[others], scaled[indices == index][0])
        return [{"candidate": int(i)} for i in indices[others][order[:n]]]

    def neighbour_vectors(
        self, vector: np.ndarray, rng: np.random.Generator, n: int = 4
    ) -> np.ndarray:
        """The encodings of the ``n`` offered candidates nearest to ``vector`` whose encoding
        differs from it, nearest first, each encoding once. ``rng`` is not used."""
        indices, scaled, low, span = self._scaled()
        vector = np.asarray(vector, dtype=float)
        rows = self.encodings[indices]
        differs = (rows != vector).any(axis=1)
        order = self._nearest(scaled[differs], (vector - low) / span)
        ordered = rows[differs][order]
        _, first = np.unique(ordered, axis=0, return_index=True)
        return ordered[np.sort(first)[:n]]

    @staticmethod
    def _nearest(points: np.ndarray, target: np.ndarray) -> np.ndarray:
        """Positions of ``points`` by increasing distance to ``target``, ties in order."""
        return np.argsort(np.sum((points - target) ** 2, axis=1), kind="stable")

    def _scaled(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The offered candidates' indices, their encodings scaled to [0, 1] per column, and
        the scaling (low, span; span 1 for a constant column)."""
        assert self.available is not None
        indices = np.flatnonzero(self.available)
        if not len(indices):
            raise ValueError(f"pool {self.name!r} offers no candidate")
        rows = self.encodings[indices]
        if not np.all(np.isfinite(rows)):
            raise ValueError(f"pool {self.name!r}: encodings of offered candidates must be finite")
        low = rows.min(axis=0)
        span = rows.max(axis=0) - low
        span = np.where(span > 0, span, 1.0)
        return indices, (rows - low) / span, low, span

    # -- blocks ------------------------------------------------------------------------------
    def blocks(self) -> EncodingBlocks:
        """The stages and components of the pool and the columns of each, derived from what
        the candidates hold (over every candidate, offered or not, so that restricting a pool
        keeps its blocks).

        * Without stage structure (``stage_names``, ``stage_choices``): one stage called
          ``candidate`` with one component named after the pool, owning every column. A
          pool says nothing of its candidates' parts, so one encoder reads the whole row.
        * With it: the stages of ``stage_names``; stage ``s`` has a component per choice
          index ``0..max(stage_choices[:, s])``, named by the candidates' descriptions when
          they name it consistently (``description[stage]`` when a string, else
          ``description[stage]["algorithm"]``, None read as ``"none"``: the forms of the
          Oboe, LCDB and DeepPipe meta-data), else by its index. A column belongs to
          component ``k`` of stage ``s`` when it holds one value on every candidate that does
          not choose ``k`` (``INACTIVE``, or a one-hot 0) and another value on some candidate
          that does: the column then describes that component and nothing else, which is
          what :class:`PipelineSpace` encodings mean too (a one-hot column of the component
          is its own as well). When several components explain a column (a model's
          hyper-parameter that varies only in pipelines with one preprocessor too), the one
          chosen by the fewest candidates takes it, the most specific explanation; ties go
          to the first in order. Columns no component explains are shared.

        On DeepPipe's PMF pool this recovers the file's own algorithm blocks
        (``algorithm_domain``), less its seven columns that are 0 for every pipeline, which
        are shared. A meta-dataset that encodes an unused component with varying values
        leaves such columns shared.
        """
        source = (
            id(self.encodings),
            id(self.stage_choices),
            self.stage_names,
            id(self.descriptions),
        )
        if self._blocks is None or self._blocks[0] != source:
            self._blocks = (source, self._make_blocks())
        return self._blocks[1]

    def active_components(self, config: Config) -> dict[str, str]:
        """Per stage of :meth:`blocks`, the component candidate ``config`` chooses."""
        index = self.validate(config)["candidate"]
        blocks, choices = self.blocks(), self._choice_matrix()
        return {
            stage.name: stage.components[choices[index, position]].name
            for position, stage in enumerate(blocks.stages)
        }

    def _structured(self) -> bool:
        return self.stage_choices is not None and bool(self.stage_names)

    def _choice_matrix(self) -> np.ndarray:
        """Per candidate and stage of :meth:`blocks`, the position of its component."""
        if not self._structured():
            return np.zeros((len(self.encodings), 1), dtype=np.int64)
        choices = np.asarray(self.stage_choices)
        shape = (len(self.encodings), len(self.stage_names))
        if choices.shape != shape or (choices < 0).any() or (choices != np.round(choices)).any():
            raise ValueError(
                f"pool {self.name!r}: stage_choices must be a {shape[0]} x {shape[1]} matrix of "
                f"component positions (>= 0), got shape {choices.shape}"
            )
        return choices.astype(np.int64)

    def _make_blocks(self) -> EncodingBlocks:
        width = self.encodings.shape[1]
        if not self._structured():
            whole = ComponentBlock(self.name, tuple(range(width)))
            return EncodingBlocks(width, (StageBlock("candidate", (whole,)),))
        choices = self._choice_matrix()
        # Per column: the fewest candidates of a component that explains it, and which.
        fewest = np.full(width, len(choices) + 1)
        owner = np.full((width, 2), -1)
        for s in range(choices.shape[1]):
            for k in range(int(choices[:, s].max()) + 1 if len(choices) else 0):
                chosen = choices[:, s] == k
                if chosen.all() or not chosen.any():
                    continue  # nothing to contrast the component with
                outside = self.encodings[~chosen]
                constant = (outside == outside[0]).all(axis=0)
                differs = (self.encodings[chosen] != outside[0]).any(axis=0)
                better = constant & differs & (int(chosen.sum()) < fewest)
                fewest[better] = int(chosen.sum())
                owner[better] = (s, k)
        owned: dict[tuple[int, int], list[int]] = {}
        for column, (s, k) in enumerate(owner.tolist()):
            if s >= 0:
                owned.setdefault((s, k), []).append(column)
        unexplained = owner[:, 0] < 0
        stages = []
        for s, stage in enumerate(self.stage_names):
            count = int(choices[:, s].max()) + 1 if len(choices) else 1
            names = self._component_names(s, stage, choices[:, s], count)
            components = tuple(
                ComponentBlock(names[k], tuple(owned.get((s, k), ()))) for k in range(count)
            )
            stages.append(StageBlock(stage, components))
        return EncodingBlocks(
            width, tuple(stages), tuple(int(c) for c in np.flatnonzero(unexplained))
        )

    def _component_names(self, s: int, stage: str, choices: np.ndarray, count: int) -> list[str]:
        """The components' names of stage ``stage`` (column ``s``): the descriptions' when
        they name every component, one name per index, else the indices."""
        indices = [str(k) for k in range(count)]
        if self.descriptions is None or len(self.descriptions) != len(choices):
            return indices
        named: dict[int, str] = {}
        for description, choice in zip(self.descriptions, choices, strict=True):
            label = _component_label(description, stage)
            if label is None or named.setdefault(int(choice), label) != label:
                return indices
        names = [named.get(k) for k in range(count)]
        if None in names or len(set(names)) != count:
            return indices
        return [str(name) for name in names]


def _component_label(description: Any, stage: str) -> str | None:
    """What a pool's candidate description calls its component of ``stage``, if anything."""
    part = description.get(stage) if isinstance(description, Mapping) else None
    if isinstance(part, str):
        return part
    if isinstance(part, Mapping) and "algorithm" in part:
        return "none" if part["algorithm"] is None else str(part["algorithm"])
    return None


if TYPE_CHECKING:  # mypy proves here that the kind implements the whole protocol
    _PROTOCOL: type[VectorSpace] = PoolSpace
