"""The book layer of the chapter "Attention-based clustering" (book/09_attention_clustering.ipynb).

The chapter keeps the model, the experiments, the claims and the glue; this subpackage holds what only
tallies or displays them: :mod:`.summaries` (Monte Carlo check list, summaries of training runs, the maps
compared with Lloyd's algorithm), :mod:`.tables` and :mod:`.figures`.
"""

from .figures import (
    plot_clouds,
    plot_comparison,
    plot_in_context,
    plot_noise_floor,
    plot_penalty_scan,
    plot_population_pgd,
    plot_rotation,
    plot_sgd,
    plot_three_heads,
)
from .summaries import (
    SEED_PLATEAU,
    MonteCarloChecks,
    a_of,
    comparison_maps,
    direction_distance,
    final,
    fitted_rate,
    gather,
    in_context_cell,
    pct,
    positive,
    setting,
    success,
    success_at,
    yes,
)
from .tables import (
    closed_form_table,
    comparison_table,
    in_context_table,
    penalty_table,
    pgd_table,
    sgd_table,
    three_heads_table,
    update_table,
)

__all__ = [
    "SEED_PLATEAU",
    "MonteCarloChecks",
    "a_of",
    "comparison_maps",
    "direction_distance",
    "final",
    "fitted_rate",
    "gather",
    "in_context_cell",
    "pct",
    "positive",
    "setting",
    "success",
    "success_at",
    "yes",
    "closed_form_table",
    "comparison_table",
    "in_context_table",
    "penalty_table",
    "pgd_table",
    "sgd_table",
    "three_heads_table",
    "update_table",
    "plot_clouds",
    "plot_comparison",
    "plot_in_context",
    "plot_noise_floor",
    "plot_penalty_scan",
    "plot_population_pgd",
    "plot_rotation",
    "plot_sgd",
    "plot_three_heads",
]
