"""What learned one-step transformers do outside their training setting (the Leaner paper's Section 5 and
Appendix C): many steps, new inputs, other distribution families, task dissimilarity, loss landscapes.

- :mod:`~lloydlib.generalisation.multistep`: T steps of a one-layer model by re-embedding or by iterating
  Eq. 4, against Lloyd's algorithm from the same centers (Appendix C, Figs. 6, 7, 12), with
  :mod:`~lloydlib.generalisation.reembed` (re-embedding steps that compute the points' own attention once) and
  :mod:`~lloydlib.generalisation.blocked_layer` (the model's reference layer with its point-point head in
  blocks), both bit for bit the model's numbers;
- :mod:`~lloydlib.generalisation.dissimilarity`: the earth mover's distance between tasks' distributions of
  squared point-to-initial-center distances (Figs. 9, 19);
- :mod:`~lloydlib.generalisation.landscape`: loss and smoothing-gap surfaces along two filter-normalised
  random directions (Li et al. 2018; Figs. 3, 5).
"""

from .dissimilarity import block_summary, center_distances, emd_cross, emd_matrix, groups_of, task_to_blocks
from .landscape import (
    filter_normalized_direction,
    grid_coordinates,
    local_minima,
    loss_surface,
    minimum_offset,
    random_directions,
    smoothing_gap_surface,
    surface_distance,
    task_surfaces,
)
from .multistep import MODES, lloyd_objectives, mean_log, model_objectives, multistep, objective_or_inf, seed_quartiles

__all__ = [
    "MODES",
    "model_objectives",
    "lloyd_objectives",
    "multistep",
    "mean_log",
    "seed_quartiles",
    "objective_or_inf",
    "center_distances",
    "emd_matrix",
    "emd_cross",
    "block_summary",
    "task_to_blocks",
    "groups_of",
    "filter_normalized_direction",
    "random_directions",
    "grid_coordinates",
    "loss_surface",
    "task_surfaces",
    "smoothing_gap_surface",
    "local_minima",
    "minimum_offset",
    "surface_distance",
]
