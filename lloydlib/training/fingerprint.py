"""What trained a run: a fingerprint of the code whose arithmetic a run depends on, and of torch.

A stored run (:mod:`lloydlib.training.store`) is only evidence for the code that trained it. The
fingerprint is, for each module of :data:`MODULES` (the model, its embeddings and attention, the losses,
the tasks and Lloyd's step they are measured against, and the training engine), a hash of its syntax
tree with docstrings left out, plus the torch version. So a change of comments, docstrings or formatting
leaves it as it is, and any change of code (an operator, a constant, a call) changes the module's hash;
:func:`changes` names the modules that differ.

The syntax tree is written out by :func:`canonical`, not by ``ast.dump``: fields a newer Python adds with
an empty default (``type_params`` in 3.12, say) are left out, so the same source hashes the same on the
Pythons lloydlib supports. Modules outside :data:`MODULES` that these import only check arguments, probe
the hardware or read and write files (:data:`NOT_ARITHMETIC`); ``tests/lloydlib/training`` checks that
the list is closed under imports.
"""

from __future__ import annotations

import ast
import hashlib
import json
from pathlib import Path

import torch

__all__ = ["MODULES", "NOT_ARITHMETIC", "canonical", "module_hash", "fingerprint", "fingerprint_id", "changes"]

PACKAGE = Path(__file__).resolve().parents[1]

#: the modules (paths inside the lloydlib package) whose code decides what a training run computes
MODULES = (
    "_random.py",
    "distances.py",
    "tasks.py",
    "lloyd.py",
    "embeddings.py",
    "attention.py",
    "fused_attention.py",
    "fast_layer.py",
    "model.py",
    "losses.py",
    "training/config.py",
    "training/adam.py",
    "training/stacked_model.py",
    "training/run_state.py",
    "training/stack_engine.py",
    "training/stacked.py",
)
#: modules those import that do not change a run's numbers, and why
NOT_ARITHMETIC = {
    "_validate.py": "argument checks: each returns its value or raises",
    "hardware.py": "describes the machine for a run's info",
    "training/cache.py": "reads and writes runs and checkpoints",
    "construction": "Theorem B.1's weights, which LearnableTransformer.load_theorem_weights loads on request only",
    "__init__.py": "lloydlib's version, part of every run's key already",
}


def canonical(node) -> str:
    """A text of the syntax tree ``node`` that ignores docstrings, comments, formatting and line numbers,
    and fields that are None or empty (so that a newer Python's new, empty fields change nothing)."""
    if isinstance(node, list):
        return "[" + ",".join(canonical(n) for n in node) + "]"
    if not isinstance(node, ast.AST):
        return repr(node)
    body = getattr(node, "body", None)
    if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body:
        first = body[0]
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            node = type(node)(**{f: getattr(node, f, None) for f in node._fields} | {"body": body[1:]})
    parts = []
    for name in node._fields:
        value = getattr(node, name, None)
        if value is None or value == []:
            continue
        if isinstance(node, ast.Constant) and name == "kind":
            continue
        parts.append(f"{name}={canonical(value)}")
    return f"{type(node).__name__}({','.join(parts)})"


def module_hash(source: str) -> str:
    """16 hex digits of the SHA-256 of :func:`canonical` of the module ``source``."""
    if not isinstance(source, str):
        raise TypeError(f"source must be the text of a Python module, got {type(source).__name__}")
    return hashlib.sha256(canonical(ast.parse(source)).encode()).hexdigest()[:16]


def fingerprint(root: str | Path | None = None) -> dict:
    """``{"torch": version, "modules": {path: hash}}`` for the lloydlib package at ``root`` (default: this
    one) and the torch imported here."""
    root = PACKAGE if root is None else Path(root)
    modules = {}
    for rel in MODULES:
        path = root / rel
        if not path.is_file():
            raise FileNotFoundError(f"fingerprint: lloydlib module {rel} is missing under {root}")
        modules[f"lloydlib/{rel}"] = module_hash(path.read_text())
    return {"torch": str(torch.__version__), "modules": modules}


def fingerprint_id(fp: dict) -> str:
    """12 hex digits naming the fingerprint ``fp`` (the SHA-256 of its JSON, keys sorted): the id a run store
    files a fingerprint under (:func:`lloydlib.training.store.fingerprint_id` computes the same)."""
    return hashlib.sha256(json.dumps(fp, sort_keys=True).encode()).hexdigest()[:12]


def changes(recorded: dict, current: dict | None = None, *, torch_version: bool = True) -> list[str]:
    """What differs between the fingerprint ``recorded`` and ``current`` (default: :func:`fingerprint`), as
    phrases a message can list: ``"lloydlib/model.py changed"``, ``"torch 2.13.0 -> 2.9.1"``; [] when
    they agree. ``torch_version=False`` leaves the torch version out."""
    if not isinstance(recorded, dict) or not isinstance(recorded.get("modules"), dict):
        raise TypeError(f"recorded must be a fingerprint dict with 'modules' and 'torch', got {recorded!r:.100}")
    current = fingerprint() if current is None else current
    out = []
    for name in sorted(set(recorded["modules"]) | set(current["modules"])):
        old, new = recorded["modules"].get(name), current["modules"].get(name)
        if old != new:
            out.append(f"{name} {'is new' if old is None else 'is gone' if new is None else 'changed'}")
    if torch_version and recorded.get("torch") != current["torch"]:
        out.append(f"torch {recorded.get('torch')} -> {current['torch']}")
    return out
