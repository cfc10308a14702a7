"""Unit tests of lloydbook.lemmas.searches on bad input (issue 36, item 5): each public function raises a
TypeError or ValueError that names the argument, what was expected and what came, where it used to raise
ZeroDivisionError, an error naming another argument, or return a vacuous answer; and print_pair leaves
torch's print options as it found them."""

import inspect
import math
from types import SimpleNamespace

import mpmath
import pytest
import torch
from _support import assert_raises_naming

from lloydbook import lemmas
from lloydlib import theory as T

SW = dict(restarts=1, steps=2, random_pairs=2)  # the least search effort: these calls fail before any search
PAPER = dict(d=4, k=6, n=512)  # the paper's task


# ----------------------------------------------------------------------------------------- the three
def test_softmax_region_grid_bad_m_max_and_deltas_name_them():
    assert_raises_naming(lambda: lemmas.softmax_region_grid(m_max=1), ValueError, ["m_max", ">= 2", "got 1"])
    assert_raises_naming(lambda: lemmas.softmax_region_grid(m_max=0), ValueError, ["m_max", ">= 2", "got 0"])
    assert_raises_naming(lambda: lemmas.softmax_region_grid(m_max=2.5), TypeError, ["m_max", "integer", "2.5"])
    assert_raises_naming(lambda: lemmas.softmax_region_grid(4, []), ValueError, ["deltas", "at least 1", "[]"])
    assert_raises_naming(lambda: lemmas.softmax_region_grid(4, [0.5, math.nan]), ValueError, ["deltas[1]", "nan"])
    assert_raises_naming(lambda: lemmas.softmax_region_grid(4, [-1.0]), ValueError, ["deltas[0]", ">= 0", "-1.0"])
    assert_raises_naming(lambda: lemmas.softmax_region_grid(4, 1.0), TypeError, ["deltas", "sequence", "float"])
    assert_raises_naming(lambda: lemmas.softmax_region_grid(4, [[0.0, 1.0]]), TypeError, ["deltas[0]", "real"])
    assert lemmas.softmax_region_grid(2, (0.0, 1.0)) == (True, 1, 0)  # a tuple of deltas is fine


def test_phi_factors_bad_points_and_seed_name_them(monkeypatch):
    assert_raises_naming(lambda: lemmas.phi_factors(0, 1, PAPER), ValueError, ["points", ">= 1", "got 0"])
    assert_raises_naming(lambda: lemmas.phi_factors(-5, 1, PAPER), ValueError, ["points", ">= 1", "got -5"])
    assert_raises_naming(lambda: lemmas.phi_factors(3.0, 1, PAPER), TypeError, ["points", "integer", "3.0"])
    assert_raises_naming(lambda: lemmas.phi_factors(3, -1, PAPER), ValueError, ["seed", ">= 0", "got -1"])
    monkeypatch.setattr(T, "phi", lambda *args: math.inf)  # no setting with a finite phi: no ratio to take
    assert_raises_naming(lambda: lemmas.phi_factors(3, 1, PAPER), ValueError, ["points=3", "seed=1", "finite phi"])


def test_h1_rows_bad_ks_name_them():
    assert_raises_naming(lambda: lemmas.h1_rows((1,), seed=1), ValueError, ["ks[0]", ">= 2", "got 1"])
    assert_raises_naming(lambda: lemmas.h1_rows((2, 0), seed=1), ValueError, ["ks[1]", ">= 2", "got 0"])
    assert_raises_naming(lambda: lemmas.h1_rows((), seed=1), ValueError, ["ks", "at least 1", "[]"])
    assert_raises_naming(lambda: lemmas.h1_rows(2, seed=1), TypeError, ["ks", "sequence", "int"])
    assert_raises_naming(lambda: lemmas.h1_rows((2.5,), seed=1), TypeError, ["ks[0]", "integer", "2.5"])


# ----------------------------------------------------------------------------------------- the module's other gaps
def test_eq170_grid_refuses_an_empty_grid():
    # 0 points used to give (True, True): a check that holds because it checked nothing
    assert_raises_naming(lambda: lemmas.eq170_grid(0, seed=1), ValueError, ["points", ">= 1", "got 0"])
    assert_raises_naming(lambda: lemmas.eq170_grid(5, seed=-1), ValueError, ["seed", ">= 0", "got -1"])


def test_head_slack_rows_and_theorem1_searches_check_the_task():
    # k = 1 or n < k left a head attending over one key, whose observed ratio 0 divided by zero
    assert_raises_naming(lambda: lemmas.head_slack_rows(4, 1, 8, SW, seed=1), ValueError, ["k", ">= 2", "got 1"])
    assert_raises_naming(
        lambda: lemmas.head_slack_rows(4, 2, 1, SW, seed=1), ValueError, ["n must be >= k", "n=1", "k=2"]
    )
    assert_raises_naming(lambda: lemmas.head_slack_rows(4.5, 2, 4, SW, seed=1), TypeError, ["d", "integer", "4.5"])
    assert_raises_naming(
        lambda: lemmas.theorem1_searches(4, 6, 3, [1.0], SW, seed=1), ValueError, ["n must be >= k", "n=3"]
    )
    assert_raises_naming(lambda: lemmas.theorem1_searches(2, 3, 4, 1.0, SW, seed=1), TypeError, ["gammas", "float"])
    assert_raises_naming(lambda: lemmas.theorem1_searches(2, 3, 4, [0.0], SW, seed=1), ValueError, ["gammas[0]", "> 0"])


def test_sweeps_refuse_empty_or_unknown_settings():
    assert_raises_naming(lambda: lemmas.gamma_sweep("I.5", [], 2, SW, seed=0), ValueError, ["gammas", "at least 1"])
    assert_raises_naming(lambda: lemmas.gamma_sweep("I.5", [-1.0], 2, SW, 0), ValueError, ["gammas[0]", "> 0"])
    assert_raises_naming(lambda: lemmas.attention_sweep("I.5", "foo", [1], 2, SW, 0), ValueError, ["vary", "'foo'"])
    assert_raises_naming(lambda: lemmas.attention_sweep("I.5", "m", [], 2, SW, 0), ValueError, ["values", "at least 1"])


def test_lipschitz_measurements_bad_ds_and_tasks_name_them():
    assert_raises_naming(
        lambda: lemmas.lipschitz_measurements([2], 3, 4, 0, seed=1), ValueError, ["tasks", ">= 1", "got 0"]
    )
    assert_raises_naming(lambda: lemmas.lipschitz_measurements([], 3, 4, 1, seed=1), ValueError, ["ds", "at least 1"])
    assert_raises_naming(lambda: lemmas.lipschitz_measurements([2, 0], 3, 4, 1, seed=1), ValueError, ["ds[1]", ">= 1"])


def test_log10_refuses_negative_nan_and_non_numbers():
    assert_raises_naming(lambda: lemmas.log10(-1), ValueError, ["x", ">= 0", "-1"])
    assert_raises_naming(lambda: lemmas.log10(mpmath.mpf(-2)), ValueError, ["x", ">= 0", "-2"])
    assert_raises_naming(lambda: lemmas.log10(math.nan), ValueError, ["x", "nan"])
    assert_raises_naming(lambda: lemmas.log10("10"), TypeError, ["x", "real number", "'10'"])
    assert_raises_naming(lambda: lemmas.log10(True), TypeError, ["x", "bool"])
    assert lemmas.log10(math.inf) == math.inf and lemmas.log10(mpmath.mpf(100)) == pytest.approx(2.0)


def test_table2_rows_names_a_column_derived_lacks():
    derived = {"a": dict.fromkeys(lemmas.TERMS, 1)}
    assert_raises_naming(lambda: lemmas.table2_rows(derived, {}, ["a", "x"]), ValueError, ["columns", "['x']", "'a'"])


# ----------------------------------------------------------------------------------------- print_pair
def made_up_pair():
    eye = torch.eye(3, dtype=torch.float64).expand(4, 3, 3)
    pair = {"X": torch.full((1, 2), 1e-5, dtype=torch.float64), "C": torch.ones(1, 2, dtype=torch.float64)}
    for kind in "QKV":
        pair[kind], pair[kind + "_prime"] = eye, 2 * eye
    return pair


def print_options():
    return {key: getattr(torch._tensor_str.PRINT_OPTS, key) for key in vars(torch._tensor_str.PRINT_OPTS)}


@pytest.fixture
def odd_print_options():
    """torch's print options set to values print_pair does not use, and the defaults restored after."""
    torch.set_printoptions(precision=6, threshold=50, edgeitems=2, linewidth=120, sci_mode=True)
    yield print_options()
    torch.set_printoptions(profile="default")


def test_print_pair_restores_torchs_print_options(capsys, odd_print_options):
    lemmas.print_pair(SimpleNamespace(pair=made_up_pair()))
    assert "0.000" in capsys.readouterr().out  # X printed at 3 digits, without scientific notation
    assert print_options() == odd_print_options
    assert str(torch.tensor([1e-5], dtype=torch.float64)) == "tensor([1.000000e-05], dtype=torch.float64)"


def test_print_pair_restores_them_after_an_error_too(capsys, odd_print_options):
    pair = {**made_up_pair(), "V": "not a matrix"}
    with pytest.raises(TypeError):
        lemmas.print_pair(SimpleNamespace(pair=pair))
    assert print_options() == odd_print_options


def test_print_pair_names_a_result_without_a_pair():
    assert_raises_naming(lambda: lemmas.print_pair(None), TypeError, ["r", ".pair", "None"])
    no_v = {key: value for key, value in made_up_pair().items() if key != "V_prime"}
    assert_raises_naming(lambda: lemmas.print_pair(SimpleNamespace(pair=no_v)), TypeError, ["r", "V_prime"])


def test_the_searches_that_draw_take_a_seed_and_check_it():
    # issue 36: every draw comes from the chapter's ch.seed, passed in; none keeps a seed of its own
    draws = {
        "norm_bound_rows": lambda s: lemmas.norm_bound_rows(2, 3, 4, SW, seed=s),
        "head_slack_rows": lambda s: lemmas.head_slack_rows(2, 3, 4, SW, seed=s),
        "h1_rows": lambda s: lemmas.h1_rows((2,), seed=s),
        "theorem1_searches": lambda s: lemmas.theorem1_searches(2, 3, 4, [1.0], SW, seed=s),
        "lipschitz_measurements": lambda s: lemmas.lipschitz_measurements([2], 3, 4, 1, seed=s),
        "phi_factors": lambda s: lemmas.phi_factors(3, s, PAPER),
        "eq170_grid": lambda s: lemmas.eq170_grid(3, seed=s),
    }
    for name, draw in draws.items():
        assert_raises_naming(lambda draw=draw: draw(-1), ValueError, ["seed", ">= 0", "got -1"])
        assert_raises_naming(lambda draw=draw: draw(1.5), TypeError, ["seed", "integer", "1.5"])
        # no default seed: the chapter names its draw
        assert inspect.signature(getattr(lemmas, name)).parameters["seed"].default is inspect.Parameter.empty, name
