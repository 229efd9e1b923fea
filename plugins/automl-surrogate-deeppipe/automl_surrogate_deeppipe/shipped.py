"""The checkpoints shipped with this package: ``checkpoint: default``.

A checkpoint transfers only to the space whose per-component layout it was trained on, and a
user's space depends on what is installed (with automl-catboost, the classifier stage has
CatBoost's encoder too). ``checkpoint: default`` is therefore the shipped checkpoint whose
layout is this run's space's; each is meta-trained on meta-data the project built over its
own default space, so it runs on any dataset of that space with no training step first.

Two are shipped, one for ``autosklearn-classification`` and one for
``autosklearn-regression``; the README ("What transfers to a user's data") gives the commands
that rebuild them.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from automl_surrogate_deeppipe.layout import Layout
from automl_surrogate_deeppipe.metatrain import Checkpoint

#: The value of ``checkpoint`` that picks the shipped checkpoint of the run's space.
SHIPPED = "default"


def shipped_dir() -> Path:
    """The package-data folder of the shipped checkpoints."""
    return Path(str(resources.files("automl_surrogate_deeppipe") / "checkpoints"))


def shipped_checkpoints() -> list[tuple[Path, Checkpoint]]:
    """Every shipped checkpoint, by file name."""
    return [(path, Checkpoint.load(path)) for path in sorted(shipped_dir().glob("*.pt"))]


def shipped_for(layout: Layout) -> tuple[Path, Checkpoint]:
    """The shipped checkpoint trained on ``layout``; a ValueError saying what there is and
    what to run when none is."""
    found = shipped_checkpoints()
    for path, checkpoint in found:
        if checkpoint.layout == layout.signature():
            return path, checkpoint
    shipped = "; ".join(f"{path.name} ({_described(c.layout)})" for path, c in found)
    raise ValueError(
        f"checkpoint {SHIPPED!r}: no shipped checkpoint is of this space "
        f"({_described(layout.signature())}); shipped: {shipped or 'none'}. Meta-train one "
        "on meta-data of this space (`automl deeppipe train METADATA --space SPACE "
        "--out FILE`, then `checkpoint: FILE`), or leave `checkpoint` out (non-transfer)"
    )


def _described(signature: dict) -> str:
    """A layout in a sentence: its last stage's components and its input count."""
    last = signature["stages"][-1] if signature.get("stages") else []
    names = [component[0] for component in last]
    stage = signature["stage_names"][-1] if signature.get("stage_names") else "stage"
    return f"{len(names)} {stage} components: {', '.join(names)}; {signature.get('width')} inputs"
