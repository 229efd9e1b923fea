"""What the surrogate is fitted to: the losses as observed, or a monotone transform of them.

A forest fitted to raw, heavy-tailed losses (a synthetic function whose values span orders
of magnitude, a loss that explodes for a few bad configurations) spends its splits on the
tail: its mean is dominated by the worst configurations and its spread is largest far from
the data, so expected improvement keeps sending the local search away from the good region.
A monotone transform keeps the order of the configurations -- so the best configuration,
and every improvement, is the same one -- while evening out the scale:

- ``log``: ``log(loss - min + delta)``, as SMAC does for costs spanning orders of magnitude;
  ``delta`` is a thousandth of the observed range, so that the best loss is not sent to
  minus infinity.
- ``copula``: the Gaussian copula of HEBO and Watanabe's TPE variants: each loss replaced
  by the standard normal quantile of its rank, ``Phi^-1((rank - 0.5) / n)``; the scale of
  the losses is gone altogether, only their order is kept.
- ``none``: the losses themselves.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm, rankdata

#: The names ``smbo``'s ``target_transform`` takes.
TARGET_TRANSFORMS = ("none", "log", "copula")


def check_target_transform(name: str) -> None:
    if name not in TARGET_TRANSFORMS:
        raise ValueError(f"target_transform must be one of {list(TARGET_TRANSFORMS)}, got {name!r}")


def transform_losses(losses: np.ndarray, name: str) -> np.ndarray:
    """``losses`` (finite, not empty) as the surrogate is to see them, in the same order;
    a monotone map, so the lowest loss stays the lowest target. Draws nothing at random."""
    losses = np.asarray(losses, dtype=float)
    if name == "none" or losses.size < 2:
        return losses
    if name == "log":
        spread = float(losses.max() - losses.min())
        delta = 1e-3 * spread if spread > 0 else 1.0
        return np.log(losses - losses.min() + delta)
    if name == "copula":
        ranks = rankdata(losses, method="average")  # ties share a rank
        return np.asarray(norm.ppf((ranks - 0.5) / losses.size), dtype=float)
    check_target_transform(name)
    raise AssertionError("unreachable")
