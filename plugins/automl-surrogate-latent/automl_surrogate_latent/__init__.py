"""Shared-latent-space BO's surrogate: per-algorithm MLPs into one latent space, a multi-task
GP on it, and the pre-trained embedding models (PTEMs) it can start from."""
