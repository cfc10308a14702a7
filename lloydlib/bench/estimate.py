"""What a training step should cost on this machine: its flops and memory traffic, at measured rates.

:func:`step_cost` runs one eager training step of the fast model (forward, loss of Eq. 6, backward) under a
``TorchDispatchMode`` that adds up, for every ATen operation, the floating-point operations of matrix
products (``torch.utils.flop_counter``'s formulas) and the bytes of its inputs and outputs (the traffic of
an unfused execution: each operation reads its inputs and writes its output once), and adds the work of
the fused point attention (:mod:`lloydlib.fused_attention`), whose scores live only in a core's cache:

    per score entry (B n^2 of them)  forward 2e + 2f + 18 + exp,  backward 4e + 2f + 3 + exp    (e = d + 1, f = d)

with an ``exp`` counted as :data:`EXP_FLOPS` operations (its polynomial and range reduction). Softmaxes and
sparsemaxes of the other heads and the loss are counted the same way per entry (:data:`SOFTMAX_FLOPS`).
:func:`machine_rates` measures the two rates on ``threads`` threads: a large float32 matrix product (the
attainable arithmetic rate) and a large copy (the memory bandwidth). The estimate is
flops / rate + bytes / bandwidth: a step can be no faster than that, roughly, and a step within 1.5 times
it leaves little to gain. Adam's update (a few numbers per parameter) is left out.
"""

from __future__ import annotations

import time

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten
from torch.utils.flop_counter import FlopCounterMode

from .._validate import check_choice, check_int, check_positive
from ..embeddings import EMBEDDINGS
from ..fast_layer import FUSED_LIMIT
from ..losses import REGULARIZERS, training_loss
from ..model import LearnableTransformer
from ..tasks import sample_tasks

__all__ = ["EXP_FLOPS", "SOFTMAX_FLOPS", "step_cost", "machine_rates", "estimate"]

#: operations an exp costs (Cephes' expf: range reduction, a degree-6 polynomial, the power of two)
EXP_FLOPS = 15
#: operations a softmax costs per entry beyond its exp (max, subtract, sum, divide)
SOFTMAX_FLOPS = 4


class _Traffic(TorchDispatchMode):
    """Adds up the bytes every ATen operation (views aside) reads and writes."""

    def __init__(self):
        super().__init__()
        self.bytes = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if getattr(func, "is_view", False):  # a view moves no data
            return out
        leaves = tree_flatten((args, kwargs or {}))[0] + tree_flatten(out)[0]
        self.bytes += sum(t.numel() * t.element_size() for t in leaves if isinstance(t, torch.Tensor))
        return out


def _attention_flops(n: int, d: int, k: int, D: int, batch: int) -> tuple[int, int]:
    """Flops of the four heads' scores, weights and weighted sums that the matrix-product count misses:
    head 2's fused kernel (when it runs, B n^2 > FUSED_LIMIT) in full, and the softmaxes of heads 1, 3, 4."""
    e, f = d + 1, d
    soft = EXP_FLOPS + SOFTMAX_FLOPS
    head2 = batch * n * n * ((2 * e + 2 * f + soft) + (4 * e + 2 * f + 3 + EXP_FLOPS))
    if batch * n * n <= FUSED_LIMIT:
        head2 = batch * n * n * 3 * soft  # explicit scores: the products are counted, the softmax is not
    others = 3 * batch * n * k * 3 * soft  # heads 1, 3 and 4: a softmax forward and its backward
    return head2, others


def step_cost(
    *, embedding: str = "BN", loss: str = "NE", n: int = 512, d: int = 4, k: int = 6, batch: int = 32,
    tau: float = 0.1, seed: int = 0,
) -> dict:  # fmt: skip
    """Flops and bytes of one training step (forward, loss, backward) of the fast one-layer model:
    ``{"matmul_flops", "attention_flops", "loss_flops", "flops", "bytes", "head2_fused"}``."""
    check_choice("embedding", embedding, EMBEDDINGS)
    check_choice("loss", loss, REGULARIZERS)
    n, d, k, batch = (check_int(name, v, 1) for name, v in (("n", n), ("d", d), ("k", k), ("batch", batch)))
    tau = check_positive("tau", tau)
    X, C = sample_tasks(batch, n, d, k, seed=seed)
    torch.manual_seed(seed)
    model = LearnableTransformer(d, k, embedding, fast=True)
    flops, traffic = FlopCounterMode(display=False), _Traffic()
    with flops, traffic:
        training_loss(X, model(X, C), tau, loss).backward()
    head2, others = _attention_flops(n, d, k, model.d_emb, batch)
    loss_flops = 3 * batch * n * k * (3 * d + EXP_FLOPS + SOFTMAX_FLOPS)  # distances and weights, and back
    matmul = int(flops.get_total_flops())
    return {
        "matmul_flops": matmul,
        "attention_flops": head2 + others,
        "loss_flops": loss_flops,
        "flops": matmul + head2 + others + loss_flops,
        "bytes": int(traffic.bytes),
        "head2_fused": batch * n * n > FUSED_LIMIT,
    }


def machine_rates(*, threads: int | None = None, reps: int = 5) -> dict:
    """The attainable float32 arithmetic rate (flop/s of a 1024 x 1024 matrix product) and memory bandwidth
    (bytes/s read and written by a 256 MB copy), the best of ``reps`` tries each, on ``threads`` torch threads."""
    reps = check_int("reps", reps, 1)
    before = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(check_int("threads", threads, 1))
    try:
        a, b = torch.randn(1024, 1024), torch.randn(1024, 1024)
        src, dst = torch.randn(1 << 26), torch.empty(1 << 26)
        best_mm = best_copy = float("inf")
        for _ in range(reps):
            t0 = time.perf_counter()
            a @ b
            best_mm = min(best_mm, time.perf_counter() - t0)
            t0 = time.perf_counter()
            dst.copy_(src)
            best_copy = min(best_copy, time.perf_counter() - t0)
    finally:
        torch.set_num_threads(before)
    return {"flops_per_s": 2 * 1024**3 / best_mm, "bytes_per_s": 2 * src.numel() * 4 / best_copy}


def estimate(cost: dict, rates: dict) -> float:
    """The estimated ms of a step of ``cost`` (:func:`step_cost`) at ``rates`` (:func:`machine_rates`)."""
    return 1e3 * (cost["flops"] / rates["flops_per_s"] + cost["bytes"] / rates["bytes_per_s"])
