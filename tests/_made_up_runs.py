"""Made-up runs for the tests of the figures' findings (importable because tests/conftest.py puts this
folder on sys.path): Run-like objects with a history at :data:`STEPS`, and helpers to make their curves."""

from types import SimpleNamespace

import numpy as np

STEPS = np.arange(11) * 10
EMBS, LOSSES = ("OH", "BN", "NA"), ("NE", "L2")


def run(val, seed, *, train=None, ms=1.0, status="done", config=None):
    """A made-up run: ``val`` the relative validation loss at STEPS (seeds differ a little), ``ms`` per step."""
    val = np.asarray(val, dtype=float) + 1e-3 * np.sin(seed + np.arange(len(val)))
    train = 10 * val if train is None else np.asarray(train, dtype=float)
    history = {"step": STEPS, "val_rel_loss": val, "train_loss": train, "wall_time": STEPS * ms / 1000}
    config = config or SimpleNamespace(seed=seed, clip=None)
    return SimpleNamespace(history=history, status=status, info={}, config=config, train_losses=np.ones(100))


def falls(scale, end=0.9):
    """A validation curve at STEPS falling from ``end + 0.6`` towards ``end`` with time constant ``scale``."""
    return end + 0.6 * np.exp(-STEPS / scale)


def drop_one(G):
    """``G`` with the last run of its first setting left out (a partial sweep)."""
    key = next(iter(G))
    return {**G, key: G[key][:-1]}
