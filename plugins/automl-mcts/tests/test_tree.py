"""Mosaic's formulas, and selection / widening / expansion on a hand-built tree, checked
against values worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from spaces import ColumnSurrogate, context, pipeline_space

from automl_core.trial import Result, Status, Trial
from automl_mcts.strategy import MCTS
from automl_mcts.tree import Node, puct, softmax, widening_limit

TREE, LOGISTIC, KNN = 0, 1, 2


def test_softmax_is_eq_4_3():
    q = np.array([-0.3, -0.2, -0.5])
    expected = np.exp(q) / np.exp(q).sum()
    assert softmax(q) == pytest.approx(expected)
    assert softmax(q + 100.0) == pytest.approx(expected)  # stable, shift-free


def test_puct_is_eq_4_4():
    # Q + C * pi * sqrt(n(s)) / (1 + n(s.a)) with n(s) = 9: sqrt = 3
    scores = puct(np.array([-0.3, -0.25]), np.array([0.5, 0.2]), 9, np.array([5, 1]), 1.3)
    assert scores == pytest.approx([-0.3 + 1.3 * 0.5 * 3 / 6, -0.25 + 1.3 * 0.2 * 3 / 2])


@pytest.mark.parametrize(
    ("visits", "options", "limit"),
    [
        (0, 5, 1),
        (1, 5, 1),
        (3, 5, 1),
        (4, 5, 2),
        (10, 5, 3),
        (15, 5, 5),
        (100, 5, 5),
        (100, 30, 15),
    ],
)
def test_progressive_widening_allows_floor_n_to_the_pw(visits, options, limit):
    # 4^0.6 = 2.30, 10^0.6 = 3.98, 15^0.6 = 5.08, 100^0.6 = 15.8
    assert widening_limit(visits, 0.6, options) == limit


def test_node_value_is_the_median_score_with_failures_at_the_worst_loss():
    node = Node(losses=[0.2, math.inf, 0.4, 0.3])
    assert node.value(worst=0.9) == pytest.approx(-0.35)  # median of 0.2, 0.3, 0.4, 0.9
    assert Node().value(worst=1.0) is None
    node.pending = 2
    assert node.visits == 6


def _strategy(weights, **params):
    """MCTS on the hand-built space with a surrogate predicting ``weights[classifier]``."""
    space = pipeline_space()
    column = space.configspace.index_of["classifier:__choice__"]
    strategy = MCTS(initial_design=0, **params)
    strategy.setup(context(space, ColumnSurrogate(column, weights)))
    return strategy, space


def _tell(strategy, config, loss, trial_id=0):
    strategy.tell(Trial(trial_id, config), Result(Status.OK, loss))


TREE_CONFIG = {"classifier:__choice__": "tree", "classifier:tree:max_depth": 3,
               "encoding:__choice__": "one_hot", "rescaling:__choice__": "standardize"}  # fmt: skip
KNN_CONFIG = {"classifier:__choice__": "knn", "encoding:__choice__": "ordinal",
              "rescaling:__choice__": "standardize"}  # fmt: skip


def _hand_built(weights):
    """Root with children tree (losses 0.2, 0.3, 0.4) and knn (0.25); logistic not expanded."""
    strategy, _space = _strategy(weights)
    for i, loss in enumerate([0.2, 0.3, 0.4]):
        _tell(strategy, {**TREE_CONFIG, "classifier:tree:max_depth": i + 1}, loss, i)
    _tell(strategy, KNN_CONFIG, 0.25, 3)
    root = strategy.tree[()]
    root.children = [TREE, KNN]
    strategy.tree[(TREE,)] = Node(losses=[0.2, 0.3, 0.4])
    strategy.tree[(KNN,)] = Node(losses=[0.25])
    strategy._fit()
    return strategy


def test_the_partial_surrogate_averages_the_predictions_of_completions():
    strategy = _hand_built({TREE: 0.3, LOGISTIC: 0.2, KNN: 0.5})
    assert strategy._partial((), [TREE, LOGISTIC, KNN]) == pytest.approx([-0.3, -0.2, -0.5])


def test_selection_takes_the_puct_argmax_with_the_surrogate_prior():
    weights = {TREE: 0.3, LOGISTIC: 0.2, KNN: 0.5}
    strategy = _hand_built(weights)
    # n(root) = 4: floor(4^0.6) = 2 children allowed, both there, so PUCT chooses.
    prior = softmax(np.array([-0.3, -0.2, -0.5]))
    tree = -0.3 + 1.3 * prior[TREE] * math.sqrt(4) / (1 + 3)
    knn = -0.25 + 1.3 * prior[KNN] * math.sqrt(4) / (1 + 1)
    assert knn > tree  # 0.0055 > -0.0963: the rarely visited knn wins despite its prior
    assert strategy._puct_choice((), [TREE, LOGISTIC, KNN], [TREE, KNN]) == KNN
    # n(knn) = 1 allows one child: selection expands knn with a rescaling
    leaf = strategy._select()
    assert leaf[:1] == (KNN,) and len(leaf) == 2
    assert strategy.tree[(KNN,)].children == [leaf[1]]


def test_a_low_c_ucb_exploits_the_best_median():
    strategy = _hand_built({TREE: 0.3, LOGISTIC: 0.2, KNN: 0.5})
    strategy.c_ucb = 0.0
    assert strategy._puct_choice((), [TREE, LOGISTIC, KNN], [TREE, KNN]) == KNN  # -0.25 > -0.3
    strategy.tree[(KNN,)].losses = [0.35]
    assert strategy._puct_choice((), [TREE, LOGISTIC, KNN], [TREE, KNN]) == TREE


def test_widening_expands_the_child_of_highest_partial_value():
    strategy = _hand_built({TREE: 0.3, LOGISTIC: 0.2, KNN: 0.5})
    for i in range(3):  # n(root) = 7: floor(7^0.6) = 3 > 2 children
        _tell(strategy, {**KNN_CONFIG, "encoding:__choice__": "one_hot"}, 0.5 + i / 10, 4 + i)
    assert strategy.tree[()].visits == 7
    strategy._fit()
    leaf = strategy._select()
    assert leaf == (LOGISTIC,)  # the only child left, expanded at once
    # A new node starts with every earlier result compatible with it (none for logistic);
    # knn's node has all three new results
    assert strategy.tree[(LOGISTIC,)].losses == []
    assert len(strategy.tree[(KNN,)].losses) == 4


def test_expansion_prefers_the_higher_partial_surrogate_value():
    strategy, _ = _strategy({TREE: 0.6, LOGISTIC: 0.1, KNN: 0.4})
    _tell(strategy, TREE_CONFIG, 0.3, 0)
    _tell(strategy, KNN_CONFIG, 0.2, 1)
    strategy._fit()
    assert strategy._select() == (LOGISTIC,)
