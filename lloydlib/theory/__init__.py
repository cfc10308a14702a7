"""The constants of Appendix I of the Leaner paper, and the "sandwich" that checks them.

Constants. Every bound of Appendix I (and of Props. H.1, H.2 of Appendix H) is a function, written
**once** as a formula of a tiny backend (sqrt, exp, log, max, ...) and evaluated with numpy (floats or
arrays), sympy (symbols, for the proofs of the book's chapter on the lemmas) or mpmath (numbers too large
for a float, such as exp(3200)); see :mod:`~lloydlib.theory.backend`. Pass numbers for a float (or numpy
arrays for an array); pass sympy symbols, or ``backend="sympy"``, for an expression; ``backend="mpmath"``
for an arbitrary-precision number. Arguments are checked (counts >= 1, dimensions and gamma > 0, norms
>= 0) and a bad one raises naming it.

* :mod:`~lloydlib.theory.constants`: Lemmas I.1-I.8 and Props. H.1, H.2 (delta, kappa1..kappa5, ...);
* :mod:`~lloydlib.theory.theorems`: Theorems I.1, I.2 and 3.1 (phi, phi', alpha);
* :mod:`~lloydlib.theory.softmax`: Lemma I.3's exact l1 constant and failure region, derived with sympy;
* :mod:`~lloydlib.theory.tables`: Tables 2 and 3 of Appendix I, stored and derived with sympy.

The sandwich. A proved Lipschitz constant L must lie above every observed ratio
||f(a) - f(a')|| / ||a - a'||. The searches look for the largest ratio, from random pairs and from
gradient ascent on the ratio (float64, torch autograd, many restarts), and re-evaluate the best pair with
the library's own operator (:func:`lloydlib.attention.distance_attention`). A ratio above the constant is
a counterexample and is returned with its pair.

* :mod:`~lloydlib.theory.sandwich`: :class:`SandwichResult`, the ascent, norms and projections;
* :mod:`~lloydlib.theory.head`: one attention head, Lemmas I.3-I.8 (:func:`attention_sandwich`, ...);
* :mod:`~lloydlib.theory.layer`: the layer of Eq. 4, Lemma I.1 and Theorems I.1, I.2;
* :mod:`~lloydlib.theory.loss`: the loss, Lemma I.2 and Props. H.1, H.2, and the measured local
  Lipschitz constant.
"""

from ..losses import REGULARIZERS
from .backend import BACKENDS
from .constants import (
    EMBEDDINGS,
    LEMMAS,
    delta,
    dims,
    head_quantities,
    kappa1,
    kappa2,
    kappa3,
    kappa3_sharpened,
    kappa4,
    kappa4_sharpened,
    kappa5,
    lemma_constant,
    loss_lipschitz,
    norm_bounds,
    omega_tau,
    r_star,
    smoothing_distance_bound,
    smoothing_gap_bound,
    softmax_bound,
    softmax_l1_failure_delta,
    softmax_l1_sharp,
)
from .head import AttentionSetting, attention_sandwich, dispersion_sandwich, softmax_sandwich
from .layer import eq4_layer, layer_sandwich, norm_sandwich, one_layer, phi_counterexample
from .loss import local_lipschitz, loss_sandwich, loss_vector_sandwich, smoothing_distances
from .sandwich import DTYPE, SandwichResult, norm21, random_spectral
from .softmax import softmax_l1_derivation
from .tables import (
    TABLE2_STORED,
    sign_of_derivative,
    table2_derived,
    table2_symbols,
    table3_derived,
    table3_stored,
    table3_symbols,
)
from .theorems import (
    alpha_informal,
    eq170_constants,
    phi,
    phi_coefficients,
    phi_eq170,
    phi_prime,
    phi_prime_sum,
    phi_sum,
)

__all__ = [
    "BACKENDS",
    "EMBEDDINGS",
    "LEMMAS",
    "REGULARIZERS",
    "DTYPE",
    # constants
    "dims",
    "norm_bounds",
    "head_quantities",
    "delta",
    "softmax_bound",
    "softmax_l1_sharp",
    "softmax_l1_failure_delta",
    "softmax_l1_derivation",
    "kappa2",
    "kappa3",
    "kappa4",
    "kappa5",
    "kappa3_sharpened",
    "kappa4_sharpened",
    "lemma_constant",
    "r_star",
    "omega_tau",
    "loss_lipschitz",
    "kappa1",
    "smoothing_distance_bound",
    "smoothing_gap_bound",
    "eq170_constants",
    "phi_coefficients",
    "phi",
    "phi_sum",
    "phi_eq170",
    "phi_prime",
    "phi_prime_sum",
    "alpha_informal",
    "TABLE2_STORED",
    "table3_stored",
    "table2_derived",
    "table3_derived",
    "sign_of_derivative",
    "table2_symbols",
    "table3_symbols",
    # sandwich
    "norm21",
    "random_spectral",
    "eq4_layer",
    "one_layer",
    "AttentionSetting",
    "SandwichResult",
    "softmax_sandwich",
    "dispersion_sandwich",
    "attention_sandwich",
    "norm_sandwich",
    "layer_sandwich",
    "phi_counterexample",
    "loss_sandwich",
    "loss_vector_sandwich",
    "smoothing_distances",
    "local_lipschitz",
]
