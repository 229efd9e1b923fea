"""Dida: meta-features learned by a distribution-invariant network (work in progress: the
network and its patch-identification training; the provider is not registered yet)."""
