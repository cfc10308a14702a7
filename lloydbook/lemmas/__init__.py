"""The book layer of the chapter "The Lipschitz and norm-bound lemmas" (book/09_lemmas.ipynb): :mod:`.searches`
(the sandwich searches over a grid and the rows of the chapter's tables), :mod:`.summaries` (the numbers the prose
pastes, as dicts for one ``ch.glue_many``, and the tables that show what the searches found) and :mod:`.figures`.
"""

from .figures import *  # noqa: F403
from .figures import __all__ as _figures
from .searches import *  # noqa: F403
from .searches import __all__ as _searches
from .summaries import *  # noqa: F403
from .summaries import __all__ as _summaries

__all__ = [*_searches, *_summaries, *_figures]
