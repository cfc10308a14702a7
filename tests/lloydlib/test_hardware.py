"""lloydlib.hardware: one probe of the machine, and its one-line description."""

import pytest
import torch

from lloydlib import hardware


def test_probe_names_the_machine():
    hw = hardware.probe()
    assert {"device", "cpu", "cpu_cores", "cpu_vector", "torch_threads", "torch", "python", "platform"} == set(hw)
    assert hw["device"] == "cpu" and hw["torch"] == torch.__version__ and hw["cpu"]
    assert hardware.probe("cpu") == hw


def test_describe_a_cpu_and_a_gpu():
    line = hardware.describe(hardware.probe())
    assert "cores" in line and f"torch {torch.__version__}" in line
    assert f"cores, {torch.backends.cpu.get_cpu_capability()}, " in line  # two CPUs of one name can differ in it
    older = {k: v for k, v in hardware.probe().items() if k != "cpu_vector"}  # a probe recorded before it
    assert hardware.describe(older) == line.replace(f"{torch.backends.cpu.get_cpu_capability()}, ", "")
    gpu = dict(hardware.probe(), gpu="NVIDIA H200", cuda="13.0")
    assert hardware.describe(gpu).startswith("NVIDIA H200 (CUDA 13.0), torch ")
    with pytest.raises(ValueError, match="info must be a dict returned by"):
        hardware.describe("H200")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_probe_names_the_gpu():
    hw = hardware.probe("cuda")
    assert hw["gpu"] == torch.cuda.get_device_name() and hw["cuda"] == torch.version.cuda
