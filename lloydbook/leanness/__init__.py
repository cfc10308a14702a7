"""The chapter "What leanness buys" (``book/03_leanness.ipynb``): its bookkeeping, tables and figure.

The chapter times OH against BN (Figure 1 and Table 1 of the Leaner paper) with :mod:`lloydlib.bench`;
this module holds what turns the results into numbers, judgements, tables and the heat maps:

- :data:`PAPER_T1`, :data:`PAPER_FIG1_MEMORY`: the paper's Table 1 and Figure 1's memory range;
- :func:`chapter_alpha`: the level of every interval, from the chapter's false-failure budget;
- :func:`measurement_values`, :func:`step_values`: the numbers the chapter's text quotes about how it
  measures and about the training step;
- :func:`speedup`, :func:`mem_reduction`, :func:`gain`: BN's advantage in one row of a result, a speed-up
  with its distribution-free interval (:func:`lloydlib.bench.timing.median_interval`);
- :func:`band`, :func:`judge`, :func:`table1_cells`, :func:`evidence`, :func:`fig1_memory_cells`: cells
  against the paper, and whether they bear out a verdict;
- :func:`dims_table`, :func:`table1`, :func:`cells_text`, :func:`heatmaps`: the tables and Figure 1;
- :func:`figure1_grid`: Figure 1's grid, with repetitions where the claims look;
- :func:`fast_vs_plain`: how far lloydlib's rearranged layer is from the plain one (Eq. 4);
- :func:`large_k`, :func:`growth_failures`: what the chapter's claims on Figure 1 examine;
- :func:`step_speedup`: lloydlib's training step against the reference form's, with its interval;
- :func:`train_step_command`, :func:`run_json`: the ``python -m lloydlib bench train-step`` run;
- :func:`gpu_values`: the numbers of the GPU results recorded under ``results/``.

A *row* is one entry of ``lloydlib.bench.grid(...)["rows"]``: ``d``, ``k`` and, per embedding, timing
summaries, samples and memory (see :func:`lloydlib.bench.measure_embeddings`).
"""

from .core import *  # noqa: F403
from .core import __all__ as _core
from .step import *  # noqa: F403
from .step import __all__ as _step

__all__ = [*_core, *_step]
