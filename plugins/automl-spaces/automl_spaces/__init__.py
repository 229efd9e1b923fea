"""automl-spaces: the search spaces strategies and surrogates work on, without the engine.

The kernel (``automl_core.space``) says what a space is; this distribution holds the two
kinds every plugin meets and what is built on their encoded rows: the pipeline space over
ConfigSpace (:mod:`~automl_spaces.pipeline_space`), the pool of a table-lookup benchmark
(:mod:`~automl_spaces.pool_space`), snapping a row to a valid configuration
(:mod:`~automl_spaces.snapping`), the columns of one component
(:mod:`~automl_spaces.component_rows`) and the acquisition helpers model-based strategies
share (:mod:`~automl_spaces.acquisition`).
A strategy or surrogate plugin depends on it and the kernel, not on the run loop.
"""

from __future__ import annotations

__version__ = "0.1.0"
