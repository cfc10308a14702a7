"""The book layer of the chapter "Attention-based clustering" (book/10_attention_clustering.ipynb).

The chapter keeps the model, the experiments, the claims and the glue; this subpackage holds what only
tallies or displays them: :mod:`.summaries` (Monte Carlo check list, summaries of training runs, the maps
compared with Lloyd's algorithm), :mod:`.tables` and :mod:`.figures`.
"""

from .figures import *  # noqa: F403
from .figures import __all__ as _figures
from .summaries import *  # noqa: F403
from .summaries import __all__ as _summaries
from .tables import *  # noqa: F403
from .tables import __all__ as _tables

__all__ = [*_summaries, *_tables, *_figures]
