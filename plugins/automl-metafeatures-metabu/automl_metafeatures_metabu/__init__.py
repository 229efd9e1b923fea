"""Metabu: meta-features learned by optimal transport (thesis ch. 6)."""
