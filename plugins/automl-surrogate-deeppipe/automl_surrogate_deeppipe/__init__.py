"""DeepPipe (Pineda Arango & Grabocka, KDD 2023) for automl-core, registered as ``deeppipe``."""

from automl_core.lazy import lazy_attributes

# imported on first use, not with the plugin module (which loads with every run)
__getattr__ = lazy_attributes(
    {
        "DeepPipeSurrogate": "automl_surrogate_deeppipe.surrogate",
        "Checkpoint": "automl_surrogate_deeppipe.metatrain",
        "meta_train": "automl_surrogate_deeppipe.metatrain",
        "PRESETS": "automl_surrogate_deeppipe.metatrain",
    }
)

__all__ = ["PRESETS", "Checkpoint", "DeepPipeSurrogate", "meta_train"]
