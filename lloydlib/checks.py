"""The argument checks of lloydlib's public functions, public for code built on the library.

Each raises a ``TypeError`` or ``ValueError`` that names the argument, says what was expected and what
came (scikit-learn's style). The book layer (``lloydbook``) validates its own arguments with these.
"""

from ._validate import (
    AssumptionWarning,
    check_bool,
    check_centers,
    check_choice,
    check_float_dtype,
    check_int,
    check_nonneg,
    check_points,
    check_positive,
    check_scalar,
    check_tensor,
)

__all__ = [
    "AssumptionWarning",
    "check_bool",
    "check_centers",
    "check_choice",
    "check_float_dtype",
    "check_int",
    "check_nonneg",
    "check_points",
    "check_positive",
    "check_scalar",
    "check_tensor",
]
