"""Dask distributed as an automl-core executor."""
