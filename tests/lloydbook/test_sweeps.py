"""lloydbook.sweeps: the book's runs listed once; no chapter trains anything else."""

import ast
import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from lloydbook import book, results, sweeps
from lloydlib import training

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))
#: the calls that train or look runs up; a chapter gets its runs from lloydbook.sweeps.runs only
TRAINING_CALLS = {"train", "train_many", "train_stack", "train_grid", "race_configs", "grid"}


def code(path: Path) -> str:
    nb = json.loads(path.read_text())
    lines = []
    for c in nb["cells"]:
        if c["cell_type"] == "code":
            src = "".join(c["source"])
            lines += [ln for ln in src.splitlines() if not ln.lstrip().startswith(("%", "!"))]
    return "\n".join(lines)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_no_chapter_trains_a_config_the_registry_lacks(path):
    """A chapter names its runs (``sweeps.runs(name)``, ``sweeps.configs(name)``); it never calls a training
    function or builds a grid itself, so every run it trains or reads is a config of the registry."""
    calls = []
    for node in ast.walk(ast.parse(code(path))):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
            owner = f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else None
            if name in TRAINING_CALLS and owner not in ("bench", "lemmas", "L"):
                calls.append(ast.unparse(node)[:80])
    assert not calls, f"{path.name} trains or builds runs outside lloydbook.sweeps: {calls}"


def _reads_recorded(func) -> bool:
    """Whether ``func`` is ``RecordedSweep.read`` (as ``findings.RecordedSweep.read`` or imported)."""
    owner = getattr(func, "value", None)
    names = (getattr(owner, "attr", None), getattr(owner, "id", None))
    return getattr(func, "attr", None) == "read" and "RecordedSweep" in names


def named_sweeps(calls=("runs", "configs", "specs", "recorded", "tiers")) -> dict:
    """Sweep name -> the chapters that name it in a call ``sweeps.<call>(name, ...)``, or, with "recorded" among
    ``calls``, ``RecordedSweep.read(name, ...)``."""
    named = {}
    for path in NOTEBOOKS:
        for node in ast.walk(ast.parse(code(path))):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                continue
            if (
                isinstance(node.func.value, ast.Name) and node.func.value.id == "sweeps" and node.func.attr in calls
            ) or ("recorded" in calls and _reads_recorded(node.func)):
                (arg, *_) = node.args
                named.setdefault(arg.value, set()).add(path.stem)
    return named


def test_every_sweep_a_chapter_names_is_registered_and_every_stored_sweep_is_read():
    named = named_sweeps()
    assert set(named) <= set(sweeps.SWEEPS), set(named) - set(sweeps.SWEEPS)
    for name, s in sweeps.SWEEPS.items():
        if not s.recorded:  # a recorded sweep's chapter reads it once it is recorded: see the test below
            assert s.chapter in named.get(name, set()), f"sweep {name} is not read by its chapter {s.chapter}"


def test_every_recorded_sweep_is_read_by_its_chapter():
    named = named_sweeps(("recorded",))
    for name, s in sweeps.SWEEPS.items():
        if s.recorded:
            assert s.chapter in named.get(name, set()), f"recorded sweep {name} is not read by {s.chapter}"


def test_no_chapter_trains_a_recorded_sweep():
    """A recorded sweep is read with ``sweeps.recorded``; ``sweeps.runs`` (which trains) refuses it."""
    trained = named_sweeps(("runs",))
    for name, s in sweeps.SWEEPS.items():
        if s.recorded:
            assert name not in trained, f"{trained[name]} call sweeps.runs({name!r}), which would train it"
            with pytest.raises(ValueError, match=rf"sweeps.recorded\('{name}'\)"):
                sweeps.runs(name)


def test_the_store_holds_the_ci_runs_too():
    """The stored sweeps at ci are the default runs (no smaller setting decides their claims)."""
    for name, cfgs in sweeps.stored_configs("ci").items():
        assert set(cfgs) <= set(sweeps.stored_configs("default")[name]), name


def test_configs_select_and_errors():
    p = book.params("learning", "default")
    all10 = sweeps.configs("fig10", "default")
    assert len(all10) == len(p.tau_ds) * len(p.taus) * len(p.embeddings) * len(p.losses) * len(p.seeds)
    some = sweeps.configs("fig10", "default", tau=min(p.taus), embedding=["OH", "BN"])
    assert some and all(c.tau == min(p.taus) and c.embedding in ("OH", "BN") for c in some)
    run = SimpleNamespace(config=all10[0])  # a run: its config
    assert sweeps.configs_of({"a": [run, (all10[1],)], "b": all10[2]}) == all10[:3]
    assert sweeps.configs_of(run) == all10[:1]
    with pytest.raises(ValueError, match="fig99"):
        sweeps.get("fig99")
    with pytest.raises(TypeError, match="no field 'colour'"):
        sweeps.configs("fig10", "default", colour="red")
    with pytest.raises(ValueError, match="selects no run"):
        sweeps.runs("fig10", scale="default", seed=10**6)


def test_the_race_is_one_stack_per_embedding_on_the_cpu():
    p = book.params("lemmas", "default")
    race = sweeps.configs("race", "default")
    assert [(c.embedding, c.seed) for c in race] == [(e, s) for e in ("OH", "BN") for s in p.tr_seeds]
    assert {(c.d, c.k, c.n, c.steps, c.loss, c.plateau, c.device) for c in race} == {
        (p.tr_d, p.tr_k, p.tr_n, p.tr_steps, "NE", False, "cpu")
    }


def test_paper_sweeps_in_priority_order_with_their_seeds():
    p = book.params("learning", "paper")
    out = sweeps.paper_sweeps(p)
    assert [name for name, _, _ in out] == [
        "fig10",
        "fig10b",
        "fig14",
        "fig11",
        "fig13",
        "fig15",
        "fig17",
    ]
    by = {name: (specs, unstacked) for name, specs, unstacked in out}
    assert {c.d for c in sweeps.sweep_configs(by["fig10"][0])} == {4}
    assert {c.d for c in sweeps.sweep_configs(by["fig10b"][0])} == {32}
    assert {c.seed for c in sweeps.sweep_configs(by["fig13"][0])} == set(p["n_seeds"])
    assert {c.n for c in sweeps.sweep_configs(by["fig17"][0])} == set(sweeps.WALL_NS) and by["fig17"][1]
    (loop, *_) = sweeps.sweep_commands(*by["fig17"], "out")
    assert loop.startswith("for n in 256 512 1024; do ") and loop.endswith("--cache-dir out; done; done; done")
    (cmd,) = sweeps.sweep_commands(*by["fig10"], "out")
    assert cmd.startswith("python -m lloydlib train") and "--tau 1 0.25 0.14 0.1" in cmd
    # every paper sweep but fig17 is the registry's sweep at the paper's settings (fig17's spans the paper's n)
    for name in sweeps.PAPER_SWEEPS[:-1]:
        assert sweeps.sweep_configs(by[name][0]) == sweeps.configs(name, "paper")


BASE = training.TrainConfig(d=2, k=2, n=6, steps=2, batch=2, val_tasks=2, eval_every=1, plateau=False, device="cpu")


def tiny(monkeypatch, seeds, **kind):
    """Register the sweep ``tiny``: :data:`BASE` at ``seeds``, a :class:`lloydbook.sweeps.Sweep` of ``kind``."""
    sweep = sweeps.Sweep("tiny", "04_learning", "learning", "a test", lambda p: [(BASE, dict(seed=seeds))], **kind)
    monkeypatch.setitem(sweeps.SWEEPS, "tiny", sweep)


def test_runs_reads_the_store_and_trains_only_what_is_missing(tmp_path, monkeypatch, capsys):
    """With a store holding one of two runs, the other trains into the cache; asked again, nothing trains."""
    tiny(monkeypatch, [0, 1])
    (first,) = training.train_many([BASE], cache_dir=tmp_path / "c0", progress=False)
    training.write_store(tmp_path / "store", {"tiny": [first]}, rebuild="make runs")
    monkeypatch.setenv("LLOYD_STORE", str(tmp_path / "store"))
    monkeypatch.setenv("LLOYD_CACHE", str(tmp_path / "cache"))
    environ = dict(os.environ)
    runs = sweeps.runs("tiny")
    assert [r.config.seed for r in runs] == [0, 1] and runs[0].info["store"] == str(tmp_path / "store")
    assert "2 runs, 1 from the run store, 0 from the cache, 1 trained now" in capsys.readouterr().out
    assert runs[1].info["path"].startswith(str(tmp_path / "cache"))
    sweeps.runs("tiny")
    assert "2 runs, 1 from the run store, 1 from the cache, 0 trained now" in capsys.readouterr().out
    assert dict(os.environ) == environ  # the cache is passed on, never written into the environment


def test_runs_leaves_the_environment_alone_and_uses_the_books_cache(tmp_path, monkeypatch, capsys):
    """Without $LLOYD_CACHE, sweeps.runs trains into lloydbook.results.cache_dir() and sets no variable."""
    tiny(monkeypatch, [0])
    monkeypatch.setenv("LLOYD_STORE", str(tmp_path / "no-store"))
    monkeypatch.delenv("LLOYD_CACHE", raising=False)
    monkeypatch.setattr(sweeps.results, "cache_dir", lambda: tmp_path / "book-cache")
    environ = dict(os.environ)
    (run,) = sweeps.runs("tiny")
    assert dict(os.environ) == environ and "LLOYD_CACHE" not in os.environ
    assert training.lookup(BASE, [tmp_path / "book-cache"]) is not None and run.info["path"].startswith(
        str(tmp_path / "book-cache")
    )


def recorded_tiers(name: str, wanted: set):
    """The tiers of the recorded sweep ``name`` at each scale, checked to hold the keys ``wanted``, each once, and
    to be neither in the run store nor trained by ``make book``."""
    assert sweeps.get(name).recorded and not sweeps.get(name).stored
    for scale in book.SCALE_NAMES:
        tiers = sweeps.tiers(name, scale)
        flat = [c for t in tiers for c in t]
        assert {c.key() for c in flat} == wanted and len(flat) == len(wanted)
        assert name not in sweeps.stored_configs(scale)
        yield tiers


def test_fig10a_paper_is_fig10_at_the_paper_setting_in_priority_order_at_every_scale():
    wanted = {c.key() for c in sweeps.configs("fig10", "paper", d=4)}
    assert len(wanted) == 240
    for tiers in recorded_tiers("fig10a-paper", wanted):
        flat = [c for t in tiers for c in t]
        assert [len(t) for t in tiers] == [60, 60, 60, 60]
        shape = {(c.embedding, c.loss) for c in flat}
        assert shape == {(e, l) for e in ("OH", "BN", "NA") for l in ("NE", "L2")}
        assert {(c.tau, c.seed) for c in tiers[0]} == {(t, s) for t in (1.0, 0.1) for s in range(5)}
        assert {(c.tau, c.seed) for c in tiers[1]} == {(t, s) for t in (1.0, 0.1) for s in range(5, 10)}
        assert [{c.tau for c in t} for t in tiers[2:]] == [{0.25}, {0.14}]
        assert {(c.n, c.d, c.k, c.batch, c.lr, c.steps, c.dropout) for c in flat} == {(512, 4, 6, 32, 0.01, 10000, 0.0)}
    assert sweeps.tiers("fig10a-paper", tau=0.25, seed=[0, 1], embedding="OH") == [
        [c for c in sweeps.configs("fig10a-paper", tau=0.25, seed=[0, 1], embedding="OH")]
    ]


def test_fig15a_paper_is_fig15b_at_the_paper_setting_its_smallest_k_shared_with_fig10a_paper():
    wanted = {c.key() for c in sweeps.configs("fig15", "paper", d=4, tau=0.1, loss="L2")}
    shared = {c.key() for c in sweeps.configs("fig10a-paper", tau=0.1, loss="L2")}
    assert len(wanted) == 120
    for tiers in recorded_tiers("fig15a-paper", wanted):
        assert [len(t) for t in tiers] == [30] * 4
        assert {c.key() for t in tiers for c in t if c.k == 6} == shared  # the k=6 runs are fig10a-paper's
        assert [{(c.k, c.seed) for c in t} for t in tiers[:1]] == [{(k, s) for k in (6, 25) for s in range(5)}]
        assert {c.k for c in tiers[2]} == {10, 16} and {c.seed for c in tiers[3]} == set(range(5, 10))


def test_fig13a_paper_is_fig13a_at_the_papers_n_but_1024_its_n512_shared_with_fig10a_paper():
    wanted = {c.key() for c in sweeps.configs("fig13", "paper") if c.n != 1024}
    shared = {c.key() for c in sweeps.configs("fig10a-paper", tau=0.1)}
    assert len(wanted) == 180
    for tiers in recorded_tiers("fig13a-paper", wanted):
        assert [len(t) for t in tiers] == [90, 90]
        assert {c.key() for t in tiers for c in t if c.n == 512} == shared  # fig10a-paper's runs at tau=0.1
        assert [{c.seed for c in t} for t in tiers] == [set(range(5)), set(range(5, 10))]
        assert {c.n for c in tiers[0]} == {128, 256, 512}


def test_fig11a_paper_is_fig11a_at_the_paper_setting():
    wanted = {c.key() for c in sweeps.configs("fig11", "paper") if c.d == 4}
    assert len(wanted) == 240
    for tiers in recorded_tiers("fig11a-paper", wanted):
        assert [len(t) for t in tiers] == [120, 120]
        assert [{c.seed for c in t} for t in tiers] == [set(range(5)), set(range(5, 10))]
        assert {(c.n, c.steps, c.tau) for t in tiers for c in t} == {(512, 5000, 0.1)}
        assert {c.lr for c in tiers[0]} == {0.001, 0.01, 0.1, 1.0}


def test_recorded_reads_the_recorded_stores_and_never_trains(tmp_path, monkeypatch):
    tiny(monkeypatch, [0, 1, 2], stored=False, recorded=True)
    monkeypatch.setattr(results, "recorded_run_dirs", lambda: [])
    runs, missing = sweeps.recorded("tiny")
    assert runs == [] and missing == sweeps.configs("tiny")
    (one,) = training.train_many([BASE.replace(seed=1)], cache_dir=tmp_path / "c", progress=False)
    training.write_store(tmp_path / "m", {"tiny": [one]}, rebuild="python -m lloydbook.record tiny")
    monkeypatch.setattr(results, "recorded_run_dirs", lambda: [tmp_path / "m"])
    monkeypatch.setattr(training, "train_many", lambda *a, **k: pytest.fail("recorded() trained"))
    monkeypatch.setattr(training, "train_stack", lambda *a, **k: pytest.fail("recorded() trained"))
    runs, missing = sweeps.recorded("tiny")
    assert [r.config.seed for r in runs] == [1] and [c.seed for c in missing] == [0, 2]
    assert runs[0].info["store"] == str(tmp_path / "m")
    runs, missing = sweeps.recorded("tiny", seed=[0, 1])
    assert len(runs) == 1 and [c.seed for c in missing] == [0]
    with pytest.raises(ValueError, match="selects no run"):
        sweeps.recorded("tiny", seed=7)
    with pytest.raises(ValueError, match="sweeps.recorded"):
        sweeps.runs("tiny")
