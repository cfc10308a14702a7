"""What defines a training run (:class:`TrainConfig`), its cache key, and the seeds of its random streams.

The defaults are the Leaner paper's training setup (Section 4 and Appendix F): one learnable layer of
Eq. 4, tasks from Appendix D, the smoothed loss of Eq. 6, Adam with ``ReduceLROnPlateau``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import numbers
from dataclasses import dataclass, field, fields

import numpy as np
import torch

import lloydlib

from .._validate import check_bool, check_choice, check_int, check_positive, check_scalar
from ..attention import WEIGHTINGS
from ..embeddings import EMBEDDINGS
from ..losses import REGULARIZERS
from ..model import LearnableTransformer
from ..tasks import FAMILIES, INITS

__all__ = [
    "DTYPES",
    "ROLES",
    "EXECUTION_FIELDS",
    "DISTRIBUTION_FIELDS",
    "TASK_FIELDS",
    "PER_RUN_FIELDS",
    "TrainConfig",
    "build_model",
    "check_field",
    "parse_field",
    "derive_seed",
]

#: the floating-point types a run may train in
DTYPES = {"float32": torch.float32, "float64": torch.float64}

_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def _int(minimum: int):
    return lambda name, value: check_int(name, value, minimum)


def _choice(choices):
    return lambda name, value: check_choice(name, value, choices)


def _positive(name, value):
    return check_positive(name, value)


def _flag(name, value):
    return check_bool(name, value)


def _share(name, value):  # a real number in (0, 1)
    return check_scalar(name, value, min_val=0, max_val=1, include_boundaries="neither")


def _probability(name, value):  # a real number in [0, 1)
    return check_scalar(name, value, numbers.Real, min_val=0, max_val=1, include_boundaries="left")


def _optional_positive(name, value):
    return None if value is None else check_positive(name, value)


def _device(name, value):
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string such as 'auto', 'cpu' or 'cuda', got {value!r}")
    return value


#: what a field's role may be: "shared" by the runs of one stack, "per-run" (may differ within a stack),
#: "task" (per-run, and with the seed it fixes the run's task stream); and two that say how a run is executed,
#: not what it computes (left out of the cache key): "execution" (per-run) and "placement" (where the stack
#: trains: shared)
ROLES = ("shared", "per-run", "task", "execution", "placement")


def _field(default, check, role: str, help: str):
    """A :class:`TrainConfig` field: its default, its ``check(name, value) -> value``, its role (:data:`ROLES`)
    and its command-line help. Everything else about fields (the stack key, the task stream's key, the
    cache key, the options of ``python -m lloydlib train``) is derived from these."""
    assert role in ROLES, role
    return field(default=default, metadata={"check": check, "role": role, "help": help})


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
    and ``checkpoint_every``. Each field's check, role and help are declared once, below (:func:`_field`).
    """

    d: int = _field(4, _int(1), "shared", "dimension of the points")
    k: int = _field(6, _int(2), "shared", "clusters per task (k <= n)")
    n: int = _field(512, _int(1), "shared", "points per task")
    embedding: str = _field("BN", _choice(EMBEDDINGS), "shared", "cluster-id embedding: " + ", ".join(EMBEDDINGS))
    loss: str = _field("L2", _choice(REGULARIZERS), "shared", "regulariser of Eq. 6: NE (softmax), L2 (sparsemax)")
    tau: float = _field(0.1, _positive, "per-run", "temperature of the smoothed loss (Eq. 6)")
    lr: float = _field(0.01, _positive, "per-run", "Adam's learning rate")
    batch: int = _field(32, _int(1), "shared", "tasks per step")
    steps: int = _field(10_000, _int(1), "per-run", "training steps")
    seed: int = _field(0, _int(0), "task", "the run's seed: initial weights, tasks, validation set")
    family: str = _field("normal", _choice(FAMILIES), "task", "task family (Appendix D): " + ", ".join(FAMILIES))
    scale: float = _field(0.1, _positive, "task", "per-dimension cluster scale")
    isotropic: bool = _field(True, _flag, "task", "isotropic clusters")
    equal_weights: bool = _field(True, _flag, "task", "equal cluster weights")
    init: str = _field("random", _choice(INITS), "task", "initial centers: " + ", ".join(INITS))
    gamma: float = _field(1.0, _positive, "shared", "attention temperature gamma of Eq. 3")
    bias: bool = _field(True, _flag, "shared", "biases b_Q, b_K, b_V")
    dropout: float = _field(0.0, _probability, "shared", "attention dropout in training (a stack of one)")
    weighting: str = _field("softmax", _choice(WEIGHTINGS), "shared", "attention weights: softmax or sparsemax")
    fast: bool = _field(True, _flag, "shared", "the fast form of the layer for the returned model")
    clip: float | None = _field(None, _optional_positive, "per-run", "gradient-norm clipping (none: off)")
    plateau: bool = _field(True, _flag, "per-run", "ReduceLROnPlateau on the validation relative loss")
    plateau_factor: float = _field(0.5, _share, "per-run", "the plateau scheduler's factor, in (0, 1)")
    plateau_patience: int = _field(5, _int(0), "per-run", "the plateau scheduler's patience (evaluations)")
    eval_every: int = _field(50, _int(1), "shared", "steps between validations (Eq. 20)")
    val_tasks: int = _field(320, _int(1), "shared", "fixed validation tasks")
    dtype: str = _field("float32", _choice(DTYPES), "shared", "float32 or float64")
    device: str = _field("auto", _device, "placement", "auto, cpu, cuda or cuda:N")
    checkpoint_every: int = _field(500, _int(1), "execution", "steps between checkpoints")

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

    def distribution(self) -> dict:
        """The task distribution (:data:`DISTRIBUTION_FIELDS`), as keyword arguments of
        :func:`~lloydlib.tasks.sample_tasks`."""
        return {name: getattr(self, name) for name in DISTRIBUTION_FIELDS}

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


def _role(*roles) -> tuple[str, ...]:
    return tuple(f.name for f in fields(TrainConfig) if f.metadata["role"] in roles)


#: fields that say where and how a run is executed, not what it computes: left out of the cache key
EXECUTION_FIELDS = _role("execution", "placement")
#: fields that choose a run's task distribution (with its seed, they fix its task stream)
DISTRIBUTION_FIELDS = tuple(name for name in _role("task") if name != "seed")
#: what fixes a run's tasks: two runs with equal values draw equal tasks
TASK_FIELDS = _role("task")
#: fields that may differ between the runs of one stack (everything else must be equal)
PER_RUN_FIELDS = _role("per-run", "task", "execution")


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
    return _FIELDS[name].metadata["check"](name, value)


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
    if name not in _FIELDS:
        raise TypeError(f"TrainConfig has no field {name!r}; fields: {list(_FIELDS)}")
    return name


_FIELDS = {f.name: f for f in fields(TrainConfig)}


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
