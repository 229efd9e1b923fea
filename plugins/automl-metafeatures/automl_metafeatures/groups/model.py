"""Model-based meta-features: the shape of a decision tree grown on the data (Bensusan,
Giraud-Carrier & Kennedy, 2000; Peng et al., 2002).

A fully grown CART tree (scikit-learn's ``DecisionTreeClassifier``, Gini, seeded with
``seed``) is fitted once on the encoded subsample; a simple concept gives a small tree, noise
or an intricate boundary a large one:

* ``DecisionTreeNumberOfNodes``, ``DecisionTreeNumberOfLeaves``, ``DecisionTreeDepth``;
* ``DecisionTreeLeavesPerInstance`` -- leaves per training row, comparable across dataset
  sizes (and across ``max_rows``, on which the three counts depend).

Neither auto-sklearn nor OpenML defines these, hence names of our own. Classification only.
"""

from __future__ import annotations

from sklearn.tree import DecisionTreeClassifier

from automl_metafeatures.data import DataView, helper
from automl_metafeatures.registry import Feature

GROUP = "model"
_CLASSIFICATION = ("classification",)


@helper
def _tree(view: DataView) -> tuple[DecisionTreeClassifier, int]:
    """The fitted tree and the number of rows it was grown on."""
    X, codes = view.sample_classes()
    if codes.size == 0:
        raise ValueError("no labelled row")
    return DecisionTreeClassifier(random_state=view.seed).fit(X, codes), int(codes.size)


FEATURES: tuple[Feature, ...] = (
    Feature(
        "DecisionTreeNumberOfNodes",
        GROUP,
        lambda v: float(_tree(v)[0].tree_.node_count),
        _CLASSIFICATION,
    ),
    Feature(
        "DecisionTreeNumberOfLeaves",
        GROUP,
        lambda v: float(_tree(v)[0].get_n_leaves()),
        _CLASSIFICATION,
    ),
    Feature("DecisionTreeDepth", GROUP, lambda v: float(_tree(v)[0].get_depth()), _CLASSIFICATION),
    Feature(
        "DecisionTreeLeavesPerInstance",
        GROUP,
        lambda v: _tree(v)[0].get_n_leaves() / _tree(v)[1],
        _CLASSIFICATION,
    ),
)
