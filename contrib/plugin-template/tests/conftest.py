"""Lets the template's tests run from a checkout without installing it first."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
