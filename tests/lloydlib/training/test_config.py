"""lloydlib.training.config: a TrainConfig validates its fields, its key covers the experiment, seeds."""

import dataclasses

import pytest
from _support import assert_raises_naming

import lloydlib
from lloydlib.training import EXECUTION_FIELDS, TrainConfig, derive_seed
from lloydlib.training.config import check_field, parse_field


def test_the_key_covers_every_experiment_field_and_the_version(monkeypatch):
    base = TrainConfig()
    changed = dict(
        d=5, k=7, n=100, embedding="OH", loss="NE", tau=0.25, lr=0.1, batch=8, steps=5, seed=3, family="cauchy",
        scale=0.2, isotropic=False, equal_weights=False, init="kmeans++", gamma=2.0, bias=False, dropout=0.01,
        weighting="sparsemax", fast=False, clip=1.0, plateau=False, plateau_factor=0.25, plateau_patience=3,
        eval_every=10, val_tasks=64, dtype="float64",
    )  # fmt: skip
    assert set(changed) | set(EXECUTION_FIELDS) == {f.name for f in dataclasses.fields(TrainConfig)}
    keys = {base.replace(**{name: value}).key() for name, value in changed.items()}
    assert len(keys) == len(changed) and base.key() not in keys
    assert base.replace(tau=1).key() == base.replace(tau=1.0).key()  # 1 and 1.0 are one config
    assert base.replace(device="cuda", checkpoint_every=3).key() == base.key()  # execution fields are not in it
    before = base.key()
    monkeypatch.setattr(lloydlib, "__version__", "999")
    assert TrainConfig().key() != before


def test_the_key_of_the_default_config_is_stable():
    # a changed key silently orphans every cached run: change it only with lloydlib.__version__
    assert TrainConfig().key() == "f94df301a1620267" or lloydlib.__version__ != "0.1.0"


def test_replace_validates_and_names_unknown_fields():
    assert TrainConfig().replace(d=3).d == 3
    with pytest.raises(TypeError, match="no field"):
        TrainConfig().replace(sede=1)
    with pytest.raises(ValueError, match="d must be >= 1"):
        TrainConfig().replace(d=0)


def test_label_names_the_setting():
    assert TrainConfig().label() == "BN:L2 d=4 k=6 n=512 tau=0.1 lr=0.01 seed=0"


@pytest.mark.parametrize(
    "changes, exc, words",
    [
        (dict(k=20, n=10), ValueError, "k must be <= n"),
        (dict(k=1), ValueError, "k must be >= 2"),
        (dict(loss="L3"), ValueError, "loss must be one of"),
        (dict(embedding="XX"), ValueError, "embedding must be one of"),
        (dict(tau=0.0), ValueError, "tau must be > 0"),
        (dict(lr=-1.0), ValueError, "lr must be > 0"),
        (dict(steps=0), ValueError, "steps must be >= 1"),
        (dict(steps=2.5), TypeError, "steps must be an integer"),
        (dict(dropout=1.0), ValueError, "dropout must be >= 0 and < 1"),
        (dict(dropout=True), TypeError, "dropout must be a real number"),
        (dict(clip=0.0), ValueError, "clip must be > 0"),
        (dict(dtype="float16"), ValueError, "dtype must be one of"),
        (dict(plateau_factor=1.5), ValueError, "plateau_factor must be > 0 and < 1"),
        (dict(plateau="yes"), TypeError, "plateau must be a bool"),
        (dict(family="uniform"), ValueError, "family must be one of"),
        (dict(device=0), TypeError, "device must be a string"),
    ],
)
def test_bad_config_raises_a_clear_error(changes, exc, words):
    with pytest.raises(exc, match=words):
        TrainConfig(**changes)


def test_fields_are_normalised():
    c = TrainConfig(tau=1, dropout=0, plateau_factor=0.5)
    assert isinstance(c.tau, float) and isinstance(c.dropout, float)


def test_seeds_give_different_and_repeatable_streams():
    s = {derive_seed(0, "train", m) for m in range(100)} | {derive_seed(0, "val")}
    assert len(s) == 101 and derive_seed(0, "val") == derive_seed(0, "val")
    assert derive_seed(1, "val") != derive_seed(0, "val")
    assert all(0 <= v < 2**63 for v in s)
    with pytest.raises(ValueError, match="seed must be >= 0"):
        derive_seed(-1, "val")


@pytest.mark.parametrize(
    "name, text, value",
    [
        ("d", "4", 4),
        ("tau", "1", 1.0),
        ("clip", "none", None),
        ("clip", "0.5", 0.5),
        ("plateau", "False", False),
        ("embedding", "OH", "OH"),
        ("device", "cuda:1", "cuda:1"),
    ],
)
def test_parse_field_reads_command_line_text_by_the_fields_type(name, text, value):
    got = parse_field(name, text)
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize(
    "name, text, exc, words",
    [
        ("d", "4.5", ValueError, ["d must be an integer", "'4.5'"]),
        ("tau", "fast", ValueError, ["tau must be a real number", "'fast'"]),
        ("clip", "x", ValueError, ["clip must be a real number or none"]),
        ("plateau", "maybe", ValueError, ["plateau must be true or false", "'maybe'"]),
        ("k", "1", ValueError, ["k must be >= 2", "got 1"]),
        ("embedding", "XX", ValueError, ["embedding must be one of", "'XX'"]),
        ("sede", "1", TypeError, ["no field 'sede'", "seed"]),
    ],
)
def test_parse_field_errors_name_the_field(name, text, exc, words):
    assert_raises_naming(lambda: parse_field(name, text), exc, words)


def test_check_field_checks_one_value_on_its_own():
    assert check_field("n", 4) == 4  # k <= n is the config's check, across fields
    assert check_field("tau", 1) == 1.0 and check_field("clip", None) is None
    assert_raises_naming(lambda: check_field("seed", [0, 1]), TypeError, ["seed must be a single value", "list"])
    assert_raises_naming(lambda: check_field("d", "4"), TypeError, ["d must be an integer", "str"])
    assert_raises_naming(lambda: check_field("bias", 1), TypeError, ["bias must be a bool", "int"])


def test_each_field_declares_its_check_role_and_help_once():
    from lloydlib.training import config

    for f in dataclasses.fields(TrainConfig):
        assert set(f.metadata) == {"check", "role", "help"} and f.metadata["role"] in config.ROLES, f.name
        assert f.metadata["help"] and check_field(f.name, f.default) == f.default
    assert set(config.EXECUTION_FIELDS) == {"device", "checkpoint_every"}
    assert config.DISTRIBUTION_FIELDS == ("family", "scale", "isotropic", "equal_weights", "init")
    assert config.TASK_FIELDS == ("seed", *config.DISTRIBUTION_FIELDS)
    assert set(config.PER_RUN_FIELDS) == {
        "seed", "tau", "lr", "clip", "plateau", "plateau_factor", "plateau_patience", "family", "scale", "isotropic",
        "equal_weights", "init", "steps", "checkpoint_every",
    }  # fmt: skip
    assert TrainConfig(family="cauchy").distribution()["family"] == "cauchy"
