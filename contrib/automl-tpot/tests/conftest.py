"""Lets the tests run from a checkout without installing the plugin first (the entry-point
test needs it installed). The datasets the tests use are in ``contrib/conftest.py``."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
