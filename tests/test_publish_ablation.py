"""benchmarks/publish_ablation.py keeps finished cells' histories so that a meta-data build
interrupted in one session resumes in the next with its finished datasets done."""

from __future__ import annotations

import importlib.util
import sqlite3
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "publish_ablation.py"


def _script():
    spec = importlib.util.spec_from_file_location("publish_ablation", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cell(root: Path, name: str, finished: bool) -> Path:
    cell = root / "cells" / "design" / name / "seed-1"
    cell.mkdir(parents=True)
    with sqlite3.connect(cell / "history.sqlite") as db:
        db.execute("create table trials (loss real)")
        db.execute("insert into trials values (0.25)")
    (cell / "model.skops").write_bytes(b"model")
    if finished:
        (cell / "cell.json").write_text('{"status": "ok"}')
    return cell


def test_histories_of_finished_cells_survive_a_publish_and_restore(tmp_path: Path) -> None:
    script = _script()
    source = tmp_path / "ablation"
    done = _cell(source, "keel-iris", finished=True)
    _cell(source, "keel-pima", finished=False)
    (source / "results.csv").write_text("label,task\n")

    published = tmp_path / "published"
    script.publish(source, published, histories=True)
    packed = published / "cells/design/keel-iris/seed-1/history.sqlite.gz"
    assert packed.exists() and not packed.with_name("history.sqlite").exists()
    assert not (published / "cells/design/keel-pima").exists()  # unfinished: run afresh
    assert not (published / "cells/design/keel-iris/seed-1/model.skops").exists()

    restored = tmp_path / "restored"
    script.restore(published, restored)
    history = restored / "cells/design/keel-iris/seed-1/history.sqlite"
    assert history.read_bytes() == (done / "history.sqlite").read_bytes()
    assert (restored / "cells/design/keel-iris/seed-1/cell.json").exists()
    assert (restored / "results.csv").exists()


def test_without_histories_only_the_rows_are_published(tmp_path: Path) -> None:
    script = _script()
    source = tmp_path / "ablation"
    _cell(source, "keel-iris", finished=True)
    script.publish(source, tmp_path / "published")
    assert not list((tmp_path / "published").rglob("history.sqlite*"))
    assert (tmp_path / "published/cells/design/keel-iris/seed-1/cell.json").exists()
