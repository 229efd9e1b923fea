"""Shared-latent-space BO's warm start for automl-core (warm-starter ``ptem``): a LightGBM
ranker picks the source dataset whose pre-trained embeddings the ``latent`` surrogate uses.
The modules: :mod:`.ranker` (the ranker), :mod:`.labels` (its leave-one-out labels from BO
runs), :mod:`.warmstart` (the warm-starter)."""
