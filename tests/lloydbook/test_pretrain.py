"""lloydbook.pretrain: the chapters' stacked sweeps, trained as one before the build."""

import pytest

from lloydbook import book, lemmas, pretrain
from lloydlib import training
from lloydlib.training import TrainConfig


def _chapter_grids(scale):
    """The grids chapters 04, 05 and 07 pass to train_grid (their cells, written out again here), and 09's race."""
    P, F = book.params("learning", scale), book.params("families", scale)
    base = TrainConfig(**P.base)
    shape = base.replace(steps=P.shape_steps)
    grids = [
        training.grid(base, d=P.tau_ds, tau=P.taus, embedding=P.embeddings, loss=P.losses, seed=P.seeds),
        training.grid(shape, d=P.ds, tau=P.d_taus, embedding=P.d_embeddings, loss=P.losses, seed=P.seeds),
        training.grid(
            base.replace(steps=P.lr_steps),
            d=P.lr_ds,
            lr=P.lrs,
            embedding=P.lr_embeddings,
            loss=P.sub_losses,
            seed=P.seeds,
        ),
        training.grid(shape, n=P.ns, embedding=P.n_embeddings, loss=P.sub_losses, seed=P.n_seeds),
        training.grid(
            TrainConfig(**F.base), family=F.families, tau=F.taus, embedding=F.embeddings, loss=F.losses, seed=F.seeds
        ),
    ]
    for d, t in P.k_cases:
        grids.append(
            training.grid(shape.replace(d=d, tau=t), k=P.ks, embedding=P.embeddings, loss=P.sub_losses, seed=P.k_seeds)
        )
    return grids + [lemmas.race_configs(book.params("lemmas", scale))]


@pytest.mark.parametrize("scale", ["ci", "default"])
def test_book_configs_are_exactly_the_chapters_stacked_runs_each_once(scale):
    configs = pretrain.book_configs(scale)
    assert len(configs) == len(set(configs))
    assert set(configs) == {c for g in _chapter_grids(scale) for c in g}


def test_the_dry_run_plans_and_trains_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LLOYD_CACHE", str(tmp_path))
    assert pretrain.main(["--scale", "ci", "--dry-run"]) == 0
    out = capsys.readouterr().out
    n = len(pretrain.book_configs("ci"))
    assert f"{n} runs, {n} not in {tmp_path}" in out and "stacks, 2 workers" in out
    assert not any(tmp_path.iterdir())
