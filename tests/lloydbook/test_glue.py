"""Tests of lloydbook.glue: a Colab-safe ``glue`` (myst-nb's when installed, a plain display otherwise); and of what
importing the package and its light modules costs."""

import subprocess
import sys

import numpy as np
import pytest
import torch

from lloydbook.glue import glue, on_colab


def test_glue_without_myst_nb(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "myst_nb", None)  # as on Colab: importing it fails
    assert glue("x", 1.25) == 1.25
    assert "1.25" in capsys.readouterr().out
    assert glue("y", 2.5, display=False) == 2.5
    assert capsys.readouterr().out == ""
    with pytest.raises(ValueError, match="name"):
        glue("", 1)
    with pytest.raises(TypeError, match="name"):
        glue(3, 1)


def test_glue_passes_numpy_and_torch_scalars_as_python_numbers(monkeypatch):
    glued = {}
    fake = type(sys)("myst_nb")
    fake.glue = lambda name, obj, display=True: glued.__setitem__(name, obj)
    monkeypatch.setitem(sys.modules, "myst_nb", fake)
    glue("a", np.float64(0.25), display=False)
    glue("b", torch.tensor(3), display=False)
    glue("c", np.bool_(True), display=False)
    assert glued == {"a": 0.25, "b": 3, "c": True}
    assert [type(v) for v in glued.values()] == [float, int, bool]
    assert f"{glued['a']:.3f}" == "0.250" and repr(glued["a"]) == "0.25"  # numpy 2: 'np.float64(0.25)'


def test_glue_keeps_tensors_and_arrays_that_are_not_scalars(monkeypatch):
    glued = {}
    fake = type(sys)("myst_nb")
    fake.glue = lambda name, obj, display=True: glued.__setitem__(name, (obj, display))
    monkeypatch.setitem(sys.modules, "myst_nb", fake)
    t = torch.ones(2)
    assert glue("t", t) is t
    assert glued["t"][0] is t and glued["t"][1] is True


def test_on_colab(monkeypatch):
    assert on_colab() is ("google.colab" in sys.modules)
    monkeypatch.setitem(sys.modules, "google.colab", type(sys)("google.colab"))
    assert on_colab() is True
    monkeypatch.delitem(sys.modules, "google.colab")
    assert on_colab() is False


def test_the_package_and_its_light_modules_do_not_import_lloydlib():
    # the nbval plugin runs in every pytest process of make test's nbval step, the extension in the book build
    probe = "import sys, lloydbook, lloydbook.nbval_keep, lloydbook.claims.sphinx; print('lloydlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
