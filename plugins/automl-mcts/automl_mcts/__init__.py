"""Mosaic's Monte-Carlo tree search for automl-core (registered as ``mcts``)."""
