"""Sequential model-based optimisation: a surrogate of the loss, an acquisition function, and
an optimiser of the acquisition over the search space (SMAC's decomposition)."""
