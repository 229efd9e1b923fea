"""Successive halving, Hyperband and ASHA as automl-core search strategies."""
