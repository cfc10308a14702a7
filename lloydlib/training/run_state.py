"""One run's state inside the training engine (:mod:`lloydlib.training.stack_engine`): its task draws, its
history, and the CPU-side "shell" (model, Adam, scheduler) from which its checkpoints are written and read.

A checkpoint (``checkpoint.pt`` in the run's directory) holds the config's key, the model's ``state_dict``,
Adam's and the scheduler's, torch's global generator state (``rng``) and the :class:`History` so far; a stack
of any size resumes it.
"""

from __future__ import annotations

import numpy as np
import torch

from ..tasks import sample_tasks
from .cache import read_checkpoint, save_torch
from .config import TrainConfig, build_model, derive_seed
from .stacked_model import StackShape

__all__ = ["HISTORY", "History", "Shell", "rng_state", "sample", "set_rng_state"]

#: the columns of a run's history, one row per evaluation
HISTORY = ("step", "train_loss", "val_rel_loss", "val_loss", "lr", "wall_time")


def sample(config: TrainConfig, count: int, seed: int, device, dtype):
    """``count`` tasks of ``config``'s distribution from ``seed``: points X (count, n, d), centers C0 (count, k, d)."""
    return sample_tasks(
        count, config.n, config.d, config.k, seed=seed, device=device, dtype=dtype, **config.distribution()
    )


def rng_state(device) -> dict:
    """Torch's global generator state (and the CUDA device's, on one)."""
    state = {"cpu": torch.get_rng_state()}
    if device.type == "cuda":
        state["cuda"] = torch.cuda.get_rng_state(device)
    return state


def set_rng_state(state: dict, device) -> None:
    """Restore what :func:`rng_state` read."""
    torch.set_rng_state(state["cpu"])
    if device.type == "cuda" and "cuda" in state:
        torch.cuda.set_rng_state(state["cuda"], device)


class History:
    """The run so far: its step, evaluation rows, per-step training losses, wall and CPU seconds, and the
    step it was resumed from (None if it never was)."""

    def __init__(self):
        self.step, self.rows, self.train_losses, self.wall, self.cpu, self.resumed_from = 0, [], [], 0.0, 0.0, None

    def to_dict(self) -> dict:
        return dict(step=self.step, rows=self.rows, train_losses=self.train_losses, wall=self.wall, cpu=self.cpu)

    def load(self, ck: dict) -> None:
        self.step, self.rows, self.train_losses = ck["step"], ck["rows"], list(ck["train_losses"])
        self.wall, self.cpu, self.resumed_from = ck["wall"], ck.get("cpu", 0.0), ck["step"]

    def arrays(self) -> dict:
        """The history as arrays: one per :data:`HISTORY` column, a row per evaluation."""
        return {k: np.array([r[k] for r in self.rows], dtype=np.int64 if k == "step" else np.float64) for k in HISTORY}


class Shell:
    """One run's CPU-side state: model, Adam and scheduler (for checkpoints), history, status. ``ckpt_path``
    (or None) is its checkpoint file, read here when it exists."""

    def __init__(self, config: TrainConfig, dtype, ckpt_path):
        self.config, self.ckpt_path = config, ckpt_path
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(derive_seed(config.seed, "init"))
            self.model = build_model(config).to(dtype=dtype)
        self.rng = None  # the global generator's state at the last checkpoint (attention dropout draws from it)
        self.opt = torch.optim.Adam(self.model.parameters(), lr=config.lr)
        self.sched = None
        if config.plateau:
            self.sched = torch.optim.lr_scheduler.ReduceLROnPlateau(
                self.opt, mode="min", factor=config.plateau_factor, patience=config.plateau_patience
            )
        self.run = History()
        self.status, self.diverged_at = "done", None
        ck = read_checkpoint(ckpt_path, config) if ckpt_path is not None else None
        if ck is not None:
            self.model.load_state_dict(ck["model"])
            self.opt.load_state_dict(ck["optimizer"])
            if self.sched is not None:
                self.sched.load_state_dict(ck["scheduler"])
            self.rng = ck["rng"]
            self.run.load(ck)

    @property
    def lr(self) -> float:
        return self.opt.param_groups[0]["lr"]

    def moments(self, shape: StackShape):
        """(m, v, t) of this run's Adam, flattened like theta (zeros and 0 before the first step)."""
        params = list(self.model.parameters())
        if not self.opt.state:
            zero = torch.zeros(shape.P, dtype=params[0].dtype)
            return zero, zero.clone(), 0.0
        states = [self.opt.state[p] for p in params]
        m = torch.cat([s["exp_avg"].reshape(-1) for s in states])
        v = torch.cat([s["exp_avg_sq"].reshape(-1) for s in states])
        return m, v, float(states[0]["step"])

    def store(self, shape: StackShape, theta, m, v, t) -> None:
        """Put the stack's row of this run (weights, Adam moments and step count) into the shell."""
        self.model.load_state_dict(shape.unflatten(theta))
        if t > 0:
            ms, vs = shape.split(m[None].detach().cpu()), shape.split(v[None].detach().cpu())
            for name, p in zip(shape.names, self.model.parameters()):
                self.opt.state[p] = dict(
                    step=torch.tensor(float(t), dtype=torch.float32),
                    exp_avg=ms[name][0].clone(),
                    exp_avg_sq=vs[name][0].clone(),
                )

    def checkpoint(self, device) -> None:
        self.rng = rng_state(device)
        state = dict(
            key=self.config.key(),
            model=self.model.state_dict(),
            optimizer=self.opt.state_dict(),
            scheduler=self.sched.state_dict() if self.sched is not None else None,
            rng=self.rng,
        )
        save_torch(self.ckpt_path, state | self.run.to_dict())
