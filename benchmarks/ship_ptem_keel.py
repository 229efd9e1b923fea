"""Rebuild what automl-warmstart-ptem and automl-surrogate-latent ship for keel-autosklearn:
the ranker of examples/recipes/ptem-latent.yaml's settings, its labels, and the PTEMs of its
sources in the default space's encoding (issue 46).

    python benchmarks/ship_ptem_keel.py            # ~20-30 min on 2 cores

On a fresh cache folder (the registry packages linked from yours): one run of the example
recipe (one trial; the warm start labels the 6 sources by 30 BO runs and fits the ranker),
then each source's PTEM pre-trained as the ``latent`` surrogate with its defaults would
(``pretrain_seed`` 0), then the files copied into the two packages, replacing theirs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "examples" / "recipes" / "ptem-latent.yaml"
PTEM_SHIPPED = ROOT / "plugins/automl-warmstart-ptem/automl_warmstart_ptem/shipped"
LATENT_SHIPPED = ROOT / "plugins/automl-surrogate-latent/automl_surrogate_latent/ptems"


def main() -> int:
    from automl_engine.cache import CACHE_DIR_ENV, cache_dir

    packages = cache_dir() / "packages"
    with tempfile.TemporaryDirectory(prefix="ship-ptem-") as folder:
        cache = Path(folder) / "cache"
        cache.mkdir()
        (cache / "packages").symlink_to(packages)
        environment = {**os.environ, CACHE_DIR_ENV: str(cache)}
        started = time.monotonic()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "automl_engine.cli",
                "run",
                str(RECIPE),
                "--out",
                str(Path(folder) / "run"),
                "--set",
                "budget={trials: 1}",
                "--quiet",
            ],
            env=environment,
            check=True,
        )
        print(f"labels and ranker: {time.monotonic() - started:.0f} s", flush=True)
        subprocess.run(
            [sys.executable, __file__, "--ptems", str(cache)], env=environment, check=True
        )
        for kind in ("labels", "rankers"):
            shutil.rmtree(PTEM_SHIPPED / kind, ignore_errors=True)
            shutil.copytree(cache / "ptem" / kind, PTEM_SHIPPED / kind)
        shutil.rmtree(LATENT_SHIPPED, ignore_errors=True)
        wanted = json.loads((cache / "ptems.json").read_text())
        for relative in wanted:
            target = LATENT_SHIPPED / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(cache / "latent" / relative, target)
    print(f"shipped: {PTEM_SHIPPED} and {LATENT_SHIPPED}")
    return 0


def pretrain_sources(cache: Path) -> None:
    """Each labelled source's PTEM in the run's encoding (the one a run loads), its path
    under ``<cache>/latent`` written to ``<cache>/ptems.json``."""
    from automl_core.plugins import load_plugins
    from automl_core.space import vector_space
    from automl_surrogate_latent.surrogate import LatentSurrogate, ptem_path

    plugins = load_plugins()
    space = vector_space(plugins.create("space", "autosklearn-classification"))
    metadata = plugins.create("metadata", "keel-autosklearn").load()
    labels = json.loads(next((cache / "ptem" / "labels").glob("*.json")).read_text())
    surrogate = LatentSurrogate()
    surrogate.prepare(space.columns())
    surrogate.prepare_space(space)
    written = []
    for source in sorted(labels):
        started = time.monotonic()
        surrogate._pretrained(metadata, source, space)
        path = ptem_path(metadata, source, surrogate._packer, surrogate.pretraining, 0)
        written.append(str(path.relative_to(cache / "latent")))
        print(f"{source}: {time.monotonic() - started:.0f} s", flush=True)
    (cache / "ptems.json").write_text(json.dumps(written))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--ptems":
        pretrain_sources(Path(sys.argv[2]))
        sys.exit(0)
    sys.exit(main())
