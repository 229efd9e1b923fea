"""Which types and functions a saved model may be rebuilt from: an allow-list of names.

A run saves its model with skops (:func:`~automl_engine.run_folder.save_model`), whose files
name the type of every object they hold and rebuild only what they are allowed to. skops
trusts its own short list (scikit-learn's estimators, NumPy's arrays and ufuncs, builtins'
containers...); :func:`skops.io.get_untrusted_types` lists the other names a file holds. A
model file is loaded only if each of those is declared, exactly (``module.Name`` as skops
names it), by the core (:data:`CORE_MODEL_TYPES`) or by a loaded plugin (its
``trusted_model_types`` hook): the estimators, transformers and functions that its components
put in a fitted pipeline. Anything else is refused, unless the user says they trust the file
(``automl predict --trust``).

Names, not packages: a trusted package holds functions that do harm when a model calls them
(``numpy.testing._private.utils.runstring`` executes a string, ``numpy.savetxt`` writes a
file, ``os.system``...), and a file can make a pipeline call any function it names (a
``FunctionTransformer`` of a ``functools.partial`` of it). skops' own check stays the floor:
only the names skops reports need declaring, and skops is never told to trust more than
those, checked here.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from automl_core.errors import AutoMLError

if TYPE_CHECKING:
    from automl_core.plugins import Plugins

#: What the core itself puts in a saved model besides what skops trusts anyway: the
#: :class:`~automl_engine.model.TrainedModel` (and a bagged search's
#: :class:`~automl_engine.model.BaggedPipeline` members), and the dates a recipe's YAML may
#: hold (the payload keeps the recipe). Its label encoder, weights, configurations, features and
#: target are scikit-learn, NumPy and builtin types that skops trusts.
CORE_MODEL_TYPES: frozenset[str] = frozenset(
    {
        "automl_engine.model.TrainedModel",
        "automl_engine.model.BaggedPipeline",  # a bagged search's members
        "datetime.date",
        "datetime.datetime",
    }
)
#: How many refused names an error message shows.
SHOWN = 5


class UntrustedModelError(AutoMLError):
    """A model file names types or functions that nothing installed declares; ``refused``
    lists them."""

    def __init__(self, message: str, refused: list[str]) -> None:
        super().__init__(message)
        self.refused = refused


def declared_model_types(plugins: Plugins) -> frozenset[str]:
    """The names a saved model may hold: :data:`CORE_MODEL_TYPES` and those every loaded
    plugin declares with its ``trusted_model_types`` hook. A plugin whose hook raises, or
    returns something other than names, declares nothing (with a warning): the models made
    of its components are then refused, never loaded on a guess."""
    names = set(CORE_MODEL_TYPES)
    hook = getattr(plugins.manager.hook, "trusted_model_types", None)
    for impl in hook.get_hookimpls() if hook is not None else []:
        try:
            result = impl.function()
            declared = [result] if isinstance(result, str) else list(result)
        except Exception as error:
            warnings.warn(
                f"plugin {impl.plugin_name!r}: trusted_model_types raised "
                f"{type(error).__name__}: {error}; models made of its components will be "
                "refused",
                stacklevel=2,
            )
            continue
        if not all(isinstance(name, str) and name for name in declared):
            warnings.warn(
                f"plugin {impl.plugin_name!r}: trusted_model_types must return type names "
                f"(strings such as 'package.module.Name'), not {declared[:3]!r}; models made "
                "of its components will be refused",
                stacklevel=2,
            )
            continue
        names.update(declared)
    return frozenset(names)


def refused_types(named: Iterable[str], allowed: Iterable[str]) -> list[str]:
    """Those of ``named`` (the names skops reports, :func:`skops.io.get_untrusted_types`)
    that neither the core (:data:`CORE_MODEL_TYPES`) nor ``allowed`` declares, in order."""
    declared = CORE_MODEL_TYPES | set(allowed)
    return [name for name in named if name not in declared]


def checked_trust(
    path: Path, named: list[str], allowed: Iterable[str], trust: bool = False
) -> list[str]:
    """The names to let skops rebuild from the file at ``path``: ``named`` (what skops
    reported), once each is declared, or whatever it is when ``trust`` is set. Raises
    :class:`UntrustedModelError`, naming the first few refused, otherwise."""
    refused = [] if trust else refused_types(named, allowed)
    if refused:
        more = f" and {len(refused) - SHOWN} more" if len(refused) > SHOWN else ""
        raise UntrustedModelError(
            f"{path} names types or functions that neither automl-core nor an installed "
            f"plugin declares ({', '.join(refused[:SHOWN])}{more}): it was not written by a "
            "run of the installed automl-core and plugins, or it was altered. Loading it "
            "would rebuild them, and a model calls the functions it holds; it is refused. "
            "Load it only if you made it yourself: automl predict --trust "
            "(load_saved_model(..., trust=True))",
            refused,
        )
    return list(named)
