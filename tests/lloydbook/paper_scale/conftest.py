"""Shared by the tests of lloydbook.paper_scale: a fresh claims table of chapter 04, ``learning`` (Figs. 10 and
17; test_shapes.py and test_clusters.py override it with chapter 05's, ``shapes``: Figs. 11, 13, 14 and 15)."""

import pytest

from lloydbook import claims


@pytest.fixture
def chapter():
    """The claims of chapter ``learning``, emptied before and after the test."""
    claims.start("learning")
    yield
    claims.start("learning")
