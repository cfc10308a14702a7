"""A Colab-safe ``glue``: myst-nb's when it is installed (book builds, CI), a plain display otherwise."""

from __future__ import annotations

import sys

import numpy as np
import torch

__all__ = ["glue", "on_colab"]


def on_colab() -> bool:
    """True inside a Google Colab kernel."""
    return "google.colab" in sys.modules


def glue(name: str, obj, display: bool = True):
    """``myst_nb.glue`` when myst-nb is installed (book builds, CI); a plain display otherwise (Colab).

    ``name`` is the key pasted in markdown with ``{glue:text}`name:.3f```. Returns ``obj``. A numpy or
    torch scalar is glued as the Python number it holds: numpy 2 shows ``np.float64(0.5)`` as its plain
    text, which a format spec such as ``:.3f`` cannot read.
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a str (the glue key), got {type(name).__name__} {name!r}")
    if not name.strip():
        raise ValueError(f"name must be a non-empty glue key, got {name!r}")
    if isinstance(obj, np.generic) or (isinstance(obj, torch.Tensor) and obj.ndim == 0):
        obj = obj.item()
    try:
        from myst_nb import glue as _glue
    except ImportError:
        if display:
            from IPython.display import display as _display

            _display(obj)
        return obj
    _glue(name, obj, display=display)
    return obj
