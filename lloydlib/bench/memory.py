"""Peak memory of a training step, on a GPU and on a CPU.

On a GPU: ``torch.cuda.max_memory_allocated`` during forward, loss and backward, less the memory
allocated before (what the Leaner paper reports in Figure 1 and Table 1). On a CPU we define the same
quantity from the allocation and free events PyTorch's profiler records with ``profile_memory=True``:
the peak, over the forward, loss and backward, of the bytes held by tensors allocated since the step
began. It counts every tensor the step allocates through PyTorch (activations saved for backward,
temporaries, gradients), not buffers that BLAS or the fused attention kernel keep internally, and not
memory that was live before the step (parameters, inputs). It is deterministic: the same step gives the
same bytes. Unlike the paper (Figure 1) we do not subtract the self-attention matrices; lloydlib's fused
attention never stores them.
"""

from __future__ import annotations

import contextlib
import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile

__all__ = ["peak_memory"]


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


def peak_memory(fn, device: torch.device | str = "cpu") -> int:
    """Peak bytes allocated by ``fn()`` above what was allocated before it (see the module docstring).

    GPU: ``torch.cuda.max_memory_allocated``. CPU: the running sum of the allocation (+) and free (-)
    events recorded by ``torch.profiler`` with ``profile_memory=True``, in time order; its maximum.
    """
    device = torch.device(device)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        base = torch.cuda.memory_allocated(device)
        torch.cuda.reset_peak_memory_stats(device)
        fn()
        torch.cuda.synchronize(device)
        return int(torch.cuda.max_memory_allocated(device) - base)
    with _quiet_stderr(), profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    events = sorted(
        (e.start_ns(), e.nbytes())
        for e in prof.profiler.kineto_results.events()
        if e.name() == "[memory]" and e.device_type() == torch.autograd.DeviceType.CPU
    )
    current = peak = 0
    for _, nbytes in events:
        current += nbytes
        peak = max(peak, current)
    return int(peak)
