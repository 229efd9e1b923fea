"""The meta-data fingerprint that components caching what they learn (the portfolio,
DeepPipe's checkpoints) key their caches with."""

from __future__ import annotations

import dataclasses

from automl_engine.metastore import metadata_fingerprint
from automl_engine.testing.data_checks import kit_metadata


def test_equal_meta_data_share_a_fingerprint_and_any_change_makes_another():
    metadata = kit_metadata()
    same = kit_metadata()
    assert metadata_fingerprint(metadata) == metadata_fingerprint(same)
    losses = metadata.performance.copy()
    losses[0, 0] += 1e-9
    changed = [
        dataclasses.replace(metadata, performance=losses),
        dataclasses.replace(metadata, splits={"train": list(metadata.datasets[:2])}),
        dataclasses.replace(metadata, configs=[{"candidate": -1}, *metadata.configs[1:]]),
        dataclasses.replace(metadata, datasets=[*metadata.datasets[:-1], "other"]),
    ]
    prints = {metadata_fingerprint(m) for m in changed}
    assert len(prints) == len(changed) and metadata_fingerprint(metadata) not in prints
