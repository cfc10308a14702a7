"""The engine behind :func:`lloydlib.training.stacked.train_stack`: S runs trained as one stacked model.

Each run of the stack is exactly what :func:`lloydlib.training.train` computes for its config, with the
same random streams (tasks of step m from ``derive_seed(seed, "train", m)``, validation tasks from
``derive_seed(seed, "val")``, initial weights from ``derive_seed(seed, "init")``): every step, every run
that still trains draws its batch (runs with the same seed and task distribution share one draw), the
stacked forward (:func:`~lloydlib.training.stacked_model.stacked_forward`) and the per-run losses run once
for the whole stack, one backward pass gives every run its gradient, and one vectorised Adam step
(:func:`~lloydlib.training.adam.adam_update`) moves them all. Per-run learning rates (with their own
``ReduceLROnPlateau``), temperatures and clipping thresholds are tensors; a run whose loss is not finite
is frozen and reported as ``train`` reports it, while the others go on.

Each run keeps a "shell" on the CPU: a :class:`~lloydlib.model.LearnableTransformer`, a
``torch.optim.Adam`` and its scheduler, which hold the run's weights, Adam moments and learning rate at
checkpoints, in the format ``train`` writes, so a checkpoint of a stacked run can be resumed by ``train``
and the other way round.
"""

from __future__ import annotations

import math
import sys
import time
import warnings

import numpy as np
import torch
from tqdm import tqdm

from .. import hardware
from ..tasks import sample_task_streams
from .adam import adam_update
from .cache import CHECKPOINT, read_checkpoint, save_torch
from .config import DTYPES, TrainConfig, build_model, derive_seed
from .loop import DISTRIBUTION_FIELDS, _State, _task_kwargs, _tasks, finished_run
from .stacked_model import FUSED_LIMIT, StackShape, kmeans_losses, smoothed_losses, stacked_forward

__all__ = ["Stack"]

#: the fields that define a run's task distribution (two runs with equal values and seed draw equal tasks)
TASK_FIELDS = ("seed", *DISTRIBUTION_FIELDS)
#: at most this many score entries (runs x tasks x n x n) per validation chunk, on a CPU and on a GPU
_VAL_ENTRIES = {"cpu": 1 << 24, "cuda": 1 << 28}
#: on a CPU, chunks of about this many score entries stay in cache: validation takes 1/2 to 3/4 the time
#: (n=32 and 64); used only where every chunk computes explicit scores anyway (see :meth:`Stack.validate`)
_VAL_CACHE_ENTRIES = 1 << 20


def _allow_recompiles(limit: int = 64) -> None:
    """Let one process compile the stacked step for up to ``limit`` shapes (torch's default is 8, after
    which it silently runs the code eagerly)."""
    cfg = torch._dynamo.config
    for name in ("recompile_limit", "cache_size_limit"):
        if hasattr(cfg, name):
            setattr(cfg, name, max(getattr(cfg, name), limit))
            break


def _stream(config: TrainConfig) -> tuple:
    return tuple(getattr(config, f) for f in TASK_FIELDS)


class _Shell:
    """One run's CPU-side state: model, Adam and scheduler (for checkpoints), history, status."""

    def __init__(self, config: TrainConfig, dtype, ckpt_path):
        self.config, self.ckpt_path = config, ckpt_path
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(derive_seed(config.seed, "init"))
            self.model = build_model(config).to(dtype=dtype)
            torch.manual_seed(derive_seed(config.seed, "dropout"))
            self.rng = {"cpu": torch.get_rng_state()}  # what ``train`` saves: nothing draws from it here
        self.opt = torch.optim.Adam(self.model.parameters(), lr=config.lr)
        self.sched = None
        if config.plateau:
            self.sched = torch.optim.lr_scheduler.ReduceLROnPlateau(
                self.opt, mode="min", factor=config.plateau_factor, patience=config.plateau_patience
            )
        self.run = _State()
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

    def checkpoint(self) -> None:
        state = dict(
            key=self.config.key(),
            model=self.model.state_dict(),
            optimizer=self.opt.state_dict(),
            scheduler=self.sched.state_dict() if self.sched is not None else None,
            rng=self.rng,
        )
        save_torch(self.ckpt_path, state | self.run.to_dict())


class Stack:
    """S runs of one stack key, trained together by :meth:`train`. ``run_dirs`` (one per config, or None)
    are where checkpoints go; ``compile`` wraps the stacked step in ``torch.compile`` (eager if it fails)."""

    def __init__(self, configs, device: torch.device, run_dirs, *, compile: bool = True, progress: bool = False):
        self.configs, self.device = list(configs), device
        c0 = self.configs[0]
        self.dtype = DTYPES[c0.dtype]
        self.shape = StackShape(c0.d, c0.k, c0.embedding, c0.bias, c0.gamma)
        self.codes = self.shape.codes(self.dtype, device)
        self.regularizer, self.progress = c0.loss, progress
        self.shells = [
            _Shell(c, self.dtype, None if rd is None else rd / CHECKPOINT) for c, rd in zip(self.configs, run_dirs)
        ]
        kw = dict(dtype=self.dtype, device=device)
        self.theta = torch.stack([self.shape.flatten(s.model.state_dict()) for s in self.shells]).to(**kw)
        moments = [s.moments(self.shape) for s in self.shells]
        self.m = torch.stack([m for m, _, _ in moments]).to(**kw)
        self.v = torch.stack([v for _, v, _ in moments]).to(**kw)
        self.t = torch.tensor([t for _, _, t in moments], **kw)
        self.tau = torch.tensor([c.tau for c in self.configs], **kw)
        self.clip = torch.tensor([math.inf if c.clip is None else c.clip for c in self.configs], **kw)
        self.lr = torch.tensor([s.lr for s in self.shells], **kw)
        self.active = [s.run.step < s.config.steps for s in self.shells]
        self._validation()
        self._step_fn = self._loss
        if compile:
            _allow_recompiles()
            self._step_fn = torch.compile(self._loss)
        self.compiled, self.compile_error = compile, None

    # --- pieces of a step -------------------------------------------------------------------------------
    def _loss(self, theta, X, C, tau):
        """Per-run training losses (S,) and whether each run's output and loss are finite (S,) bool."""
        out = stacked_forward(self.shape, theta, X, C, self.codes)
        losses = smoothed_losses(X, out, tau, self.regularizer)
        ok = torch.isfinite(out).flatten(1).all(1) & torch.isfinite(losses)
        return losses, ok

    def _draw(self, steps: list[int]):
        """The training batches of the runs at their ``steps``: X (S, B, n, d), C (S, B, k, d). Each task
        distribution of the stack (family, scale, ... may differ between runs) draws for all its distinct
        seeds in one call; runs with the same distribution and (seed, step) share a draw."""
        draws, first, rows = {}, {}, []  # distribution -> {derived seed: row}; its first config; per run
        for shell, step, active in zip(self.shells, steps, self.active):
            c = shell.config
            dist, seed = tuple(_task_kwargs(c).values()), derive_seed(c.seed, "train", step)
            if active:
                first.setdefault(dist, c)
                seeds = draws.setdefault(dist, {})
                seeds.setdefault(seed, len(seeds))
            rows.append((dist, seed) if active else None)
        Xs, Cs, offset = [], [], {}
        for dist, seeds in draws.items():
            c = first[dist]
            kw = dict(device=self.device, dtype=self.dtype) | _task_kwargs(c)
            X, C = sample_task_streams(list(seeds), c.batch, c.n, c.d, c.k, **kw)
            offset[dist] = sum(len(x) for x in Xs)
            Xs.append(X)
            Cs.append(C)
        # a frozen run's row is computed but never used: it gets the first draw
        index = [0 if r is None else offset[r[0]] + draws[r[0]][r[1]] for r in rows]
        index = torch.tensor(index, device=self.device)
        return torch.cat(Xs)[index], torch.cat(Cs)[index]

    def _validation(self) -> None:
        """The validation tasks of every run (shared between runs of one stream) and their Lloyd baselines."""
        from ..losses import lloyd_baseline

        sets, self.val_index = {}, []
        for shell in self.shells:
            c = shell.config
            key = _stream(c)
            if key not in sets:
                X, C0 = _tasks(c, c.val_tasks, derive_seed(c.seed, "val"), self.device, self.dtype)
                sets[key] = (len(sets), X, C0, lloyd_baseline(X, C0))
            self.val_index.append(sets[key][0])
        ordered = sorted(sets.values(), key=lambda s: s[0])
        self.val_X = torch.stack([s[1] for s in ordered])
        self.val_C = torch.stack([s[2] for s in ordered])
        self.val_base = torch.stack([s[3] for s in ordered])

    @torch.no_grad()
    def validate(self, runs: list[int]) -> list[tuple[float, float]]:
        """(mean relative loss of Eq. 20, mean k-means loss) of each run in ``runs``; (inf, inf) for a run
        whose output is not finite somewhere (as ``train``'s validation)."""
        idx = torch.tensor([self.val_index[s] for s in runs], device=self.device)
        theta = self.theta.detach()[torch.tensor(runs, device=self.device)]
        V, n = self.val_X.shape[1], self.val_X.shape[2]
        chunk = max(1, _VAL_ENTRIES.get(self.device.type, 1 << 24) // (len(runs) * n * n))
        if self.device.type == "cpu" and chunk * n * n <= FUSED_LIMIT:
            # smaller chunks change no number: each task's arithmetic is the same in any chunk as long as
            # head 2 takes the same path (explicit scores below FUSED_LIMIT), which it then does in all
            chunk = max(1, min(chunk, _VAL_CACHE_ENTRIES // (len(runs) * n * n)))
        ratios, losses, finite = [], [], torch.ones(len(runs), dtype=torch.bool, device=self.device)
        for s in range(0, V, chunk):
            X, C0 = self.val_X[idx, s : s + chunk], self.val_C[idx, s : s + chunk]
            out = stacked_forward(self.shape, theta, X, C0, self.codes)
            finite &= torch.isfinite(out).flatten(1).all(1)
            loss = kmeans_losses(X, out)
            losses.append(loss)
            ratios.append(loss / self.val_base[idx, s : s + chunk])
        rel, mean = torch.cat(ratios, 1).mean(1).tolist(), torch.cat(losses, 1).mean(1).tolist()
        return [(r, m) if ok else (math.inf, math.inf) for r, m, ok in zip(rel, mean, finite.tolist())]

    def _compiled_step(self, X, C):
        theta = self.theta.detach().requires_grad_(True)
        if self.compiled and len(self.shells) > 1:
            # the stack's size stays symbolic: stacks of one key but another size (the pieces of a group
            # cut for the workers, the seeds of another sweep) reuse this graph from inductor's cache
            # instead of compiling it again; the kernels loop over it outermost, so nothing else changes
            for t in (theta, X, C, self.tau):
                torch._dynamo.maybe_mark_dynamic(t, 0)
        losses, ok = self._step_fn(theta, X, C, self.tau)
        (grad,) = torch.autograd.grad(losses.sum(), theta)
        return losses.detach(), ok, grad

    def _step(self, X, C):
        """Forward, backward and Adam for the stack; returns (losses, ok) as lists. Falls back to eager if
        the compiled step fails (the error is kept in ``compile_error``)."""
        try:
            losses, ok, grad = self._compiled_step(X, C)
        except Exception as e:
            if not self.compiled:
                raise
            warnings.warn(
                f"torch.compile of the stacked step failed ({type(e).__name__}: {e}); training eagerly", stacklevel=2
            )
            self._step_fn = self._loss
            self.compiled, self.compile_error = False, f"{type(e).__name__}: {e}"
            losses, ok, grad = self._compiled_step(X, C)
        values, ok = losses.tolist(), ok.tolist()
        active = torch.tensor([a and o for a, o in zip(self.active, ok)], device=self.device)
        self.theta, self.m, self.v, self.t = adam_update(
            self.theta, grad, self.m, self.v, self.t, self.lr, self.clip, active
        )
        return values, ok

    # --- the loop -----------------------------------------------------------------------------------
    def train(self) -> list:
        """Train every run to its last step (or until it diverges); returns one finished
        :class:`~lloydlib.training.cache.Run` per config, in the stack's order: its weights (a
        ``LearnableTransformer`` on the CPU), history, per-step losses, status ("done" or "diverged") and
        ``info`` (with ``stacked``, the stack size, ``compiled`` and ``compile_error``), not yet written
        anywhere."""
        shells = self.shells
        for s, shell in enumerate(shells):
            if not shell.run.rows:
                (val, val_loss) = self.validate([s])[0]
                shell.run.rows.append(
                    dict(step=0, train_loss=math.nan, val_rel_loss=val, val_loss=val_loss, lr=shell.lr, wall_time=0.0)
                )
        total = max(s.config.steps for s in shells)
        bar = None
        if self.progress:
            desc = f"stack of {len(shells)}: {shells[0].config.label()}"
            bar = tqdm(total=total, initial=min(s.run.step for s in shells), desc=desc, leave=False, file=sys.stderr)
        while any(self.active):
            steps = [s.run.step + 1 for s in shells]
            X, C = self._draw(steps)
            t0, c0 = time.perf_counter(), time.process_time()
            values, ok = self._step(X, C)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            due = []
            for s, shell in enumerate(shells):
                if not self.active[s]:
                    continue
                run, step = shell.run, steps[s]
                run.step = step
                if not ok[s]:
                    shell.status, shell.diverged_at, self.active[s] = "diverged", step, False
                    continue
                run.wall += wall
                run.cpu += cpu
                run.train_losses.append(values[s])
                if step == 1:
                    run.rows[0]["train_loss"] = values[s]
                if step % shell.config.eval_every == 0 or step == shell.config.steps:
                    due.append(s)
            if due:
                self._evaluate(due)
            self._checkpoints()
            for s, shell in enumerate(shells):
                if self.active[s] and shell.run.step >= shell.config.steps:
                    self.active[s] = False
            if bar is not None:
                bar.update(1)
        if bar is not None:
            bar.close()
        return self._finish()

    def _evaluate(self, due: list[int]) -> None:
        changed = False
        for s, (val, val_loss) in zip(due, self.validate(due)):
            shell = self.shells[s]
            run, step = shell.run, shell.run.step
            window = run.train_losses[-(step - run.rows[-1]["step"]) :]
            run.rows.append(
                dict(
                    step=step,
                    train_loss=float(np.mean(window)),
                    val_rel_loss=val,
                    val_loss=val_loss,
                    lr=shell.lr,
                    wall_time=run.wall,
                )
            )
            if not math.isfinite(val):
                shell.status, shell.diverged_at, self.active[s] = "diverged", step, False
                continue
            if shell.sched is not None and step % shell.config.eval_every == 0:
                shell.sched.step(val)
                changed = True
        if changed:
            self.lr = torch.tensor([s.lr for s in self.shells], dtype=self.dtype, device=self.device)

    def _checkpoints(self) -> None:
        for s, shell in enumerate(self.shells):
            c, step = shell.config, shell.run.step
            if shell.ckpt_path is None or not self.active[s] or step % c.checkpoint_every or step >= c.steps:
                continue
            shell.store(self.shape, self.theta[s].cpu(), self.m[s].cpu(), self.v[s].cpu(), float(self.t[s]))
            shell.checkpoint()

    def _finish(self) -> list:
        machine = hardware.describe(hardware.probe(self.device))
        out = []
        for s, shell in enumerate(self.shells):
            model = self.shape.model(
                self.theta[s].detach().cpu(),
                dropout=shell.config.dropout,
                weighting=shell.config.weighting,
                fast=shell.config.fast,
            ).eval()
            run = finished_run(shell.config, model, shell.run, shell.status, shell.diverged_at, self.device, machine)
            run.info.update(stacked=len(self.shells), compiled=self.compiled, compile_error=self.compile_error)
            out.append(run)
        return out
