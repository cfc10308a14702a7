"""Shared by the tests of lloydbook: the judge of stated parts that the functions stating them are given."""

import pytest

from lloydbook.claims.evidence import Judge


@pytest.fixture
def judge(request):
    """The judge a chapter would have at seed value 0 (:meth:`lloydbook.claims.evidence.Judge.at`): of the chapter
    the test module names in ``JUDGE_CHAPTER``, by default the key "" (the bootstrap's seeds outside any chapter)."""
    return Judge.at(0, getattr(request.module, "JUDGE_CHAPTER", ""))
