"""Shared test settings: a deterministic hypothesis profile without deadlines, and float64 by default."""
import os

from hypothesis import HealthCheck, settings

os.environ.setdefault("LLOYD_SCALE", "ci")

settings.register_profile("ci", deadline=None, max_examples=40, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None, max_examples=200)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
