"""Regularised (aging) evolution with crossover: a population of evaluated configurations,
tournament selection of parents, and variation operators for pipeline spaces and pools."""

from automl_evolution.strategy import Evolution

__all__ = ["Evolution"]
