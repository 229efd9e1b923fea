"""The authors' meta-trained weights (the ``deeppipe-api`` wheel) as one of our checkpoints.

``deeppipe-api`` 0.1.1 ships three checkpoints in ``deeppipe_api/experiments/checkpoints/``:
``DeepPipeTOboe`` and ``DeepPipeTOboe2`` (the API's default) on Tensor-OBOE, and
``DeepPipePMF``. Each is a ``torch.save`` of three state dicts (``net``, ``gp``,
``likelihood``), read here with ``weights_only=True`` (no code runs on load). All three are
the paper's no-encoder variant (ℓ_e = 0): a plain MLP on the pipeline's encoding followed by
the one-hot of each stage's algorithm, which the authors' code builds as follows and which
this module reproduces:

- **structure**: the meta-data file's own ``algorithm_domain`` / ``list_for_concatenator``
  (one block per algorithm, coarser than Tensor-OBOE's named algorithms) and its
  ``list_for_selector``, not the space's blocks: :meth:`Layout.of_structure`;
- **inputs**: the encoding's columns as stored (no scaling), then per stage a one-hot of the
  selector, without the one-hots of single-algorithm stages (constant; the authors drop the
  first three columns on Tensor-OBOE, none on PMF). Our network reads those constants too,
  with zero weights: the same function;
- **layers**: the authors' ``aggregated_layers = 4`` counts the projection to Z, so it is
  three hidden layers (our ``depth`` 3), width F·ΣL_i (F = 8);
- **targets**: the authors' GP models accuracy, 1 − error, unstandardised. The stored mean,
  scale and noise are therefore on that scale; a fit converts them to its standardised
  losses (:func:`kernel_on_standardised_losses`) before fine-tuning.

``DeepPipePMF`` cannot be loaded into the PMF file the same wheel ships: its first layer
reads 85 inputs, the file's 72 columns and 10 algorithm one-hots make 82 (it was trained on
another version of the encoding). :func:`authors_checkpoint` says so.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from typing import Any

import numpy as np
import torch

from automl_core.contracts import MetaData
from automl_engine.cache import fetch_package
from automl_spaces.pool_space import PoolSpace
from automl_surrogate_deeppipe.layout import Layout, Selector
from automl_surrogate_deeppipe.metatrain import Architecture, Checkpoint
from automl_surrogate_deeppipe.model import DTYPE, NETWORK_DTYPE, DeepKernelGP

PACKAGE, VERSION = "deeppipe-api", "0.1.1"
CHECKPOINT_FOLDER = "deeppipe_api/experiments/checkpoints"
#: the authors' checkpoints and the meta-data each was trained on
AUTHORS_CHECKPOINTS = {
    "DeepPipeTOboe2": "tensor-oboe",
    "DeepPipeTOboe": "tensor-oboe",
    "DeepPipePMF": "pmf",
}
#: what ``info["targets"]`` says of weights whose GP models 1 - loss, unstandardised
ACCURACY_TARGETS = "accuracy"


def read_authors_state(name: str) -> dict[str, dict[str, torch.Tensor]]:
    """The authors' ``net``, ``gp`` and ``likelihood`` state dicts of checkpoint ``name``,
    from the wheel (downloaded into the package cache on first use)."""
    if name not in AUTHORS_CHECKPOINTS:
        raise ValueError(
            f"deeppipe: no authors' checkpoint {name!r} (the wheel has "
            f"{', '.join(AUTHORS_CHECKPOINTS)})"
        )
    wheel = fetch_package(PACKAGE, VERSION)
    member = f"{CHECKPOINT_FOLDER}/{name}/weights"
    with zipfile.ZipFile(wheel) as archive:
        data = archive.read(member)
    state = torch.load(io.BytesIO(data), weights_only=True, map_location="cpu")
    missing = {"net", "gp"} - set(state)
    if missing:
        raise ValueError(f"deeppipe: {wheel.name}:{member} lacks {sorted(missing)}")
    return state


def structure_of(metadata: MetaData) -> dict[str, Any]:
    """The authors' encoder structure of a DeepPipe meta-data file (its ``info``): the
    algorithm blocks, the algorithms of each stage and each candidate's selector."""
    info, pool = metadata.info, metadata.pool
    if pool is None or "algorithm_domain" not in info or "stage_algorithms" not in info:
        raise ValueError(
            "deeppipe: the authors' weights need one of DeepPipe's meta-datasets (a pool with "
            "info['algorithm_domain'] and info['stage_algorithms']: pmf, tensor-oboe)"
        )
    selector = info.get("list_for_selector")
    if selector is None:  # PMF: the pool's stage choices are DeepPipe's selector
        selector = np.asarray(pool.stage_choices).tolist()
    return {
        "algorithm_domain": [int(v) for v in info["algorithm_domain"]],
        "stage_algorithms": [[int(a) for a in s] for s in info["stage_algorithms"]],
        "stage_names": list(pool.stage_names),
        "selector": [[int(v) for v in row] for row in selector],
        "pool": pool_fingerprint(np.asarray(pool.encodings, dtype=float)),
    }


def pool_fingerprint(encodings: np.ndarray) -> str:
    """A short hash of a pool's table: a checkpoint with a structure fits that pool only."""
    return hashlib.sha256(np.ascontiguousarray(encodings, dtype=float).tobytes()).hexdigest()[:16]


def structure_layout(columns: Any, structure: dict[str, Any]) -> Layout:
    """The :class:`Layout` of a structure (columns read as stored, no scaling)."""
    return Layout.of_structure(
        columns,
        structure["algorithm_domain"],
        structure["stage_algorithms"],
        structure["stage_names"],
    )


def structure_selector(pool: PoolSpace, structure: dict[str, Any]) -> Selector:
    """Per pool row, its algorithm per stage of the structure: the core's row lookup on the
    same pool with the file's ``list_for_selector`` as its stage choices."""
    restructured = PoolSpace(
        pool.name,
        pool.encodings,
        stage_names=tuple(structure["stage_names"]),
        stage_choices=np.asarray(structure["selector"], dtype=np.int64),
    )
    return Selector(restructured)


def authors_checkpoint(name: str, metadata: MetaData) -> Checkpoint:
    """The authors' checkpoint ``name`` in our network, over ``metadata``'s pool."""
    state = read_authors_state(name)
    structure = structure_of(metadata)
    assert metadata.pool is not None
    layout = structure_layout(list(metadata.pool.columns()), structure)
    net = {key: value.to(NETWORK_DTYPE) for key, value in state["net"].items()}
    layers = sorted({int(key.split(".")[1]) for key in net if key.startswith("non_masked_layers.")})
    if not layers or any(key.startswith("masked_layers") for key in net):
        raise ValueError(f"deeppipe: {name} is not a no-encoder network (ℓ_e = 0)")
    weights = [net[f"non_masked_layers.{i}.weight"] for i in layers]
    biases = [net[f"non_masked_layers.{i}.bias"] for i in layers]
    kept = kept_one_hots(layout)
    expected = layout.width + len(kept)
    if weights[0].shape[1] != expected:
        raise ValueError(
            f"deeppipe: {name}'s first layer reads {weights[0].shape[1]} inputs; "
            f"{metadata.info.get('source', 'this meta-data')} gives {expected} "
            f"({layout.width} encoding columns and {len(kept)} algorithm one-hots): the weights "
            "were trained on another encoding and cannot be loaded into it"
        )
    hidden, latent = weights[0].shape[0], weights[-1].shape[0]
    width_factor, remainder = divmod(hidden, sum(layout.stage_widths))
    if remainder:
        raise ValueError(
            f"deeppipe: {name}'s hidden width {hidden} is not a multiple of ΣL = "
            f"{sum(layout.stage_widths)}"
        )
    architecture = Architecture(0, width_factor, latent, depth=len(layers) - 1)
    model = architecture.build(layout, seed=0)
    embedder = model.embedder
    with torch.no_grad():
        first = torch.zeros_like(embedder.aggregation[0].weight)
        first[:, : layout.width] = weights[0][:, : layout.width]
        first[:, [layout.width + k for k in kept]] = weights[0][:, layout.width :]
        embedder.aggregation[0].weight.copy_(first)
        embedder.aggregation[0].bias.copy_(biases[0])
        for mine, weight, bias in zip(
            embedder.aggregation[1:], weights[1:-1], biases[1:-1], strict=True
        ):
            mine.weight.copy_(weight)
            mine.bias.copy_(bias)
        embedder.output.weight.copy_(weights[-1])
        embedder.output.bias.copy_(biases[-1])
        load_gp_state(model, state["gp"])
    return Checkpoint(
        layout=layout.signature(),
        architecture=architecture,
        state={key: value.clone() for key, value in model.state_dict().items()},
        info={
            "metadata": f"{PACKAGE} {VERSION}: {CHECKPOINT_FOLDER}/{name}",
            "preset": f"authors:{name}",
            "targets": ACCURACY_TARGETS,
            "structure": structure,
        },
    )


def kept_one_hots(layout: Layout) -> list[int]:
    """The positions, among all (stage, algorithm) one-hots, that the authors' input keeps:
    those of stages with more than one algorithm (a single algorithm's is constant)."""
    kept, position = [], 0
    for stage in layout.stages:
        if len(stage) > 1:
            kept += range(position, position + len(stage))
        position += len(stage)
    return kept


def load_gp_state(model: DeepKernelGP, gp: dict[str, torch.Tensor]) -> None:
    """The authors' mean, scale, lengthscales and noise (raw, softplus-transformed
    parameters in both codes) into ``model``."""
    names = {
        "mean_module.constant": model.mean_module.constant,
        "covar_module.raw_outputscale": model.covar_module.raw_outputscale,
        "covar_module.base_kernel.raw_lengthscale": model.covar_module.base_kernel.raw_lengthscale,
        "likelihood.noise_covar.raw_noise": model.likelihood.noise_covar.raw_noise,
    }
    for key, parameter in names.items():
        if key not in gp:
            raise ValueError(f"deeppipe: the authors' GP state lacks {key}")
        parameter.copy_(gp[key].to(DTYPE).reshape(parameter.shape))


def kernel_on_standardised_losses(model: DeepKernelGP, mean: float, scale: float) -> None:
    """Turn a GP over accuracies a = 1 − loss into the same GP over the standardised losses
    t = (loss − mean) / scale = (1 − mean − a) / scale: a stationary kernel is unchanged by
    the sign, the prior mean maps like a value, the scale and noise divide by scale²."""
    with torch.no_grad():
        constant = float(model.mean_module.constant.reshape(()))
        model.mean_module.constant.fill_((1.0 - mean - constant) / scale)
        model.covar_module.outputscale = model.covar_module.outputscale / scale**2
        noise = model.likelihood.noise / scale**2
        floor = 1.0001e-4  # the likelihood's constraint: GreaterThan(1e-4)
        model.likelihood.noise = torch.clamp(noise, min=floor)
