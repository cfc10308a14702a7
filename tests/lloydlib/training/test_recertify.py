"""lloydlib.training.recertify: a stale store whose runs this code still trains is re-stamped, and only then."""

import dataclasses
import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import lloydlib
from lloydlib import training
from lloydlib.training import TrainConfig, baseline, fingerprint, pack, recertify, recertify_report, store, verify

TOLERANCE = (1e-5, 1e-2)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Four finished runs of two shapes (OH and BN, seeds 0 and 1), 20 steps each."""
    tiny = dict(d=2, k=3, n=12, steps=20, batch=4, val_tasks=8, eval_every=5, device="cpu")
    configs = [TrainConfig(**tiny, embedding=e, seed=s) for e in ("OH", "BN") for s in (0, 1)]
    return training.train_many(configs, cache_dir=tmp_path_factory.mktemp("c"), progress=False)


def other_code() -> dict:
    """This code's fingerprint with one module changed: what a store trained before a code change records."""
    fp = fingerprint.fingerprint()
    return dict(fp, modules=dict(fp["modules"], **{"lloydlib/attention.py": "0" * 16}))


def stale_store(root, runs, command="python -m lloydbook.runs recertify"):
    training.write_store(root, {"tiny": runs}, rebuild="make runs", fingerprint=other_code(), recertify=command)
    return root


def test_the_stale_store_error_names_the_rebuild_and_the_recertification(runs, tmp_path):
    with pytest.raises(training.StaleStoreError) as info:
        training.RunStore(stale_store(tmp_path / "a", runs))
    msg = str(info.value)
    assert "lloydlib/attention.py changed" in msg and "rebuild the store with: make runs" in msg
    assert "re-certify it" in msg and "with: python -m lloydbook.runs recertify" in msg
    training.write_store(tmp_path / "b", {"tiny": runs}, rebuild="make runs", fingerprint=other_code())
    with pytest.raises(training.StaleStoreError, match=r"re-certify it .* lloydlib\.training\.recertify\.recertify"):
        training.RunStore(tmp_path / "b")  # no command recorded: the library function is named
    with pytest.raises(training.StaleStoreError, match="with: my-recertify"):
        training.RunStore(tmp_path / "b", recertify="my-recertify")


def test_an_agreeing_store_is_restamped_and_the_manifest_records_the_recertification(runs, tmp_path):
    root = stale_store(tmp_path, runs)
    before = json.loads((root / store.MANIFEST).read_text())
    (old,) = before["fingerprints"]
    files = sorted(p.name for p in root.glob("*.npz"))
    seen = []
    got = recertify.recertify(root, tolerance=TOLERANCE, seed=0, done=seen.append)
    assert got.ok and got.restamped == 4 and not got.failed and got.old == (old,)
    assert got.changes == ("lloydlib/attention.py changed",)
    assert len(got.rechecks) == 2 and {r.check.label.split(":")[0] for r in got.rechecks} == {"OH", "BN"}
    assert sorted(r.check.key for r in seen) == sorted(r.check.key for r in got.rechecks)
    for r in got.rechecks:  # re-trained over the whole length, every step compared
        assert r.ok and r.trained == 20 and r.check.steps == 20 and r.horizon is None and r.whole <= 1e-6
    s = training.RunStore(root)  # this code's now: no StaleStoreError
    assert len(s) == 4 and sorted(p.name for p in root.glob("*.npz")) == files  # only the manifest changed
    m = s.manifest
    new = store.fingerprint_id(fingerprint.fingerprint())
    assert m["fingerprints"] == {new: fingerprint.fingerprint()} and got.new == new
    assert {e["fingerprint"] for e in m["runs"].values()} == {new}
    (record,) = m["recertified"]
    assert record["from"] == {old: other_code()} and record["to"] == new
    assert record["seed"] == 0 and record["per_shape"] == 1 and record["keys"] == [r.check.key for r in got.rechecks]
    assert record["changes"] == ["lloydlib/attention.py changed"] and record["tolerance"] == list(TOLERANCE)
    assert set(record["runs"]) == set(record["keys"]) and record["runs"][record["keys"][0]]["trained"] == 20
    assert record["largest"]["later"] == max(r.check.later for r in got.rechecks) and record["when"]
    assert m["written"] == before["written"] and m["recertify"] == "python -m lloydbook.runs recertify"
    again = recertify.recertify(root, tolerance=TOLERANCE, seed=0)  # this code's already: nothing to do
    assert again.ok and again.rechecks == () and again.old == () and again.restamped == 0
    assert json.loads((root / store.MANIFEST).read_text()) == m


def test_runs_retrain_in_parallel_workers_and_another_torch_is_recertified_too(runs, tmp_path):
    fp = dict(fingerprint.fingerprint(), torch="1.0.0")
    training.write_store(tmp_path, {"tiny": runs}, rebuild="make runs", fingerprint=fp)
    got = recertify.recertify(tmp_path, tolerance=TOLERANCE, seed=1, per_shape=2, workers=2)
    assert got.ok and len(got.rechecks) == 4 and got.changes[-1].startswith("torch 1.0.0 -> ")
    assert [r.check.key for r in got.rechecks] == sorted(r.key for r in runs)  # in the manifest's order
    training.RunStore(tmp_path).check()  # this code's and this torch's


def test_a_disagreeing_store_is_not_restamped_and_the_result_names_the_run(runs, tmp_path):
    bad = dataclasses.replace(runs[2], train_losses=runs[2].train_losses * 1.05)  # a loss curve tampered by 5%
    root = stale_store(tmp_path, [*runs[:2], bad, runs[3]])
    text = (root / store.MANIFEST).read_text()
    got = recertify.recertify(root, tolerance=TOLERANCE, seed=0, per_shape=2)
    assert not got.ok and got.restamped == 0 and len(got.rechecks) == 4
    (failed,) = got.failed
    assert failed.check.key == bad.key and failed.check.first == pytest.approx(0.05 / 1.05, rel=1e-4)
    assert failed.whole == pytest.approx(0.05 / 1.05, rel=1e-4) and failed.check.where.startswith("train loss")
    assert got.largest()["later_key"] == bad.key
    assert (root / store.MANIFEST).read_text() == text  # nothing re-stamped
    with pytest.raises(training.StaleStoreError):
        training.RunStore(root)


def test_a_run_that_parts_by_rounding_is_compared_up_to_its_horizon(runs, tmp_path, monkeypatch):
    """A run that disagrees only where rounding alone has parted it from itself (the float64 twin says
    where: here ``horizon`` is made to say step 15) passes; a difference before that step fails."""
    late = dataclasses.replace(runs[0], train_losses=runs[0].train_losses.copy())
    late.train_losses[16:] *= 1.05
    monkeypatch.setattr(verify, "horizon", lambda new, twin, share: 15)
    r = recertify.recheck(late, TOLERANCE)
    assert r.ok and r.horizon == 15 and r.check.steps == 14 and r.trained == 20
    assert r.whole == pytest.approx(0.05 / 1.05, rel=1e-4) and r.check.later < 1e-6
    early = dataclasses.replace(runs[0], train_losses=runs[0].train_losses.copy())
    early.train_losses[5] *= 1.05
    r = recertify.recheck(early, TOLERANCE)
    assert not r.ok and r.check.where == "train loss, step 6"
    monkeypatch.setattr(verify, "horizon", lambda new, twin, share: None)  # rounding never parts it
    assert not recertify.recheck(late, TOLERANCE).ok


def test_restamp_refuses_a_store_rewritten_meanwhile(runs, tmp_path):
    root = stale_store(tmp_path, runs[:2])
    text = (root / store.MANIFEST).read_text()
    training.write_store(root, {"tiny": runs[2:]}, rebuild="make runs", fingerprint=other_code())
    with pytest.raises(training.StoreError, match="changed while it was re-certified"):
        pack.restamp(root, text, fingerprint.fingerprint(), {"what": "test"})
    with pytest.raises(TypeError, match="record"):
        pack.restamp(root, text, fingerprint.fingerprint(), ["not a dict"])
    with pytest.raises(TypeError, match="fingerprint"):
        pack.restamp(root, text, {"torch": "2"}, {})


def test_bad_arguments_are_named(runs, tmp_path):
    root = stale_store(tmp_path / "s", runs)
    with pytest.raises(ValueError, match="root must be a run store"):
        recertify.recertify(tmp_path / "nowhere", tolerance=TOLERANCE, seed=0)
    with pytest.raises(TypeError, match="tolerance"):
        recertify.recertify(root, tolerance=1e-2, seed=0)
    with pytest.raises(ValueError, match=r"tolerance\[1\]"):
        recertify.recertify(root, tolerance=(1e-5, -1.0), seed=0)
    for name, bad in (("seed", -1), ("per_shape", 0), ("workers", 0), ("threads", 0)):
        kwargs = {"tolerance": TOLERANCE, "seed": 0, name: bad}
        with pytest.raises(ValueError, match=name):
            recertify.recertify(root, **kwargs)
    with pytest.raises(ValueError, match="fields"):
        recertify.recertify(root, tolerance=TOLERANCE, seed=0, fields=("no_such_field",))
    with pytest.raises(ValueError, match="command"):
        recertify.recertify(root, tolerance=TOLERANCE, seed=0, command=" ")
    with pytest.raises(TypeError, match="run must be a Run"):
        recertify.recheck("run", TOLERANCE)
    with pytest.raises(ValueError, match="recertify"):
        training.write_store(tmp_path / "t", {"tiny": runs}, rebuild="make runs", recertify="")
    with pytest.raises(training.StaleStoreError):
        training.RunStore(root)  # nothing was re-stamped by the refused calls


@pytest.fixture(scope="module")
def this_code(tmp_path_factory):
    """A copy of this lloydlib package: the 'old code' of a change that changed nothing."""
    dest = tmp_path_factory.mktemp("code")
    shutil.copytree(Path(lloydlib.__file__).parent, dest / "lloydlib", ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def test_the_old_code_retrains_a_run_as_this_code_does_and_its_same_numbers_certify_it(runs, this_code, monkeypatch):
    """A run the stored copy of which parts from its re-training late (here: tampered after step 16, and no
    horizon explains it) is certified when the old code gives this code's numbers bit for bit; a run whose
    step 1 differs is not."""
    old = baseline.retrain_with(this_code, runs[0].config, threads=1)
    assert np.array_equal(old.train_losses, runs[0].train_losses) and old.status == "done"
    assert np.array_equal(old.history["val_rel_loss"], runs[0].history["val_rel_loss"])
    late = dataclasses.replace(runs[0], train_losses=runs[0].train_losses.copy())
    late.train_losses[16:] *= 1.05
    monkeypatch.setattr(verify, "horizon", lambda new, twin, share: None)
    assert not recertify.recheck(late, TOLERANCE).ok
    r = recertify.recheck(late, TOLERANCE, baseline=this_code)
    assert r.ok and r.identical and not r.check.ok and r.as_dict()["identical"] is True
    early = dataclasses.replace(runs[0], train_losses=runs[0].train_losses * 1.05)
    r = recertify.recheck(early, TOLERANCE, baseline=this_code)
    assert r.identical and not r.ok  # step 1 must agree with the stored run whatever the old code says
    with pytest.raises(ValueError, match="code must be a folder holding a lloydlib package"):
        baseline.retrain_with(this_code / "nowhere", runs[0].config)
    with pytest.raises(TypeError, match="config must be a TrainConfig"):
        baseline.retrain_with(this_code, "config")


def test_a_recertification_cut_short_resumes_where_it_stopped(runs, tmp_path, monkeypatch):
    """Each finished recheck is kept in the store's folder (PROGRESS); the same re-certification started again
    re-trains only the runs it lacks, and the file goes once the store is re-stamped. Another re-certification
    (here: another seed) does not read it."""
    root = stale_store(tmp_path, runs)

    def session_ends(r):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        recertify.recertify(root, tolerance=TOLERANCE, seed=0, per_shape=2, done=session_ends)
    kept = json.loads((root / recertify.PROGRESS).read_text())
    assert (
        len(kept["runs"]) == 1 and kept["seed"] == 0 and kept["to"] == store.fingerprint_id(fingerprint.fingerprint())
    )
    header = {k: v for k, v in kept.items() if k != "runs"}
    assert recertify._kept(root / recertify.PROGRESS, dict(header, seed=1)) == {}
    trained, seen, real = [], [], recertify.recheck
    monkeypatch.setattr(recertify, "recheck", lambda run, *a, **k: trained.append(run.key) or real(run, *a, **k))
    got = recertify.recertify(root, tolerance=TOLERANCE, seed=0, per_shape=2, done=seen.append)
    assert got.ok and got.restamped == 4 and len(got.rechecks) == len(seen) == 4 and len(trained) == 3
    assert set(kept["runs"]) | set(trained) == {r.check.key for r in got.rechecks}
    assert not (root / recertify.PROGRESS).exists()


def test_a_run_retrained_in_segments_is_the_run_trained_whole_and_stops_where_it_parts(runs, tmp_path, monkeypatch):
    """Re-trained SEGMENT steps at a time (each resuming from the last one's checkpoint), a run has the numbers of
    one uninterrupted training; a run that parts from its stored self (here after step 8) trains to the end of
    the segment where it parted only, and is judged up to its horizon as before."""
    monkeypatch.setattr(recertify, "SEGMENT", 5)
    config = runs[0].config.replace(device="cpu")
    (whole,) = training.train_stack([config], cache_dir=None, write=False, compile=False)
    for stop in (5, 10, 15, 20):
        seg = recertify._train_to(config, str(tmp_path), stop)
        assert len(seg.train_losses) == stop and np.array_equal(seg.train_losses, whole.train_losses[:stop])
    assert np.array_equal(seg.history["val_rel_loss"], whole.history["val_rel_loss"]) and seg.status == whole.status
    late = dataclasses.replace(runs[0], train_losses=runs[0].train_losses.copy())
    late.train_losses[8:] *= 1.05
    monkeypatch.setattr(verify, "horizon", lambda new, twin, share: 7)
    r = recertify.recheck(late, TOLERANCE)
    assert r.ok and r.trained == 10 and r.horizon == 7 and r.check.steps == 6
    r = recertify.recheck(runs[0], TOLERANCE)
    assert r.ok and r.trained == 20 and r.horizon is None


def test_old_code_is_retrained_over_the_whole_run_only_where_its_first_steps_agree(runs, this_code, monkeypatch):
    """The old code re-trains the first PREFIX steps first; where they differ bit for bit from this code's, the
    run is not identical and the old code's whole re-training (as long as this code's) is skipped."""
    monkeypatch.setattr(recertify, "PREFIX", 5)
    calls = []

    def old_code(moved):
        def retrain(code, config, **kwargs):
            calls.append(config.steps)
            got = baseline.retrain_with(code, config, **kwargs)
            return dataclasses.replace(got, train_losses=np.nextafter(got.train_losses, 1.0)) if moved else got

        return retrain

    monkeypatch.setattr(recertify, "retrain_with", old_code(moved=False))
    assert recertify.recheck(runs[0], TOLERANCE, baseline=this_code).identical and calls == [5, 20]
    calls.clear()
    monkeypatch.setattr(recertify, "retrain_with", old_code(moved=True))
    r = recertify.recheck(runs[0], TOLERANCE, baseline=this_code)
    assert r.identical is False and r.ok and calls == [5]  # judged on the stored run, which it matches


def test_recertify_with_the_old_code_records_it(runs, this_code, tmp_path, monkeypatch):
    late = dataclasses.replace(runs[2], train_losses=runs[2].train_losses.copy())
    late.train_losses[16:] *= 1.05
    root = stale_store(tmp_path / "s", [*runs[:2], late, runs[3]])
    monkeypatch.setattr(verify, "horizon", lambda new, twin, share: None)
    assert not recertify.recertify(root, tolerance=TOLERANCE, seed=0, per_shape=2).ok
    got = recertify.recertify(root, tolerance=TOLERANCE, seed=0, per_shape=2, baseline=this_code, baseline_note="c1")
    assert got.ok and got.restamped == 4 and all(r.identical for r in got.rechecks)
    (record,) = training.RunStore(root).manifest["recertified"]
    assert record["baseline"] == "c1" and "old code" in record["how"] and record["runs"][late.key]["identical"]
    with pytest.raises(ValueError, match="baseline must be a folder holding a lloydlib package"):
        recertify.recertify(root, tolerance=TOLERANCE, seed=0, baseline=tmp_path)
    fp = dict(fingerprint.fingerprint(), torch="1.0.0")
    training.write_store(tmp_path / "t", {"tiny": runs}, rebuild="make runs", fingerprint=fp)
    with pytest.raises(ValueError, match="baseline cannot certify another torch"):
        recertify.recertify(tmp_path / "t", tolerance=TOLERANCE, seed=0, baseline=this_code)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_find_code_finds_the_commit_of_a_fingerprint_in_git_history(tmp_path):
    repo = tmp_path / "repo"
    (repo / "lloydlib").mkdir(parents=True)

    def git(*args):
        subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True)

    git("init", "-q")
    sources = ["x = 1\n", "x = 2  # another version\n", '"""A docstring."""\nx = 2\n']
    for i, source in enumerate(sources):
        (repo / "lloydlib" / "a.py").write_text(source)
        (repo / "lloydlib" / "__init__.py").write_text(f"VERSION = {i}\n")
        git("add", "-A")
        git("commit", "-q", "-m", f"v{i}")
    first = subprocess.run(["git", "-C", str(repo), "rev-list", "--max-parents=0", "HEAD"], capture_output=True)
    fp = {"torch": "x", "modules": {"lloydlib/a.py": fingerprint.module_hash(sources[0])}}
    assert baseline.find_code(fp, repo, tmp_path / "old") == first.stdout.decode().strip()
    assert (tmp_path / "old" / "lloydlib" / "a.py").read_text() == sources[0]
    fp2 = {"modules": {"lloydlib/a.py": fingerprint.module_hash("x = 2\n")}}  # the newest matching commit
    assert baseline.find_code(fp2, repo, tmp_path / "new") is not None
    assert (tmp_path / "new" / "lloydlib" / "__init__.py").read_text() == "VERSION = 2\n"
    assert baseline.find_code({"modules": {"lloydlib/a.py": "0" * 16}}, repo, tmp_path / "none") is None
    assert baseline.find_code(fp, tmp_path / "not-a-repo", tmp_path / "none") is None
    with pytest.raises(TypeError, match="fingerprint"):
        baseline.find_code({"torch": "x"}, repo, tmp_path)


def test_the_report_prints_each_run_and_the_verdict(runs, tmp_path, capsys):
    """``recertify_report.report``: the replay command, the old code not found (``repo`` is no git repository),
    one line a re-trained run, the verdict; a store this code's already is left alone."""
    root = stale_store(tmp_path / "s", runs)
    kwargs = dict(tolerance=TOLERANCE, seed=3, command="my-recertify --store s", repo=tmp_path, rebuild="my-rebuild")
    assert recertify_report.report(root, **kwargs) == 0
    out = capsys.readouterr().out
    assert (
        f"re-certification of {root}: seed 3 (replay: my-recertify --store s --seed 3), 1 run(s) per shape, "
        "1 worker(s); tolerance 1e-05 at step 1 and 0.01 after"
    ) in out
    assert "the old code: not to be had" in out and "the old code: the same" not in out
    assert out.count("  ok       ") == 2 and out.count("20 steps,    20 compared (whole)") == 2
    assert "re-certification: PASSED, 2 runs re-trained in " in out and "bit for bit as the old code" not in out
    assert "4 runs re-stamped from" in out and "lloydlib/attention.py changed" in out
    assert training.RunStore(root).manifest["recertify"] == "my-recertify --store s"
    assert recertify_report.report(root, **kwargs) == 0
    assert "is this code's already; nothing to re-certify" in capsys.readouterr().out


def test_the_report_names_each_run_that_disagrees_and_the_rebuild(runs, tmp_path, capsys):
    bad = dataclasses.replace(runs[2], train_losses=runs[2].train_losses * 1.05)
    root = stale_store(tmp_path / "s", [*runs[:2], bad, runs[3]])
    text = (root / store.MANIFEST).read_text()
    got = recertify_report.report(
        root, tolerance=TOLERANCE, seed=0, per_shape=2, command="c", repo=tmp_path, rebuild="my-rebuild"
    )
    out, err = capsys.readouterr()
    assert got == 1 and out.count("MISMATCH") == 1 and out.count("  ok       ") == 3
    assert f"re-certification FAILED: {bad.config.label()} (key {bad.key}): step 1 4.76e-02" in err
    assert "1 of 4 runs disagree; nothing was re-stamped" in err
    assert "rebuild the store with: make runs" in err  # the manifest's command before the caller's
    assert (root / store.MANIFEST).read_text() == text


def test_the_report_retrains_with_the_old_code_found_in_the_repository(runs, this_code, tmp_path, monkeypatch, capsys):
    root = stale_store(tmp_path / "s", runs)
    asked = []

    def find_code(fp, repo, dest):
        asked.append((fp, repo))
        shutil.copytree(this_code / "lloydlib", Path(dest) / "lloydlib")
        return "c0ffee" * 7

    monkeypatch.setattr(recertify_report, "find_code", find_code)
    kwargs = dict(tolerance=TOLERANCE, seed=3, command="c", repo=tmp_path / "repo", rebuild="r")
    assert recertify_report.report(root, **kwargs) == 0
    assert asked == [(other_code(), tmp_path / "repo")]
    out = capsys.readouterr().out
    assert "the old code: commit c0ffeec0ffee, found in git history by its fingerprint" in out
    assert out.count("; the old code: the same") == 2 and "2 of them bit for bit as the old code trains them" in out
    (record,) = training.RunStore(root).manifest["recertified"]
    assert record["baseline"] == "commit " + "c0ffee" * 7


def test_the_report_names_a_bad_argument(runs, tmp_path):
    root = stale_store(tmp_path / "s", runs)
    kwargs = dict(tolerance=TOLERANCE, seed=0, command="c", repo=tmp_path, rebuild="r")
    with pytest.raises(ValueError, match="root must be a run store"):
        recertify_report.report(tmp_path / "nowhere", **kwargs)
    for name, bad, error in (
        ("tolerance", 1e-2, TypeError),
        ("seed", -1, ValueError),
        ("per_shape", 0, ValueError),
        ("workers", 0, ValueError),
        ("command", "", ValueError),
        ("rebuild", None, ValueError),
        ("repo", None, TypeError),
    ):
        with pytest.raises(error, match=name):
            recertify_report.report(root, **{**kwargs, name: bad})
    with pytest.raises(training.StaleStoreError):
        training.RunStore(root)  # nothing was re-stamped by the refused calls
