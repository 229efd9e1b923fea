"""Auto-sklearn 2.0's policy selector for automl-core (``task.resampling: auto``)."""
