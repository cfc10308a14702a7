"""lloydbook: the book layer of "Transformers That Cluster", built on :mod:`lloydlib` (which never imports it).

It holds what only the chapters need: :mod:`lloydbook.book` starts a chapter (its settings at the active
``LLOYD_SCALE`` from :mod:`lloydbook.scales`, its device, its seeds from ``LLOYD_SEED``); :mod:`lloydbook.claims`
holds the claims each chapter checks and builds the Scorecard; :mod:`lloydbook.results`, :mod:`lloydbook.sweeps`
and :mod:`lloydbook.runs` the recorded results, the sweeps and the run store's commands; :mod:`lloydbook.glue`,
:mod:`lloydbook.tables` and :mod:`lloydbook.nbval_keep` a Colab-safe ``glue``, shared tables and the pytest plugin
that keeps the executed chapters; the other modules hold one chapter's helpers, figures and tables each.

Import the module you need (``from lloydbook import book``): the package itself imports none of them, so that a
process that needs a light one (the nbval plugin, the Sphinx extension) does not import lloydlib.
"""

__all__: list[str] = []
