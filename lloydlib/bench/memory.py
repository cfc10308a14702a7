"""Peak memory of a training step, on a GPU and on a CPU, in two accountings.

**Full accounting** (the default): on a GPU ``torch.cuda.max_memory_allocated`` during forward, loss and
backward, less the memory allocated before. On a CPU we define the same quantity from the allocation and
free events PyTorch's profiler records with ``profile_memory=True``: the peak, over the forward, loss and
backward, of the bytes held by tensors allocated since the step began. It counts every tensor the step
allocates through PyTorch (activations saved for backward, temporaries, gradients), not buffers that BLAS
or the fused attention kernel keep internally, and not memory that was live before the step (parameters,
inputs). It is deterministic: the same step gives the same bytes.

**Without the attention matrices** (``exclude_nbytes``): the Leaner paper's Figure 1 reports peak memory
"less the usage from the self-attention matrices which does not depend on d_emb". With
``exclude_nbytes=(attention_matrix_bytes(batch, n),)`` every allocation of exactly that many bytes, one
(batch, n, n) matrix of the step's dtype, is left out of the running sum (its allocation and its free):
the scores, distances, weights and their gradients of the points-to-points head, whichever form of the
layer made them. Everything else is counted as in the full accounting, including the (batch, n, k) and
(batch, k, n) matrices of the heads between points and centers, which grow with k. The selection is by
size, so a tensor that is not an n x n matrix but happens to have the same number of bytes is left out
too; :func:`attention_matrix_bytes` is only unambiguous when no other tensor of the step has n x n
elements per task (for the layer of Eq. 4 at d_emb != n it has none). This accounting reads the
profiler's events on a GPU as well (``torch.cuda.max_memory_allocated`` cannot leave tensors out); there the
caching allocator reports the sizes of its blocks, which may exceed the sizes asked for, so a matrix
served from a larger cached block is counted.
"""

from __future__ import annotations

import contextlib
import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile

from .._validate import check_int

__all__ = ["peak_memory", "attention_matrix_bytes"]


@contextlib.contextmanager
def _quiet_stderr():
    """Silence the profiler's C++ log lines, written straight to file descriptor 2 (which Jupyter
    kernels redirect to a pipe of their own, so it is fd 2 itself, not ``sys.stderr.fileno()``)."""
    fd = 2
    try:
        sys.stderr.flush()
        saved = os.dup(fd)
    except (AttributeError, ValueError, OSError):
        yield
        return
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), fd)
            yield
    finally:
        os.dup2(saved, fd)
        os.close(saved)


def attention_matrix_bytes(batch: int, n: int, dtype: torch.dtype = torch.float32) -> int:
    """Bytes of one (batch, n, n) attention matrix of ``dtype``: batch * n * n * itemsize."""
    batch, n = check_int("batch", batch, 1), check_int("n", n, 1)
    if not isinstance(dtype, torch.dtype):
        raise TypeError(f"dtype must be a torch.dtype, got {type(dtype).__name__} {dtype!r}")
    return batch * n * n * torch.empty((), dtype=dtype).element_size()


def peak_memory(fn, device: torch.device | str = "cpu", *, exclude_nbytes=()) -> int:
    """Peak bytes allocated by ``fn()`` above what was allocated before it (see the module docstring).

    ``exclude_nbytes``: allocation sizes (bytes) left out of the count, e.g.
    ``(attention_matrix_bytes(batch, n),)`` for the paper's accounting without the n x n attention
    matrices; empty (the default) for the full accounting. Full accounting on a GPU:
    ``torch.cuda.max_memory_allocated``. Otherwise: the running sum of the allocation (+) and free (-)
    events of ``device``'s type recorded by ``torch.profiler`` with ``profile_memory=True``, in time order,
    skipping events whose size is in ``exclude_nbytes``; its maximum.
    """
    device = torch.device(device)
    excluded = set()
    for b in exclude_nbytes:
        excluded.add(check_int("exclude_nbytes", b, 1))
    if device.type == "cuda" and not excluded:
        torch.cuda.synchronize(device)
        base = torch.cuda.memory_allocated(device)
        torch.cuda.reset_peak_memory_stats(device)
        fn()
        torch.cuda.synchronize(device)
        return int(torch.cuda.max_memory_allocated(device) - base)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    kind = torch.autograd.DeviceType.CUDA if device.type == "cuda" else torch.autograd.DeviceType.CPU
    with _quiet_stderr(), profile(activities=activities, profile_memory=True) as prof:
        fn()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
    events = sorted(
        (e.start_ns(), e.nbytes())
        for e in prof.profiler.kineto_results.events()
        if e.name() == "[memory]" and e.device_type() == kind
    )
    current = peak = 0
    for _, nbytes in events:
        if abs(nbytes) in excluded:
            continue
        current += nbytes
        peak = max(peak, current)
    return int(peak)
