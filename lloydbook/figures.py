"""The learning chapters' figures: training curves as median and inter-quartile band over seeds, in the
Leaner paper's layout (Figures 2, 10, 11, 13, 14, 15, 17), and the smoothing-gap pictures.

A *setting* is a list of :class:`lloydlib.training.Run` (its seeds); curves come from
:func:`lloydlib.training.curves` (median, first and third quartile over seeds at each evaluation step).
Every function draws one matplotlib figure and shows it with ``plt.show()``; it returns None, so a
chapter's plotting cell shows the figure once.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from lloydlib import training

__all__ = ["COLOR", "DASH", "band", "figure", "smoothing_gap", "gap_by_dimension", "points_figure"]

COLOR = {"OH": "C0", "BN": "C1", "NA": "C2"}  # one colour per token embedding
DASH = {"NE": "--", "L2": "-"}  # one line style per regulariser of the smoothed loss

VAL_LABEL = "relative validation loss (Eq. 20)"
TRAIN_LABEL = r"training loss $\tilde{\mathcal{L}}^\tau_\Omega$"


def band(ax, runs, metric, *, x="step", label=None, color=None, ls="-", divide=1.0):
    """Median over seeds of ``metric`` with the inter-quartile range shaded, against training steps
    (``x="step"``) or the median training time in seconds (``x="time"``); values are divided by ``divide``.
    The training loss's step 0 (one untrained batch) is left out."""
    step, med, lo, hi = training.curves(runs, metric)
    xs = step if x == "step" else training.curves(runs, "wall_time")[1]
    keep = slice(1, None) if metric == "train_loss" else slice(None)
    ax.plot(xs[keep], med[keep] / divide, ls, color=color, label=label, lw=1.5)
    ax.fill_between(xs[keep], lo[keep] / divide, hi[keep] / divide, color=color, alpha=0.2, lw=0)


def _finish(fig, axes, titles, suptitle, ylim, *, x="step", title_size=10, train_label=TRAIN_LABEL, legend_cols=2):
    for j, title in enumerate(titles):
        axes[0, j].set_yscale("log")
        axes[0, j].set_title(title, fontsize=title_size)
        axes[1, j].axhline(1.0, color="k", ls=":", lw=1)
        axes[1, j].set_ylim(*ylim)
        axes[1, j].set_xlabel("training step" if x == "step" else "training time (s)")
    axes[0, 0].set_ylabel(train_label)
    axes[1, 0].set_ylabel(VAL_LABEL)
    axes[0, -1].legend(fontsize=7, ncol=legend_cols)
    fig.suptitle(suptitle, y=1.0)
    fig.tight_layout()
    plt.show()


def figure(columns, titles, suptitle, *, x="step", ylim=(0.8, 2.2)):
    """The paper's layout: smoothed training loss on top (log scale), relative validation loss (Eq. 20)
    below, with one Lloyd step's level 1 dotted. Each column is a dict ``{(embedding, loss): runs}``;
    ``x`` is "step" or "time" (training seconds, as in Figure 17)."""
    fig, axes = plt.subplots(2, len(columns), figsize=(3.6 * len(columns), 5.6), squeeze=False, sharex="col")
    for j, groups in enumerate(columns):
        for (emb, reg), runs in groups.items():
            for i, metric in enumerate(("train_loss", "val_rel_loss")):
                band(axes[i, j], runs, metric, x=x, label=f"{emb}:{reg}", color=COLOR[emb], ls=DASH[reg])
    _finish(fig, axes, titles, suptitle, ylim, x=x)


def points_figure(groups, ns, embeddings, losses, suptitle, *, ylim=(0.8, 2.2), title=""):
    """Figure 13's layout: one column per embedding, one colour per training ``n``; the training loss, a
    sum over the ``n`` points, is shown divided by ``n``. ``groups`` maps ``(n, embedding, loss)`` to runs;
    ``title`` is appended to each column's embedding name."""
    fig, axes = plt.subplots(2, len(embeddings), figsize=(3.8 * len(embeddings), 5.6), squeeze=False, sharex=True)
    for j, e in enumerate(embeddings):
        for i_n, n in enumerate(ns):
            for reg in losses:
                runs = groups[(n, e, reg)]
                kw = dict(color=f"C{i_n}", ls=DASH[reg], label=f"n={n} {reg}")
                band(axes[0, j], runs, "train_loss", divide=n, **kw)
                band(axes[1, j], runs, "val_rel_loss", **kw)
    titles = [f"{e}{title}" for e in embeddings]
    size = plt.rcParams["axes.titlesize"]  # the default title size
    _finish(fig, axes, titles, suptitle, ylim, title_size=size, train_label="training loss / n", legend_cols=1)


def smoothing_gap(taus, rel_gap, uniform, title):
    r"""The mean relative smoothing gap :math:`(\tilde{\mathcal L} - \mathcal L)/\mathcal L` against the
    temperature, log-log, one line per regulariser (``rel_gap[reg]``, one value per ``tau``), with its
    :math:`\tau \to \infty` limit ``uniform`` (the mean distance) dotted. Exact zeros are drawn at 1e-17."""
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    for reg, style in (("NE", "--"), ("L2", "-")):
        name = "softmax" if reg == "NE" else "sparsemax"
        ax.loglog(taus, np.maximum(rel_gap[reg], 1e-17), style, marker="o", label=f"{reg} ({name})")
    ax.axhline(uniform, color="gray", ls=":", label=r"$\tau\to\infty$: mean distance")
    ax.set_xlabel(r"temperature $\tau$")
    ax.set_ylabel(r"mean $(\tilde{\mathcal{L}} - \mathcal{L}) / \mathcal{L}$")
    ax.set_title(title)
    ax.legend(fontsize=8)
    plt.show()


def gap_by_dimension(ds, dist, rel_gap, tau):
    r"""Two panels against the dimension ``d``: the mean squared point-center distance ``dist`` (one value
    per ``d``), and the mean relative smoothing gap ``rel_gap[reg]`` at the fixed temperature ``tau``."""
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.4))
    a1.plot(ds, dist, "o-k")
    a1.set_xlabel("d")
    a1.set_ylabel(r"mean $\|x_i - c_j\|^2$")
    a1.set_title("distances grow with d")
    for reg, ls in (("NE", "--"), ("L2", "-")):
        a2.semilogy(ds, rel_gap[reg], ls, marker="o", label=reg)
    a2.set_xlabel("d")
    a2.set_ylabel(r"mean $(\tilde{\mathcal{L}} - \mathcal{L})/\mathcal{L}$")
    a2.set_title(f"the bound tightens (tau={tau:g})")
    a2.legend()
    fig.tight_layout()
    plt.show()
