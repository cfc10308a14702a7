"""Helpers shared by test modules (importable because tests/conftest.py puts this folder on sys.path)."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def load_script(name: str):
    """The module ``scripts/<name>.py`` of this checkout, loaded from its file."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def assert_raises_naming(call, exc, words):
    """``call()`` raises ``exc`` whose message contains every one of ``words`` (the argument, what was
    expected, what came)."""
    with pytest.raises(exc) as info:
        call()
    message = str(info.value)
    for word in words:
        assert word in message, f"{word!r} missing from error message: {message}"
