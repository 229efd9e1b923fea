"""DeepPipe as a surrogate: a deep-kernel GP fine-tuned on a search's observations.

At every ``fit`` (every BO step, the paper's Algorithm 2) the model starts again from the
meta-trained checkpoint and takes up to ``steps`` Adam steps on the NLL of the observations,
updating the whole network too (``fine_tune: all``, the authors' code, the default) or the
kernel parameters only (``fine_tune: kernel``, the paper). On 10 PMF test datasets x 3 seeds
(docs/benchmarks.md) ``all`` ended with the best mean rank of eight methods after 100 trials
(3.45) and ``kernel`` among the worst (4.87), at about twice the cost of a step.

Without meta-data or a checkpoint it is the paper's *non-transfer* DeepPipe: the network
is initialised at random and trained whole; each fit then continues from the previous fit's
weights (the authors train from scratch for 10,000 iterations at every step, which a search
of minutes cannot afford).

Where the weights come from:

- ``checkpoint``: a file written by ``automl deeppipe train`` (or :meth:`Checkpoint.save`),
  or ``authors:NAME``, the authors' own meta-trained weights from the ``deeppipe-api``
  wheel (``authors:DeepPipeTOboe2`` on the ``tensor-oboe`` pool; :mod:`.authors`), imported
  once into the checkpoint cache;
- ``metadata`` (a source name such as ``pmf``, or a folder) with ``split``: meta-trained on
  it with ``preset``, or taken from the cache when it was before;
- neither: non-transfer.

Meta-training leaves out the datasets named in ``exclude`` and, with ``exclude_self`` (the
default), the task's own dataset under any of its names, as the knd and portfolio
warm-starters do: a search on a dataset of the meta-data is then a fair leave-one-out, not a
model that has seen the answers.

With the network frozen (meta-trained weights, ``fine_tune: kernel``) a row's embedding never
changes during a search: each row is embedded once, and every fit and prediction after that
reads the stored embedding (PMF's 24,687 pipelines of a dataset are embedded at the first step
only).

An algorithm that meta-training never saw (``new_components``, the paper's Experiment 4)
keeps its randomly initialised encoder, which is trained with the kernel while every other
encoder and the aggregation layers stay frozen.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from automl_core.contracts import MetaData, Surrogate, TaskDescription
from automl_core.errors import AutoMLError
from automl_core.space import (
    ComponentBlock,
    EncodingBlocks,
    EncodingColumn,
    SearchSpace,
    StageBlock,
    VectorSpace,
    check_columns,
    check_encoded,
    check_losses,
)
from automl_engine.metastore import (
    check_dataset_ids,
    check_metadata_reference,
    left_out_datasets,
    metadata_for,
)
from automl_spaces.acquisition import standardise
from automl_spaces.component_rows import numeric_ranges
from automl_surrogate_deeppipe.authors import (
    ACCURACY_TARGETS,
    AUTHORS_CHECKPOINTS,
    authors_checkpoint,
    kernel_on_standardised_losses,
    pool_fingerprint,
    structure_layout,
    structure_selector,
)
from automl_surrogate_deeppipe.layout import Layout, Selector
from automl_surrogate_deeppipe.metatrain import (
    PRESETS,
    Architecture,
    Checkpoint,
    candidate_rows,
    checkpoint_dir,
    meta_train,
    split_datasets,
    training_key,
    uses_run_space,
)
from automl_surrogate_deeppipe.model import (
    DTYPE,
    NETWORK_DTYPE,
    DeepKernelGP,
    Steps,
    fine_tune,
    pack,
    posterior,
    torch_threads,
)
from automl_surrogate_deeppipe.network import DEPTH
from automl_surrogate_deeppipe.shipped import SHIPPED, shipped_for

WHERE = "deeppipe surrogate"
FINE_TUNING = ("kernel", "all")


class DeepPipeSurrogate(Surrogate):
    """DeepPipe's deep-kernel GP (Pineda Arango & Grabocka, KDD 2023) over a space's
    per-component encodings."""

    def __init__(
        self,
        metadata: str | Path | MetaData | None = None,
        metadata_params: Mapping[str, Any] | None = None,
        split: str | Sequence[str] = "train",
        validation: str | None = None,
        preset: str = "default",
        checkpoint: str | Path | None = None,
        encoder_layers: int = 1,
        width_factor: int = 8,
        latent: int = 20,
        depth: int = DEPTH,
        fine_tune: str = "all",
        steps: int = 100,
        lr: float = 1e-3,
        new_components: Mapping[str, Sequence[str]] | None = None,
        omit: Mapping[str, Sequence[str]] | None = None,
        exclude: Sequence[str] = (),
        exclude_self: bool = True,
        seed: int = 0,
        meta_seed: int = 0,
        threads: int | None = 1,
        cache: bool = True,
    ) -> None:
        check_metadata_reference(metadata, metadata_params)
        if preset not in PRESETS:
            raise ValueError(f"preset: got {preset!r}, expected one of {', '.join(PRESETS)}")
        if fine_tune not in FINE_TUNING:
            raise ValueError(
                f"fine_tune: got {fine_tune!r}, expected one of {', '.join(FINE_TUNING)}"
            )
        if not isinstance(steps, int) or steps < 1:
            raise ValueError(f"steps: got {steps!r}, expected a positive integer")
        if not isinstance(depth, int) or depth < 1:
            raise ValueError(f"depth: got {depth!r}, expected a positive integer")
        if not isinstance(encoder_layers, int) or not 0 <= encoder_layers < depth:
            raise ValueError(
                f"encoder_layers: got {encoder_layers!r}, expected 0 to {depth - 1} (depth {depth})"
            )
        if width_factor < 1 or latent < 1:
            raise ValueError("width_factor and latent must be positive integers")
        if not isinstance(exclude_self, bool):
            raise ValueError(f"exclude_self: got {exclude_self!r}, expected true or false")
        if metadata is not None and checkpoint is not None:
            raise ValueError("metadata and checkpoint: give one, the weights come from either")
        self.metadata, self.metadata_params = metadata, dict(metadata_params or {})
        self.split, self.validation, self.preset = split, validation, preset
        self.checkpoint = checkpoint
        self.architecture = Architecture(encoder_layers, width_factor, latent, depth)
        self.fine_tune, self.steps, self.lr = fine_tune, steps, lr
        self.new_components = {k: list(v) for k, v in (new_components or {}).items()}
        self.omit = {k: list(v) for k, v in (omit or {}).items()}
        self.exclude = check_dataset_ids("exclude", exclude)
        self.exclude_self = exclude_self
        #: the task the search is on (told by ``prepare_space``), left out of meta-training
        self._task: TaskDescription | None = None
        self.seed, self.threads, self.cache = seed, threads, cache
        #: meta-training's seed, apart from the run's: runs with other seeds share a checkpoint
        self.meta_seed = meta_seed
        self._columns: list[EncodingColumn] | None = None
        self._layout: Layout | None = None
        self._selector: Selector | None = None
        #: the meta-trained weights (None: non-transfer)
        self._meta: Checkpoint | None = None
        #: non-transfer: the last fit's weights, where the next fit starts
        self._last_state: dict[str, torch.Tensor] | None = None
        self._model: DeepKernelGP | None = None
        self._scale = (0.0, 1.0)
        #: with the network frozen, each row's embedding, computed once
        self._embeddings: EmbeddingCache | None = None
        #: on a pool, every pipeline's network inputs, packed once (see :meth:`_pack`)
        self._pool_packed: torch.Tensor | None = None

    # -- the contract ------------------------------------------------------------------------
    def prepare(self, columns: Sequence[EncodingColumn]) -> None:
        check_columns(columns, WHERE)
        if self._layout is not None and len(columns) != len(self._layout.columns):
            raise ValueError(
                f"{WHERE}: prepared for {len(self._layout.columns)} columns, now {len(columns)}"
            )
        self._columns = list(columns)

    def prepare_space(self, space: VectorSpace, task: TaskDescription | None = None) -> None:
        """Build the per-component layout from ``space``, and load or meta-train the weights
        its ``metadata`` / ``checkpoint`` name (without ``task``'s dataset)."""
        self._task = task
        if self.checkpoint is None:
            self._use_space(space)
            if self.metadata is not None:
                self.meta_fit(self._resolved_metadata(), space)
            return
        if self.checkpoint == SHIPPED:
            self._use_space(space)
            assert self._layout is not None
            path, shipped = shipped_for(self._layout)
            self._meta = self._checked(shipped, str(path))
            self._warn_if_trained_on_task(shipped, path.name)
            return
        checkpoint = self._load_checkpoint()
        structure = checkpoint.info.get("structure")
        if structure:
            self._use_structure(space, structure)
        else:
            self._use_space(space)
        self._meta = self._checked(checkpoint, str(self.checkpoint))

    def check_space(self, space: VectorSpace, task: TaskDescription | None = None) -> None:
        """What ``automl validate`` asks before a run: the meta-data named in ``metadata`` is
        over this space (the same per-component layout) and has the splits named, so that a
        mismatch is refused before the run, not minutes into meta-training. A ``checkpoint``
        file (or ``default``, the shipped one) is of this space's layout; the authors'
        weights are checked on their pool when the run loads them."""
        if self.checkpoint is not None:
            self._check_checkpoint_fits(space)
            return
        if self.metadata is None:
            return
        metadata = metadata_for(self.metadata, self.metadata_params, task, WHERE)
        if uses_run_space(metadata):
            candidate_rows(metadata, space)  # its configurations are this space's
        else:
            assert metadata.pool is not None
            ours = Layout.of(list(space.columns()), space.blocks(), numeric_ranges(space))
            self._refuse_another_layout(metadata.pool, metadata, ours)
        split_datasets(metadata, self.split, self.validation, self.meta_seed)

    def training_before_search(
        self, space: VectorSpace, task: TaskDescription | None = None
    ) -> str | None:
        """Meta-training that the run would do before its first trial: with ``metadata``
        and no checkpoint of that training in the cache (seconds to many minutes, which no
        wall time bounds). None when the weights load at once."""
        if self.metadata is None or self.checkpoint is not None or not self.cache:
            return None
        self._task = task
        metadata = self._resolved_metadata()
        pool_space = space if space.as_pool() is not None or uses_run_space(metadata) else None
        key = training_key(metadata, pool_space or metadata.pool, **self._training(metadata))
        if (checkpoint_dir() / f"{key}.pt").exists():
            return None
        name = metadata.info.get("source") or self.metadata
        return (
            f"DeepPipe would meta-train on {name!r} (preset {self.preset}) before the first "
            "trial, which the wall time does not bound: train it once into the cache with "
            "`automl deeppipe train --recipe RECIPE` (RECIPE: this recipe's file), or use "
            "`checkpoint: default` (the shipped one)"
        )

    def meta_fit(self, metadata: MetaData, space: SearchSpace) -> None:
        """Meta-train on ``metadata`` (its pool: ``space``, or the meta-data's own pool when
        ``space`` is not a pool; meta-data built by runs over a pipeline space: ``space``
        encodes its configurations), or take the cached checkpoint of the same training."""
        on_pool = getattr(space, "as_pool", lambda: None)() is not None
        pool_space: Any = space if on_pool or uses_run_space(metadata) else metadata.pool
        if self._layout is None:
            self._use_space(pool_space)
        if not uses_run_space(metadata):
            self._refuse_another_layout(pool_space, metadata)
        checkpoint = meta_train(
            metadata,
            pool_space,
            **self._training(metadata),
            threads=self.threads,  # torch's default (every core) contends with trial workers
            cache=self.cache,
        )
        self._meta = self._checked(checkpoint, "the meta-trained checkpoint")

    def fit(self, X: np.ndarray, y: np.ndarray) -> DeepPipeSurrogate:
        X = np.asarray(X, dtype=float)
        if self._layout is None:
            self._use_columns(self._columns or _numeric_columns(X.shape[1]))
        assert self._layout is not None
        check_encoded(X, self._layout.columns, WHERE)
        y = check_losses(y, len(X), WHERE)
        targets, mean, scale = standardise(y)
        self._scale = (mean, scale)
        with torch_threads(self.threads):
            model = self._start()
            model.reads_embeddings = self._network_frozen()
            inputs = self._inputs(model, X)
            fine_tune(
                model,
                inputs,
                torch.as_tensor(targets, dtype=DTYPE),
                self._trainable(model),
                Steps(steps=self.steps, lr=self.lr),
            )
        model.set_train_data(inputs, torch.as_tensor(targets, dtype=DTYPE), strict=False)
        if self._meta is None:
            self._last_state = copy.deepcopy(model.state_dict())
        self._model = model
        return self

    def predict(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self._model is None or self._layout is None:
            raise RuntimeError(f"{WHERE}: predict() called before fit()")
        X = np.asarray(X, dtype=float)
        check_encoded(X, self._layout.columns, WHERE)
        with torch_threads(self.threads):
            mean, std = posterior(self._model, self._inputs(self._model, X))
        offset, scale = self._scale
        return mean * scale + offset, std * scale

    # -- inspection ---------------------------------------------------------------------------
    @property
    def layout(self) -> Layout | None:
        return self._layout

    @property
    def meta_checkpoint(self) -> Checkpoint | None:
        """The meta-trained weights in use (None: non-transfer)."""
        return self._meta

    def embed(self, X: np.ndarray) -> np.ndarray:
        """φ of encoded rows under the current weights (fitted, else meta-trained or initial)."""
        model = self._model or self._start()
        with torch.no_grad():
            return model.embed(self._inputs(model, np.asarray(X, dtype=float))).numpy()

    # -- helpers ------------------------------------------------------------------------------
    def _use_space(self, space: VectorSpace) -> None:
        columns = list(space.columns())
        self._columns = columns
        self._layout = Layout.of(columns, space.blocks(), numeric_ranges(space))
        self._selector = Selector(space)
        self._pool_packed = None

    def _use_structure(self, space: VectorSpace, structure: dict[str, Any]) -> None:
        """The layout and selector a checkpoint brings (the authors' weights: their meta-data
        file's structure), on the pool they were made for."""
        pool = space.as_pool()
        if pool is None or pool_fingerprint(pool.encodings) != structure.get("pool"):
            raise ValueError(
                f"{WHERE}: checkpoint {self.checkpoint} was made for one pool of pipelines "
                "(its encoders follow that meta-data file's structure); this space is another"
            )
        columns = list(space.columns())
        self._columns = columns
        self._layout = structure_layout(columns, structure)
        self._selector = structure_selector(pool, structure)
        self._pool_packed = None

    def _load_checkpoint(self) -> Checkpoint:
        """``checkpoint``'s file; ``authors:NAME`` from the cache, imported on first use."""
        reference = str(self.checkpoint)
        if not reference.startswith("authors:"):
            return Checkpoint.load(Path(reference))
        name = reference.removeprefix("authors:")
        if name not in AUTHORS_CHECKPOINTS:
            raise ValueError(
                f"{WHERE}: checkpoint {reference!r}: the authors' are "
                f"{', '.join('authors:' + n for n in AUTHORS_CHECKPOINTS)}"
            )
        path = checkpoint_dir() / f"authors-{name}.pt"
        if path.exists():
            return Checkpoint.load(path)
        metadata = metadata_for(AUTHORS_CHECKPOINTS[name], None, self._task, WHERE)
        checkpoint = authors_checkpoint(name, metadata)
        if self.cache:
            checkpoint.save(path)
        return checkpoint

    def _use_columns(self, columns: list[EncodingColumn]) -> None:
        """Without a space: one stage, one component reading every column (a plain deep
        kernel over the whole row)."""
        blocks = EncodingBlocks(
            width=len(columns),
            stages=(StageBlock("pipeline", (ComponentBlock("all", tuple(range(len(columns)))),)),),
        )
        self._layout = Layout.of(columns, blocks)
        self._selector = None
        self._pool_packed = None

    def _network_frozen(self) -> bool:
        """True when fits train the kernel only, on the meta-trained network's embeddings."""
        return self._meta is not None and self.fine_tune == "kernel" and not self.new_components

    def _inputs(self, model: DeepKernelGP, X: np.ndarray) -> torch.Tensor:
        """What ``model`` reads for the rows ``X``: their stored embeddings when it reads
        embeddings, else the packed inputs."""
        if not model.reads_embeddings:
            return self._pack(X)
        if self._embeddings is None:
            frozen = self._start()
            self._embeddings = EmbeddingCache(lambda rows: _embedded(frozen, self._pack(rows)))
        return torch.as_tensor(self._embeddings(X), dtype=DTYPE)

    def _pack(self, X: np.ndarray) -> torch.Tensor:
        """The network's inputs for ``X``. On a pool they are read from the whole pool's,
        packed at the first call: every BO step scores the pool less the rows proposed so
        far, and transforming PMF's 24,687 offered rows and finding their algorithms took
        ~0.1 s of a ~1.2 s step (measured), finding them in the packed pool ~0.02 s."""
        assert self._layout is not None
        if self._selector is None:
            return pack(self._layout.transform(X), np.zeros((len(X), 1), int))
        positions = self._selector.pool_positions(X)
        if positions is None:
            return pack(self._layout.transform(X), self._selector(X))
        if self._pool_packed is None:
            table = self._selector.pool_table
            assert table is not None
            self._pool_packed = pack(self._layout.transform(table), self._selector(table))
        return self._pool_packed[torch.from_numpy(positions)]

    def _start(self) -> DeepKernelGP:
        """The model a fit starts from: the meta-trained weights, else the last fit's, else a
        fresh initialisation."""
        assert self._layout is not None
        model = self.architecture.build(self._layout, self.seed)
        state = self._meta.state if self._meta is not None else self._last_state
        if state is not None:
            model.load_state_dict(state)
        if self._meta is not None and self._meta.info.get("targets") == ACCURACY_TARGETS:
            kernel_on_standardised_losses(model, *self._scale)
        if self._meta is not None and self.new_components:
            self._reinitialise_new(model)
        return model

    def _trainable(self, model: DeepKernelGP) -> list[torch.nn.Parameter]:
        if self._meta is None:  # non-transfer: everything
            return list(model.parameters())
        if self.new_components:  # Experiment 4: the kernel and the new encoders only
            if not model.embedder.encoders:  # no encoders: the paper fine-tunes the network
                return list(model.parameters())
            return model.kernel_parameters() + self._new_encoder_parameters(model)
        if self.fine_tune == "all":
            return list(model.parameters())
        return model.kernel_parameters()

    def _new_neurons(self, model: DeepKernelGP) -> torch.Tensor:
        """True on the encoder neurons of the ``new_components``."""
        layout = model.embedder.layout
        positions = [
            layout.index(stage, name)
            for stage, names in self.new_components.items()
            for name in names
        ]
        return torch.isin(model.embedder.block_of, torch.as_tensor(positions, dtype=torch.long))

    def _reinitialise_new(self, model: DeepKernelGP) -> None:
        """The new components' encoder weights drawn afresh (the rest stays meta-trained)."""
        if not model.embedder.encoders:
            return
        neurons = self._new_neurons(model)
        fresh = self.architecture.build(model.embedder.layout, self.seed + 1)
        with torch.no_grad():
            for mine, new in zip(model.embedder.encoders, fresh.embedder.encoders, strict=True):
                rows = neurons[mine.rows]  # type: ignore[index]
                mine.values[rows] = new.values[rows]  # type: ignore[index]
                mine.bias[neurons] = new.bias[neurons]  # type: ignore[index]

    def _new_encoder_parameters(self, model: DeepKernelGP) -> list[torch.nn.Parameter]:
        """The encoder layers' parameters, with gradients masked to the new components'
        weights: Adam moves nothing whose gradient is always zero."""
        neurons = self._new_neurons(model).to(NETWORK_DTYPE)
        parameters = []
        for layer in model.embedder.encoders:
            kept = neurons[layer.rows]  # type: ignore[index]
            layer.values.register_hook(lambda grad, kept=kept: grad * kept)  # type: ignore[union-attr]
            layer.bias.register_hook(lambda grad: grad * neurons)  # type: ignore[union-attr]
            parameters += [layer.values, layer.bias]  # type: ignore[list-item]
        return parameters

    def _refuse_another_layout(
        self, pool_space: VectorSpace, metadata: MetaData, ours: Layout | None = None
    ) -> None:
        """Before meta-training (minutes): weights trained on another space's pipelines
        cannot score this space's, so meta-data over another space is refused at once.
        ``ours``: this space's layout (default: the one prepared)."""
        ours = ours or self._layout
        assert ours is not None
        theirs = Layout.of(
            list(pool_space.columns()), pool_space.blocks(), numeric_ranges(pool_space)
        )
        if theirs.signature() != ours.signature():
            name = metadata.info.get("source") or metadata.space or "the meta-data"
            raise AutoMLError(
                f"{WHERE}: {name!r} is meta-data over another space (stages "
                f"{list(theirs.stage_names)}, {theirs.width} inputs) than this run's "
                f"({list(ours.stage_names)}, {ours.width} inputs): DeepPipe's "
                "weights transfer only within one space. Meta-train on meta-data of this "
                "space (`automl data build` from runs over it), or leave `metadata` out "
                "(DeepPipe then learns from this run's trials alone)"
            )

    def _check_checkpoint_fits(self, space: VectorSpace) -> None:
        """``checkpoint`` (a file, or the shipped one) was trained on ``space``'s layout."""
        ours = Layout.of(list(space.columns()), space.blocks(), numeric_ranges(space))
        if self.checkpoint == SHIPPED:
            shipped_for(ours)
            return
        if str(self.checkpoint).startswith("authors:"):
            return
        _refuse_other_layout(
            Checkpoint.load(Path(str(self.checkpoint))), ours, str(self.checkpoint)
        )

    def _warn_if_trained_on_task(self, checkpoint: Checkpoint, what: str) -> None:
        """A checkpoint whose meta-training saw the task's own dataset has seen its answers:
        fine for a user's run, not for a measurement; said, not refused."""
        if self._task is None:
            return
        if left_out_datasets(checkpoint.info.get("trained_on", ()), self._task, (), True):
            warnings.warn(
                f"{WHERE}: {what} was meta-trained on {self._task.dataset}'s own losses; to "
                "measure DeepPipe on it, use `metadata:` (meta-training then leaves the "
                "dataset out)",
                stacklevel=2,
            )

    def _checked(self, checkpoint: Checkpoint, what: str) -> Checkpoint:
        assert self._layout is not None
        _refuse_other_layout(checkpoint, self._layout, what)
        if checkpoint.architecture != self.architecture:
            self.architecture = checkpoint.architecture  # the weights decide the shape
        self._embeddings = None  # embeddings of other weights
        return checkpoint

    def _training(self, metadata: MetaData) -> dict[str, Any]:
        """What meta-training on ``metadata`` depends on (and its cache key), as configured."""
        return {
            "split": self.split,
            "validation": self.validation,
            "architecture": self.architecture,
            "settings": self.preset,
            "seed": self.meta_seed,
            "omit": self.omit,
            "exclude": self._left_out(metadata),
        }

    def _left_out(self, metadata: MetaData) -> list[str]:
        """The meta-data's datasets that meta-training must not see."""
        if self._task is None:
            return list(self.exclude)
        return left_out_datasets(metadata.datasets, self._task, self.exclude, self.exclude_self)

    def _resolved_metadata(self) -> MetaData:
        """``metadata`` as the run resolves meta-data for every component."""
        assert self.metadata is not None
        return metadata_for(self.metadata, self.metadata_params, self._task, WHERE)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        model = state.pop("_model")
        state["_embeddings"] = None  # recomputed on demand
        state["_pool_packed"] = None
        state["_fitted_state"] = None if model is None else model.state_dict()
        state["_train"] = None if model is None else (model.train_inputs[0], model.train_targets)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        fitted, train = state.pop("_fitted_state"), state.pop("_train")
        self.__dict__.update(state)
        self.__dict__.setdefault("_pool_packed", None)  # pickled before the cache existed
        self.__dict__.pop("_packed", None)  # the cache it replaced
        self._model = None
        if fitted is not None and self._layout is not None:
            model = self.architecture.build(self._layout, self.seed)
            model.load_state_dict(fitted)
            model.reads_embeddings = self._network_frozen()
            model.set_train_data(train[0], train[1], strict=False)
            self._model = model


def _refuse_other_layout(checkpoint: Checkpoint, layout: Layout, what: str) -> None:
    """Weights trained on another space's per-component layout cannot score this one's."""
    if checkpoint.layout != layout.signature():
        raise ValueError(
            f"{WHERE}: {what} was trained on another space's layout (its stages: "
            f"{checkpoint.layout.get('stage_names')}, inputs {checkpoint.layout.get('width')}; "
            f"this space: {list(layout.stage_names)}, inputs {layout.width})"
        )


class EmbeddingCache:
    """Rows' embeddings under fixed weights, each row embedded once (looked up by the bytes
    of its encoding): at every BO step a pool search asks again for nearly the same rows."""

    def __init__(self, embed: Callable[[np.ndarray], np.ndarray], limit: int = 1_000_000) -> None:
        self._embed, self._limit = embed, limit
        self._index: dict[bytes, int] = {}
        self._table = np.zeros((0, 0))

    def __call__(self, X: np.ndarray) -> np.ndarray:
        X = np.ascontiguousarray(X, dtype=float)
        keys = [row.tobytes() for row in X]
        new: dict[bytes, int] = {}  # a row not seen before -> its first position in X
        for i, key in enumerate(keys):
            if key not in self._index:
                new.setdefault(key, i)
        if len(self._index) + len(new) > self._limit:
            return self._embed(X)  # too many distinct rows to keep: embed without storing
        if new:
            fresh = self._embed(X[list(new.values())])
            start = len(self._table)
            self._table = fresh if start == 0 else np.vstack([self._table, fresh])
            self._index.update((key, start + j) for j, key in enumerate(new))
        return self._table[[self._index[key] for key in keys]]

    def __len__(self) -> int:
        return len(self._index)


def _embedded(model: DeepKernelGP, packed: torch.Tensor) -> np.ndarray:
    with torch.no_grad():
        return model.embed(packed).numpy()


def _numeric_columns(width: int) -> list[EncodingColumn]:
    return [EncodingColumn(f"x{i}") for i in range(width)]
