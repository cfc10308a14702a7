"""A chapter's seeds, owned by its rows (``ch.rows``): every random draw of a chapter, the bootstrap of its evidence
included, derives from the chapter's seed value (``LLOYD_SEED``, read by :func:`lloydbook.book.setup`) and the
draw's name."""

from __future__ import annotations

from lloydlib.checks import check_int
from lloydlib.training import derive_seed

from .registry import Rows

__all__ = ["named_seed", "SeededRows"]


def named_seed(seed_value: int, chapter_key: str, name: str) -> int:
    """The seed (0 <= seed < 2**31) of the random draw called ``name`` in the chapter ``chapter_key`` at the
    chapter seed ``seed_value`` (an integer >= 0): the same at every run and scale, unrelated to every other
    name's, chapter's and seed value's (:func:`lloydlib.training.derive_seed`)."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"name must be a non-empty name of a random draw, got {name!r}")
    return derive_seed(check_int("seed_value", seed_value, 0), "book", chapter_key, name) >> 32


class SeededRows(Rows):
    """A chapter's rows (:class:`~lloydbook.claims.registry.Rows`) that also own its seed value ``seed_value``
    (an integer >= 0, ``LLOYD_SEED`` in a chapter) and derive the seed of each of its draws by name."""

    def __init__(self, chapter_key: str, seed_value: int):
        super().__init__(chapter_key)
        self.seed_value = check_int("seed_value", seed_value, 0)

    def seed(self, name: str) -> int:
        """The seed of the draw ``name`` in this chapter (:func:`named_seed`)."""
        return named_seed(self.seed_value, self.chapter, name)

    def __repr__(self) -> str:
        return f"SeededRows({self.chapter!r}, seed_value={self.seed_value}, {len(self)} rows)"
