"""Input validation shared by every public function.

Errors follow scikit-learn's style: they name the argument, say what was expected and what came, so
the user knows what to fix. Nothing in lloydlib silently returns NaN or a wrong shape.
"""

from __future__ import annotations

import math
import numbers

import torch

__all__ = [
    "AssumptionWarning",
    "check_points",
    "check_centers",
    "check_scalar",
    "check_int",
    "check_positive",
    "check_nonneg",
    "check_bool",
    "check_choice",
    "check_matrix",
    "check_tokens",
    "check_tensor",
    "check_task_shape",
    "check_float_dtype",
]


class AssumptionWarning(UserWarning):
    """A theorem's assumption failed on this input (ties, duplicate points, empty clusters).

    The library still returns a specified result (see the function's docstring), and says so through
    this warning rather than silently.
    """


def _describe(x) -> str:
    if isinstance(x, torch.Tensor):
        return f"a tensor of shape {tuple(x.shape)} and dtype {x.dtype}"
    return f"{type(x).__name__} {x!r}"


def check_tensor(name: str, x, ndim: int | None = None, *, allow_nonfinite: bool = False) -> torch.Tensor:
    """Return ``x`` if it is a finite floating-point tensor of rank ``ndim``; raise otherwise."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {_describe(x)}")
    if not x.is_floating_point():
        raise TypeError(
            f"{name} must have a floating-point dtype (float32 or float64), got {x.dtype}; "
            f"convert it with {name}.float() or {name}.double()"
        )
    if ndim is not None and x.dim() != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions, got {_describe(x)}")
    if not allow_nonfinite and not bool(torch.isfinite(x).all()):
        bad = int((~torch.isfinite(x)).sum())
        raise ValueError(f"{name} must be finite, got {bad} NaN or infinite entries in {_describe(x)}")
    return x


def check_points(X, name: str = "X") -> torch.Tensor:
    """Points ``X`` of shape (batch, n, d): tokens are rows, batch first."""
    X = check_tensor(name, X, 3)
    if X.shape[1] < 1 or X.shape[2] < 1:
        raise ValueError(f"{name} must have shape (batch, n, d) with n >= 1 and d >= 1, got {_describe(X)}")
    return X


def check_centers(C, X: torch.Tensor | None = None, name: str = "C", *, min_k: int = 1) -> torch.Tensor:
    """Centers ``C`` of shape (batch, k, d), consistent with points ``X`` when given."""
    C = check_tensor(name, C, 3)
    k = C.shape[1]
    if k < min_k:
        raise ValueError(f"{name} must hold k >= {min_k} centers, got k={k} ({_describe(C)})")
    if X is not None:
        if C.shape[0] != X.shape[0]:
            raise ValueError(
                f"{name} and X must have the same batch size, got {C.shape[0]} centers "
                f"batches for {X.shape[0]} point batches"
            )
        if C.shape[2] != X.shape[2]:
            raise ValueError(
                f"{name} must have the same dimension d as X, got d={C.shape[2]} for {name} and d={X.shape[2]} for X"
            )
        if C.dtype != X.dtype:
            raise TypeError(f"{name} and X must have the same dtype, got {C.dtype} and {X.dtype}")
        if C.device != X.device:
            raise ValueError(f"{name} and X must be on the same device, got {C.device} and {X.device}")
        if k > X.shape[1]:
            raise ValueError(f"{name} has k={k} centers but X has only n={X.shape[1]} points; need k <= n")
    return C


def check_task_shape(X: torch.Tensor, C: torch.Tensor, d: int, k: int, owner: str) -> None:
    """Raise unless points X (batch, n, d) and centers C (batch, k, d) fit an ``owner`` built for (d, k)."""
    if X.shape[2] != d:
        raise ValueError(f"X must have d={d} coordinates for this {owner}, got d={X.shape[2]}")
    if C.shape[1] != k:
        raise ValueError(f"C must hold k={k} centers for this {owner}, got k={C.shape[1]}")


def check_float_dtype(name: str, dtype) -> torch.dtype:
    """``dtype`` if it is a floating-point torch.dtype; otherwise a TypeError naming ``name``."""
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(f"{name} must be a floating-point torch.dtype, got {dtype!r}")
    return dtype


def check_tokens(Z, d_emb: int | None = None, name: str = "Z") -> torch.Tensor:
    """Token batch of shape (batch, m, d_emb)."""
    Z = check_tensor(name, Z, 3)
    if d_emb is not None and Z.shape[2] != d_emb:
        raise ValueError(f"{name} must have token dimension d_emb={d_emb}, got {_describe(Z)}")
    return Z


def check_matrix(name: str, W, shape: tuple[int, int]) -> torch.Tensor:
    W = check_tensor(name, W, 2)
    if tuple(W.shape) != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}, got {_describe(W)}")
    return W


def check_scalar(
    name: str,
    value,
    target_type=numbers.Real,
    *,
    min_val=None,
    max_val=None,
    include_boundaries: str = "both",
    allow_inf: bool = False,
):
    """Validate a scalar argument, in the spirit of scikit-learn's ``check_scalar``.

    ``target_type`` is ``numbers.Integral`` (returns an ``int``; ``bool`` is refused) or ``numbers.Real``
    (returns a ``float``; NaN is always refused, infinities unless ``allow_inf``). ``min_val`` and
    ``max_val`` bound the value; ``include_boundaries`` is ``"both"``, ``"left"``, ``"right"`` or
    ``"neither"`` and says which bounds are allowed values. The error names ``name``, the allowed range
    and the value that came.
    """
    if include_boundaries not in ("both", "left", "right", "neither"):
        raise ValueError(
            f"include_boundaries must be one of ['both', 'left', 'right', 'neither'], got {include_boundaries!r}"
        )
    integral = target_type is numbers.Integral or target_type is int
    if isinstance(value, bool) or not isinstance(value, numbers.Integral if integral else numbers.Real):
        kind = "an integer" if integral else "a real number"
        raise TypeError(f"{name} must be {kind}, got {_describe(value)}")
    value = int(value) if integral else float(value)
    if not integral and (math.isnan(value) or (math.isinf(value) and not allow_inf)):
        allowed = "a number or +-math.inf" if allow_inf else "a finite number"
        raise ValueError(f"{name} must be {allowed}, got {value}")
    low_ok = include_boundaries in ("both", "left")
    high_ok = include_boundaries in ("both", "right")
    too_low = min_val is not None and (value < min_val or (value == min_val and not low_ok))
    too_high = max_val is not None and (value > max_val or (value == max_val and not high_ok))
    if too_low or too_high:
        parts = []
        if min_val is not None:
            parts.append(f"{'>=' if low_ok else '>'} {min_val}")
        if max_val is not None:
            parts.append(f"{'<=' if high_ok else '<'} {max_val}")
        raise ValueError(f"{name} must be {' and '.join(parts)}, got {value}")
    return value


def check_int(name: str, value, minimum: int | None = None, maximum: int | None = None) -> int:
    """An integer ``value`` with ``minimum <= value <= maximum`` (either bound optional)."""
    return check_scalar(name, value, numbers.Integral, min_val=minimum, max_val=maximum)


def check_positive(name: str, value, *, allow_inf: bool = False) -> float:
    """A real ``value > 0`` (``math.inf`` allowed with ``allow_inf``)."""
    return check_scalar(name, value, numbers.Real, min_val=0, include_boundaries="right", allow_inf=allow_inf)


def check_nonneg(name: str, value) -> float:
    """A finite real ``value >= 0``."""
    return check_scalar(name, value, numbers.Real, min_val=0)


def check_bool(name: str, value) -> bool:
    """``value`` if it is a bool (not merely truthy); a TypeError naming ``name`` otherwise."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool (True or False), got {_describe(value)}")
    return value


def check_choice(name: str, value, choices) -> str:
    if value not in choices:
        raise ValueError(f"{name} must be one of {sorted(choices)}, got {value!r}")
    return value
