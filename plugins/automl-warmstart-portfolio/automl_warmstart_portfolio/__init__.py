"""Auto-sklearn 2.0's greedy portfolio warm start for automl-core (warm-starter ``portfolio``)."""

from automl_warmstart_portfolio.greedy import (
    greedy_portfolio,
    loss_curve,
    normalise_per_dataset,
    portfolio_loss,
)
from automl_warmstart_portfolio.starter import (
    Portfolio,
    PortfolioWarmStarter,
    build_portfolio,
    portfolio_dir,
)

__all__ = [
    "Portfolio",
    "PortfolioWarmStarter",
    "build_portfolio",
    "greedy_portfolio",
    "loss_curve",
    "normalise_per_dataset",
    "portfolio_dir",
    "portfolio_loss",
]
