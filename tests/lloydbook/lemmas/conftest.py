"""Shared by the tests of lloydbook.lemmas: the Agg backend and the figures the plotting helpers show."""

import matplotlib
import matplotlib.pyplot as plt
import pytest

matplotlib.use("Agg")


@pytest.fixture
def shown(monkeypatch):
    """The figures the plotting helpers show (``plt.show`` records the current figure instead)."""
    figures = []
    monkeypatch.setattr(plt, "show", lambda: figures.append(plt.gcf()))
    yield figures
    plt.close("all")
