"""Tests of lloydlib._validate: the scalar checks (check_scalar and its wrappers) and the tensor checks.

Every error names the argument, says what was expected and shows the value that came.
"""

import math
import numbers

import numpy as np
import pytest
import torch

from lloydlib._validate import (
    AssumptionWarning,
    check_bool,
    check_centers,
    check_choice,
    check_float_dtype,
    check_int,
    check_matrix,
    check_nonneg,
    check_points,
    check_positive,
    check_scalar,
    check_task_shape,
    check_tensor,
    check_tokens,
)


# ----------------------------------------------------------------------------- check_scalar
@pytest.mark.parametrize(
    "value, expected", [(3, 3.0), (2.5, 2.5), (np.float64(0.25), 0.25), (np.int64(7), 7.0), (-1e300, -1e300)]
)
def test_check_scalar_real_returns_a_float(value, expected):
    out = check_scalar("x", value)
    assert out == expected and type(out) is float


@pytest.mark.parametrize("value", [3, np.int64(3), np.int8(3)])
def test_check_scalar_integral_returns_an_int(value):
    out = check_scalar("n", value, numbers.Integral)
    assert out == 3 and type(out) is int
    assert type(check_scalar("n", value, int)) is int


@pytest.mark.parametrize(
    "value, target_type, words",
    [
        (True, numbers.Real, ["flag", "a real number", "bool True"]),
        (False, numbers.Integral, ["flag", "an integer", "bool False"]),
        ("1.0", numbers.Real, ["flag", "a real number", "str '1.0'"]),
        (None, numbers.Real, ["flag", "a real number", "NoneType None"]),
        (2.0, numbers.Integral, ["flag", "an integer", "float 2.0"]),
        (1 + 2j, numbers.Real, ["flag", "a real number", "complex"]),
        (torch.tensor(1.0), numbers.Real, ["flag", "a real number", "tensor"]),
    ],
)
def test_check_scalar_wrong_type_raises_type_error(value, target_type, words):
    with pytest.raises(TypeError) as err:
        check_scalar("flag", value, target_type)
    for w in words:
        assert w in str(err.value)


@pytest.mark.parametrize("value", [math.nan, float("nan"), np.nan])
@pytest.mark.parametrize("allow_inf", [False, True])
def test_check_scalar_refuses_nan_always(value, allow_inf):
    with pytest.raises(ValueError, match="rate must be .*, got nan"):
        check_scalar("rate", value, allow_inf=allow_inf)


@pytest.mark.parametrize("value", [math.inf, -math.inf])
def test_check_scalar_infinity_only_with_allow_inf(value):
    with pytest.raises(ValueError, match=r"gamma must be a finite number, got -?inf"):
        check_scalar("gamma", value)
    assert check_scalar("gamma", value, allow_inf=True) == value


def test_check_scalar_infinity_still_meets_the_bounds():
    assert check_scalar("gamma", math.inf, min_val=0, include_boundaries="right", allow_inf=True) == math.inf
    with pytest.raises(ValueError, match=r"gamma must be > 0, got -inf"):
        check_scalar("gamma", -math.inf, min_val=0, include_boundaries="right", allow_inf=True)


@pytest.mark.parametrize(
    "include, low_ok, high_ok, words",
    [
        ("both", True, True, ">= 0 and <= 1"),
        ("left", True, False, ">= 0 and < 1"),
        ("right", False, True, "> 0 and <= 1"),
        ("neither", False, False, "> 0 and < 1"),
    ],
)
def test_check_scalar_boundaries(include, low_ok, high_ok, words):
    kw = dict(min_val=0, max_val=1, include_boundaries=include)
    assert check_scalar("p", 0.5, **kw) == 0.5
    for value, ok in ((0, low_ok), (1, high_ok)):
        if ok:
            assert check_scalar("p", value, **kw) == value
        else:
            with pytest.raises(ValueError) as err:
                check_scalar("p", value, **kw)
            assert str(err.value) == f"p must be {words}, got {float(value)}"
    for value in (-0.1, 1.1):  # outside the range whatever the boundaries
        with pytest.raises(ValueError, match=f"p must be {words}, got {value}"):
            check_scalar("p", value, **kw)


def test_check_scalar_one_sided_bounds():
    assert check_scalar("x", 1e9, min_val=2) == 1e9
    assert check_scalar("x", -1e9, max_val=2) == -1e9
    with pytest.raises(ValueError, match=r"^x must be >= 2, got 1.0$"):
        check_scalar("x", 1, min_val=2)
    with pytest.raises(ValueError, match=r"^x must be < 2, got 2.0$"):
        check_scalar("x", 2, max_val=2, include_boundaries="left")
    with pytest.raises(ValueError, match=r"^n must be <= 5, got 6$"):
        check_scalar("n", 6, numbers.Integral, max_val=5)


def test_check_scalar_bad_include_boundaries():
    with pytest.raises(ValueError, match="include_boundaries must be one of .*'both'.*got 'all'"):
        check_scalar("x", 1.0, min_val=0, include_boundaries="all")


# ----------------------------------------------------------------------------- the wrappers
def test_check_int():
    assert check_int("steps", 0, 0) == 0 and check_int("steps", np.int64(4), 0, 4) == 4
    assert type(check_int("steps", np.int32(2))) is int and check_int("steps", -5) == -5
    with pytest.raises(ValueError, match=r"^steps must be >= 0, got -1$"):
        check_int("steps", -1, 0)
    with pytest.raises(ValueError, match=r"^steps must be >= 1 and <= 3, got 4$"):
        check_int("steps", 4, 1, 3)
    with pytest.raises(TypeError, match=r"^steps must be an integer, got float 2.0$"):
        check_int("steps", 2.0)
    with pytest.raises(TypeError, match=r"^steps must be an integer, got bool True$"):
        check_int("steps", True)


def test_check_positive():
    assert check_positive("tau", 1e-300) == 1e-300 and type(check_positive("tau", 3)) is float
    for bad in (0, 0.0, -2.5):
        with pytest.raises(ValueError, match=rf"^tau must be > 0, got {float(bad)}$"):
            check_positive("tau", bad)
    with pytest.raises(ValueError, match="tau must be a finite number, got inf"):
        check_positive("tau", math.inf)
    assert check_positive("gamma", math.inf, allow_inf=True) == math.inf
    with pytest.raises(ValueError, match="gamma must be a number or"):
        check_positive("gamma", math.nan, allow_inf=True)
    with pytest.raises(TypeError, match="tau must be a real number"):
        check_positive("tau", "1")


def test_check_nonneg():
    assert check_nonneg("scale", 0) == 0.0 and check_nonneg("scale", 0.5) == 0.5
    with pytest.raises(ValueError, match=r"^scale must be >= 0, got -1.0$"):
        check_nonneg("scale", -1.0)
    with pytest.raises(ValueError, match="scale must be a finite number, got inf"):
        check_nonneg("scale", math.inf)
    with pytest.raises(TypeError, match="scale must be a real number"):
        check_nonneg("scale", None)


def test_check_bool():
    assert check_bool("fast", True) is True and check_bool("fast", False) is False
    for bad, shown in ((1, "int 1"), (0, "int 0"), ("yes", "str 'yes'"), (None, "NoneType None")):
        with pytest.raises(TypeError) as err:
            check_bool("fast", bad)
        assert str(err.value) == f"fast must be a bool (True or False), got {shown}"
    with pytest.raises(TypeError, match="fast must be a bool"):
        check_bool("fast", np.bool_(True))


def test_check_choice():
    assert check_choice("embedding", "BN", ("OH", "BN")) == "BN"
    with pytest.raises(ValueError, match=r"embedding must be one of \['BN', 'OH'\], got 'XX'"):
        check_choice("embedding", "XX", ("OH", "BN"))


# ----------------------------------------------------------------------------- tensor checks
def test_check_tensor():
    x = torch.rand(2, 3)
    assert check_tensor("x", x, 2) is x
    with pytest.raises(TypeError, match="x must be a torch.Tensor, got list"):
        check_tensor("x", [1.0])
    with pytest.raises(TypeError, match="x must have a floating-point dtype.*int64"):
        check_tensor("x", torch.ones(2, dtype=torch.int64))
    with pytest.raises(ValueError, match=r"x must have 3 dimensions, got a tensor of shape \(2, 3\)"):
        check_tensor("x", x, 3)
    y = x.clone()
    y[0, 0] = math.inf
    with pytest.raises(ValueError, match="x must be finite, got 1 NaN or infinite"):
        check_tensor("x", y)
    assert check_tensor("x", y, allow_nonfinite=True) is y


def test_check_points_centers_and_task_shape():
    X, C = torch.rand(2, 5, 3), torch.rand(2, 4, 3)
    assert check_points(X) is X and check_centers(C, X) is C
    with pytest.raises(ValueError, match=r"X must have shape \(batch, n, d\) with n >= 1"):
        check_points(torch.rand(2, 0, 3))
    with pytest.raises(ValueError, match="C must hold k >= 2 centers, got k=1"):
        check_centers(C[:, :1], X, min_k=2)
    with pytest.raises(ValueError, match="same batch size"):
        check_centers(C[:1], X)
    with pytest.raises(ValueError, match="C must have the same dimension d as X"):
        check_centers(C[..., :2], X)
    with pytest.raises(TypeError, match="C and X must have the same dtype"):
        check_centers(C.double(), X)
    with pytest.raises(ValueError, match="k=6 centers but X has only n=5"):
        check_centers(torch.rand(2, 6, 3), X)
    check_task_shape(X, C, 3, 4, "model")
    with pytest.raises(ValueError, match="X must have d=2 coordinates for this model, got d=3"):
        check_task_shape(X, C, 2, 4, "model")
    with pytest.raises(ValueError, match="C must hold k=5 centers for this model, got k=4"):
        check_task_shape(X, C, 3, 5, "model")


def test_check_float_dtype_tokens_and_matrix():
    assert check_float_dtype("dtype", torch.float64) is torch.float64
    for bad in (torch.int32, "float32", np.float64):
        with pytest.raises(TypeError, match="dtype must be a floating-point torch.dtype"):
            check_float_dtype("dtype", bad)
    Z = torch.rand(1, 4, 6)
    assert check_tokens(Z, 6) is Z
    with pytest.raises(ValueError, match="Zp must have token dimension d_emb=5"):
        check_tokens(Z, 5, name="Zp")
    W = torch.rand(3, 6)
    assert check_matrix("Q", W, (3, 6)) is W
    with pytest.raises(ValueError, match=r"Q must have shape \(6, 6\)"):
        check_matrix("Q", W, (6, 6))


def test_assumption_warning_is_a_user_warning():
    assert issubclass(AssumptionWarning, UserWarning)
