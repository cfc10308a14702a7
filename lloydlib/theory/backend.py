"""One formula, three backends: the machinery that lets every constant of Appendix I be written once.

A formula is a function ``f(B, **quantities)`` written with the operations of a tiny backend ``B``
(sqrt, exp, log, max, where, the number 1/2). :func:`formula` turns it into a public function that
checks its arguments and evaluates it with

* numpy: floats, or arrays (broadcast) when an argument is an array; a float overflows to inf;
* sympy: expressions, when an argument is a sympy object (or ``backend="sympy"``), for the proofs of
  the book's chapter "The Lipschitz and norm-bound lemmas";
* mpmath: arbitrary-precision numbers (``backend="mpmath"``), for constants such as exp(3200).

Arguments are checked by kind (:data:`KINDS`): counts (m, m', n, k) are >= 1, dimensions and
temperatures (d, d_E, d_emb, gamma, tau, omega) are > 0, norms and bounds (rho, rho', Gamma1, Gamma2,
delta, r*) are >= 0, all finite. Numbers go through :func:`lloydlib._validate.check_scalar`, arrays
entry by entry through the same check, and sympy numbers by their sign; a bad one raises naming it.
"""

from __future__ import annotations

import functools
import inspect
import numbers
from dataclasses import dataclass

import mpmath
import numpy as np
import sympy as sp

from .._validate import check_choice, check_scalar

__all__ = ["BACKENDS", "KINDS", "Backend", "formula", "pick_backend", "prepare", "finish"]

BACKENDS = ("numpy", "sympy", "mpmath")


def _np_max(*xs):
    return functools.reduce(np.maximum, xs)


def _np_where(cond, a, b):
    return np.where(cond, a, b)


def _sp_where(cond, a, b):
    return sp.Piecewise((a, cond), (b, True))


def _mp_where(cond, a, b):
    return a if cond else b


@dataclass(frozen=True)
class Backend:
    """The operations a formula may use: sqrt, exp, log, max (of several), where(cond, a, b), 1/2."""

    name: str
    sqrt: object
    exp: object
    log: object
    max: object
    where: object
    half: object  # the number 1/2, exact in sympy


NUMPY = Backend("numpy", np.sqrt, np.exp, np.log, _np_max, _np_where, 0.5)
SYMPY = Backend("sympy", sp.sqrt, sp.exp, sp.log, sp.Max, _sp_where, sp.Rational(1, 2))
MPMATH = Backend("mpmath", mpmath.sqrt, mpmath.exp, mpmath.log, max, _mp_where, mpmath.mpf(1) / 2)
_BACKEND = {b.name: b for b in (NUMPY, SYMPY, MPMATH)}

# what each argument must be: counts >= 1, dimensions > 0, norms and bounds >= 0
KINDS = {
    "m": "count", "m_p": "count", "n": "count", "k": "count",
    "d": "positive", "d_E": "positive", "d_emb": "positive", "gamma": "positive", "tau": "positive",
    "rho": "nonnegative", "rho_p": "nonnegative", "Gamma1": "nonnegative", "Gamma2": "nonnegative",
    "delta": "nonnegative", "r_star": "nonnegative", "omega": "positive",
}  # fmt: skip
# the same kinds as arguments of check_scalar
_LIMITS = {
    "count": {"min_val": 1},
    "positive": {"min_val": 0, "include_boundaries": "right"},
    "nonnegative": {"min_val": 0},
}


def _check_numeric(name: str, value, kind: str):
    """A real number (returned as a float) or a numpy array of them (float64), every entry of ``kind``."""
    if isinstance(value, np.ndarray):
        if value.dtype == np.bool_ or not (np.issubdtype(value.dtype, np.number) and np.isrealobj(value)):
            raise TypeError(f"{name} must be an array of real numbers, got dtype {value.dtype}")
        arr = np.asarray(value, dtype=np.float64)
        if arr.size == 0:
            raise ValueError(f"{name} must not be empty, got an array of shape {arr.shape}")
        limits = _LIMITS[kind]
        ok = np.isfinite(arr) & (arr > limits["min_val"] if kind == "positive" else arr >= limits["min_val"])
        if not bool(ok.all()):
            i = np.unravel_index(int(np.flatnonzero(~ok)[0]), arr.shape)
            check_scalar(f"{name}[{', '.join(map(str, i))}]", float(arr[i]), **limits)  # raises, naming the entry
        return arr if arr.ndim else float(arr)
    if isinstance(value, np.bool_):
        raise TypeError(f"{name} must be a real number, got numpy.bool_ {value!r}")
    return check_scalar(name, value, numbers.Real, **_LIMITS[kind])


def _check_symbolic(name: str, value, kind: str):
    """A sympy expression; a sympy number must be finite and of ``kind`` (decided by sympy's signs)."""
    value = sp.sympify(value)
    if value.is_number:
        if value.has(sp.nan, sp.zoo, sp.oo, -sp.oo) or value.is_real is False:
            raise ValueError(f"{name} must be a finite real number, got {value}")
        low = _LIMITS[kind]["min_val"]
        if (value - low).is_negative or (kind == "positive" and value.is_zero):
            check_scalar(name, float(value), **_LIMITS[kind])  # raises with the common message
            raise ValueError(f"{name} must be {'>' if kind == 'positive' else '>='} {low}, got {value}")
    return value


def pick_backend(backend, values) -> Backend:
    """The backend named ``backend``; when None, sympy if any of ``values`` is a sympy object, else numpy."""
    if backend is not None:
        return _BACKEND[check_choice("backend", backend, BACKENDS)]
    return SYMPY if any(isinstance(v, sp.Basic) for v in values) else NUMPY


def prepare(B: Backend, name: str, value):
    """Check argument ``name`` (its kind from :data:`KINDS`) and convert it for backend ``B``."""
    kind = KINDS[name]
    if B is SYMPY:
        return _check_symbolic(name, value, kind)
    if isinstance(value, sp.Basic):
        raise TypeError(
            f"{name} is a sympy expression but backend={B.name!r} needs numbers; "
            f"use backend='sympy' (or leave backend unset)"
        )
    value = _check_numeric(name, value, kind)
    if B is MPMATH:
        if isinstance(value, np.ndarray):
            raise TypeError(f"{name}: backend='mpmath' takes scalars, got an array of shape {value.shape}")
        return mpmath.mpf(value)
    return value


def finish(out, B: Backend):
    """A formula's result for the caller: numpy 0-d results become floats (also inside dicts, tuples)."""
    if isinstance(out, dict):
        return {key: finish(val, B) for key, val in out.items()}
    if isinstance(out, tuple):
        return tuple(finish(val, B) for val in out)
    if B is NUMPY and isinstance(out, (np.ndarray, np.generic, numbers.Real)) and np.ndim(out) == 0:
        return float(out)
    return out


def formula(f):
    """Turn ``f(B, **quantities)`` into a public function: checks its arguments, picks the backend.

    The public function has ``f``'s signature without ``B`` plus a keyword ``backend`` (None: sympy if
    any argument is a sympy object, numpy otherwise). ``public.formula`` is ``f`` itself, so formulas
    can call each other inside one backend.
    """
    params = list(inspect.signature(f).parameters.values())[1:]
    signature = inspect.Signature(params)

    @functools.wraps(f)
    def public(*args, backend=None, **kwargs):
        bound = signature.bind(*args, **kwargs)
        B = pick_backend(backend, bound.arguments.values())
        values = {name: prepare(B, name, v) for name, v in bound.arguments.items()}
        with np.errstate(over="ignore"):  # a float overflows to inf; backend="mpmath" does not
            return finish(f(B, **values), B)

    public.__signature__ = inspect.Signature(
        params + [inspect.Parameter("backend", inspect.Parameter.KEYWORD_ONLY, default=None)]
    )
    public.formula = f
    return public
