"""OpenML datasets and tasks for automl-core, read from a local openml-python cache.

Registers the dataset sources ``openml:<dataset id>`` and ``openml-task:<task id>`` and the
command ``automl data import-openml DIR`` (see :mod:`automl_openml.plugin`).
"""

__version__ = "0.1.0"
