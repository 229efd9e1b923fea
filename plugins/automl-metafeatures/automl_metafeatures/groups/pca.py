"""Principal components of the encoded subsample (Bardenet et al., 2013; auto-sklearn's names).

* ``PCAFractionOfComponentsFor95PercentVariance`` -- the fewest leading components whose
  explained variance reaches 95 %, divided by the number of encoded columns;
* ``PCAKurtosisFirstPC`` / ``PCASkewnessFirstPC`` -- the (biased, Fisher) kurtosis and the
  skewness of the rows projected on the first component.

The PCA is scikit-learn's (full SVD) on the encoded subsample (standardised numeric columns
and 0/1 dummies; see :mod:`automl_metafeatures.data`), as in auto-sklearn. The sign of a
component is scikit-learn's convention, so ``PCASkewnessFirstPC`` may change sign between
scikit-learn versions that changed it; its magnitude does not. Defined for both tasks.
"""

from __future__ import annotations

import numpy as np
from sklearn.decomposition import PCA

from automl_metafeatures.data import DataView, helper, moments_of
from automl_metafeatures.registry import Feature

GROUP = "pca"
VARIANCE = 0.95


@helper
def _pca(view: DataView) -> tuple[PCA, np.ndarray]:
    """The fitted PCA and the projection of the rows on its first component."""
    X = view.encoded_sample()
    if X.shape[0] < 2:
        raise ValueError("a PCA needs at least two rows")
    pca = PCA(svd_solver="full").fit(X)
    first = (X - pca.mean_) @ pca.components_[0]
    return pca, first


def _fraction_for_95(view: DataView) -> float:
    pca, _ = _pca(view)
    cumulative = np.cumsum(pca.explained_variance_ratio_)
    if not np.all(np.isfinite(cumulative)):
        raise ValueError("the encoded columns have no variance")
    needed = int(np.searchsorted(cumulative, VARIANCE) + 1)
    needed = min(needed, cumulative.size)
    return needed / view.encoded_sample().shape[1]


FEATURES: tuple[Feature, ...] = (
    Feature("PCAFractionOfComponentsFor95PercentVariance", GROUP, _fraction_for_95),
    Feature("PCAKurtosisFirstPC", GROUP, lambda view: moments_of(_pca(view)[1])[1]),
    Feature("PCASkewnessFirstPC", GROUP, lambda view: moments_of(_pca(view)[1])[0]),
)
