"""An example automl-core plugin: hill climbing over a pipeline space."""
