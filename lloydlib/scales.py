"""Per-chapter settings for the three scales (``LLOYD_SCALE=ci|default|paper``).

One table, one entry per chapter; each entry maps a scale to that chapter's settings. ``ci`` keeps a
chapter about a minute on 2 CPU cores, ``default`` is what the rendered book shows (it must build on 2
CPU cores), ``paper`` is the papers' own settings, for a GPU. Read through :func:`lloydlib.book.params`.
"""
from __future__ import annotations

SCALES: dict[str, dict[str, dict]] = {
    # --- chapter "Lloyd's algorithm and clustering tasks" (book/01_lloyd.ipynb) ---
    "lloyd": {
        "ci": {},
        "default": {},
        "paper": {},
    },
    # --- chapter "Lloyd's algorithm inside a transformer" (book/02_construction.ipynb) ---
    "construction": {
        "ci": {},
        "default": {},
        "paper": {},
    },
    # --- chapter "What leanness buys" (book/03_leanness.ipynb) ---
    "leanness": {
        "ci": {},
        "default": {},
        "paper": {},
    },
    # --- chapters on learning (book/04_learning.ipynb, book/05_shapes.ipynb) ---
    "learning": {
        "ci": {},
        "default": {},
        "paper": {},
    },
    # --- chapter "The Lipschitz and norm-bound lemmas" (book/08_lemmas.ipynb) ---
    "lemmas": {
        "ci": {},
        "default": {},
        "paper": {},
    },
    # --- chapter "Attention-based clustering" (book/09_attention_clustering.ipynb) ---
    "quantization": {
        "ci": {},
        "default": {},
        "paper": {},
    },
}
