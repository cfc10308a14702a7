"""The book layer of the chapter "The Lipschitz and norm-bound lemmas" (book/09_lemmas.ipynb).

The chapter keeps the prose, the claims and their checks; this subpackage holds what runs, tallies or
displays them: :mod:`.searches` (the repetitive sandwich searches over a grid and the rows of the chapter's
tables), :mod:`.summaries` (the numbers the prose pastes, as dicts for one ``ch.glue_many``, and the tables
that show what the searches found) and :mod:`.figures`.
"""

from .figures import int_ticks, plot_lipschitz, plot_phi, plot_slack, plot_softmax, plot_training
from .searches import (
    ARROW,
    TERM_NAMES,
    TERMS,
    eq170_grid,
    gamma_sweep,
    h1_rows,
    head_slack_rows,
    lipschitz_measurements,
    log10,
    norm_bound_rows,
    paper_constants,
    phi_factor_grid,
    print_pair,
    slack_curve,
    softmax_heads,
    softmax_region_grid,
    table2_rows,
    table3_agreement,
    theorem1_rows,
    theorem1_searches,
)
from .summaries import (
    dispersion_table,
    eq170_table,
    explicit_pair_table,
    phi_factors,
    slack_numbers,
    softmax_derivation_table,
    softmax_head_numbers,
    softmax_worst,
    training_settings,
)

__all__ = [
    "ARROW",
    "TERMS",
    "TERM_NAMES",
    "log10",
    "paper_constants",
    "table3_agreement",
    "norm_bound_rows",
    "table2_rows",
    "softmax_region_grid",
    "softmax_heads",
    "phi_factor_grid",
    "gamma_sweep",
    "slack_curve",
    "head_slack_rows",
    "h1_rows",
    "eq170_grid",
    "theorem1_searches",
    "theorem1_rows",
    "print_pair",
    "lipschitz_measurements",
    "softmax_derivation_table",
    "softmax_worst",
    "softmax_head_numbers",
    "dispersion_table",
    "slack_numbers",
    "eq170_table",
    "explicit_pair_table",
    "phi_factors",
    "training_settings",
    "int_ticks",
    "plot_softmax",
    "plot_slack",
    "plot_phi",
    "plot_lipschitz",
    "plot_training",
]
