"""The module named by the ``automl_core`` entry point ``surrogate-latent``: it only registers
(torch is imported when the surrogate is first used)."""

from __future__ import annotations

from automl_core import hookimpl, lazy
from automl_core.contracts import Surrogate
from automl_core.hookspecs import RegisterFactory

#: The automl-core plugin API this plugin is written for (automl_core.plugins.PLUGIN_API).
AUTOML_PLUGIN_API = 1


@hookimpl
def register_surrogates(register: RegisterFactory[Surrogate]) -> None:
    register(
        "latent",
        lazy("automl_surrogate_latent.surrogate:LatentSurrogate"),
        description="shared latent space: a multi-task GP on per-algorithm embeddings, "
        "optionally started from a pre-trained embedding model (PTEM)",
    )
    register(
        "independent-gp",
        lazy("automl_surrogate_latent.independent:IndependentGPs"),
        description="one GP per algorithm of the algorithm stage, nothing shared (Bandit BO's "
        "surrogate; the shared-latent-space paper's baseline)",
    )
