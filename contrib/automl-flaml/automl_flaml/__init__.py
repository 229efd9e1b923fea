"""FLAML's AutoML as a whole-system peer for automl-core's ablations (``flaml``)."""

from automl_flaml.system import FLAMLModel, FLAMLSystem

__all__ = ["FLAMLModel", "FLAMLSystem"]
