"""One training run: Algorithm 1 of the Leaner paper with the smoothed loss of Eq. 6 and Eq. 20's check.

:func:`train` draws ``batch`` tasks a step from the task generator (Appendix D), maps (X, C0) through one
learnable layer (:class:`lloydlib.model.LearnableTransformer`, Eq. 4), takes the smoothed k-means loss
of the output (:func:`lloydlib.losses.training_loss`, Eq. 6) and an Adam step. Every ``eval_every`` steps
it records the relative loss of Eq. 20 on a fixed validation set of ``val_tasks`` tasks (drawn once per
seed) and, as the authors' code does, steps ``ReduceLROnPlateau`` on it.

Repeatable and resumable
------------------------
Every random draw is derived from the run's seed: the tasks of step m come from the seed
``derive_seed(seed, "train", m)``, the validation tasks from ``derive_seed(seed, "val")`` and the
initial weights from ``derive_seed(seed, "init")``; attention dropout uses torch's global generator,
whose state is saved. A checkpoint (model, Adam, scheduler, generator state, history) is written
every ``checkpoint_every`` steps, so an interrupted run resumes where it stopped and ends with exactly
the weights and history of an uninterrupted one (bitwise, on the same device and thread count).
Finished runs are cached (:mod:`lloydlib.training.cache`): a run asked for again is loaded.
"""

from __future__ import annotations

import math
import os
import sys
import time

import numpy as np
import torch
from tqdm import tqdm

import lloydlib

from .. import hardware
from .._validate import check_int
from ..losses import kmeans_loss, lloyd_baseline, training_loss
from ..tasks import sample_tasks
from .cache import CHECKPOINT, Run, cache_dir, lookup, read_checkpoint, save_torch, write_result
from .config import DTYPES, TrainConfig, build_model, derive_seed

__all__ = ["train"]

_cache_root = cache_dir  # ``train``'s argument ``cache_dir`` hides the function of that name
_HISTORY = ("step", "train_loss", "val_rel_loss", "val_loss", "lr", "wall_time")


def _resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        return torch.device(name)
    except RuntimeError as e:
        raise ValueError(f"device must be 'auto', 'cpu', 'cuda' or 'cuda:N', got {name!r}") from e


#: the fields of a config that choose its task distribution (with its seed, they fix its task stream)
DISTRIBUTION_FIELDS = ("family", "scale", "isotropic", "equal_weights", "init")


def _task_kwargs(config: TrainConfig) -> dict:
    """The task distribution of ``config``, as keyword arguments of :func:`~lloydlib.tasks.sample_tasks`."""
    return {name: getattr(config, name) for name in DISTRIBUTION_FIELDS}


def _tasks(config: TrainConfig, count: int, seed: int, device, dtype):
    """``count`` tasks of ``config``: points X (count, n, d) and initial centers C0 (count, k, d)."""
    return sample_tasks(
        count, config.n, config.d, config.k, seed=seed, device=device, dtype=dtype, **_task_kwargs(config)
    )


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
        ratios, losses = [], []
        try:
            for s in range(0, self.X.shape[0], self.chunk):
                X, C0 = self.X[s : s + self.chunk], self.C0[s : s + self.chunk]
                out = model(X, C0)
                if not bool(torch.isfinite(out).all()):
                    return math.inf, math.inf
                loss = kmeans_loss(X, out)
                losses.append(loss)
                ratios.append(loss / self.baseline[s : s + self.chunk])
        finally:
            model.train(was_training)
        return float(torch.cat(ratios).mean()), float(torch.cat(losses).mean())


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
    return {k: np.array([r[k] for r in rows], dtype=np.int64 if k == "step" else np.float64) for k in _HISTORY}


def train(
    config: TrainConfig,
    *,
    cache_dir: str | os.PathLike | None = None,
    progress: bool = True,
    stop_at: int | None = None,
) -> Run:
    """Train one run, or load it from the cache when it was trained before; resume from a checkpoint.

    ``cache_dir`` overrides the cache root (see :func:`lloydlib.training.cache_dir`). ``progress`` shows
    a tqdm bar. ``stop_at`` trains only up to that step, writes a checkpoint there and returns a
    "partial" run (a later call continues from it). Returns a :class:`~lloydlib.training.Run`.
    """
    if not isinstance(config, TrainConfig):
        raise TypeError(f"config must be a TrainConfig, got {type(config).__name__}")
    root = _cache_root(cache_dir)
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


class _State:
    """What a checkpoint holds besides the model, optimiser and scheduler: the run so far."""

    def __init__(self):
        self.step, self.rows, self.train_losses, self.wall, self.cpu, self.resumed_from = 0, [], [], 0.0, 0.0, None

    def to_dict(self) -> dict:
        return dict(step=self.step, rows=self.rows, train_losses=self.train_losses, wall=self.wall, cpu=self.cpu)

    def load(self, ck: dict) -> None:
        self.step, self.rows, self.train_losses = ck["step"], ck["rows"], list(ck["train_losses"])
        self.wall, self.cpu, self.resumed_from = ck["wall"], ck.get("cpu", 0.0), ck["step"]


def _train(config, run_dir, device, dtype, progress, stop_at) -> Run:
    torch.manual_seed(derive_seed(config.seed, "init"))
    model = build_model(config).to(device=device, dtype=dtype)
    torch.manual_seed(derive_seed(config.seed, "dropout"))
    opt = torch.optim.Adam(model.parameters(), lr=config.lr)
    sched = None
    if config.plateau:
        sched = torch.optim.lr_scheduler.ReduceLROnPlateau(
            opt, mode="min", factor=config.plateau_factor, patience=config.plateau_patience
        )
    validate = _Validation(config, device, dtype)
    run = _State()
    status, diverged_at = "done", None

    ckpt_path = run_dir / CHECKPOINT
    ck = read_checkpoint(ckpt_path, config)  # a truncated or foreign file raises CacheError naming it
    if ck is not None:
        if ck["key"] == config.key():
            model.load_state_dict(ck["model"])
            opt.load_state_dict(ck["optimizer"])
            if sched is not None:
                sched.load_state_dict(ck["scheduler"])
            _set_rng_state(ck["rng"], device)
            run.load(ck)
    if not run.rows:
        val, val_loss = validate(model)
        run.rows.append(
            dict(
                step=0,
                train_loss=math.nan,
                val_rel_loss=val,
                val_loss=val_loss,
                lr=opt.param_groups[0]["lr"],
                wall_time=0.0,
            )
        )

    def checkpoint():
        state = dict(
            key=config.key(),
            model=model.state_dict(),
            optimizer=opt.state_dict(),
            scheduler=sched.state_dict() if sched is not None else None,
            rng=_rng_state(device),
        )
        save_torch(ckpt_path, state | run.to_dict())

    bar = (
        tqdm(total=config.steps, initial=run.step, desc=config.label(), leave=False, file=sys.stderr)
        if progress
        else None
    )
    model.train()
    last = config.steps if stop_at is None else min(stop_at, config.steps)
    while run.step < last:
        run.step += 1
        step = run.step
        X, C0 = _tasks(config, config.batch, derive_seed(config.seed, "train", step), device, dtype)
        t0, c0 = time.perf_counter(), time.process_time()
        out = model(X, C0)
        loss = training_loss(X, out, config.tau, config.loss) if bool(torch.isfinite(out).all()) else None
        if loss is None or not bool(torch.isfinite(loss)):
            status, diverged_at = "diverged", step
            break
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if config.clip is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), config.clip)
        opt.step()
        value = float(loss.detach())  # synchronises a GPU, so the timing below is honest
        run.wall += time.perf_counter() - t0
        run.cpu += time.process_time() - c0
        run.train_losses.append(value)
        if step == 1:
            run.rows[0]["train_loss"] = value  # the untrained model's loss on the first batch
        if step % config.eval_every == 0 or step == config.steps:
            val, val_loss = validate(model)
            window = run.train_losses[-(step - run.rows[-1]["step"]) :]
            lr = opt.param_groups[0]["lr"]
            run.rows.append(
                dict(
                    step=step,
                    train_loss=float(np.mean(window)),
                    val_rel_loss=val,
                    val_loss=val_loss,
                    lr=lr,
                    wall_time=run.wall,
                )
            )
            if not math.isfinite(val):
                status, diverged_at = "diverged", step
                break
            if sched is not None and step % config.eval_every == 0:
                sched.step(val)
        if bar is not None:
            bar.update(1)
            if step % config.eval_every == 0:
                bar.set_postfix(loss=f"{value:.4g}", val=f"{run.rows[-1]['val_rel_loss']:.4f}")
        if step % config.checkpoint_every == 0 and step < config.steps:
            checkpoint()
    if bar is not None:
        bar.close()

    machine = hardware.describe(hardware.probe(device))
    if status == "done" and run.step < config.steps:  # stopped by stop_at
        checkpoint()
        info = dict(device=str(device), hardware=machine, resumed_from=run.resumed_from, cached=False)
        return Run(config, model.eval(), _history_arrays(run.rows), np.array(run.train_losses), "partial", info)
    return _finish(config, run_dir, model.eval(), run, status, diverged_at, device, machine)


def finished_run(config, model, run: _State, status, diverged_at, device, machine) -> Run:
    """The finished :class:`Run` (not written anywhere) of ``config`` trained to ``run``'s state."""
    info = dict(
        device=str(device),
        hardware=machine,
        lloydlib=lloydlib.__version__,
        seconds=run.wall,
        cpu_seconds=run.cpu,
        resumed_from=run.resumed_from,
        diverged_at=diverged_at,
        key=config.key(),
        finished=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    )
    history = _history_arrays(run.rows)
    return Run(config, model, history, np.array(run.train_losses), status, dict(info, cached=False))


def _finish(config, run_dir, model, run: _State, status, diverged_at, device, machine) -> Run:
    """Write the finished run into ``run_dir`` (``result.pt``, ``result.json``), drop its checkpoint."""
    result = finished_run(config, model, run, status, diverged_at, device, machine)
    path = write_result(run_dir.parent.parent, result)
    result.info["path"] = str(path)
    return result
