"""The run store: finished runs kept as data, in a few compressed files, with the fingerprint of their code.

A cache root (:mod:`lloydlib.training.cache`) holds one folder per run, written as runs finish. A *store*
is what a project commits: a folder with a manifest ``store.json`` and one ``<group>.<hash>.npz`` file
per group of runs (a sweep, say). Nothing here guesses a project's folders: every function takes the
store's root.

The format (``lloydlib-run-store/1``)
-------------------------------------
``store.json``: ``format``; ``written`` (time); ``rebuild``, the one command that rebuilds the store
(every error names it); ``recertify`` (optional), the command that re-certifies it after a code change
(:mod:`lloydlib.training.recertify`; the stale-store error names it); ``recertified`` (optional), the
re-certifications it passed, oldest first (what each re-trained and found: see
:func:`lloydlib.training.recertify.recertify`); ``lloydlib``, ``numpy``, ``python``; ``fingerprints``, id -> fingerprint
(:func:`lloydlib.training.fingerprint.fingerprint`: torch version and a hash per module); ``files``, name
-> ``{"group", "sha256", "bytes", "runs"}``; ``runs``, key (:meth:`TrainConfig.key`) -> ``{"file",
"index", "groups", "label", "fingerprint"}``. A run belongs to one file (the first group that holds it)
and may be listed by several groups.

Each ``.npz`` (numpy's ``savez_compressed``) holds, for its R runs (index i in the manifest):

- ``meta``: JSON text, ``{"format", "group", "runs": [...]}``, per run its ``config`` (every field),
  ``key``, ``status``, ``info`` (where and how it ran), ``steps`` (training steps run), ``evals``
  (history rows) and ``weights``: ``{"dtype", "offset", "params": [[name, shape], ...]}``;
- ``train_losses``: (R, max steps) per-step training loss (Eq. 6), NaN after a run's last step, in
  float32 when every run of the file trained in float32 (the losses are float32 numbers then), else float64;
- ``history_<field>`` for ``step`` (int64, -1 after the last row), ``train_loss``, ``val_rel_loss``,
  ``val_loss``, ``lr``, ``wall_time`` (float64, NaN after the last row): (R, max rows), see :class:`Run`;
- ``weights_float32``, ``weights_float64``: every run's state dict, flattened in ``params`` order and
  concatenated at ``offset``, in the dtype the run trained in.

Files are named by a prefix of their SHA-256, so a file never changes once written. :func:`write_store`
writes the new files, then moves the new manifest into place (``os.replace``), then removes the files
no manifest names any more. :class:`RunStore` reads the manifest and every file it names into memory at
once, retrying from the manifest when a file vanished meanwhile: two readers and a writer at the same
time each see the old store or the new one, whole. A file whose hash, keys or shapes are not what the
manifest says raises :class:`StoreError`, which names the file and the rebuild command. Writing is
:mod:`lloydlib.training.pack`.

Stale runs
----------
Every run records the fingerprint of the code that trained it. Opening a store whose runs were trained
by other code (a module of :data:`~lloydlib.training.fingerprint.MODULES` changed) raises
:class:`StaleStoreError`, naming the modules and the two ways out: rebuild the store, or, when the change
leaves the arithmetic equal within the verification's tolerance, re-certify it
(:mod:`lloydlib.training.recertify`: a sample re-trained whole, the runs re-stamped with this code's
fingerprint only if every one agrees). Nothing reads a stale run. Runs of another torch version
are read with a :class:`StoreTorchWarning` (they may differ from this torch's in rounding; re-training
a sample, :mod:`lloydlib.training.verify`, says by how much); :meth:`RunStore.check` refuses them too.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import time
import warnings
from pathlib import Path

import numpy as np
import torch

from . import cache
from . import fingerprint as _fingerprint
from .cache import Run
from .config import DTYPES, TrainConfig, build_model

__all__ = [
    "FORMAT",
    "MANIFEST",
    "StoreError",
    "StaleStoreError",
    "StoreTorchWarning",
    "RECERTIFY_FALLBACK",
    "RunStore",
    "is_store",
    "open_store",
    "fingerprint_id",
    "lookup",
    "load_runs",
    "gpu_results",
]

FORMAT = "lloydlib-run-store/1"
MANIFEST = "store.json"
HISTORY = ("step", "train_loss", "val_rel_loss", "val_loss", "lr", "wall_time")
_ARRAYS = {"meta", "train_losses", "weights_float32", "weights_float64", *(f"history_{h}" for h in HISTORY)}


class StoreError(RuntimeError):
    """A store file that cannot be used: the message names the file, the problem and the rebuild command
    (then ``also``, another way out, when given)."""

    def __init__(self, path, problem: str, rebuild: str | None, *, also: str = ""):
        self.path, self.rebuild = Path(path), rebuild
        how = f"rebuild the store with: {rebuild}" if rebuild else "rebuild the store with the command that wrote it"
        super().__init__(f"run store file {self.path} {problem}; {how}" + (f"; {also}" if also else ""))


#: how a stale-store error names the re-certification when the store does not record its command
RECERTIFY_FALLBACK = "lloydlib.training.recertify.recertify(<store>, tolerance=...)"


class StaleStoreError(StoreError):
    """The store's runs (``runs`` of them) were trained by other code than this; ``changes`` lists what
    differs. The message names both ways out: the ``rebuild`` command, and the ``recertify`` command (else
    :data:`RECERTIFY_FALLBACK`), for a change that leaves the arithmetic equal within the verification's
    tolerance."""

    def __init__(self, path, changes: list[str], runs: int, rebuild: str | None, recertify: str | None = None):
        self.changes, self.runs, self.recertify = list(changes), runs, recertify
        problem = f"holds {runs} run(s) trained by other code than this checkout's: " + "; ".join(changes)
        also = (
            "or, if the change leaves every run's numbers equal within the verification's tolerance, re-certify "
            "it (a sample re-trained whole; re-stamped only if every run agrees) with: "
            + (recertify or RECERTIFY_FALLBACK)
        )
        super().__init__(path, problem, rebuild, also=also)


class StoreTorchWarning(UserWarning):
    """Stored runs were trained with another torch version than the one running."""


#: 12 hex digits naming a fingerprint (its JSON, keys sorted): one definition, in the fingerprint module
fingerprint_id = _fingerprint.fingerprint_id


def is_store(root) -> bool:
    """Whether ``root`` is a store (holds ``store.json``)."""
    return (Path(root) / MANIFEST).is_file()


# ----------------------------------------------------------------------------------------- reading
class RunStore:
    """A store read whole into memory (see the module docstring): ``get(config)`` returns a run or None.

    ``rebuild`` is quoted in errors when the manifest cannot be read (else the manifest's own command);
    ``recertify`` in the stale-store error when the manifest names no re-certification command.
    ``check_code`` (default True) raises :class:`StaleStoreError` when runs were trained by other code.
    """

    def __init__(self, root, *, rebuild: str | None = None, recertify: str | None = None, check_code: bool = True):
        self.root = Path(root)
        self.rebuild, self.recertify = rebuild, recertify
        for attempt in range(5):
            try:
                self._read()
                break
            except FileNotFoundError as e:  # a writer replaced the store meanwhile: read the new manifest
                if attempt == 4:
                    raise StoreError(e.filename or self.root / MANIFEST, "is missing", self.rebuild) from e
                time.sleep(0.05)
        current = _fingerprint.fingerprint()
        stale = self.changes(current, torch_version=False)
        if check_code and stale:
            fids = {fid for fid in self.manifest["fingerprints"] if self._changes(fid, False, current)}
            bad = sum(1 for e in self.manifest["runs"].values() if e["fingerprint"] in fids)
            raise StaleStoreError(self.root / MANIFEST, stale, bad, self.rebuild, self.recertify)
        torch_changes = [c for c in self.changes(current) if c.startswith("torch ")]
        if torch_changes:
            warnings.warn(
                f"run store {self.root}: runs trained with {', '.join(sorted(set(torch_changes)))}; "
                f"their numbers may differ from this torch's in rounding",
                StoreTorchWarning,
                stacklevel=3,
            )

    def _read(self) -> None:
        path = self.root / MANIFEST
        try:
            manifest = json.loads(path.read_text())
        except FileNotFoundError:
            raise
        except (OSError, UnicodeDecodeError, ValueError) as e:
            raise StoreError(
                path, f"cannot be read as a run store manifest ({type(e).__name__}: {e})", self.rebuild
            ) from e
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            got = manifest.get("format") if isinstance(manifest, dict) else type(manifest).__name__
            raise StoreError(path, f"is not a lloydlib run store of format {FORMAT!r} (format: {got!r})", self.rebuild)
        self.rebuild = manifest.get("rebuild") or self.rebuild
        self.recertify = manifest.get("recertify") or self.recertify
        for field in ("fingerprints", "files", "runs"):
            if not isinstance(manifest.get(field), dict):
                raise StoreError(path, f"has no {field!r} table", self.rebuild)
        files = {name: self._load(name, entry) for name, entry in manifest["files"].items()}
        for key, e in manifest["runs"].items():
            f = files.get(e.get("file"))
            if f is None or not isinstance(e.get("index"), int) or not 0 <= e["index"] < len(f["meta"]):
                raise StoreError(
                    path, f"lists run {key} at {e.get('file')}[{e.get('index')}], which is not there", self.rebuild
                )
            if f["meta"][e["index"]]["key"] != key or e.get("fingerprint") not in manifest["fingerprints"]:
                raise StoreError(
                    self.root / e["file"], f"does not hold run {key} where the manifest says", self.rebuild
                )
        self.manifest, self._files = manifest, files

    def _load(self, name: str, entry: dict) -> dict:
        path = self.root / name
        blob = path.read_bytes()  # FileNotFoundError: the caller retries from the manifest
        if hashlib.sha256(blob).hexdigest() != entry.get("sha256"):
            raise StoreError(
                path,
                f"is not the file the manifest names (its SHA-256 differs: edited or truncated; "
                f"{len(blob)} bytes, the manifest says {entry.get('bytes')})",
                self.rebuild,
            )
        try:
            with np.load(io.BytesIO(blob), allow_pickle=False) as z:
                arrays = {k: z[k] for k in z.files}
            meta = json.loads(str(arrays["meta"]))
        except Exception as e:
            raise StoreError(path, f"cannot be read as a run store file ({type(e).__name__}: {e})", self.rebuild) from e
        missing = _ARRAYS - set(arrays)
        if missing or meta.get("format") != FORMAT or not isinstance(meta.get("runs"), list):
            raise StoreError(
                path, f"is not a run store file of format {FORMAT!r} (missing {sorted(missing)})", self.rebuild
            )
        r = len(meta["runs"])
        if arrays["train_losses"].shape[0] != r or any(arrays[f"history_{h}"].shape[0] != r for h in HISTORY):
            raise StoreError(path, f"has arrays for another number of runs than its {r}", self.rebuild)
        return dict(meta=meta["runs"], arrays=arrays, path=path)

    # --- what is stored ---------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.manifest["runs"])

    def __contains__(self, config) -> bool:
        return isinstance(config, TrainConfig) and config.key() in self.manifest["runs"]

    def keys(self) -> list[str]:
        return list(self.manifest["runs"])

    def groups(self) -> dict[str, int]:
        """Group name -> how many runs it lists."""
        out: dict[str, int] = {}
        for e in self.manifest["runs"].values():
            for g in e["groups"]:
                out[g] = out.get(g, 0) + 1
        return out

    def size_bytes(self) -> int:
        """Bytes of the store's files, the manifest included."""
        return sum(e["bytes"] for e in self.manifest["files"].values()) + (self.root / MANIFEST).stat().st_size

    def _changes(self, fid: str, torch_version: bool, current: dict | None = None) -> list[str]:
        return _fingerprint.changes(self.manifest["fingerprints"][fid], current, torch_version=torch_version)

    def changes(self, current: dict | None = None, *, torch_version: bool = True) -> list[str]:
        """What differs between the code that trained the stored runs and ``current`` (default: this
        code), over all fingerprints of the store: [] when every run is this code's."""
        current = _fingerprint.fingerprint() if current is None else current
        out = []
        for fid in sorted({e["fingerprint"] for e in self.manifest["runs"].values()}):
            out += [c for c in self._changes(fid, torch_version, current) if c not in out]
        return out

    def check(self, *, torch_version: bool = True) -> None:
        """Raise :class:`StaleStoreError` unless every run was trained by this code (and, with
        ``torch_version``, this torch)."""
        changes = self.changes(torch_version=torch_version)
        if changes:
            raise StaleStoreError(self.root / MANIFEST, changes, len(self), self.rebuild, self.recertify)

    def record(self, key: str) -> dict:
        """The stored record (``config``, ``status``, ``info``, ...) of the run ``key``, without its arrays."""
        e = self.manifest["runs"][key]
        return self._files[e["file"]]["meta"][e["index"]]

    def get(self, config: TrainConfig) -> Run | None:
        """The stored run of ``config`` (a new :class:`Run`, its model on the CPU), or None."""
        if not isinstance(config, TrainConfig):
            raise TypeError(f"config must be a TrainConfig, got {type(config).__name__}")
        e = self.manifest["runs"].get(config.key())
        return None if e is None else self._run(e, config)

    def runs(self, group: str | None = None) -> list[Run]:
        """Every stored run (of ``group``, if given), in the order they were written."""
        return [
            self._run(e)
            for e in sorted(self.manifest["runs"].values(), key=lambda e: (e["file"], e["index"]))
            if group is None or group in e["groups"]
        ]

    def configs(self, group: str | None = None) -> list[TrainConfig]:
        return [r.config for r in self.runs(group)]

    def _run(self, e: dict, config: TrainConfig | None = None) -> Run:
        f, i = self._files[e["file"]], e["index"]
        rec, a, path = f["meta"][i], f["arrays"], f["path"]
        try:
            stored = TrainConfig(**rec["config"])
            config = stored if config is None else config
            if stored.experiment() != config.experiment():
                raise StoreError(path, f"holds another configuration under key {e!r}", self.rebuild)
            model = build_model(config).to(DTYPES[config.dtype])
            w = rec["weights"]
            flat, pos, state = a[f"weights_{w['dtype']}"], w["offset"], {}
            for name, shape in w["params"]:
                size = math.prod(shape)
                state[name] = torch.from_numpy(flat[pos : pos + size].copy()).reshape(shape)
                pos += size
            model.load_state_dict(state)
        except StoreError:
            raise
        except Exception as ex:
            raise StoreError(
                path,
                f"holds run {rec.get('key')} in a form this lloydlib cannot read ({type(ex).__name__}: {ex})",
                self.rebuild,
            ) from ex
        history = {h: a[f"history_{h}"][i, : rec["evals"]].copy() for h in HISTORY}
        losses = a["train_losses"][i, : rec["steps"]].astype(np.float64)
        info = dict(rec["info"], cached=True, path=str(path), store=str(self.root))
        return Run(config, model.eval(), history, losses, rec["status"], info)


_OPEN: dict[str, tuple[tuple, RunStore]] = {}


def open_store(root, *, rebuild: str | None = None, recertify: str | None = None) -> RunStore:
    """The :class:`RunStore` at ``root``, read once per process while its manifest stays the same file
    (``rebuild`` and ``recertify``: see :class:`RunStore`)."""
    root = Path(root)
    path = root / MANIFEST
    try:
        st = path.stat()
    except FileNotFoundError:
        raise StoreError(path, "is missing (not a run store)", rebuild) from None
    stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
    key = str(root.resolve())
    hit = _OPEN.get(key)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    store = RunStore(root, rebuild=rebuild, recertify=recertify)
    _OPEN[key] = (stamp, store)
    return store


# ----------------------------------------------------------------------------------------- finding runs
def lookup(config: TrainConfig, dirs=None) -> Run | None:
    """The finished run of ``config`` from the first of ``dirs`` that holds it, else None.

    Each of ``dirs`` (default: :func:`lloydlib.training.cache_dir`) is a store (it holds ``store.json``)
    or a cache root (``runs/<key>/``). A stale store raises :class:`StaleStoreError`.
    """
    if not isinstance(config, TrainConfig):
        raise TypeError(f"config must be a TrainConfig, got {type(config).__name__}")
    for root in cache.roots(dirs):
        run = open_store(root).get(config) if is_store(root) else cache.lookup(config, [root])
        if run is not None:
            return run
    return None


def load_runs(root) -> list[Run]:
    """Every finished run at ``root``: a store (e.g. a committed ``results/gpu/<machine>``) or a cache root."""
    root = Path(root)
    if not root.is_dir():
        raise ValueError(f"root must be an existing store or cache root, got {str(root)!r}")
    return open_store(root).runs() if is_store(root) else cache.load_runs(root)


def gpu_results(root) -> list[Path]:
    """The subfolders of ``root`` that hold finished runs (stores, or cache roots), sorted; [] when ``root``
    is not a directory. Each is what a GPU machine recorded; its runs name the hardware in
    ``info["hardware"]``."""
    root = Path(root)
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and (is_store(p) or any(p.glob(f"runs/*/{cache.RESULT}"))))
