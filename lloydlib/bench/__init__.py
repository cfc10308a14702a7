"""Benchmarks: OH against BN (Figure 1, Table 1 of the Leaner paper) and lloydlib's training step
against a reference form built the straightforward way. ``python -m lloydlib bench --help``.

The modules:

- :mod:`~lloydlib.bench.reference`: the reference form of the layer (as the authors' code computes it)
  and its loss, lloydlib's loss (NE or L2), :func:`make_model` to pick either form;
- :mod:`~lloydlib.bench.timing`: clocks (wall or process CPU time) and :func:`summarize`;
- :mod:`~lloydlib.bench.memory`: :func:`peak_memory` of a step, on a GPU or a CPU;
- :mod:`~lloydlib.bench.oh_vs_bn`: :func:`measure_embeddings` and :func:`grid` (Figure 1, Table 1);
- :mod:`~lloydlib.bench.step`: :func:`train_step`, a whole training step in both forms;
- :mod:`~lloydlib.bench.estimate`: a step's flops and bytes (:func:`step_cost`), this machine's rates
  (:func:`machine_rates`) and the step time they imply (:func:`estimate`);
- :mod:`~lloydlib.bench.step_grid`: :func:`train_step_grid`, the step over embeddings x losses in rounds,
  against the reference form and the estimate;
- :mod:`~lloydlib.bench.sweep`: :func:`sweep`, many runs stacked against one at a time (runs per hour);
- :mod:`~lloydlib.bench.records`: :func:`recorded`, results written with ``--out`` and read back;
- :mod:`~lloydlib.bench.cli`: the command line (:func:`main`).

Every result names the hardware it ran on (:func:`lloydlib.hardware.probe`) and keeps every timing
sample, so it can be re-summarised.
"""

from .cli import main
from .estimate import estimate, machine_rates, step_cost
from .memory import peak_memory
from .oh_vs_bn import FIGURE1_DS, FIGURE1_KS, TABLE1_KS, grid, measure_embeddings
from .records import BENCHMARKS, recorded
from .reference import IMPLEMENTATIONS, ReferenceTransformer, lloydlib_loss, make_model, reference_loss
from .step import train_step
from .step_grid import train_step_grid
from .sweep import sweep
from .timing import CLOCKS, summarize

__all__ = [
    "IMPLEMENTATIONS",
    "CLOCKS",
    "BENCHMARKS",
    "TABLE1_KS",
    "FIGURE1_DS",
    "FIGURE1_KS",
    "ReferenceTransformer",
    "reference_loss",
    "lloydlib_loss",
    "make_model",
    "peak_memory",
    "summarize",
    "measure_embeddings",
    "grid",
    "train_step",
    "train_step_grid",
    "step_cost",
    "machine_rates",
    "estimate",
    "sweep",
    "recorded",
    "main",
]
