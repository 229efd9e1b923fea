"""One-hot encoding of categoricals and the treatment of inactive values, on a small made-up
space and on auto-sklearn's real one."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import spearmanr

from automl_core.space import INACTIVE, EncodingColumn
from automl_surrogate_gp import GPSurrogate
from automl_surrogate_gp.encoding import InputEncoder

COLUMNS = [
    EncodingColumn("algorithm", categories=3),
    EncodingColumn("rate", categories=0),
    EncodingColumn("kernel", categories=2, conditional=True),
    EncodingColumn("degree", categories=0, conditional=True),
    EncodingColumn("one_choice", categories=1, conditional=True),  # index 0, or inactive
]


def test_categoricals_become_one_hot_and_inactive_becomes_zeros():
    X = np.array(
        [
            [0, 0.25, 1, 0.5, 0],
            [2, 1.00, INACTIVE, INACTIVE, INACTIVE],
        ]
    )
    encoded = InputEncoder.from_columns(COLUMNS).transform(X)
    np.testing.assert_array_equal(
        encoded,
        [
            [1, 0, 0, 0.25, 0, 1, 0.5, 1],
            [0, 0, 1, 1.00, 0, 0, INACTIVE, 0],
        ],
    )


def test_widths():
    encoder = InputEncoder.from_columns(COLUMNS)
    assert (encoder.input_width, encoder.output_width) == (5, 8)
    assert InputEncoder().output_width is None  # without columns: whatever X has


def test_without_columns_everything_is_a_number():
    X = np.array([[0.0, 2.0, INACTIVE]])
    np.testing.assert_array_equal(InputEncoder().transform(X), X)


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ([3, 0.5, 0, 0.5, 0], r"column 0 \('algorithm'\).*3 categories; row 0 holds 3.0"),
        ([0.5, 0.5, 0, 0.5, 0], r"column 0 \('algorithm'\).*holds 0.5"),
        ([INACTIVE, 0.5, 0, 0.5, 0], r"'algorithm'.*expected an index 0..2\)$"),
        ([0, 0.5, 0, 0.5], "4 columns, but prepare\\(\\) described 5"),
    ],
)
def test_invalid_values_are_refused_with_their_place(row, message):
    with pytest.raises(ValueError, match=message):
        InputEncoder.from_columns(COLUMNS).transform(np.array([row]))


def test_invalid_columns_are_refused():
    with pytest.raises(ValueError, match=r"\('bad'\) has -2 categories"):
        InputEncoder.from_columns([EncodingColumn("bad", categories=-2)])
    with pytest.raises(TypeError, match="EncodingColumn"):
        InputEncoder.from_columns(["rate"])


def test_prepare_changes_what_the_surrogate_sees():
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.integers(0, 3, 30), rng.random(30)])
    y = np.array([0.0, 1.0, 0.3])[X[:, 0].astype(int)] + X[:, 1]
    surrogate = GPSurrogate()
    surrogate.prepare([EncodingColumn("algorithm", 3), EncodingColumn("rate")])
    surrogate.fit(X, y)
    assert len(surrogate.hyperparameters().lengthscales) == 4
    with pytest.raises(ValueError, match="categorical with 3 categories"):
        surrogate.predict(np.array([[1.5, 0.2]]))


# -- auto-sklearn's space ------------------------------------------------------------------------
CLASSIFIER = "classifier:__choice__"
MAX_FEATURES = "classifier:random_forest:max_features"  # numeric, active only for random forest


def test_the_autosklearn_space_is_one_hot_encoded(autosklearn_space):
    columns = autosklearn_space.columns()
    encoder = InputEncoder.from_columns(columns)
    X = autosklearn_space.sample_vectors(np.random.default_rng(0), 50)
    encoded = encoder.transform(X)
    assert encoded.shape == (50, encoder.output_width)
    start = 0
    for index, column in enumerate(columns):
        width = max(column.categories, 1)
        block = encoded[:, start : start + width]
        active = X[:, index] != INACTIVE
        if column.categories > 0:  # exactly one 1 where active, zeros where inactive
            np.testing.assert_array_equal(block.sum(axis=1), active.astype(float))
        else:
            np.testing.assert_array_equal(block[:, 0], X[:, index])
        start += width
    assert start == encoded.shape[1]


def _rows(space, rng: np.random.Generator, forests: int, others: int) -> np.ndarray:
    """Random configurations, ``forests`` of them random forests (whose max_features is
    active), so that the conditional parameter has enough data to be learned."""
    names = [column.name for column in space.columns()]
    pool = space.sample_vectors(rng, 40 * (forests + others))
    forest = pool[:, names.index(MAX_FEATURES)] != INACTIVE
    return np.vstack([pool[forest][:forests], pool[~forest][:others]])


def test_a_loss_of_a_categorical_and_a_conditional_number_is_learned(autosklearn_space):
    columns = autosklearn_space.columns()
    names = [column.name for column in columns]
    classifier, max_features = names.index(CLASSIFIER), names.index(MAX_FEATURES)
    # One effect per classifier, shuffled so that the order of the indices means nothing.
    effects = np.random.default_rng(123).permutation(
        np.linspace(0.0, 1.0, columns[classifier].categories)
    )

    def loss(X: np.ndarray) -> np.ndarray:
        features = X[:, max_features]
        forest_term = np.where(features != INACTIVE, 2.0 * (features - 0.3) ** 2, 0.0)
        return effects[X[:, classifier].astype(int)] + forest_term

    rng = np.random.default_rng(0)
    X, X_test = _rows(autosklearn_space, rng, 50, 100), _rows(autosklearn_space, rng, 200, 200)
    surrogate = GPSurrogate()
    surrogate.prepare(columns)
    mean, std = surrogate.fit(X, loss(X)).predict(X_test)
    y_test = loss(X_test)
    forest = X_test[:, max_features] != INACTIVE
    # Measured over 6 seeds: Spearman >= 0.99 overall and among random forests, MSE <= 1.1% of
    # the variance.
    assert spearmanr(mean, y_test).statistic > 0.95
    assert spearmanr(mean[forest], y_test[forest]).statistic > 0.9
    assert np.mean((mean - y_test) ** 2) < 0.1 * np.var(y_test)
    assert np.all(np.isfinite(std))


def test_a_one_choice_categorical_of_a_real_space_becomes_an_active_column():
    """auto-sklearn's regression space has one-choice categoricals (encoded 0, or -1 where
    inactive); a Constant is a number column (encoded 1.0), not a one-category column."""
    from automl_core.errors import UnknownComponentError
    from automl_core.plugins import load_plugins

    try:
        space = load_plugins().create("space", "autosklearn-regression")
    except UnknownComponentError:
        pytest.skip("automl-sklearn (space autosklearn-regression) is not installed")
    columns = space.columns()
    single = [index for index, column in enumerate(columns) if column.categories == 1]
    assert single  # e.g. regressor:gradient_boosting:loss
    X = space.sample_vectors(np.random.default_rng(0), 200)
    encoded = InputEncoder.from_columns(columns).transform(X)
    starts = np.cumsum([0] + [max(column.categories, 1) for column in columns])
    for index in single:
        active = X[:, index] != INACTIVE
        assert active.any()
        np.testing.assert_array_equal(encoded[:, starts[index]], active.astype(float))
