"""Dida: meta-features learned by a distribution-invariant network (the provider ``dida``)."""
