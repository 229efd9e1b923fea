"""Times the gp surrogate's fit and predict (the numbers in the README).

    python plugins/automl-surrogate-gp/benchmarks/time_gp.py

Reports CPU seconds of this process (``time.process_time``; the surrogate runs on one thread)
as well as wall-clock seconds, because on a shared machine wall-clock time mostly measures
the neighbours. A first small fit is made beforehand so that one-off import costs are left out.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from automl_core.plugins import load_plugins
from automl_surrogate_gp import GPSurrogate

SIZES = (50, 200, 500)
PREDICT_ROWS = 2000


def smooth_loss(X: np.ndarray) -> np.ndarray:
    return np.sin(3 * X[:, 0]) + 4 * (X[:, 1] - 0.5) ** 2 + 0.1 * X[:, 2:].sum(axis=1)


def timed(call: Callable[[], object]) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    call()
    return time.process_time() - cpu, time.perf_counter() - wall


def report(label: str, make_rows: Callable[[int], np.ndarray], columns: list | None) -> None:
    for n in SIZES:
        X, X_new, X_test = make_rows(n), make_rows(1), make_rows(PREDICT_ROWS)
        y = smooth_loss(X)
        surrogate = GPSurrogate()
        if columns is not None:
            surrogate.prepare(columns)
        cold = timed(lambda: surrogate.fit(X, y))  # noqa: B023 -- called at once
        X_more = np.vstack([X, X_new])
        warm = timed(lambda: surrogate.fit(X_more, smooth_loss(X_more)))  # noqa: B023
        predict = timed(lambda: surrogate.predict(X_test))  # noqa: B023
        print(
            f"{label:>24} n={n:4d}  cold fit {cold[0]:6.3f} s cpu ({cold[1]:6.3f} wall)  "
            f"warm refit {warm[0]:6.3f} ({warm[1]:6.3f})  "
            f"predict {PREDICT_ROWS} {predict[0]:6.3f} ({predict[1]:6.3f})"
        )


def main() -> None:
    rng = np.random.default_rng(0)
    GPSurrogate().fit(rng.random((5, 3)), rng.random(5))  # imports and first-call set-up
    report("10-d", lambda n: rng.random((n, 10)), None)
    plugins = load_plugins()
    space = plugins.create("space", "autosklearn-classification")
    columns = space.columns()
    width = sum(max(c.categories, 1) for c in columns)
    label = f"auto-sklearn {len(columns)}->{width}-d"
    report(label, lambda n: space.sample_vectors(rng, n), columns)


if __name__ == "__main__":
    main()
