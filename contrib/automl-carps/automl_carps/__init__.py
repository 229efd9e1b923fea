"""automl-core's search strategies as CARP-S optimizers (:mod:`automl_carps.optimizer`)."""
