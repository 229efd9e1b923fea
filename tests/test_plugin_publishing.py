"""Publishing a third-party plugin for real: the template's wheel and sdist uploaded to a
package index (pypiserver, on the loopback address), installed by name into a fresh virtual
environment with the core from the same index, found through its entry point, checked by the
conformance kit there, used by a recipe; then a new version published and upgraded to.
(One environment for all of it: creating one takes minutes on a slow 2-core machine.)

The environment sees the third-party distributions installed here (numpy, scikit-learn,
pytest...; linked, not copied), and pip is given the test's index alone: the automl packages
come from that index, as the install report shows, and nothing from the network (the test
passes with it unplugged, `unshare -n`).
"""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.request
import uuid
import venv
from collections.abc import Iterator
from pathlib import Path

import pytest
from packages import ROOT, hillclimb_recipe, sh, site_packages, wheels, with_a_package_index

from automl_engine.history import RunHistory
from automl_engine.testing import checks_for

TEMPLATE = ROOT / "contrib" / "plugin-template"
pytestmark = pytest.mark.slow
#: Uploads and downloads without a password; never a redirect to PyPI.
NO_AUTH = ["-a", ".", "-P", ".", "--disable-fallback"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A pypiserver on 127.0.0.1 that takes uploads without a password and never falls
    back to PyPI; its URL."""
    packages = tmp_path_factory.mktemp("index")
    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pypiserver",
            "run",
            "-i",
            "127.0.0.1",
            "-p",
            str(port),
            *NO_AUTH,
            str(packages),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):  # it starts in a second or two; give a loaded machine 30 s
            try:
                urllib.request.urlopen(f"{url}/simple/", timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("pypiserver did not start")
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


def upload(index_url: str, path: Path) -> None:
    """Upload one distribution file the way twine does (``:action=file_upload``, a
    multipart form)."""
    boundary = uuid.uuid4().hex
    fields = [(":action", "file_upload"), ("protocol_version", "1")]
    body = b"".join(
        f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode()
        for k, v in fields
    )
    body += (
        f'--{boundary}\r\nContent-Disposition: form-data; name="content"; '
        f'filename="{path.name}"\r\nContent-Type: application/octet-stream\r\n\r\n'
    ).encode()
    body += path.read_bytes() + f"\r\n--{boundary}--\r\n".encode()
    request = urllib.request.Request(
        f"{index_url}/",
        data=body,
        headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        assert response.status == 200, f"upload of {path.name}: HTTP {response.status}"


def build(source: Path, out: Path) -> list[Path]:
    """The wheel and sdist of the project in ``source``."""
    sh(
        sys.executable,
        "-m",
        "build",
        "--no-isolation",
        "--sdist",
        "--wheel",
        "--outdir",
        out,
        source,
    )
    return sorted(out.iterdir())


def template_at(version: str, tmp: Path) -> Path:
    """A copy of the template whose version is ``version``."""
    copy = tmp / f"template-{version}"
    shutil.copytree(TEMPLATE, copy, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    project = copy / "pyproject.toml"
    project.write_text(project.read_text().replace('version = "0.1.0"', f'version = "{version}"'))
    return copy


#: What in this environment's site-packages the test environment must not see: this
#: repository's own distributions (installed there from the index instead) and the path
#: files that would import them (editable installs).
OWN_ENTRIES = ("automl", "__editable__", "_automl")


def with_the_dependencies_installed_here(env: Path) -> None:
    """Make the third-party distributions of this environment importable in ``env``: a
    folder of links to them, named by a ``.pth`` file of ``env``. pip then finds every
    dependency of the automl packages installed and downloads nothing else."""
    here = Path(sysconfig.get_paths()["purelib"])
    linked = env / "dependencies"
    linked.mkdir()
    for entry in here.iterdir():
        if entry.name.lower().startswith(OWN_ENTRIES) or entry.suffix == ".pth":
            continue
        (linked / entry.name).symlink_to(entry)
    (site_packages(env / "bin" / "python") / "dependencies.pth").write_text(f"{linked}\n")


def install(env: Path, index_url: str, *requirements: str, report: Path) -> dict[str, str]:
    """``pip install`` by name from the test's index alone (the dependencies are those
    installed here, :func:`with_the_dependencies_installed_here`); the download URL of each
    automl package installed."""
    # this environment's pip, installing into ``env`` (which has none: ensurepip is seconds)
    pip = [sys.executable, "-m", "pip", "--python", env / "bin" / "python", "install", "-q"]
    pip += ["--report", report]
    sh(
        *pip, "--index-url", f"{index_url}/simple/", "--no-build-isolation", *requirements,
        env=with_a_package_index(),
    )  # fmt: skip
    installed = json.loads(report.read_text())["install"]
    return {
        item["metadata"]["name"]: item["download_info"]["url"]
        for item in installed
        if item["metadata"]["name"].startswith("automl-")
    }


def listing(env: Path) -> dict:
    """``automl plugins --json`` in ``env``: its components by (kind, name), and the rest."""
    listed = json.loads(sh(env / "bin" / "automl", "plugins", "--json"))
    listed["components"] = {(c["kind"], c["name"]): c for c in listed["components"]}
    return listed


def listed_version(env: Path) -> str:
    return listing(env)["components"][("search_strategy", "hillclimb")]["version"]


def test_a_plugin_published_to_an_index_is_installed_checked_used_and_upgraded(
    index: str, tmp_path: Path
) -> None:
    core = wheels(
        tmp_path / "dists",
        ROOT,
        ROOT / "plugins" / "automl-spaces",
        ROOT / "plugins" / "automl-engine",
        ROOT / "plugins" / "automl-sklearn",
    )
    first = build(template_at("0.1.0", tmp_path), tmp_path / "first")
    assert {p.suffix for p in first} == {".whl", ".gz"}  # a wheel and an sdist
    for path in [*core, *first]:
        upload(index, path)

    env = tmp_path / "venv"
    venv.create(env, with_pip=False)
    with_the_dependencies_installed_here(env)
    sources = install(
        env,
        index,
        "automl-hillclimb==0.1.0",
        "automl-sklearn",
        "pytest",
        report=tmp_path / "r1.json",
    )
    # the template needs only the kernel; automl-sklearn brings the engine that runs recipes
    # (and the spaces both build on)
    assert set(sources) == {
        "automl-core",
        "automl-spaces",
        "automl-engine",
        "automl-hillclimb",
        "automl-sklearn",
    }
    assert all(url.startswith(index) for url in sources.values()), sources
    listed = listing(env)  # found through its entry point, with its distribution and params
    hillclimb = listed["components"][("search_strategy", "hillclimb")]
    assert (hillclimb["distribution"], hillclimb["version"]) == ("automl-hillclimb", "0.1.0")
    assert hillclimb["parameters"] == {"restart_probability": 0.2}
    space = listed["components"][("space", "autosklearn-classification")]
    assert space["distribution"] == "automl-sklearn"
    assert listed["broken"] == [] and listed["conflicts"] == []

    # the conformance kit, run against the installed plugin from outside this repository
    kit = sh(
        env / "bin" / "python",
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--pyargs",
        "automl_engine.testing",
        "--automl-distribution",
        "automl-hillclimb",
        cwd=tmp_path,
    )
    strategy_checks = len(list(checks_for("search_strategy")))  # hillclimb is a strategy
    assert re.search(rf"^{strategy_checks} passed in ", kit, re.MULTILINE), kit

    search = "{name: hillclimb, params: {restart_probability: 0.5}}"
    recipe = hillclimb_recipe(tmp_path, 6, search)
    out = sh(env / "bin" / "automl", "run", recipe, "--out", tmp_path / "run", "--quiet")
    assert "trials: 6" in out
    assert "6 trials on sklearn:iris" in sh(env / "bin" / "automl", "show", tmp_path / "run")
    with RunHistory(tmp_path / "run" / "history.sqlite") as history:
        origins = [t.trial.origin for t in history.trials()]
    # "neighbour" is only ever proposed by the plugin's strategy: proof that it ran.
    assert set(origins) <= {"random", "neighbour"} and "neighbour" in origins

    for path in build(template_at("0.2.0", tmp_path), tmp_path / "second"):
        upload(index, path)
    upgraded = install(env, index, "--upgrade", "automl-hillclimb", report=tmp_path / "r2.json")
    assert upgraded == {
        "automl-hillclimb": f"{index}/packages/automl_hillclimb-0.2.0-py3-none-any.whl"
    }
    assert listed_version(env) == "0.2.0"
