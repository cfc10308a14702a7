"""The one seeded-generator helper: every random draw in lloydlib comes from a CPU ``torch.Generator``.

Drawing on the CPU in float64 and moving the result afterwards makes a seed give the same numbers on
every device and dtype.
"""

from __future__ import annotations

import torch

from ._validate import check_int

__all__ = ["generator"]


def generator(seed: int | None) -> torch.Generator:
    """A CPU generator seeded with ``seed`` (an integer >= 0), or from fresh entropy when ``seed`` is None."""
    g = torch.Generator(device="cpu")
    if seed is None:
        g.seed()
    else:
        g.manual_seed(check_int("seed", seed, 0))
    return g
