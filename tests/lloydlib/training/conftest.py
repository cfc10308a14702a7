"""Fixtures of the training tests: a tiny run that trains in a fraction of a second, a private cache."""

import pytest


@pytest.fixture
def tiny():
    """TrainConfig fields of a run of 30 steps on tasks of 12 points: fast on a CPU."""
    return dict(d=2, k=3, n=12, steps=30, batch=4, val_tasks=8, eval_every=5, checkpoint_every=10, device="cpu")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A fresh cache root, made the default through $LLOYD_CACHE."""
    monkeypatch.setenv("LLOYD_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"
