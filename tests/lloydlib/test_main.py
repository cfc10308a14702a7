"""lloydlib.__main__: ``python -m lloydlib`` dispatches ``bench`` and ``train``."""

import json
import subprocess
import sys

from lloydlib.__main__ import main


def test_main_dispatches_bench(capsys):
    argv = ["bench", "train-step", "--n", "12", "--d", "2", "--k", "2", "--batch", "1", "--warmup", "0", "--reps", "1"]
    assert main(argv + ["--no-compile", "--json"]) == 0
    assert "reference_ms_per_step" in json.loads(capsys.readouterr().out)


def test_main_dispatches_train(tmp_path, capsys):
    assert main(["train", "--steps", "5", "--cache-dir", str(tmp_path), "--dry-run"]) == 0
    assert "1 run(s)" in capsys.readouterr().out


def test_main_lists_the_commands(capsys):
    assert main([]) == 0 and main(["--help"]) == 0
    assert main(["fly"]) == 2
    assert "bench" in capsys.readouterr().out


def test_python_dash_m_runs(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "lloydlib", "train", "--steps", "5", "--cache-dir", str(tmp_path), "--dry-run"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "to train" in done.stdout
