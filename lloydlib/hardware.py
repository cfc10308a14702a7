"""The machine a computation runs on, recorded with every benchmark result and every training run.

:func:`probe` returns the facts as a JSON-ready dict (what ``python -m lloydlib bench`` writes into each
result's ``hardware`` field); :func:`describe` turns them into the one line a training run keeps in
``info["hardware"]``.
"""

from __future__ import annotations

import os
import platform

import torch

__all__ = ["probe", "describe"]


def _cpu_name() -> str:
    """The CPU model from ``/proc/cpuinfo`` (Linux), else what :mod:`platform` knows."""
    name = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
    except OSError:
        return name
    return names[0] if names else name


def probe(device: torch.device | str | None = None) -> dict:
    """The machine that runs on ``device`` (default: the CPU).

    Returns ``{"device", "cpu", "cpu_cores", "cpu_vector", "torch_threads", "torch", "python", "platform"}``
    (``cpu_vector``: the widest vector instructions torch's CPU kernels use here, ``torch.backends.cpu.
    get_cpu_capability()``, such as "AVX2" or "AVX512": two CPUs of one model name can differ in it, and a step's
    cost with it), plus ``"gpu"`` (its name) and ``"cuda"`` (the CUDA version torch was built with) for a CUDA device.
    """
    device = torch.device(device or "cpu")
    info = {
        "device": str(device),
        "cpu": _cpu_name(),
        "cpu_cores": os.cpu_count(),
        "cpu_vector": torch.backends.cpu.get_cpu_capability(),
        "torch_threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
    }
    if device.type == "cuda":
        info["gpu"] = torch.cuda.get_device_name(device)
        info["cuda"] = torch.version.cuda
    return info


def describe(info: dict) -> str:
    """One line for a :func:`probe` result: the GPU and CUDA version, or the CPU, its cores and vector instructions
    (where the probe recorded them) and torch's threads."""
    if not isinstance(info, dict) or not {"cpu", "cpu_cores", "torch_threads", "torch"} <= set(info):
        raise ValueError(f"info must be a dict returned by lloydlib.hardware.probe, got {info!r}")
    if "gpu" in info:
        return f"{info['gpu']} (CUDA {info['cuda']}), torch {info['torch']}"
    vector = f"{info['cpu_vector']}, " if info.get("cpu_vector") else ""  # a probe before lloydlib recorded it lacks it
    cores = f"{info['cpu_cores']} cores, {vector}{info['torch_threads']} torch threads"
    return f"{info['cpu']}, {cores}, torch {info['torch']}"
