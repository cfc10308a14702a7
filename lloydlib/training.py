"""Training learnable transformers on clustering tasks (Algorithm 1 and Eqs. 5-6, 20 of the Leaner paper).

One run = one :class:`TrainConfig`. :func:`train` draws B tasks a step from the task generator, maps
(X, C0) through one learnable layer (:class:`lloydlib.model.LearnableTransformer`), takes the smoothed
k-means loss of the output (:func:`lloydlib.losses.training_loss`) and an Adam step. Every
``eval_every`` steps it records the relative loss of Eq. 20 on a fixed validation set of ``val_tasks``
tasks (drawn once per seed) and, as the authors' code does, steps ``ReduceLROnPlateau`` on it.

Repeatable and resumable
------------------------
Every random draw is derived from the run's seed: the tasks of step m come from the seed
``derive_seed(seed, "train", m)``, the validation tasks from ``derive_seed(seed, "val")`` and the
initial weights from ``derive_seed(seed, "init")``; attention dropout uses torch's global generator,
whose state is saved. A checkpoint (model, Adam, scheduler, generator state, history) is written
every ``checkpoint_every`` steps, so an interrupted run resumes where it stopped and ends with exactly
the weights and history of an uninterrupted one (bitwise, on the same device and thread count).

Cached
------
Results live in ``cache_dir()/runs/<key>/`` where ``key`` hashes every field that defines the
experiment plus ``lloydlib.__version__`` (not the device or the checkpoint interval: a run trained on
a GPU can be read on a CPU). A chapter that asks for a run another chapter (or the command line) has
already trained loads it instead. Files are written to a temporary name and moved into place with
``os.replace``, so a reader never sees half a file. The cache root is ``$LLOYD_CACHE`` when set, else
``.lloydlib-cache/`` at the root of a source checkout, else ``~/.cache/lloydlib``.

Command line: ``python -m lloydlib train --help`` (see :func:`main`).
"""
from __future__ import annotations

import argparse
import dataclasses
import hashlib
import itertools
import json
import math
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field, fields
from pathlib import Path

import numpy as np
import torch

from ._validate import check_choice, check_int, check_positive
from .embeddings import EMBEDDINGS
from .losses import REGULARIZERS, kmeans_loss, lloyd_baseline, smoothed_loss
from .tasks import FAMILIES, INITS, sample_tasks

__all__ = ["TrainConfig", "Run", "train", "train_many", "grid", "lookup", "load_runs", "cache_dir", "curves",
           "final_values", "group", "quartiles", "iqr_relation", "gpu_results", "command", "derive_seed", "hardware",
           "main", "EXECUTION_FIELDS"]

DTYPES = {"float32": torch.float32, "float64": torch.float64}
#: fields that say where and how a run is executed, not what it computes: left out of the cache key
EXECUTION_FIELDS = ("device", "checkpoint_every")
_RESULT, _CHECKPOINT, _SUMMARY = "result.pt", "checkpoint.pt", "result.json"


# ----------------------------------------------------------------------------------------- config
@dataclass(frozen=True)
class TrainConfig:
    """Everything that defines a training run. Defaults are the Leaner paper's (Section 4, Appendix F).

    Tasks: ``n`` points in ``d`` dimensions around ``k`` clusters from ``family`` with per-dimension
    ``scale``, ``isotropic`` clusters, ``equal_weights`` and ``init`` centers (Appendix D).
    Model: one layer of Eq. 4 with ``embedding`` OH/BN/NA, attention temperature ``gamma``, ``bias``,
    attention ``dropout`` and ``weighting`` (softmax or sparsemax attention); ``fast`` picks the fast
    form of the model. Loss: the smoothed loss with regulariser ``loss`` ("NE" = softmax, "L2" =
    sparsemax) at temperature ``tau``. Optimiser: Adam with learning rate ``lr``, ``batch`` tasks a step
    for ``steps`` steps, optional gradient-norm clipping ``clip``, optional ReduceLROnPlateau
    (``plateau``, ``plateau_factor``, ``plateau_patience``) stepped on the validation relative loss
    every ``eval_every`` steps on ``val_tasks`` fixed tasks. ``dtype`` is "float32" or "float64".
    Execution (not in the cache key): ``device`` ("auto", "cpu", "cuda", ...) and ``checkpoint_every``.
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
        s = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731 (frozen dataclass)
        for name in ("d", "n", "batch", "steps", "seed", "eval_every", "val_tasks", "checkpoint_every",
                     "plateau_patience", "k"):
            minimum = {"seed": 0, "plateau_patience": 0, "k": 2}.get(name, 1)
            s(name, check_int(name, getattr(self, name), minimum))
        if self.k > self.n:
            raise ValueError(f"k must be <= n (each task needs at least k points), got k={self.k} and n={self.n}")
        check_choice("embedding", self.embedding, EMBEDDINGS)
        check_choice("loss", self.loss, REGULARIZERS)
        check_choice("family", self.family, FAMILIES)
        check_choice("init", self.init, INITS)
        check_choice("weighting", self.weighting, ("softmax", "sparsemax"))
        check_choice("dtype", self.dtype, DTYPES)
        for name in ("tau", "lr", "scale", "gamma"):
            s(name, check_positive(name, getattr(self, name)))
        factor = check_positive("plateau_factor", self.plateau_factor)
        if factor >= 1:
            raise ValueError(f"plateau_factor must be in (0, 1), got {factor}")
        s("plateau_factor", factor)
        if isinstance(self.dropout, bool) or not isinstance(self.dropout, (int, float)) \
                or not 0 <= self.dropout < 1:
            raise ValueError(f"dropout must be a probability in [0, 1), got {self.dropout!r}")
        s("dropout", float(self.dropout))
        if self.clip is not None:
            s("clip", check_positive("clip", self.clip))
        for name in ("isotropic", "equal_weights", "bias", "fast", "plateau"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be True or False, got {getattr(self, name)!r}")
        if not isinstance(self.device, str):
            raise TypeError(f"device must be a string such as 'auto', 'cpu' or 'cuda', got {self.device!r}")

    def replace(self, **changes) -> "TrainConfig":
        """A copy with some fields changed (validated like a new config)."""
        unknown = set(changes) - {f.name for f in fields(self)}
        if unknown:
            raise TypeError(f"TrainConfig has no field(s) {sorted(unknown)}; fields: {[f.name for f in fields(self)]}")
        return dataclasses.replace(self, **changes)

    def experiment(self) -> dict:
        """The fields that define the result (everything but :data:`EXECUTION_FIELDS`)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name not in EXECUTION_FIELDS}

    def key(self) -> str:
        """A 16-hex-digit hash of :meth:`experiment` and ``lloydlib.__version__``: the cache key."""
        from . import __version__
        blob = json.dumps({"config": self.experiment(), "lloydlib": __version__}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def label(self) -> str:
        """A short human-readable name, e.g. ``BN:L2 d=4 k=6 n=512 tau=0.1 lr=0.01 seed=0``."""
        return (f"{self.embedding}:{self.loss} d={self.d} k={self.k} n={self.n} tau={self.tau:g} "
                f"lr={self.lr:g} seed={self.seed}")


def derive_seed(seed: int, *stream) -> int:
    """A 63-bit seed for the named random ``stream`` of a run (e.g. ``("train", step)``), from ``seed``."""
    words = [check_int("seed", seed, 0)]
    for part in stream:
        words.append(int(part) if isinstance(part, (int, np.integer)) else
                     int.from_bytes(hashlib.sha256(str(part).encode()).digest()[:4], "little"))
    return int(np.random.SeedSequence(words).generate_state(1, np.uint64)[0] >> np.uint64(1))


# ----------------------------------------------------------------------------------------- cache
def _repo_root() -> Path | None:
    root = Path(__file__).resolve().parent.parent
    return root if (root / "pyproject.toml").exists() and (root / "lloydlib").is_dir() else None


def cache_dir(path: str | os.PathLike | None = None) -> Path:
    """The cache root: ``path`` if given, else ``$LLOYD_CACHE``, else ``<checkout>/.lloydlib-cache``
    (a source checkout) or ``~/.cache/lloydlib`` (an installed package)."""
    if path is not None:
        return Path(path)
    if os.environ.get("LLOYD_CACHE"):
        return Path(os.environ["LLOYD_CACHE"])
    root = _repo_root()
    if root is not None and os.access(root, os.W_OK):
        return root / ".lloydlib-cache"
    return Path.home() / ".cache" / "lloydlib"


def _atomic_write(path: Path, write) -> None:
    """Call ``write(file_object)`` on a temporary file next to ``path``, then move it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def _save_torch(path: Path, obj) -> None:
    _atomic_write(path, lambda f: torch.save(obj, f))


def _save_json(path: Path, obj) -> None:
    _atomic_write(path, lambda f: f.write((json.dumps(obj, indent=1, sort_keys=True) + "\n").encode()))


def hardware(device: torch.device | str = "cpu") -> str:
    """A one-line description of the machine a run executes on (GPU name, or CPU and thread count)."""
    from .bench import hardware as machine
    m = machine(device)
    if "gpu" in m:
        return f"{m['gpu']} (CUDA {m['cuda']}), torch {m['torch']}"
    return f"{m['cpu']}, {m['cpu_cores']} cores, {m['torch_threads']} torch threads, torch {m['torch']}"


# ----------------------------------------------------------------------------------------- run
@dataclass
class Run:
    """A trained (or loaded) run.

    ``history`` holds numpy arrays, one entry per evaluation (step 0, then every ``eval_every`` steps
    and the last step): ``step``; ``train_loss``, the mean smoothed training loss of the steps since the
    previous evaluation (at step 0: the untrained model's loss on the first batch); ``val_rel_loss``,
    Eq. 20 on the validation tasks; ``val_loss``, the mean k-means loss (Eq. 5) there; ``lr``; and
    ``wall_time``, seconds spent in training steps up to that step (validation excluded).
    ``train_losses`` is the per-step training loss. ``status`` is "done", "diverged" (a non-finite loss
    stopped the run; ``info["diverged_at"]`` gives the step) or "partial" (stopped by ``stop_at``).
    ``info`` records where it ran (``device``, ``hardware``), ``seconds`` and ``cpu_seconds`` (wall-clock and
    process CPU time spent in training steps), ``resumed_from`` and ``cached`` (loaded, not trained, now).
    """
    config: TrainConfig
    model: torch.nn.Module
    history: dict
    train_losses: np.ndarray
    status: str
    info: dict = field(default_factory=dict)

    @property
    def key(self) -> str:
        return self.config.key()

    @property
    def final_val(self) -> float:
        """The last validation relative loss (inf for a diverged run)."""
        return math.inf if self.status == "diverged" else float(self.history["val_rel_loss"][-1])

    def final_train(self, window: int | None = None) -> float:
        """Mean training loss over the last ``window`` steps (default: ``eval_every``); inf if diverged."""
        if self.status == "diverged":
            return math.inf
        w = window or self.config.eval_every
        return float(np.mean(self.train_losses[-w:]))

    def __repr__(self):
        return (f"Run({self.config.label()}, status={self.status}, steps={len(self.train_losses)}, "
                f"final val rel loss={self.final_val:.4f}, key={self.key})")


def _build_model(config: TrainConfig) -> torch.nn.Module:
    from .model import LearnableTransformer
    return LearnableTransformer(config.d, config.k, config.embedding, gamma=config.gamma, bias=config.bias,
                                dropout=config.dropout, weighting=config.weighting, fast=config.fast)


def _resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        return torch.device(name)
    except RuntimeError as e:
        raise ValueError(f"device must be 'auto', 'cpu', 'cuda' or 'cuda:N', got {name!r}") from e


def _tasks(config: TrainConfig, count: int, seed: int, device, dtype):
    return sample_tasks(count, config.n, config.d, config.k, family=config.family, scale=config.scale,
                        isotropic=config.isotropic, equal_weights=config.equal_weights, init=config.init,
                        seed=seed, device=device, dtype=dtype)


class _Validation:
    """The fixed validation tasks of a seed and their one-step Lloyd losses (Eq. 20's denominator)."""

    def __init__(self, config: TrainConfig, device, dtype):
        self.X, self.C0 = _tasks(config, config.val_tasks, derive_seed(config.seed, "val"), device, dtype)
        self.baseline = lloyd_baseline(self.X, self.C0)
        self.chunk = config.batch

    @torch.no_grad()
    def __call__(self, model) -> tuple[float, float]:
        """(mean relative loss of Eq. 20, mean k-means loss); (inf, inf) if the model's output is not finite."""
        was_training = model.training
        model.eval()
        ratios, losses_ = [], []
        for s in range(0, self.X.shape[0], self.chunk):
            X, C0 = self.X[s:s + self.chunk], self.C0[s:s + self.chunk]
            out = model(X, C0)
            if not bool(torch.isfinite(out).all()):
                model.train(was_training)
                return math.inf, math.inf
            loss = kmeans_loss(X, out)
            losses_.append(loss)
            ratios.append(loss / self.baseline[s:s + self.chunk])
        model.train(was_training)
        return float(torch.cat(ratios).mean()), float(torch.cat(losses_).mean())


def _rng_state(device):
    state = {"cpu": torch.get_rng_state()}
    if device.type == "cuda":
        state["cuda"] = torch.cuda.get_rng_state(device)
    return state


def _set_rng_state(state, device):
    torch.set_rng_state(state["cpu"])
    if device.type == "cuda" and "cuda" in state:
        torch.cuda.set_rng_state(state["cuda"], device)


def _history_arrays(rows: list[dict]) -> dict:
    keys = ("step", "train_loss", "val_rel_loss", "val_loss", "lr", "wall_time")
    return {k: np.array([r[k] for r in rows], dtype=np.int64 if k == "step" else np.float64) for k in keys}


def lookup(config: TrainConfig, dirs=None) -> Run | None:
    """The finished run of ``config`` if one of ``dirs`` (default: the cache root) holds it, else None.

    Each directory is a cache root (holding ``runs/<key>/``); the first that has the run wins.
    """
    if not isinstance(config, TrainConfig):
        raise TypeError(f"config must be a TrainConfig, got {type(config).__name__}")
    dirs = [cache_dir()] if dirs is None else [Path(d) for d in ([dirs] if isinstance(dirs, (str, Path)) else dirs)]
    for root in dirs:
        path = root / "runs" / config.key() / _RESULT
        if path.exists():
            return _load_result(path, config)
    return None


def _load_result(path: Path, config: TrainConfig | None = None) -> Run:
    blob = torch.load(path, map_location="cpu", weights_only=True)
    stored = TrainConfig(**blob["config"])
    if config is None:
        config = stored
    elif stored.experiment() != config.experiment():
        raise RuntimeError(f"cache entry {path} holds a different configuration than its key says; delete it")
    model = _build_model(config).to(DTYPES[config.dtype])
    model.load_state_dict(blob["model"])
    model.eval()
    info = dict(blob["info"], cached=True, path=str(path.parent))
    return Run(config, model, {k: np.asarray(v) for k, v in blob["history"].items()},
               np.asarray(blob["train_losses"], dtype=np.float64), blob["status"], info)


def load_runs(root: str | os.PathLike) -> list[Run]:
    """Every finished run stored under the cache root ``root`` (e.g. a committed ``results/gpu/<machine>``)."""
    root = Path(root)
    if not root.is_dir():
        raise ValueError(f"root must be an existing directory holding runs/<key>/{_RESULT}, got {str(root)!r}")
    return [_load_result(p) for p in sorted(root.glob(f"runs/*/{_RESULT}"))]


def train(config: TrainConfig, *, cache_dir: str | os.PathLike | None = None, progress: bool = True,
          stop_at: int | None = None) -> Run:
    """Train one run, or load it from the cache when it was trained before; resume from a checkpoint.

    ``cache_dir`` overrides the cache root (see :func:`cache_dir`). ``progress`` shows a tqdm bar.
    ``stop_at`` trains only up to that step, writes a checkpoint there and returns a "partial" run
    (a later call continues from it). Returns a :class:`Run`.
    """
    if not isinstance(config, TrainConfig):
        raise TypeError(f"config must be a TrainConfig, got {type(config).__name__}")
    root = globals()["cache_dir"](cache_dir)
    if stop_at is not None:
        stop_at = check_int("stop_at", stop_at, 1)
    cached = lookup(config, [root])
    if cached is not None:
        return cached
    run_dir = root / "runs" / config.key()
    device = _resolve_device(config.device)
    dtype = DTYPES[config.dtype]
    with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
        return _train(config, run_dir, device, dtype, progress, stop_at)


def _train(config, run_dir, device, dtype, progress, stop_at) -> Run:
    torch.manual_seed(derive_seed(config.seed, "init"))
    model = _build_model(config).to(device=device, dtype=dtype)
    torch.manual_seed(derive_seed(config.seed, "dropout"))
    opt = torch.optim.Adam(model.parameters(), lr=config.lr)
    sched = (torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="min", factor=config.plateau_factor,
                                                         patience=config.plateau_patience)
             if config.plateau else None)
    validate = _Validation(config, device, dtype)
    step, rows, train_losses, wall, cpu, resumed_from = 0, [], [], 0.0, 0.0, None
    status, diverged_at = "done", None

    ckpt_path = run_dir / _CHECKPOINT
    if ckpt_path.exists():
        ck = torch.load(ckpt_path, map_location="cpu", weights_only=True)
        if ck["key"] == config.key():
            model.load_state_dict(ck["model"])
            opt.load_state_dict(ck["optimizer"])
            if sched is not None:
                sched.load_state_dict(ck["scheduler"])
            _set_rng_state(ck["rng"], device)
            step, rows, train_losses, wall, cpu = (ck["step"], ck["rows"], list(ck["train_losses"]), ck["wall"],
                                                   ck.get("cpu", 0.0))
            resumed_from = step
    if not rows:
        val, val_loss = validate(model)
        rows.append(dict(step=0, train_loss=math.nan, val_rel_loss=val, val_loss=val_loss,
                         lr=opt.param_groups[0]["lr"], wall_time=0.0))

    def checkpoint(at):
        _save_torch(ckpt_path, dict(key=config.key(), step=at, model=model.state_dict(), optimizer=opt.state_dict(),
                                    scheduler=sched.state_dict() if sched is not None else None,
                                    rng=_rng_state(device), rows=rows, train_losses=train_losses, wall=wall, cpu=cpu))

    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=config.steps, initial=step, desc=config.label(), leave=False, file=sys.stderr)
    model.train()
    last = config.steps if stop_at is None else min(stop_at, config.steps)
    while step < last:
        step += 1
        X, C0 = _tasks(config, config.batch, derive_seed(config.seed, "train", step), device, dtype)
        t0, c0 = time.perf_counter(), time.process_time()
        out = model(X, C0)
        loss = smoothed_loss(X, out, config.tau, config.loss).mean() if bool(torch.isfinite(out).all()) else None
        if loss is None or not bool(torch.isfinite(loss)):
            status, diverged_at = "diverged", step
            break
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if config.clip is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), config.clip)
        opt.step()
        value = float(loss.detach())                 # synchronises a GPU, so the timing below is honest
        wall += time.perf_counter() - t0
        cpu += time.process_time() - c0
        train_losses.append(value)
        if step == 1:
            rows[0]["train_loss"] = value            # the untrained model's loss on the first batch
        if step % config.eval_every == 0 or step == config.steps:
            val, val_loss = validate(model)
            window = train_losses[-(step - rows[-1]["step"]):]
            rows.append(dict(step=step, train_loss=float(np.mean(window)), val_rel_loss=val, val_loss=val_loss,
                             lr=opt.param_groups[0]["lr"], wall_time=wall))
            if not math.isfinite(val):
                status, diverged_at = "diverged", step
                break
            if sched is not None and step % config.eval_every == 0:
                sched.step(val)
        if bar is not None:
            bar.update(1)
            if step % config.eval_every == 0:
                bar.set_postfix(loss=f"{value:.4g}", val=f"{rows[-1]['val_rel_loss']:.4f}")
        if step % config.checkpoint_every == 0 and step < config.steps:
            checkpoint(step)
    if bar is not None:
        bar.close()

    if status == "done" and step < config.steps:     # stopped by stop_at
        checkpoint(step)
        return Run(config, model.eval(), _history_arrays(rows), np.array(train_losses), "partial",
                   dict(device=str(device), hardware=hardware(device), resumed_from=resumed_from, cached=False))

    from . import __version__
    info = dict(device=str(device), hardware=hardware(device), lloydlib=__version__, seconds=wall, cpu_seconds=cpu,
                resumed_from=resumed_from, diverged_at=diverged_at, key=config.key(),
                finished=time.strftime("%Y-%m-%dT%H:%M:%S%z"))
    history = _history_arrays(rows)
    model = model.eval()
    state = {k: v.detach().to("cpu") for k, v in model.state_dict().items()}
    blob = dict(config=dataclasses.asdict(config), model=state, history={k: v.tolist() for k, v in history.items()},
                train_losses=train_losses, status=status, info=info)
    _save_json(run_dir / _SUMMARY, {k: v for k, v in blob.items() if k != "model"} | {"lloydlib": __version__})
    _save_torch(run_dir / _RESULT, blob)
    if ckpt_path.exists():
        ckpt_path.unlink()
    return Run(config, model, history, np.array(train_losses), status, dict(info, cached=False, path=str(run_dir)))


# ----------------------------------------------------------------------------------------- sweeps
def grid(base: TrainConfig | None = None, **axes) -> list[TrainConfig]:
    """The Cartesian product of ``axes`` (field name -> list of values) over ``base`` (default config).

    ``grid(TrainConfig(d=4), embedding=["OH", "BN"], seed=[0, 1])`` gives 4 configs, the last axis
    varying fastest. A scalar value counts as a one-element list.
    """
    base = TrainConfig() if base is None else base
    if not isinstance(base, TrainConfig):
        raise TypeError(f"base must be a TrainConfig, got {type(base).__name__}")
    names = list(axes)
    values = [v if isinstance(v, (list, tuple)) else [v] for v in axes.values()]
    for name, v in zip(names, values):
        if not v:
            raise ValueError(f"axis {name!r} of the grid is empty")
    return [base.replace(**dict(zip(names, combo))) for combo in itertools.product(*values)]


def _worker(args):
    config, root, threads = args
    torch.set_num_threads(threads)
    run = train(config, cache_dir=root, progress=False)
    return run.status


def train_many(configs, *, cache_dir: str | os.PathLike | None = None, progress: bool = True,
               workers: int = 1) -> list[Run]:
    """Train (or load) every config; returns runs in the order given.

    Runs already in the cache are loaded. With ``workers`` > 1 the missing runs train in that many
    processes, each with ``torch threads // workers`` threads (small models on a CPU train faster as
    independent processes than as one multi-threaded one); the results are then read from the cache.
    """
    configs = list(configs)
    for i, c in enumerate(configs):
        if not isinstance(c, TrainConfig):
            raise TypeError(f"configs[{i}] must be a TrainConfig, got {type(c).__name__}")
    workers = check_int("workers", workers, 1)
    root = globals()["cache_dir"](cache_dir)
    missing = list({c.key(): c for c in configs if lookup(c, [root]) is None}.values())
    # longest first, so that parallel workers finish together: cost ~ steps x n x (n + k) x token width
    missing.sort(key=lambda c: -c.steps * c.n * (c.n + c.k) * (c.d + c.k))
    bar = None
    if progress and missing:
        from tqdm import tqdm
        bar = tqdm(total=len(missing), desc=f"training {len(missing)} of {len(configs)} runs", file=sys.stderr)
    if workers > 1 and len(missing) > 1:
        import multiprocessing as mp
        threads = max(1, torch.get_num_threads() // workers)
        with mp.get_context("spawn").Pool(min(workers, len(missing))) as pool:
            for _ in pool.imap_unordered(_worker, [(c, str(root), threads) for c in missing]):
                if bar is not None:
                    bar.update(1)
    else:
        for c in missing:
            train(c, cache_dir=root, progress=False)
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    return [lookup(c, [root]) for c in configs]


# ----------------------------------------------------------------------------------------- summaries
def curves(runs, metric: str = "val_rel_loss"):
    """Median and inter-quartile range of a history ``metric`` over runs (usually the seeds of one config).

    Returns ``(step, median, q25, q75)``, numpy arrays over the evaluation steps. A run that diverged
    counts as +inf from its divergence on (so it pulls the quantiles up instead of vanishing).
    """
    runs = list(runs)
    if not runs:
        raise ValueError("runs must hold at least one Run, got none")
    check_choice("metric", metric, ("train_loss", "val_rel_loss", "val_loss", "lr", "wall_time"))
    step = max((r.history["step"] for r in runs), key=len)
    table = np.full((len(runs), len(step)), np.inf)
    for i, r in enumerate(runs):
        v = np.asarray(r.history[metric], dtype=np.float64)
        table[i, :len(v)] = np.where(np.isfinite(v), v, np.inf)
    q25, median, q75 = np.quantile(table, [0.25, 0.5, 0.75], axis=0)
    return step, median, q25, q75


def group(runs, *names: str) -> dict[tuple, list[Run]]:
    """Runs grouped by the values of config fields ``names`` (e.g. the seeds of one setting), in first-seen order."""
    valid = {f.name for f in fields(TrainConfig)}
    for name in names:
        check_choice("names", name, valid)
    out: dict[tuple, list[Run]] = {}
    for r in runs:
        out.setdefault(tuple(getattr(r.config, name) for name in names), []).append(r)
    return out


def quartiles(values) -> tuple[float, float, float]:
    """(first quartile, median, third quartile) of ``values`` (numpy's linear interpolation)."""
    v = np.asarray(values, dtype=np.float64).ravel()
    if v.size == 0:
        raise ValueError("values must hold at least one number, got none")
    q25, med, q75 = np.quantile(v, [0.25, 0.5, 0.75])
    return float(q25), float(med), float(q75)


def iqr_relation(a, b) -> str:
    """"below" when the inter-quartile range of ``a`` lies entirely below that of ``b``, "above" when
    entirely above, "overlap" otherwise: how this book decides whether seeds separate two settings."""
    a25, _, a75 = quartiles(a)
    b25, _, b75 = quartiles(b)
    return "below" if a75 < b25 else "above" if a25 > b75 else "overlap"


def final_values(runs, metric: str = "val_rel_loss", window: int = 1) -> np.ndarray:
    """The mean of the last ``window`` evaluations of ``metric`` of each run (+inf for diverged runs)."""
    window = check_int("window", window, 1)
    check_choice("metric", metric, ("train_loss", "val_rel_loss", "val_loss"))
    return np.array([math.inf if r.status == "diverged" else float(np.mean(r.history[metric][-window:]))
                     for r in runs])


def gpu_results(root: str | os.PathLike | None = None) -> list[Path]:
    """Committed GPU result folders: each subfolder of ``<checkout>/results/gpu`` (or ``root``) holding runs.

    Each folder is a cache root (``runs/<key>/result.pt``) written by ``python -m lloydlib train
    --cache-dir results/gpu/<machine>`` on a GPU; its runs record the hardware in ``info["hardware"]``.
    Returns [] when there are none.
    """
    if root is None:
        repo = _repo_root()
        if repo is None:
            return []
        root = repo / "results" / "gpu"
    root = Path(root)
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and any(p.glob(f"runs/*/{_RESULT}")))


def command(base: TrainConfig | None = None, **axes) -> str:
    """The ``python -m lloydlib train`` command line that trains ``grid(base, **axes)``.

    Only fields that differ from :class:`TrainConfig`'s defaults, or that vary, are written.
    """
    configs = grid(base, **axes)                       # validates
    defaults = TrainConfig()
    parts = ["python -m lloydlib train"]
    for f in fields(TrainConfig):
        values = list(dict.fromkeys(getattr(c, f.name) for c in configs))
        if values == [getattr(defaults, f.name)]:
            continue
        parts.append(f"--{f.name.replace('_', '-')} " + " ".join(
            "none" if v is None else str(v).lower() if isinstance(v, bool) else f"{v:g}" if isinstance(v, float)
            else str(v) for v in values))
    return " ".join(parts)


# ----------------------------------------------------------------------------------------- CLI
def _parse_bool(text: str) -> bool:
    t = text.lower()
    if t in ("1", "true", "yes", "on"):
        return True
    if t in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def _parse_clip(text: str):
    return None if text.lower() in ("none", "off") else float(text)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m lloydlib train",
        description="Train learnable transformers on clustering tasks: one run, or a sweep over every "
                    "combination of the values given (e.g. --seed 0 1 --tau 0.1 1 trains 4 runs). Finished "
                    "runs are cached (see --cache-dir) and skipped.",
        epilog="Example: python -m lloydlib train --d 4 --k 6 --n 64 --steps 500 --embedding OH BN --seed 0 1")
    defaults = TrainConfig()
    for f in fields(TrainConfig):
        default = getattr(defaults, f.name)
        kind = {"bool": _parse_bool}.get(type(default).__name__, type(default))
        if f.name == "clip":
            kind = _parse_clip
        p.add_argument(f"--{f.name.replace('_', '-')}", dest=f.name, nargs="+", type=kind, default=[default],
                       metavar=f.name.upper(), help=f"(default {default})")
    p.add_argument("--cache-dir", default=None,
                   help="cache root to write results into (default: $LLOYD_CACHE, else the checkout's .lloydlib-cache)")
    p.add_argument("--workers", type=int, default=1, help="train this many runs at a time, in processes")
    p.add_argument("--dry-run", action="store_true", help="list the runs and whether they are cached, train none")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    return p


def main(argv: list[str] | None = None) -> int:
    """``python -m lloydlib train``: every :class:`TrainConfig` field is an option taking one or more values."""
    args = _parser().parse_args(argv)
    axes = {f.name: getattr(args, f.name) for f in fields(TrainConfig)}
    try:
        configs = grid(TrainConfig(), **axes)
    except (TypeError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    root = cache_dir(args.cache_dir)
    varying = [name for name, v in axes.items() if len(v) > 1]
    print(f"{len(configs)} run(s); results in {root / 'runs'}")
    if args.dry_run:
        for c in configs:
            print(f"  {c.key()}  {'cached ' if lookup(c, [root]) else 'to train'}  {c.label()}")
        return 0
    runs = train_many(configs, cache_dir=root, progress=not args.no_progress, workers=args.workers)
    print(f"{'key':<16}  {'status':<8}  {'val rel loss':>12}  {'seconds':>8}  " + "  ".join(varying))
    for r in runs:
        print(f"{r.key:<16}  {r.status:<8}  {r.final_val:12.4f}  {r.info.get('seconds', math.nan):8.1f}  "
              + "  ".join(str(getattr(r.config, v)) for v in varying))
    return 0


if __name__ == "__main__":
    sys.exit(main())
