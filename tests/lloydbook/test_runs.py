"""lloydbook.runs: the run store is this code's and complete; damage, stale code and bad runs are named."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lloydbook import results, runs, sweeps
from lloydlib import training
from lloydlib.training import fingerprint, verify

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(sys.prefix)


def test_the_checkout_store_is_this_codes_this_torchs_and_complete():
    """``make test`` runs ``python -m lloydbook.runs check`` first; this is the same check, in the suite."""
    assert runs.check() == []
    store = results.store()
    assert store.size_bytes() < 50e6  # the budget for a committed store
    assert len(store) == len({c.key() for cfgs in sweeps.stored_configs("default").values() for c in cfgs})


@pytest.fixture
def copy(tmp_path):
    """A copy of the checkout (sources, chapters, run store), without its virtual environment or builds."""
    dst = tmp_path / "checkout"
    skip = shutil.ignore_patterns(".venv", "_build", ".git", ".lloydlib-cache", "__pycache__", "*.egg-info", ".lock")
    shutil.copytree(ROOT, dst, ignore=skip)
    return dst


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_test_fails_when_the_training_code_changed_since_the_store_was_written(copy):
    """One changed line of the loss (Eq. 6) in a copy: ``make test`` stops at the store check, naming the
    module and the command that rebuilds the store."""
    losses = copy / "lloydlib" / "losses.py"
    text = losses.read_text()
    old = "    P = regularized_argmax(-r / tau, regularizer, dim=2)\n"
    assert text.count(old) == 1
    losses.write_text(text.replace(old, "    P = regularized_argmax(-r / (2 * tau), regularizer, dim=2)\n"))
    env = dict(os.environ, PYTHONPATH=str(copy), OMP_NUM_THREADS="1")
    env.pop("LLOYD_STORE", None)
    done = subprocess.run(
        ["make", "-o", f"{VENV}/.installed", "test", f"VENV={VENV}"],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    out = done.stdout + done.stderr
    assert done.returncode != 0, out[-3000:]
    assert "== test 2/6" in out and "== test 3/6" not in out, out[-3000:]
    assert "lloydlib/losses.py changed" in out and "rebuild the store with: make runs" in out, out[-3000:]


def test_a_damaged_store_file_is_named_with_the_rebuild_command(copy, monkeypatch, capsys):
    store = copy / "results" / "runs"
    (victim, *_) = sorted(store.glob("*.npz"))
    victim.write_bytes(victim.read_bytes()[: victim.stat().st_size // 2])  # truncated
    monkeypatch.setenv("LLOYD_STORE", str(store))
    assert runs.main(["check"]) == 1
    err = capsys.readouterr().err
    assert str(victim) in err and "make runs" in err and "Traceback" not in err


@pytest.fixture
def tiny_store(tmp_path, monkeypatch):
    """A store of four tiny runs of two shapes, made the checkout's through $LLOYD_STORE, the only one verified (the
    checkout's recorded stores set aside)."""
    base = training.TrainConfig(d=2, k=3, n=12, steps=20, batch=4, val_tasks=8, eval_every=5, device="cpu")
    cfgs = [base.replace(embedding=e, seed=s) for e in ("OH", "BN") for s in (0, 1)]
    trained = training.train_many(cfgs, cache_dir=tmp_path / "c", progress=False)
    monkeypatch.setenv("LLOYD_STORE", str(tmp_path / "store"))
    monkeypatch.setattr(results, "recorded_run_dirs", lambda: [])  # the checkout's recorded stores aside
    monkeypatch.setattr(runs, "STEPS", 10)
    monkeypatch.setattr(runs, "PER_SHAPE", 1)
    return trained


def test_verify_passes_on_this_codes_runs_and_names_a_run_that_is_not(tiny_store, capsys, monkeypatch):
    training.write_store(results.store_dir(), {"tiny": tiny_store}, rebuild="make runs")
    assert runs.main(["verify", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "verification: seed 3 (replay: python -m lloydbook.runs verify --seed 3); 2 runs" in out
    assert "largest step-1 difference" in out and "against 1e-05" in out
    bad = tiny_store[0]
    bad.train_losses = bad.train_losses * 1.02  # a run this code does not train
    training.write_store(results.store_dir(), {"tiny": tiny_store}, rebuild="make runs")
    for seed in range(20):  # a seed whose sample holds the OH run of seed 0
        picked = [r for r, _, _ in runs.sample(seed)]
        if any(r.key == bad.key for r in picked):
            break
    assert runs.main(["verify", "--seed", str(seed)]) == 1
    err = capsys.readouterr().err
    assert f"verification FAILED: {bad.config.label()} (key {bad.key})" in err and "make runs" in err


def test_check_names_a_missing_store_and_an_incomplete_one(tiny_store, tmp_path, monkeypatch):
    monkeypatch.setenv("LLOYD_STORE", str(tmp_path / "nowhere"))
    (problem,) = runs.check()
    assert "no run store" in problem and "make runs" in problem
    monkeypatch.setenv("LLOYD_STORE", str(tmp_path / "store"))
    training.write_store(tmp_path / "store", {"tiny": tiny_store}, rebuild="make runs")
    problems = runs.check()
    assert any("incomplete at LLOYD_SCALE=ci" in p and "runs of fig10" in p for p in problems)
    assert any("runs no stored sweep lists" in p for p in problems)


def test_build_keep_trains_only_what_the_store_lacks_and_rewrites_it_whole(tiny_store, tmp_path, monkeypatch, capsys):
    """``build --keep``: a sweep grown by new settings trains only its new runs; the stored ones are read from
    the store (bit for bit), and the rewritten store holds both and verifies."""
    old, new = tiny_store[:2], tiny_store[2:]
    training.write_store(results.store_dir(), {"tiny": old}, rebuild="make runs")
    monkeypatch.setattr(sweeps, "stored_configs", lambda scale="default": {"tiny": [r.config for r in tiny_store]})
    assert runs.main(["build", "--keep", "--cache", str(tmp_path / "train"), "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "4 runs of 1 sweeps, 2 kept from the run store, 2 to train" in out
    store = results.store()
    assert len(store) == 4 and not store.changes()
    for r in tiny_store:
        got = store.get(r.config)
        assert got is not None and (got.train_losses == r.train_losses).all()
    # the kept runs were read from the store, not trained: the cache holds only the new ones
    for r in old:
        assert training.lookup(r.config, [tmp_path / "train"]) is None
    for r in new:
        assert training.lookup(r.config, [tmp_path / "train"]) is not None


def _other_code() -> dict:
    """This code's fingerprint with one module changed: a store trained before a code change records it."""
    fp = fingerprint.fingerprint()
    return dict(fp, modules=dict(fp["modules"], **{"lloydlib/attention.py": "0" * 16}))


def test_recertify_restamps_a_store_this_code_still_trains(tiny_store, capsys):
    """A code change (simulated: the store records another fingerprint) makes the store stale; ``check``
    names both ways out, and ``recertify`` re-trains one run per shape whole and re-stamps the store."""
    training.write_store(results.store_dir(), {"tiny": tiny_store}, rebuild="make runs", fingerprint=_other_code())
    (stale,) = [p for p in runs.check() if "other code" in p]
    assert "lloydlib/attention.py changed" in stale and "rebuild the store with: make runs" in stale
    assert (
        f"re-certify it (a sample re-trained whole; re-stamped only if every run agrees) with: {runs.RECERTIFY}"
        in stale
    )
    assert runs.main(["recertify", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert (
        f"re-certification of {results.store_dir()}: seed 3 (replay: {runs.RECERTIFY} --seed 3), 1 run(s) per shape"
        in out
    )
    assert out.count("20 steps,    20 compared (whole)") == 2 and "re-certification: PASSED, 2 runs re-trained" in out
    assert "4 runs re-stamped from" in out and "lloydlib/attention.py changed" in out
    store = results.store()  # this code's now
    assert not store.changes() and store.manifest["recertify"] == runs.RECERTIFY
    (record,) = store.manifest["recertified"]
    assert record["seed"] == 3 and len(record["keys"]) == 2 and record["tolerance"] == list(runs.TOLERANCE)
    assert runs.main(["recertify"]) == 0 and "nothing to re-certify" in capsys.readouterr().out


def test_recertify_leaves_a_store_alone_when_a_run_disagrees(tiny_store, tmp_path, capsys):
    """Any store of the format (``--store``): a stored loss curve 5% off is named, and nothing is re-stamped."""
    bad = tiny_store[0]
    bad.train_losses = bad.train_losses * 1.05
    root = tmp_path / "gpu" / "machine"
    training.write_store(root, {"tiny": tiny_store}, rebuild="make gpu", fingerprint=_other_code())
    text = (root / "store.json").read_text()
    assert runs.main(["recertify", "--store", str(root), "--per-shape", "2", "--seed", "1"]) == 1
    out, err = capsys.readouterr()
    assert out.count("MISMATCH") == 1 and out.count(" ok ") == 3
    assert f"re-certification FAILED: {bad.config.label()} (key {bad.key}): step 1 4.76e-02" in err
    assert "1 of 4 runs disagree; nothing was re-stamped" in err and "rebuild the store with: make gpu" in err
    assert (root / "store.json").read_text() == text
    with pytest.raises(training.StaleStoreError):
        training.RunStore(root)


def test_recertify_names_a_bad_argument(tiny_store, tmp_path, capsys):
    for argv, name in (
        (["--workers", "0"], "workers"),
        (["--per-shape", "0"], "per_shape"),
        (["--seed", "-1"], "seed"),
        (["--store", str(tmp_path / "nowhere")], "store"),
    ):
        training.write_store(results.store_dir(), {"tiny": tiny_store}, rebuild="make runs", fingerprint=_other_code())
        with pytest.raises(SystemExit) as info:
            runs.main(["recertify", *argv])
        assert info.value.code == 2 and f"{name} must be" in capsys.readouterr().err
    with pytest.raises(ValueError, match="per_shape must be an integer >= 1"):
        runs.recertify(per_shape=0)


def test_verification_compares_a_chaotic_run_up_to_its_rounding_horizon():
    """Fig. 11's eta=0.1 at d=4, seed 19 (OH, L2): re-trained for 300 steps it parts from the stored run by more than
    the tolerance late (rounding amplified), though step 1 agrees; up to its float64 horizon it agrees."""
    store = results.store()
    (cfg,) = [
        c for c in store.configs() if (c.lr, c.d, c.n, c.loss, c.embedding, c.seed) == (0.1, 4, 32, "L2", "OH", 19)
    ]
    run = store.get(cfg)
    (plain,) = verify.retrain([run], runs.STEPS, tolerance=runs.TOLERANCE, threads=1)
    assert plain.first <= runs.TOLERANCE[0]
    (redone,) = verify.retrain([run], runs.STEPS, tolerance=runs.TOLERANCE, threads=1, to_horizons=True)
    assert redone.ok and redone.steps < runs.STEPS and redone.later <= runs.TOLERANCE[1]
