"""AutoGluon-Tabular as whole-system peers for automl-core's ablations (``autogluon``,
``autogluon-best``), run in AutoGluon's own environment (``make autogluon-env``).

Nothing is imported here: :mod:`automl_autogluon.worker` is also run by AutoGluon's
interpreter, where automl-core is not installed.
"""
