"""What defines a training run (:class:`TrainConfig`), its cache key, and the seeds of its random streams.

The defaults are the Leaner paper's training setup (Section 4 and Appendix F): one learnable layer of
Eq. 4, tasks from Appendix D, the smoothed loss of Eq. 6, Adam with ``ReduceLROnPlateau``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import numbers
from dataclasses import dataclass, fields

import numpy as np
import torch

import lloydlib

from .._validate import check_bool, check_choice, check_int, check_positive, check_scalar
from ..attention import WEIGHTINGS
from ..embeddings import EMBEDDINGS
from ..losses import REGULARIZERS
from ..model import LearnableTransformer
from ..tasks import FAMILIES, INITS

__all__ = ["DTYPES", "EXECUTION_FIELDS", "TrainConfig", "build_model", "check_field", "parse_field", "derive_seed"]

#: the floating-point types a run may train in
DTYPES = {"float32": torch.float32, "float64": torch.float64}
#: fields that say where and how a run is executed, not what it computes: left out of the cache key
EXECUTION_FIELDS = ("device", "checkpoint_every")

_INTEGERS = {  # field -> smallest allowed value
    "d": 1,
    "k": 2,
    "n": 1,
    "batch": 1,
    "steps": 1,
    "seed": 0,
    "eval_every": 1,
    "val_tasks": 1,
    "checkpoint_every": 1,
    "plateau_patience": 0,
}
_POSITIVE = ("tau", "lr", "scale", "gamma")
_FLAGS = ("isotropic", "equal_weights", "bias", "fast", "plateau")
_CHOICES = {
    "embedding": EMBEDDINGS,
    "loss": REGULARIZERS,
    "family": FAMILIES,
    "init": INITS,
    "weighting": WEIGHTINGS,
    "dtype": DTYPES,
}
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


@dataclass(frozen=True)
class TrainConfig:
    """Everything that defines a training run. Defaults are the Leaner paper's (Section 4, Appendix F).

    Tasks: ``n`` points in ``d`` dimensions around ``k`` clusters from ``family`` with per-dimension
    ``scale``, ``isotropic`` clusters, ``equal_weights`` and ``init`` centers (Appendix D).
    Model: one layer of Eq. 4 with ``embedding`` OH/BN/NA/SC, attention temperature ``gamma``, ``bias``,
    attention ``dropout`` and ``weighting`` (softmax or sparsemax attention); ``fast`` picks the fast
    form of the model. Loss: the smoothed loss of Eq. 6 with regulariser ``loss`` ("NE" = softmax,
    "L2" = sparsemax) at temperature ``tau``. Optimiser (Algorithm 1): Adam with learning rate ``lr``,
    ``batch`` tasks a step for ``steps`` steps, optional gradient-norm clipping ``clip``, optional
    ReduceLROnPlateau (``plateau``, ``plateau_factor``, ``plateau_patience``) stepped on the validation
    relative loss (Eq. 20) every ``eval_every`` steps on ``val_tasks`` fixed tasks. ``dtype`` is
    "float32" or "float64". Execution (not in the cache key): ``device`` ("auto", "cpu", "cuda", ...)
    and ``checkpoint_every``.
    """

    d: int = 4
    k: int = 6
    n: int = 512
    embedding: str = "BN"
    loss: str = "L2"
    tau: float = 0.1
    lr: float = 0.01
    batch: int = 32
    steps: int = 10_000
    seed: int = 0
    family: str = "normal"
    scale: float = 0.1
    isotropic: bool = True
    equal_weights: bool = True
    init: str = "random"
    gamma: float = 1.0
    bias: bool = True
    dropout: float = 0.0
    weighting: str = "softmax"
    fast: bool = True
    clip: float | None = None
    plateau: bool = True
    plateau_factor: float = 0.5
    plateau_patience: int = 5
    eval_every: int = 50
    val_tasks: int = 320
    dtype: str = "float32"
    device: str = "auto"
    checkpoint_every: int = 500

    def __post_init__(self):
        for f in fields(self):  # a frozen dataclass stores its normalised fields this way
            object.__setattr__(self, f.name, check_field(f.name, getattr(self, f.name)))
        if self.k > self.n:
            raise ValueError(f"k must be <= n (each task needs at least k points), got k={self.k} and n={self.n}")

    def replace(self, **changes) -> TrainConfig:
        """A copy with some fields changed (validated like a new config)."""
        names = [f.name for f in fields(self)]
        unknown = set(changes) - set(names)
        if unknown:
            raise TypeError(f"TrainConfig has no field(s) {sorted(unknown)}; fields: {names}")
        return dataclasses.replace(self, **changes)

    def experiment(self) -> dict:
        """The fields that define the result (everything but :data:`EXECUTION_FIELDS`)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name not in EXECUTION_FIELDS}

    def key(self) -> str:
        """A 16-hex-digit hash of :meth:`experiment` and ``lloydlib.__version__``: the cache key."""
        blob = json.dumps({"config": self.experiment(), "lloydlib": lloydlib.__version__}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def label(self) -> str:
        """A short human-readable name, e.g. ``BN:L2 d=4 k=6 n=512 tau=0.1 lr=0.01 seed=0``."""
        return (
            f"{self.embedding}:{self.loss} d={self.d} k={self.k} n={self.n} tau={self.tau:g} "
            f"lr={self.lr:g} seed={self.seed}"
        )


def build_model(config: TrainConfig) -> torch.nn.Module:
    """The untrained layer of Eq. 4 that ``config`` describes (float32, on the CPU)."""
    return LearnableTransformer(
        config.d,
        config.k,
        config.embedding,
        gamma=config.gamma,
        bias=config.bias,
        dropout=config.dropout,
        weighting=config.weighting,
        fast=config.fast,
    )


def check_field(name: str, value):
    """``value`` checked (and normalised: ints to int, reals to float) as the field ``name`` of
    :class:`TrainConfig`, on its own: the checks between fields (``k <= n``) are the config's. Errors name
    the field, what it expects and what came; an unknown ``name`` is a TypeError listing the fields."""
    check_field_name(name)
    if isinstance(value, (list, tuple, dict, set)):
        raise TypeError(f"{name} must be a single value, got {type(value).__name__} {value!r}")
    if name in _INTEGERS:
        return check_int(name, value, _INTEGERS[name])
    if name in _CHOICES:
        return check_choice(name, value, _CHOICES[name])
    if name in _POSITIVE:
        return check_positive(name, value)
    if name in _FLAGS:
        return check_bool(name, value)
    if name == "plateau_factor":
        return check_scalar(name, value, min_val=0, max_val=1, include_boundaries="neither")
    if name == "dropout":
        return check_scalar(name, value, numbers.Real, min_val=0, max_val=1, include_boundaries="left")
    if name == "clip":
        return None if value is None else check_positive(name, value)
    if not isinstance(value, str):  # device
        raise TypeError(f"{name} must be a string such as 'auto', 'cpu' or 'cuda', got {value!r}")
    return value


def parse_field(name: str, text: str):
    """The value of field ``name`` of :class:`TrainConfig` written as ``text`` (as on a command line), checked
    with :func:`check_field`: integers, reals, ``true``/``false`` for flags, ``none`` for no ``clip``."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    default = getattr(TrainConfig(), check_field_name(name))
    t = text.strip()
    try:
        if name == "clip" and t.lower() in ("none", "off"):
            value = None
        elif isinstance(default, bool):
            if t.lower() not in _TRUE + _FALSE:
                raise ValueError
            value = t.lower() in _TRUE
        elif isinstance(default, int):
            value = int(t)
        elif isinstance(default, float) or name == "clip":
            value = float(t)
        else:
            value = t
    except ValueError:
        kind = {bool: "true or false", int: "an integer"}.get(type(default), "a real number")
        extra = " or none" if name == "clip" else ""
        raise ValueError(f"{name} must be {kind}{extra}, got {text!r}") from None
    return check_field(name, value)


def check_field_name(name: str) -> str:
    """``name`` if :class:`TrainConfig` has such a field; a TypeError listing the fields otherwise."""
    names = [f.name for f in fields(TrainConfig)]
    if name not in names:
        raise TypeError(f"TrainConfig has no field {name!r}; fields: {names}")
    return name


def derive_seed(seed: int, *stream) -> int:
    """A 63-bit seed for the named random ``stream`` of a run (e.g. ``("train", step)``), from ``seed``.

    Integers in ``stream`` are used as they are, anything else through the first 4 bytes of the SHA-256
    of its text; numpy's ``SeedSequence`` mixes them, so different streams give unrelated seeds.
    """
    words = [check_int("seed", seed, 0)]
    for part in stream:
        if isinstance(part, (int, np.integer)):
            words.append(int(part))
        else:
            words.append(int.from_bytes(hashlib.sha256(str(part).encode()).digest()[:4], "little"))
    return int(np.random.SeedSequence(words).generate_state(1, np.uint64)[0] >> np.uint64(1))
