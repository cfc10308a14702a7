"""Shared by the tests of lloydbook.paper_scale: a fresh claims table of the learning chapter."""

import pytest

from lloydbook import claims


@pytest.fixture
def chapter():
    """The claims of chapter ``learning``, emptied before and after the test."""
    claims.start("learning")
    yield
    claims.start("learning")
