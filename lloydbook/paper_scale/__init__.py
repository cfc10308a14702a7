"""Paper-scale verdicts on recorded runs committed under ``results/recorded/<machine>/`` (trained on a GPU, or
on a CPU over many sittings, by ``python -m lloydbook.record``).

The learning chapters decide their claims on this build's runs. When a GPU has recorded a complete
paper-scale sweep of a figure (every setting with all its seeds), the same statements are decided again on
those runs, with the paper's own verdict as the expectation ("reproduced", :data:`EXPECTED`: there is no
pilot at that scale, the book expects the paper's figure), each as its own claim ``<claim>-gpu-<machine>``
beside this build's, under the key of the chapter that decides it on this build's runs (``learning-`` for
Figures 10 and 17, chapter 04; ``shapes-`` for Figures 11, 13, 14 and 15, chapter 05). A partial sweep is shown by the chapter but judges nothing: a setting with missing
seeds cannot be compared fairly. Settings that share seeds (the same tasks) are compared paired by seed,
others unpaired.

- :mod:`.tau`: Figure 10 (``fig10_claims``: the findings of :mod:`lloydbook.fig10`, stated once there and decided
  by chapter 04 on this build's runs too; ``G`` maps ``(d, tau, embedding, loss)`` to runs);
- :mod:`.shapes`: Figures 14, 11 and 13 (``fig14_claims``, ``fig11_claims``, ``fig13_claims``: the findings of
  :mod:`lloydbook.fig14`, :mod:`lloydbook.fig11` and :mod:`lloydbook.fig13`, stated once there and decided by
  chapter 05 on this build's runs too);
- :mod:`.clusters`: Figure 15 (``fig15_claims``: the findings of :mod:`lloydbook.fig15`, likewise);
- :mod:`.wall`: Figure 17 on the wall clock (``fig17_claims``);
- :mod:`.sweeps`: the sweeps of :func:`lloydbook.sweeps.paper_sweeps` judged by name (:func:`judge`,
  :func:`judge_line`, which the chapters call for every sweep a machine folder holds; :func:`wall_panels`
  lays out Figure 17's recorded runs for the plot);
- :mod:`.report`: the chapters' GPU sections (:func:`gpu_commands`, the commands that train the sweeps;
  :func:`gpu_section`, what each machine recorded, beside this build's runs, drawn and judged);
- :mod:`.common`: the claim suffix, the completeness test and the recorder they share.

Each ``G`` is ``lloydlib.training.group(runs, *fields)`` of a sweep's runs, one run per seed, in seed order.
"""

from __future__ import annotations

from .clusters import fig15_claims
from .common import EXPECTED, claim_suffix, complete
from .report import gpu_commands, gpu_section
from .shapes import fig11_claims, fig13_claims, fig14_claims
from .sweeps import judge, judge_line, wall_panels
from .tau import fig10_claims
from .wall import fig17_claims, wall_mean, wall_means

__all__ = [
    "EXPECTED",
    "claim_suffix",
    "complete",
    "fig10_claims",
    "fig11_claims",
    "fig13_claims",
    "fig14_claims",
    "fig15_claims",
    "fig17_claims",
    "gpu_commands",
    "gpu_section",
    "judge",
    "judge_line",
    "wall_mean",
    "wall_means",
    "wall_panels",
]
