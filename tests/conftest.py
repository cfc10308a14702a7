"""Shared test settings: a deterministic hypothesis profile without deadlines, float64 by default, and the Ray tests
first (:data:`FIRST`)."""

import os
import sys
from pathlib import Path

from hypothesis import HealthCheck, settings

os.environ.setdefault("LLOYD_SCALE", "ci")
sys.path.insert(0, str(Path(__file__).parent))  # tests/_support.py

settings.register_profile(
    "ci", deadline=None, max_examples=40, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", deadline=None, max_examples=200)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

#: test modules run first. The Ray tests wait on Ray's start-up far longer than they compute (136 s of one worker in
#: a make test, for about 20 CPU s). Collected in name order they came last: in that run they filled its last three
#: minutes, the last one after the run store's verification beside them had ended. First, the rest works meanwhile.
FIRST = ("lloydlib/training/test_executors.py",)


def pytest_collection_modifyitems(session, config, items):
    """Move the tests of :data:`FIRST` to the front (pytest-xdist deals tests out in this order); the rest keep
    their order."""
    first = tuple(str(Path(__file__).parent / m) for m in FIRST)
    items.sort(key=lambda item: not str(item.path).startswith(first))
