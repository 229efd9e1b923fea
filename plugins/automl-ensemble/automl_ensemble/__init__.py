"""Ensemblers for automl-core: Caruana et al.'s greedy ensemble selection with replacement."""

from automl_ensemble.caruana import CaruanaEnsemble

__all__ = ["CaruanaEnsemble"]
