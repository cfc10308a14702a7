"""lloydbook: the book layer of "Transformers That Cluster", built on :mod:`lloydlib`.

The library never imports this package. It holds what only the chapters need:

- :mod:`lloydbook.book`: start a chapter (settings at the active ``LLOYD_SCALE``, device, seeds from ``LLOYD_SEED``);
- :mod:`lloydbook.scales`: every chapter's settings for the three scales, one table, and ``params``, which
  reads a chapter's, read-only at every depth;
- :mod:`lloydbook.glue`: a Colab-safe ``glue``;
- :mod:`lloydbook.claims`: the claims each chapter checks and the statements it leaves open, as rows of data
  (``registry``), their table (``render``), and the Sphinx extension that builds the Scorecard from them
  (``sphinx``);
- :mod:`lloydbook.results`: the checkout's folders (recorded results, the run store, the training cache);
- :mod:`lloydbook.sweeps`: every sweep a chapter trains or reads, listed once (the registry);
- :mod:`lloydbook.runs`: the run store's commands (``python -m lloydbook.runs check|verify|build|...``);
- :mod:`lloydbook.nbval_keep`: the pytest plugin that keeps the chapters nbval executed, for the build;
- :mod:`lloydbook.tables`: an HTML table whose cells may hold math, shared by several chapters;
- one module of helpers, figures and tables per chapter: :mod:`lloydbook.lloyd_tasks` (Lloyd's algorithm and
  clustering tasks), :mod:`lloydbook.construction` (Lloyd inside a transformer), :mod:`lloydbook.leanness`
  (what leanness buys), :mod:`lloydbook.learning` and :mod:`lloydbook.figures` (the two learning chapters),
  :mod:`lloydbook.many_steps`, :mod:`lloydbook.families` and :mod:`lloydbook.landscapes` (the three
  generalisation chapters), :mod:`lloydbook.lemmas` (the lemmas), :mod:`lloydbook.attention_clustering` (attention-based clustering);
"""

from . import book, claims
from .book import device, params, scale, seed, setup
from .glue import glue, on_colab

__all__ = ["book", "claims", "device", "glue", "on_colab", "params", "scale", "seed", "setup"]
