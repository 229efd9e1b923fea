"""automl-bench: the harness of automl-core. ``automl ablate`` runs a recipe's variants and
whole-system peers over a suite of tasks and seeds; ``automl compare`` reports ranks, tests,
critical differences and anytime curves. Adds the ``register_suites`` and
``register_systems`` hooks."""
