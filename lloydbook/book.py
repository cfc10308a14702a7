"""Starting a chapter: its settings at the active scale, the device, the seeds; ``glue`` re-exported."""

from __future__ import annotations

import os
import random

import numpy as np
import torch

from lloydlib._validate import check_choice, check_int

from . import claims, results
from .glue import glue
from .scales import SCALES

__all__ = ["SCALE_NAMES", "scale", "params", "device", "seed", "glue", "setup"]

SCALE_NAMES = ("ci", "default", "paper")


def scale() -> str:
    """The active scale, from ``LLOYD_SCALE`` (default ``"default"``); unknown values raise."""
    value = os.environ.get("LLOYD_SCALE", "default")
    if value not in SCALE_NAMES:
        raise ValueError(f"LLOYD_SCALE must be one of {list(SCALE_NAMES)}, got {value!r}")
    return value


class Params(dict):
    """A chapter's settings: a read-only dict whose keys also read as attributes (``P.n``)."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"chapter settings have no {name!r}; they have {sorted(self)}") from None

    def _readonly(self, *args, **kwargs):
        raise TypeError("chapter settings are read-only; change them in lloydbook/scales.py")

    __setitem__ = __delitem__ = update = pop = popitem = setdefault = clear = _readonly


def params(chapter: str, scale_name: str | None = None) -> Params:
    """That chapter's settings at the active scale (or ``scale_name``), with ``scale`` included."""
    check_choice("chapter", chapter, SCALES)
    s = scale() if scale_name is None else check_choice("scale_name", scale_name, SCALE_NAMES)
    p = Params(SCALES[chapter][s])
    dict.__setitem__(p, "scale", s)
    return p


def device() -> torch.device:
    """cuda when available, else cpu."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def seed(value: int = 0) -> int:
    """Seed python, numpy and torch (all devices)."""
    value = check_int("value", value, 0)
    random.seed(value)
    np.random.seed(value)
    torch.manual_seed(value)
    return value


def setup(chapter: str, seed_value: int = 0) -> Params:
    """Start a chapter: seed everything, print the scale and device, return the chapter's settings.

    It also starts the chapter's claim list (:func:`lloydbook.claims.start`), so the chapter's
    ``claims.record(...)`` ids carry its key and ``claims.table()`` glues under ``claims-<chapter>``.
    """
    p = params(chapter)
    seed(seed_value)
    results.use_cache()
    claims.start(chapter)
    print(
        f"lloydlib {__import__('lloydlib').__version__} | scale={p.scale} (LLOYD_SCALE) | device={device()} "
        f"| torch {torch.__version__} | seed={seed_value}"
    )
    return p
