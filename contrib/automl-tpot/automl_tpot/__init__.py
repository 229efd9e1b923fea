"""TPOT 1.x as a whole-system peer for automl-core's ablations (``tpot``)."""

from automl_tpot.system import TPOTModel, TPOTSystem

__all__ = ["TPOTModel", "TPOTSystem"]
