"""Writing a run store (the format is :mod:`lloydlib.training.store`'s): :func:`write_store`, and
:func:`restamp`, which gives a re-certified store's runs this code's fingerprint
(:mod:`lloydlib.training.recertify`)."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

import lloydlib

from . import fingerprint as _fingerprint
from .cache import Run, atomic_write, run_lock
from .config import DTYPES
from .store import FORMAT, HISTORY, MANIFEST, StoreError, fingerprint_id

__all__ = ["write_store", "restamp"]


def _pack(group: str, runs: list[Run]) -> bytes:
    """The ``.npz`` bytes of one group's runs (see the module docstring)."""
    steps = [len(r.train_losses) for r in runs]
    evals = [len(r.history["step"]) for r in runs]
    wide = any(r.config.dtype != "float32" for r in runs)
    losses = np.full((len(runs), max(steps, default=0)), np.nan, dtype=np.float64 if wide else np.float32)
    hist = {h: np.full((len(runs), max(evals, default=0)), -1 if h == "step" else np.nan) for h in HISTORY}
    hist["step"] = hist["step"].astype(np.int64)
    flat = {"float32": [], "float64": []}
    offsets = {"float32": 0, "float64": 0}
    records = []
    for i, r in enumerate(runs):
        losses[i, : steps[i]] = np.asarray(r.train_losses, dtype=losses.dtype)
        for h in HISTORY:
            hist[h][i, : evals[i]] = np.asarray(r.history[h])
        state = r.model.state_dict()
        dtype = r.config.dtype
        params = [[name, list(t.shape)] for name, t in state.items()]
        vec = np.concatenate([t.detach().cpu().to(DTYPES[dtype]).reshape(-1).numpy() for t in state.values()])
        flat[dtype].append(vec)
        info = {k: v for k, v in r.info.items() if k not in ("cached", "path", "store")}
        records.append(
            dict(
                config=dataclasses.asdict(r.config),
                key=r.key,
                status=r.status,
                info=info,
                steps=steps[i],
                evals=evals[i],
                weights=dict(dtype=dtype, offset=offsets[dtype], params=params),
            )
        )
        offsets[dtype] += vec.size
    arrays = {f"history_{h}": a for h, a in hist.items()}
    for dtype, parts in flat.items():
        arrays[f"weights_{dtype}"] = np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)
    meta = json.dumps(dict(format=FORMAT, group=group, runs=records), sort_keys=True, default=_json_default)
    buf = io.BytesIO()
    np.savez_compressed(buf, meta=np.array(meta), train_losses=losses, **arrays)
    return buf.getvalue()


def _json_default(obj):
    if isinstance(obj, (np.integer, np.floating)):
        return obj.item()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"cannot store {type(obj).__name__} {obj!r} in a run's info")


def write_store(
    root,
    groups: dict,
    *,
    rebuild: str,
    fingerprint: dict | None = None,
    note: str = "",
    recertify: str | None = None,
    recertified: list | None = None,
) -> dict:
    """Write the runs ``groups`` (name -> list of finished :class:`Run`) as the store at ``root``; returns
    the new manifest. Replaces what was there (old files are removed once the new manifest is in place).

    ``rebuild`` is the command that rebuilds this store (kept in the manifest, quoted by every error);
    ``fingerprint`` is the code that trained the runs (default: this code's,
    :func:`~lloydlib.training.fingerprint.fingerprint`); ``note`` is free text kept in the manifest (e.g.
    the hardware the runs trained on); ``recertify``, the command that re-certifies the store after a code
    change (kept in the manifest when given, quoted by the stale-store error); ``recertified``, the store's
    re-certifications so far (the manifest's list of that name, kept when a store is rewritten with more runs:
    its runs carry the fingerprint those re-certifications stamped). A run listed by several groups is stored once.
    """
    if not isinstance(groups, dict) or not groups:
        raise TypeError(f"groups must be a non-empty dict of group name -> list of Run, got {type(groups).__name__}")
    if not isinstance(rebuild, str) or not rebuild.strip():
        raise ValueError(f"rebuild must be the command that rebuilds the store, got {rebuild!r}")
    if recertify is not None and (not isinstance(recertify, str) or not recertify.strip()):
        raise ValueError(f"recertify must be the command that re-certifies the store, or None, got {recertify!r}")
    if recertified is not None and (
        not isinstance(recertified, list) or not all(isinstance(r, dict) for r in recertified)
    ):
        raise TypeError(f"recertified must be a list of dicts (the manifest's records) or None, got {recertified!r}")
    fp = _fingerprint.fingerprint() if fingerprint is None else fingerprint
    fid = fingerprint_id(fp)
    placed: dict[str, dict] = {}  # key -> manifest entry
    packs: dict[str, list[Run]] = {}
    for name, runs in groups.items():
        if not isinstance(name, str) or not name or any(ch in name for ch in "/\\. "):
            raise ValueError(f"group names must be non-empty and free of '/', '.' and spaces, got {name!r}")
        for j, r in enumerate(runs):
            if not isinstance(r, Run):
                raise TypeError(f"groups[{name!r}][{j}] must be a Run, got {type(r).__name__}")
            if r.status not in ("done", "diverged"):
                raise ValueError(f"groups[{name!r}][{j}] ({r.config.label()}) is not finished: status {r.status!r}")
            if r.key in placed:
                placed[r.key]["groups"].append(name)
                continue
            placed[r.key] = dict(group=name, groups=[name], label=r.config.label(), fingerprint=fid)
            packs.setdefault(name, []).append(r)
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    with run_lock(root):  # one writer at a time (the flock of cache.run_lock, on root/.lock)
        files = {}
        for name, runs in packs.items():
            blob = _pack(name, runs)
            sha = hashlib.sha256(blob).hexdigest()
            fname = f"{name}.{sha[:12]}.npz"
            if not (root / fname).is_file():
                atomic_write(root / fname, lambda f, blob=blob: f.write(blob))
                os.chmod(root / fname, 0o644)  # a committed file, readable by all (mkstemp makes 0600)
            files[fname] = dict(group=name, sha256=sha, bytes=len(blob), runs=len(runs))
            for i, r in enumerate(runs):
                placed[r.key] |= dict(file=fname, index=i)
        manifest = dict(
            format=FORMAT,
            written=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            rebuild=rebuild,
            **({"recertify": recertify} if recertify else {}),
            **({"recertified": recertified} if recertified else {}),
            note=note,
            lloydlib=lloydlib.__version__,
            numpy=np.__version__,
            python=platform.python_version(),
            fingerprints={fid: fp},
            files=files,
            runs={k: {f: v for f, v in e.items() if f != "group"} for k, e in placed.items()},
        )
        _write_manifest(root, manifest)
        for old in root.glob("*.npz"):
            if old.name not in files:
                old.unlink(missing_ok=True)
    return manifest


def _write_manifest(root: Path, manifest: dict) -> None:
    text = json.dumps(manifest, indent=1, sort_keys=True) + "\n"
    atomic_write(root / MANIFEST, lambda f: f.write(text.encode()))
    os.chmod(root / MANIFEST, 0o644)  # a committed file, readable by all (mkstemp makes 0600)


def restamp(root, expected: str, fingerprint: dict, record: dict, *, recertify: str | None = None) -> dict:
    """Give every run of the store at ``root`` the fingerprint ``fingerprint`` and append ``record`` (a
    JSON-able dict: what was re-certified) to the manifest's ``recertified`` list; returns the new manifest.

    ``expected`` is the manifest's text when the re-certification read the store: if the manifest is
    another now (a writer replaced the store meanwhile), nothing is written and a :class:`StoreError` says
    so. The fingerprints the runs lose are dropped from ``fingerprints`` (``record`` should keep them). Only
    the manifest is rewritten (the run files hold no fingerprint), atomically and under the store's lock,
    as :func:`write_store` writes it: readers see the old manifest or the new one, whole. ``recertify``,
    when given, becomes the manifest's re-certification command.
    """
    root = Path(root)
    if not isinstance(expected, str):
        raise TypeError(f"expected must be the manifest's text, got {type(expected).__name__}")
    if not isinstance(fingerprint, dict) or not isinstance(fingerprint.get("modules"), dict):
        raise TypeError(f"fingerprint must be a fingerprint dict with 'modules' and 'torch', got {fingerprint!r:.100}")
    if not isinstance(record, dict):
        raise TypeError(f"record must be a dict, got {type(record).__name__}")
    json.dumps(record)  # JSON-able, before anything is written
    with run_lock(root):
        try:
            text = (root / MANIFEST).read_text()
        except FileNotFoundError:
            text = None
        manifest = json.loads(expected)
        if text != expected:
            raise StoreError(
                root / MANIFEST,
                "changed while it was re-certified (another writer replaced the store); nothing was re-stamped, "
                "re-certify it again",
                manifest.get("rebuild"),
            )
        fid = fingerprint_id(fingerprint)
        for entry in manifest["runs"].values():
            entry["fingerprint"] = fid
        manifest["fingerprints"] = {fid: fingerprint}
        manifest["recertified"] = [*manifest.get("recertified", []), record]
        if recertify:
            manifest["recertify"] = recertify
        _write_manifest(root, manifest)
    return manifest
