"""CARP-S (hydra) configurations of automl-core's optimizers: `hydra.searchpath=[pkg://automl_carps/configs]`."""
