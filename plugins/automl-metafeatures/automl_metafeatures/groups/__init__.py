"""The meta-feature groups, each a tuple of :class:`~automl_metafeatures.registry.Feature`."""
