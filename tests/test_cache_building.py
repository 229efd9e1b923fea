"""Two processes that need the same cache entry at once build it once
(:func:`automl_engine.cache.building`): the second waits for the first, then finds it."""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path

from automl_engine.cache import building


def build_if_missing(entry: Path, log: Path, barrier) -> None:  # type: ignore[no-untyped-def]
    barrier.wait()  # both processes reach the check together
    if not entry.exists():
        with building(entry):
            if not entry.exists():
                with log.open("a") as out:
                    out.write("built\n")
                time.sleep(0.5)  # a build takes a while: without the lock, both would build
                entry.write_text("done")


def test_two_processes_needing_one_entry_build_it_once(tmp_path):
    entry, log = tmp_path / "cache" / "entry.json", tmp_path / "built.log"
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(2)
    workers = [
        context.Process(target=build_if_missing, args=(entry, log, barrier)) for _ in range(2)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
        assert worker.exitcode == 0
    assert log.read_text() == "built\n"
    assert entry.read_text() == "done"
    assert (tmp_path / "cache" / ".entry.json.lock").exists()  # the lock lives beside it
