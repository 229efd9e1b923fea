"""The shared-latent-space surrogate: a multi-task GP on per-algorithm embeddings.

Ishikawa et al., "Bayesian optimization for simultaneous selection of machine learning
algorithms and hyperparameters on shared latent space". Every algorithm of the space's
algorithm stage (:mod:`automl_surrogate_latent.inputs`) has an MLP that embeds its
configurations into one latent space U; a GP over U, with a covariance between algorithms
(:mod:`automl_surrogate_latent.model`), is fitted to every observation at once, so that what
one algorithm's trials teach informs every other's.

Where the MLPs start:

- a PTEM (:mod:`automl_surrogate_latent.pretrain`): from a file (``ptem``), from a source
  dataset of meta-data (``metadata`` and ``source``: pre-trained on that dataset's
  observations, cached), or handed over by a warm-starter (``warmstart: ptem`` ranks the
  sources and picks one, :meth:`LatentSurrogate.warm_start`). Every fit then starts again
  from it, trains the MLPs' last layers and the GP (Eq. 5, with the pull back α), as the
  paper fine-tunes;
- none: the paper's "w/o pre-train" ablation; every layer trains, each fit continuing from
  the previous fit's weights (a search cannot afford to train from scratch at every step).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from automl_core.contracts import MetaData, Surrogate, TaskDescription
from automl_core.space import (
    EncodingColumn,
    SearchSpace,
    VectorSpace,
    check_columns,
    check_encoded,
    check_losses,
    vector_space,
)
from automl_engine.cache import cache_dir, content_key
from automl_engine.metastore import check_metadata_reference, metadata_fingerprint, metadata_for
from automl_engine.run_folder import safe_folder_name
from automl_spaces.acquisition import standardise
from automl_surrogate_latent.inputs import RowPacker
from automl_surrogate_latent.model import (
    DTYPE,
    HIDDEN,
    LATENT,
    AlgorithmEmbeddings,
    Fitting,
    LatentGP,
    fit_gp,
    posterior,
)
from automl_surrogate_latent.pretrain import PTEM, Pretraining, pretrain

WHERE = "latent surrogate"


class LatentSurrogate(Surrogate):
    """A multi-task GP over per-algorithm embeddings into a shared latent space."""

    def __init__(
        self,
        stage: str | None = None,
        latent: int = LATENT,
        hidden: int = HIDDEN,
        rank: int = 1,
        steps: int = 100,
        lr: float = 0.01,
        alpha: float = 1e-3,
        ptem: str | Path | None = None,
        metadata: str | Path | MetaData | None = None,
        metadata_params: Mapping[str, Any] | None = None,
        source: str | None = None,
        pretrain_epochs: int = 1000,
        beta: float = 1e-4,
        seed: int = 0,
        pretrain_seed: int = 0,
        threads: int | None = 1,
        cache: bool = True,
    ) -> None:
        check_metadata_reference(metadata, metadata_params)
        for name, value in (
            ("latent", latent),
            ("hidden", hidden),
            ("rank", rank),
            ("steps", steps),
        ):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name}: got {value!r}, expected a positive integer")
        if alpha < 0 or beta < 0 or lr <= 0:
            raise ValueError("alpha and beta must be at least 0, lr positive")
        if (metadata is None) != (source is None):
            raise ValueError(
                "metadata and source go together: pre-training needs the meta-data and the "
                "dataset of it to pre-train on"
            )
        if ptem is not None and metadata is not None:
            raise ValueError("ptem and metadata: give one, the embeddings come from either")
        self.stage, self.rank = stage, rank
        self.fitting = Fitting(steps=steps, lr=lr, alpha=alpha)
        self.pretraining = Pretraining(
            epochs=pretrain_epochs, beta=beta, hidden=hidden, latent=latent
        )
        self.ptem_path = ptem
        self.metadata, self.metadata_params, self.source = (
            metadata,
            dict(metadata_params or {}),
            source,
        )
        self.seed, self.threads, self.cache = seed, threads, cache
        #: pre-training's seed, apart from the run's: runs with other seeds share a PTEM
        #: (and the shipped ones, pre-trained with 0)
        self.pretrain_seed = pretrain_seed
        self._columns: list[EncodingColumn] | None = None
        self._task: TaskDescription | None = None
        self._space: VectorSpace | None = None
        self._packer: RowPacker | None = None
        #: where every fit starts (None: no pre-training)
        self._start: PTEM | None = None
        #: without pre-training, the last fit's embeddings, where the next fit starts
        self._embeddings: AlgorithmEmbeddings | None = None
        self._model: LatentGP | None = None
        self._scale = (0.0, 1.0)

    # -- the contract ------------------------------------------------------------------------
    def prepare(self, columns: Sequence[EncodingColumn]) -> None:
        """Told the columns only, it models every row as one algorithm's (a space's blocks,
        from :meth:`prepare_space`, name the algorithms)."""
        self._columns = list(check_columns(columns, WHERE))
        if self._packer is not None and len(self._packer.inputs.network.columns) != len(columns):
            raise ValueError(
                f"{WHERE}: prepared for {len(self._packer.inputs.network.columns)} columns, "
                f"now {len(columns)}"
            )
        if self._packer is None:
            self._packer = RowPacker.of_columns(self._columns)

    def prepare_space(self, space: VectorSpace, task: TaskDescription | None = None) -> None:
        """Read the space's algorithms and their inputs, and load or pre-train the PTEM the
        parameters name."""
        self._task, self._space = task, space
        self._packer = RowPacker.of_space(space, self.stage)
        if self.ptem_path is not None:
            self.warm_start(PTEM.load(Path(self.ptem_path)))
        elif self.metadata is not None:
            self.meta_fit(self._resolved_metadata(), space)

    def meta_fit(self, metadata: MetaData, space: SearchSpace) -> None:
        """Pre-train on the ``source`` dataset of ``metadata`` (cached); without a source,
        on its most representative dataset (:func:`representative_source`). ``space``
        encodes the meta-data's configurations (its pool when ``space`` is not one)."""
        source = self.source if self.source is not None else representative_source(metadata)
        self.warm_start(self._pretrained(metadata, source, space))

    def warm_start(self, state: Any) -> None:
        """Start every fit from a PTEM: ``state`` is one, or what a warm-starter that picks
        a source hands over without depending on this plugin (``warmstart: ptem``): a
        mapping ``{"metadata": reference, "metadata_params": {...}, "source": dataset}``,
        pre-trained here with this surrogate's own settings (cached)."""
        if isinstance(state, Mapping):
            state = self._referenced_ptem(state)
        if not isinstance(state, PTEM):
            raise TypeError(
                f"{WHERE}: a warm start's surrogate state must be a PTEM or a mapping naming "
                f"the meta-data and source to pre-train on, got {type(state).__name__}"
            )
        if self._packer is not None:
            inputs = self._packer.inputs
            why = state.fits(inputs.names, inputs.widths)
            if why is not None:
                raise ValueError(f"{WHERE}: the PTEM does not fit this space: {why}")
        self._start = state

    def fit(self, X: np.ndarray, y: np.ndarray) -> LatentSurrogate:
        if self._packer is None:
            raise RuntimeError(f"{WHERE}: needs the space (prepare_space) before fit()")
        X = np.asarray(X, dtype=float)
        check_encoded(X, self._packer.inputs.network.columns, WHERE)
        y = check_losses(y, len(X), WHERE)
        z, mean, scale = standardise(y)
        self._scale = (mean, scale)
        packed = torch.as_tensor(self._packer(X), dtype=DTYPE)
        targets = torch.as_tensor(z, dtype=DTYPE)
        with _threads(self.threads):
            torch.manual_seed(self.seed)
            embeddings, trainable, anchors, offset = self._starting_point(float(z.min()))
            model = LatentGP(embeddings, self.rank)
            model.offset.fill_(offset)
            fit_gp(model, packed, targets, trainable, anchors, self.fitting)
            model.set_train_data(packed, targets, strict=False)
        self._model = model
        if self._start is None:
            self._embeddings = embeddings
        return self

    def predict(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self._model is None or self._packer is None:
            raise RuntimeError(f"{WHERE}: predict() called before fit()")
        X = np.asarray(X, dtype=float)
        check_encoded(X, self._packer.inputs.network.columns, WHERE)
        packed = torch.as_tensor(self._packer(X), dtype=DTYPE)
        with _threads(self.threads):
            mean, std = posterior(self._model, packed)
        center, scale = self._scale
        return mean * scale + center, std * scale

    # -- helpers -----------------------------------------------------------------------------
    def _starting_point(
        self, best: float
    ) -> tuple[AlgorithmEmbeddings, list[torch.nn.Parameter], dict[int, torch.Tensor], float]:
        """(embeddings, the weights the fit trains, their anchors, μ0's offset)."""
        assert self._packer is not None
        if self._start is not None:
            embeddings = self._start.embeddings()
            for parameter in embeddings.parameters():
                parameter.requires_grad_(False)
            trainable = embeddings.last_layers()
            for parameter in trainable:
                parameter.requires_grad_(True)
            anchors = {id(p): p.detach().clone() for p in trainable}
            return embeddings, trainable, anchors, self._start.offset
        if self._embeddings is None:
            self._embeddings = AlgorithmEmbeddings(
                self._packer.inputs.widths, self.pretraining.hidden, self.pretraining.latent
            )
        return self._embeddings, list(self._embeddings.parameters()), {}, best

    def _pretrained(self, metadata: MetaData, source: str, space: SearchSpace | None) -> PTEM:
        """The PTEM of ``source`` in ``metadata``, whose configurations ``space`` encodes:
        the run's space when it is a pool or the meta-data has none (its configurations are
        then the space's, as oboe-autosklearn's are of ``autosklearn-classification``), else
        the meta-data's pool."""
        typed = vector_space(space) if space is not None else None
        if typed is None or (typed.as_pool() is None and metadata.pool is not None):
            typed = metadata.pool
        if typed is None:
            raise ValueError(f"{WHERE}: pre-training needs meta-data with a pool of pipelines")
        if self._packer is None or self._packer.selector is None:
            self._packer = RowPacker.of_space(typed, self.stage)
        # one thread, as every fit: torch's default (every core) beside trial workers ran a
        # PTEM's pre-training 22 times slower on the 2-core VM (226 s against 10 s for 100
        # epochs)
        with _threads(self.threads):
            return source_ptem(
                metadata,
                source,
                typed,
                self._packer,
                self.pretraining,
                self.pretrain_seed,
                self.cache,
            )

    def _referenced_ptem(self, state: Mapping[str, Any]) -> PTEM:
        """The PTEM a ``{"metadata", "metadata_params", "source"}`` state names."""
        unknown = set(state) - {"metadata", "metadata_params", "source"}
        if unknown or "metadata" not in state or not isinstance(state.get("source"), str):
            raise ValueError(
                f"{WHERE}: a warm start's surrogate state names the meta-data and the source "
                f"to pre-train on ({{metadata, metadata_params, source}}), got keys "
                f"{sorted(state)}"
            )
        check_metadata_reference(state["metadata"], state.get("metadata_params"))
        metadata = metadata_for(state["metadata"], state.get("metadata_params"), self._task, WHERE)
        return self._pretrained(metadata, state["source"], self._space)

    def _resolved_metadata(self) -> MetaData:
        """``metadata`` as the run resolves meta-data for every component."""
        assert self.metadata is not None
        return metadata_for(self.metadata, self.metadata_params, self._task, WHERE)


def source_ptem(
    metadata: MetaData,
    source: str,
    space: VectorSpace,
    packer: RowPacker,
    settings: Pretraining,
    seed: int = 0,
    cache: bool = True,
) -> PTEM:
    """The PTEM of ``source`` (a dataset of ``metadata``, whose configurations ``space``
    encodes), from the cache when it was pre-trained before with the same settings."""
    if source not in metadata.datasets:
        raise ValueError(f"{WHERE}: the meta-data has no dataset {source!r}")
    losses = np.asarray(metadata.performance[metadata.row(source)], dtype=float)
    observed = np.flatnonzero(np.isfinite(losses))
    if not len(observed):
        raise ValueError(f"{WHERE}: the meta-data has no finite loss on dataset {source!r}")
    path = ptem_path(metadata, source, packer, settings, seed)
    if cache and path.exists():
        return PTEM.load(path)
    if shipped_ptem(path).exists():
        return PTEM.load(shipped_ptem(path))
    rows = _encoded(space, [metadata.configs[i] for i in observed])
    inputs = packer.inputs
    ptem = pretrain(
        packer(rows),
        losses[observed],
        inputs.names,
        inputs.widths,
        settings,
        seed,
        info={"metadata": metadata_name(metadata), "dataset": source},
    )
    if cache:
        ptem.save(path)
    return ptem


def _encoded(space: VectorSpace, configs: list[dict[str, Any]]) -> np.ndarray:
    """The configurations' rows; on a pool, read from its table, offered or not (a search
    restricted to some algorithms still pre-trains on every candidate the source ran)."""
    pool = space.as_pool()
    if pool is None:
        return space.encode(configs)
    return np.asarray(pool.encodings, dtype=float)[[int(c["candidate"]) for c in configs]]


def representative_source(metadata: MetaData, candidates: int = 2000, seed: int = 0) -> str:
    """The dataset whose losses agree best, on average, with every other dataset's (the
    medoid by Spearman correlation over up to ``candidates`` configurations): the source a
    surrogate pre-trains on when nothing names one. The paper always names one, the
    ranker's pick (``warmstart: ptem``)."""
    performance = np.asarray(metadata.performance, dtype=float)
    if len(metadata.datasets) == 1:
        return metadata.datasets[0]
    columns = np.random.default_rng(seed).permutation(performance.shape[1])[:candidates]
    ranks = pd.DataFrame(performance[:, columns].T).rank()
    agreement = np.array(ranks.corr(min_periods=3).to_numpy(), dtype=float)
    np.fill_diagonal(agreement, np.nan)
    mean = np.nanmean(np.where(np.isfinite(agreement), agreement, np.nan), axis=1)
    mean = np.where(np.isfinite(mean), mean, -np.inf)
    return metadata.datasets[int(np.argmax(mean))]


def metadata_name(metadata: MetaData) -> str:
    """A folder name for the meta-data's PTEMs: its space's name (``tensor-oboe``, ``pmf``)."""
    name = metadata.space or str(metadata.info.get("name", "")) or "metadata"
    return safe_folder_name(name)


#: PTEMs shipped with the package, in the cache's layout (``<metadata>/<source>-<key>.npz``):
#: those the ptem warm-starter's shipped ranker picks among on keel-autosklearn.
SHIPPED_PTEMS = Path(__file__).resolve().parent / "ptems"


def shipped_ptem(path: Path) -> Path:
    """Where the package would ship the PTEM cached at ``path`` (same key, same name)."""
    return SHIPPED_PTEMS / path.relative_to(cache_dir() / "latent")


def ptem_path(
    metadata: MetaData, source: str, packer: RowPacker, settings: Pretraining, seed: int
) -> Path:
    """Where the PTEM of (meta-data, source, settings) is cached."""
    key = content_key(
        {
            "metadata": metadata_fingerprint(metadata),
            "algorithms": list(packer.inputs.names),
            "widths": list(packer.inputs.widths),
            "settings": vars(settings),
            "seed": seed,
        }
    )
    file = f"{safe_folder_name(source)}-{key}.npz"
    return cache_dir() / "latent" / metadata_name(metadata) / file


class _threads:
    """torch's intra-op threads set to ``threads`` for the block (None: unchanged)."""

    def __init__(self, threads: int | None) -> None:
        self.threads, self.before = threads, torch.get_num_threads()

    def __enter__(self) -> None:
        if self.threads is not None:
            torch.set_num_threads(self.threads)

    def __exit__(self, *_: object) -> None:
        torch.set_num_threads(self.before)
