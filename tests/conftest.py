"""Shared test settings: a deterministic hypothesis profile without deadlines, and float64 by default."""

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
