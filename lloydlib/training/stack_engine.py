"""The training engine: S runs of one stack key trained as one stacked model (Algorithm 1 of the Leaner paper).

:func:`lloydlib.training.train` (one run: a stack of one) and :func:`~lloydlib.training.train_stack` (many)
both train through :class:`Stack`. Every step, every run that still trains draws ``batch`` tasks from its
task generator (Appendix D; runs with the same seed and task distribution share one draw), the one fast layer
of Eq. 4 (:func:`~lloydlib.training.stacked_model.stacked_forward`) maps (X, C0) to centers for the whole
stack, the smoothed k-means loss of Eq. 6 is taken per run, one backward pass gives every run its gradient and
one vectorised Adam step (:func:`~lloydlib.training.adam.adam_update`) moves them all. Every ``eval_every``
steps each run records the relative loss of Eq. 20 on its fixed validation set (``val_tasks`` tasks, drawn
once per seed) and, as the authors' code does, steps its own ``ReduceLROnPlateau`` on it. Per-run learning
rates, temperatures and clipping thresholds are tensors; a run whose loss is not finite is frozen and
reported "diverged", while the others go on.

Repeatable and resumable: every random draw is derived from the run's seed (tasks of step m from
``derive_seed(seed, "train", m)``, validation tasks from ``derive_seed(seed, "val")``, initial weights from
``derive_seed(seed, "init")``, attention dropout from ``derive_seed(seed, "dropout")``), so a run's numbers do
not depend on the stack it trains in (equal to rounding: a stack of one and a stack of S agree within 1e-9
in float64). Each run's :class:`~lloydlib.training.run_state.Shell` writes a checkpoint (model, Adam,
scheduler, generator state, history) every ``checkpoint_every`` steps, so an interrupted stack resumes where
it stopped, in any stack, and ends with the weights and history of an uninterrupted one.
"""

from __future__ import annotations

import math
import sys
import time
import warnings

import numpy as np
import torch
from tqdm import tqdm

import lloydlib

from .. import hardware
from ..fast_layer import FUSED_LIMIT
from ..losses import lloyd_baseline
from ..tasks import sample_task_streams
from .adam import adam_update
from .cache import CHECKPOINT, Run
from .config import DTYPES, TASK_FIELDS, derive_seed
from .run_state import Shell, sample, set_rng_state
from .stacked_model import StackShape, kmeans_objective_unchecked, smoothed_losses, stacked_forward

__all__ = ["Stack"]

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


class Stack:
    """S runs of one stack key, trained together by :meth:`train`. ``run_dirs`` (one per config, or None)
    are where checkpoints go; ``compile`` wraps the stacked step in ``torch.compile`` (eager if it fails).

    Attention dropout draws its masks from torch's global generator, so runs with ``dropout > 0`` train
    as stacks of one (a ValueError otherwise), eagerly (a compiled graph would draw other masks)."""

    def __init__(self, configs, device: torch.device, run_dirs, *, compile: bool = True, progress: bool = False):
        self.configs, self.device = list(configs), device
        c0 = self.configs[0]
        if c0.dropout > 0 and len(self.configs) > 1:
            raise ValueError(
                f"runs with attention dropout train as stacks of one (their masks come from one generator), "
                f"got a stack of {len(self.configs)} with dropout={c0.dropout:g}"
            )
        self.dtype = DTYPES[c0.dtype]
        self.shape = StackShape(c0.d, c0.k, c0.embedding, c0.bias, c0.gamma)
        self.codes = self.shape.codes(self.dtype, device)
        self.regularizer, self.progress = c0.loss, progress
        self.weighting, self.dropout = c0.weighting, c0.dropout
        compile = compile and self.dropout == 0
        self.shells = [
            Shell(c, self.dtype, None if rd is None else rd / CHECKPOINT) for c, rd in zip(self.configs, run_dirs)
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
        out = stacked_forward(
            self.shape, theta, X, C, self.codes, weighting=self.weighting, dropout=self.dropout, training=True
        )
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
            dist, seed = tuple(c.distribution().values()), derive_seed(c.seed, "train", step)
            if active:
                first.setdefault(dist, c)
                seeds = draws.setdefault(dist, {})
                seeds.setdefault(seed, len(seeds))
            rows.append((dist, seed) if active else None)
        Xs, Cs, offset = [], [], {}
        for dist, seeds in draws.items():
            c = first[dist]
            kw = dict(device=self.device, dtype=self.dtype) | c.distribution()
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
        sets, self.val_index = {}, []
        for shell in self.shells:
            c = shell.config
            key = tuple(getattr(c, f) for f in TASK_FIELDS)
            if key not in sets:
                X, C0 = sample(c, c.val_tasks, derive_seed(c.seed, "val"), self.device, self.dtype)
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
            out = stacked_forward(self.shape, theta, X, C0, self.codes, weighting=self.weighting)
            finite &= torch.isfinite(out).flatten(1).all(1)
            loss = kmeans_objective_unchecked(X, out)
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
    def train(self, stop_at: int | None = None) -> list[Run]:
        """Train every run to its last step (or until it diverges), or only up to step ``stop_at``.

        Returns one :class:`~lloydlib.training.cache.Run` per config, in the stack's order, not yet written
        anywhere: its weights (a ``LearnableTransformer`` on the CPU), history, per-step losses, status and
        ``info`` (with ``stacked``, the stack size, ``compiled`` and ``compile_error``). The status is "done",
        "diverged", or "partial" for a run that ``stop_at`` stopped before its last step; such a run's
        checkpoint is written (where its run directory is given), and a later stack resumes it there.
        Torch's global generator is left as it was.
        """
        with torch.random.fork_rng(devices=[self.device] if self.device.type == "cuda" else []):
            if self.dropout > 0:  # a stack of one: its masks continue the run's generator
                shell = self.shells[0]
                if shell.rng is None:
                    torch.manual_seed(derive_seed(shell.config.seed, "dropout"))
                else:
                    set_rng_state(shell.rng, self.device)
            self._loop(stop_at)
            return self._finish()  # a partial run's checkpoint keeps the generator's state

    def _loop(self, stop_at: int | None) -> None:
        shells = self.shells
        last = [s.config.steps if stop_at is None else min(stop_at, s.config.steps) for s in shells]
        self.active = [a and s.run.step < end for a, s, end in zip(self.active, shells, last)]
        for s, shell in enumerate(shells):
            if not shell.run.rows:
                (val, val_loss) = self.validate([s])[0]
                shell.run.rows.append(
                    dict(step=0, train_loss=math.nan, val_rel_loss=val, val_loss=val_loss, lr=shell.lr, wall_time=0.0)
                )
        bar = None
        if self.progress:
            desc = f"stack of {len(shells)}: {shells[0].config.label()}"
            bar = tqdm(
                total=max(last), initial=min(s.run.step for s in shells), desc=desc, leave=False, file=sys.stderr
            )
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
                if self.active[s] and shell.run.step >= last[s]:
                    self.active[s] = False
            if bar is not None:
                bar.update(1)
        if bar is not None:
            bar.close()

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

    def _checkpoint(self, s: int) -> None:
        shell = self.shells[s]
        shell.store(self.shape, self.theta[s].cpu(), self.m[s].cpu(), self.v[s].cpu(), float(self.t[s]))
        shell.checkpoint(self.device)

    def _checkpoints(self) -> None:
        for s, shell in enumerate(self.shells):
            c, step = shell.config, shell.run.step
            if shell.ckpt_path is None or not self.active[s] or step % c.checkpoint_every or step >= c.steps:
                continue
            self._checkpoint(s)

    def _finish(self) -> list[Run]:
        machine = hardware.describe(hardware.probe(self.device))
        out = []
        for s, shell in enumerate(self.shells):
            c, run = shell.config, shell.run
            partial = shell.status == "done" and run.step < c.steps  # stopped by stop_at
            if partial and shell.ckpt_path is not None:
                self._checkpoint(s)  # before the model below draws its initial weights from the generator
            model = self.shape.model(
                self.theta[s].detach().cpu(), dropout=c.dropout, weighting=c.weighting, fast=c.fast
            ).eval()
            info = dict(device=str(self.device), hardware=machine, resumed_from=run.resumed_from, cached=False)
            info.update(stacked=len(self.shells), compiled=self.compiled, compile_error=self.compile_error)
            if partial:
                out.append(Run(c, model, run.arrays(), np.array(run.train_losses), "partial", info))
                continue
            info.update(
                lloydlib=lloydlib.__version__,
                seconds=run.wall,
                cpu_seconds=run.cpu,
                diverged_at=shell.diverged_at,
                key=c.key(),
                finished=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            )
            out.append(Run(c, model, run.arrays(), np.array(run.train_losses), shell.status, info))
        return out
