"""The page drawn for real runs: what each section says, checked against the history."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from automl_core.errors import AutoMLError
from automl_engine.cli import main
from automl_engine.history import RunHistory, rank_key
from automl_engine.run_folder import HISTORY_FILE
from automl_report.importance import encode, hyperparameter_importance
from automl_report.render import render_report
from automl_report.sections import chosen_components, hyperparameters


def trials_of(run_dir: Path):
    with RunHistory(run_dir / HISTORY_FILE, read_only=True) as history:
        return history.trials()


def section(text: str, anchor: str) -> str:
    """The HTML of one section of the page."""
    match = re.search(rf'<section id="{anchor}">(.*?)</section>', text, re.S)
    assert match, f"no section {anchor}"
    return match.group(1)


def rendered(run_dir: Path, tmp_path: Path) -> str:
    path = render_report(run_dir, tmp_path / "page")
    assert path == tmp_path / "page" / "index.html"
    return path.read_text()


def test_random_run_page(random_run, tmp_path):
    before = sorted(p.name for p in random_run.iterdir())
    text = rendered(random_run, tmp_path)
    assert sorted(p.name for p in random_run.iterdir()) == before  # nothing written there
    trials = trials_of(random_run)
    assert f'<span id="trial-count">{len(trials)}</span>' in text
    # the leaderboard's first row is the run's best trial, with its pipeline
    best = sorted(trials, key=rank_key)[0]
    board = section(text, "leaderboard")
    first_row = board.split('<tr class="best">', 1)[1].split("</tr>", 1)[0]
    assert f'<td class="n">{best.trial.id}</td>' in first_row
    for component in chosen_components(best.trial.config).values():
        assert html.escape(component) in first_row
    # the final model: the summary's members and weights
    summary = json.loads((random_run / "summary.json").read_text())
    final = section(text, "final-model")
    for trial in summary["ensemble"]:
        assert f'<td class="n">{trial}</td>' in final
    # how trials ended: the counts per status
    counts = dict(re.findall(r'data-status="(\w+)">(\d+)<', section(text, "endings")))
    expected: dict[str, str] = {}
    for t in trials:
        expected[t.status] = str(int(expected.get(t.status, "0")) + 1)
    assert counts == expected
    # each learning algorithm tried has its time; figures exist beside the page, no URL
    algorithms = section(text, "algorithms")
    for t in trials:
        assert chosen_components(t.trial.config)["classifier"] in algorithms
    for figure in ("anytime.png", "algorithms.png"):
        assert f'src="{figure}"' in text and (tmp_path / "page" / figure).stat().st_size > 1000
    assert "http://" not in text and "https://" not in text
    # what a random search does not have, the page says so rather than leaving a blank
    assert "not computed: the run&#x27;s strategy uses no surrogate" in text
    assert 'id="tree"' not in text and 'id="fidelity"' not in text
    assert "Warm start: none" in section(text, "setup")
    assert "sklearn:iris" in text


def test_mcts_run_page_shows_the_tree(mcts_run, tmp_path):
    text = rendered(mcts_run, tmp_path)
    tree = section(text, "tree")
    trials = [t for t in trials_of(mcts_run) if t.finished]
    # the root's visits are every finished trial; each classifier tried is a node below it
    visits = [int(v) for v in re.findall(r'<td class="n visits">(\d+)</td>', tree)]
    assert visits[0] == len(trials)
    per_classifier: dict[str, int] = {}
    for t in trials:
        name = chosen_components(t.trial.config)["classifier"]
        per_classifier[name] = per_classifier.get(name, 0) + 1
    rows = re.findall(
        r"<tr[^>]*><td>(?:&nbsp;){4}([\w ]+?)(?: &#9733;)?</td>.*?"
        r'<td class="n visits">(\d+)</td>',
        tree,
    )
    assert dict((name, int(n)) for name, n in rows) == per_classifier
    # the path to the best pipeline is marked from its learning algorithm down
    best = sorted(trials, key=rank_key)[0]
    assert f"{chosen_components(best.trial.config)['classifier']} &#9733;" in tree
    assert "classifier &rarr; feature_preprocessor" in tree  # the decision order
    assert "from tree search" in tree
    # a model-based run: the surrogate's importances, the classifier's choice among them
    importance = section(text, "importance")
    assert "Permutation importance on a random-forest surrogate" in importance
    assert "classifier:__choice__" in importance


def test_halving_run_page_shows_rungs_and_promotions(halving_run, tmp_path):
    text = rendered(halving_run, tmp_path)
    fidelity = section(text, "fidelity")
    trials = [t for t in trials_of(halving_run) if t.finished]
    budgets = sorted({round(t.trial.budget, 4) for t in trials})
    assert len(budgets) >= 2
    rows = re.findall(r'<tr><td class="n">([\d.]+)</td><td class="n">(\d+)</td>', fidelity)
    assert [(round(float(b), 4), int(n)) for b, n in rows] == [
        (b, sum(round(t.trial.budget, 4) == b for t in trials)) for b in budgets
    ]
    promoted = [t for t in trials if t.trial.origin == "promotion"]
    assert promoted and "Promotions" in fidelity
    assert f"{promoted[0].trial.id} @" in fidelity
    assert "brackets: not recorded by this run" in fidelity
    assert "Permutation importance" in section(text, "importance")
    importance = hyperparameter_importance(trials)
    assert importance is not None and importance.trials == sum(t.ranks for t in trials)
    _, columns = encode([t.trial.config for t in trials], [t.trial.budget for t in trials])
    assert "(budget)" in columns  # the importance surrogate is told each trial's budget


def test_table_lookup_run_page(lookup_run, tmp_path):
    text = rendered(lookup_run, tmp_path)
    trials = trials_of(lookup_run)
    assert '<span id="trial-count">40</span>' in text
    assert "table:synthetic" in text
    assert "A table-lookup run fits no model" in section(text, "final-model")
    summary = json.loads((lookup_run / "summary.json").read_text())
    regret = summary["benchmark"]["normalised_regret"]
    assert f"{regret:.4f}" in section(text, "overview")
    best = sorted(trials, key=rank_key)[0]
    assert f"candidate={best.trial.config['candidate']}" in section(text, "leaderboard")
    assert "none (the recipe names no meta-feature provider)" in section(text, "metafeatures")


def test_hyperparameters_are_grouped_by_their_component():
    config = {
        "classifier:__choice__": "random_forest",
        "data_preprocessor:__choice__": "feature_type",
        "data_preprocessor:feature_type:numerical_transformer:rescaling:__choice__": "minmax",
        "feature_preprocessor:__choice__": "pca",
        "balancing:strategy": "none",
        "classifier:random_forest:max_features": 0.5,
        "feature_preprocessor:pca:keep_variance": 0.9,
    }
    assert list(chosen_components(config).items()) == [
        ("rescaling", "minmax"),
        ("feature_preprocessor", "pca"),
        ("classifier", "random_forest"),
    ]
    assert hyperparameters(config) == {
        "": {"balancing:strategy": "none"},
        "classifier:random_forest": {"max_features": 0.5},
        "feature_preprocessor:pca": {"keep_variance": 0.9},
    }


def test_the_report_command(random_run, tmp_path, capsys):
    out = tmp_path / "elsewhere"
    assert main(["report", str(random_run), "--out", str(out)]) == 0
    assert f"report: {out / 'index.html'}" in capsys.readouterr().out
    assert (out / "anytime.png").is_file()
    assert main(["report", str(tmp_path / "nothing")]) == 2
    assert "is not a run folder (no history.sqlite)" in capsys.readouterr().err


def test_the_estimator_writes_the_same_page(tmp_path):
    pytest.importorskip("automl_sklearn")
    from sklearn.datasets import load_iris

    from automl_core import AutoMLClassifier

    X, y = load_iris(return_X_y=True)
    recipe = {
        "name": "estimator",
        "task": {"dataset": "memory:iris", "metric": "balanced_accuracy"},
        "space": {
            "name": "autosklearn-classification",
            "params": {"include": {"classifier": ["decision_tree", "lda"]}},
        },
        "search": "random",
        "budget": {"trials": 4},
        "seed": 0,
    }
    model = AutoMLClassifier(recipe, time_budget=None, max_trials=4, output_dir=tmp_path)
    page = model.fit(X, y).report()
    assert page == model.run_dir_ / "report" / "index.html"
    text = page.read_text()
    assert '<span id="trial-count">4</span>' in text and "Leaderboard" in text
    assert (page.parent / "anytime.png").is_file()
    elsewhere = model.report(tmp_path / "page")
    assert elsewhere == tmp_path / "page" / "index.html" and elsewhere.is_file()
    unkept = AutoMLClassifier(recipe, time_budget=None, max_trials=2).fit(X, y)
    with pytest.raises(AutoMLError, match="fit with output_dir"):
        unkept.report()


def test_the_set_up_sections_of_a_run_with_failures_a_warm_start_a_policy_and_meta_features(
    setup_run, tmp_path
):
    """What the page says of a run's set-up comes from the run folder: the failed trials'
    error, the warm start's starter and count, the policy the selector chose, the trials by
    origin and the meta-features the run stored."""
    text = rendered(setup_run, tmp_path)
    with RunHistory(setup_run / HISTORY_FILE, read_only=True) as history:
        meta = {key: history.get_meta(key) for key in ("warmstart", "policy", "metafeatures")}
        trials = history.trials()
    failed = [t for t in trials if t.status != "ok"]
    assert failed, "the fixture's space should make some trials fail"
    endings = section(text, "endings")
    assert "No trial failed" not in endings
    assert "the refusing classifier fits nothing" in endings
    for t in failed:
        assert str(t.trial.id) in endings
    setup = section(text, "setup")
    warm = meta["warmstart"]
    assert warm["starter"] == "portfolio" and warm["configs"] == 2
    assert html.escape(f"{warm['configs']} configurations from portfolio") in setup
    policy = meta["policy"]
    assert f"Policy: {html.escape(policy['name'])}" in setup and "chosen by the policy" in setup
    origins = {t.trial.origin for t in trials}
    assert len(origins) == 2  # the portfolio's trials and the strategy's
    for origin in origins:
        count = sum(t.trial.origin == origin for t in trials)
        assert f"{html.escape(origin)} {count}" in setup
    features = section(text, "metafeatures")
    assert meta["metafeatures"], "the run should have stored its meta-features"
    for name in meta["metafeatures"]:
        assert f"<td>{html.escape(name)}</td>" in features
