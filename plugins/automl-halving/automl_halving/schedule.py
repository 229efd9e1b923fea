"""The budget schedules of successive halving and Hyperband (Li et al., 2018).

With ``R = max_budget / min_budget`` and ``s_max = floor(log_eta R)``, Hyperband's bracket
``s`` (``s_max`` down to 0) starts ``n = ceil((s_max + 1) / (s + 1) * eta**s)``
configurations at budget ``max_budget * eta**-s``; rung ``i`` of the bracket keeps
``floor(n * eta**-i)`` of them at budget ``max_budget * eta**(i - s)``. Successive halving is
the most aggressive bracket, ``s = s_max``, repeated (as Auto-sklearn 2.0's PoSH runs it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Rung:
    """``size`` configurations evaluated at ``budget``."""

    size: int
    budget: float


def max_stage(min_budget: float, max_budget: float, eta: float) -> int:
    """``s_max = floor(log_eta(max_budget / min_budget))``, robust to rounding (a ratio of
    exactly ``eta**k`` gives ``k``)."""
    check_range(min_budget, max_budget, eta)
    return math.floor(math.log(max_budget / min_budget, eta) + 1e-9)


def bracket(s: int, s_max: int, max_budget: float, eta: float) -> list[Rung]:
    """Hyperband's bracket ``s``: its rungs from the smallest budget to ``max_budget``."""
    if not 0 <= s <= s_max:
        raise ValueError(f"bracket s must be in 0..{s_max}, got {s}")
    n = math.ceil((s_max + 1) / (s + 1) * eta**s)
    return [Rung(math.floor(n * eta**-i + 1e-9), max_budget * eta ** (i - s)) for i in range(s + 1)]


def hyperband_brackets(min_budget: float, max_budget: float, eta: float) -> list[list[Rung]]:
    """One Hyperband iteration: brackets ``s_max`` (most aggressive) down to 0."""
    s_max = max_stage(min_budget, max_budget, eta)
    return [bracket(s, s_max, max_budget, eta) for s in range(s_max, -1, -1)]


def halving_bracket(min_budget: float, max_budget: float, eta: float) -> list[Rung]:
    """Successive halving: the bracket that starts at the smallest budget."""
    s_max = max_stage(min_budget, max_budget, eta)
    return bracket(s_max, s_max, max_budget, eta)


def rung_budgets(min_budget: float, max_budget: float, eta: float) -> list[float]:
    """ASHA's rungs: ``max_budget * eta**-k`` for k = s_max .. 0, smallest first."""
    s_max = max_stage(min_budget, max_budget, eta)
    return [max_budget * eta ** (k - s_max) for k in range(s_max + 1)]


def check_eta(eta: float) -> None:
    """Rungs must grow: ``eta > 1`` (NaN refused too)."""
    if not eta > 1:
        raise ValueError(f"eta must be greater than 1, got {eta}")


def check_range(min_budget: float, max_budget: float, eta: float) -> None:
    check_eta(eta)
    if not 0 < min_budget < max_budget:
        raise ValueError(f"need 0 < min_budget < max_budget, got {min_budget}, {max_budget}")
