"""The fused CPU attention kernel against the blocked one: values, every gradient, threads, compile, fallback."""

import collections
import math
import os
import re
import subprocess
import warnings

import pytest
import torch

from lloydlib import attention, fused_attention
from lloydlib.fast_layer import fast_layer

pytestmark = pytest.mark.skipif(not fused_attention.available(), reason="no C compiler for the fused kernel")


def _inputs(batch, m, mp, e, f, seed=0, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    q = (scale * torch.randn(batch, m, e, generator=g)).requires_grad_(True)
    k = (scale * torch.randn(batch, mp, e, generator=g)).requires_grad_(True)
    v = torch.randn(batch, mp, f, generator=g).requires_grad_(True)
    return q, k, v, torch.randn(batch, m, f, generator=g)


def _rel(a, b):
    """The largest difference relative to b's largest entry (absolute where b is all zero: a single key's
    weight is 1 whatever its score, so its gradients are 0)."""
    a, b = a.detach(), b.detach()
    return float((a - b).abs().max() / b.abs().max().clamp_min(1.0 if b.abs().max() == 0 else 0.0))


@pytest.mark.parametrize(
    "shape", [(3, 40, 37, 5, 4), (2, 17, 64, 3, 2), (2, 9, 30, 9, 8), (1, 1, 1, 5, 4), (2, 5, 7, 2, 1)]
)
@pytest.mark.parametrize("spread", [1.0, 4.0])
def test_values_and_every_gradient_agree_with_the_blocked_attention(shape, spread):
    q, k, v, g = _inputs(*shape, scale=spread)
    ours = fused_attention.fused_attention(q, k, v, 0.7)
    ref = attention.blocked_attention(q, k, v, 0.7)
    assert ours.shape == ref.shape
    assert _rel(ours, ref) < 1e-5
    for a, b in zip(torch.autograd.grad(ours, (q, k, v), g), torch.autograd.grad(ref, (q, k, v), g)):
        assert _rel(a, b) < 1e-4


def test_only_the_gradients_asked_for_are_formed():
    q, k, v, g = _inputs(2, 20, 20, 5, 4)
    q0, v0 = q.detach(), v.detach()
    out = fused_attention.fused_attention(q0, k, v0, 0.5)
    (dk,) = torch.autograd.grad(out, (k,), g)
    (dk_ref,) = torch.autograd.grad(attention.blocked_attention(q0, k, v0, 0.5), (k,), g)
    assert _rel(dk, dk_ref) < 1e-4


def test_far_keys_get_weight_zero_not_nan():
    q, k, v, _ = _inputs(1, 8, 8, 5, 4)
    k = k.detach().clone()
    k[0, 0] = 1e3  # scores of key 0 dwarf the others: every other weight underflows to 0
    out = fused_attention.fused_attention(q.detach(), k, v.detach(), 1.0)
    assert torch.isfinite(out).all()
    assert _rel(out, attention.blocked_attention(q.detach(), k, v.detach(), 1.0)) < 1e-5


def test_a_task_with_non_finite_input_gives_nan_and_the_others_are_untouched():
    q, k, v, g = _inputs(3, 10, 10, 5, 4)
    k = k.detach().clone()
    k[1, 3, 2] = math.inf
    k.requires_grad_(True)
    out = fused_attention.fused_attention(q.detach(), k, v.detach(), 1.0)
    assert torch.isnan(out[1]).all()
    ref = attention.blocked_attention(q.detach(), k, v.detach(), 1.0)
    assert _rel(out[[0, 2]], ref[[0, 2]]) < 1e-5
    (dk,) = torch.autograd.grad(out, (k,), g)
    assert torch.isnan(dk[1]).all() and torch.isfinite(dk[[0, 2]]).all()


def test_a_nan_gradient_reaches_its_own_task_only():
    """The backward's vectorised row loop keeps a NaN a NaN (its clamp is a select, not a branch)."""
    q, k, v, g = _inputs(3, 10, 10, 5, 4)
    g = g.clone()
    g[1, 4, 0] = math.nan
    out = fused_attention.fused_attention(q, k, v, 1.0)
    for grad in torch.autograd.grad(out, (q, k, v), g):
        assert torch.isnan(grad[1]).any() and torch.isfinite(grad[[0, 2]]).all()


def test_the_same_numbers_on_any_number_of_threads():
    q, k, v, g = _inputs(6, 30, 30, 5, 4)
    threads = torch.get_num_threads()
    try:
        results = []
        for t in (1, 2, 3):
            torch.set_num_threads(t)
            out = fused_attention.fused_attention(q, k, v, 0.9)
            results.append((out, *torch.autograd.grad(out, (q, k, v), g)))
    finally:
        torch.set_num_threads(threads)
    for other in results[1:]:
        assert all(torch.equal(a, b) for a, b in zip(results[0], other))


def test_cpu_attention_picks_the_fused_kernel_for_float32_and_the_blocked_one_for_float64():
    q, k, v, _ = _inputs(2, 12, 12, 5, 4)
    assert torch.equal(attention.cpu_attention(q, k, v, 0.3), fused_attention.fused_attention(q, k, v, 0.3))
    q64, k64, v64 = (t.detach().double() for t in (q, k, v))
    assert torch.equal(attention.cpu_attention(q64, k64, v64, 0.3), attention.blocked_attention(q64, k64, v64, 0.3))


def test_cpu_attention_checks_its_arguments():
    q, k, v, _ = _inputs(2, 12, 12, 5, 4)
    with pytest.raises(ValueError, match="k must have shape"):
        attention.cpu_attention(q, k[:, :, :3], v, 1.0)
    with pytest.raises(ValueError, match="v must have shape"):
        attention.cpu_attention(q, k, v[:, :5], 1.0)
    with pytest.raises(TypeError, match="one dtype"):
        attention.cpu_attention(q, k.double(), v, 1.0)


def test_other_shapes_than_head_2s_are_refused_and_cpu_attention_falls_back():
    for e, f in ((fused_attention.MAX_WIDTH + 1, fused_attention.MAX_WIDTH), (5, 2), (1, 0)):
        q, k, v, _ = _inputs(1, 4, 4, e, max(f, 1))
        v = v[..., :f]
        with pytest.raises(ValueError, match="one narrower"):
            fused_attention.fused_attention(q, k, v, 1.0)
        if f:
            assert torch.equal(attention.cpu_attention(q, k, v, 1.0), attention.blocked_attention(q, k, v, 1.0))


def test_compiled_fast_layer_runs_the_kernel_in_one_graph():
    torch.manual_seed(0)
    S, B, n, d, k, D = 1, 2, 512, 4, 6, 7  # B n^2 above FUSED_LIMIT: head 2 takes cpu_attention
    params = {name: 0.3 * torch.randn(S, 4, D, D) for name in ("Q", "K", "V")}
    params |= {name: 0.1 * torch.randn(S, 4, D) for name in ("bQ", "bK", "bV")}
    X, C, codes = torch.randn(S, B, n, d), torch.randn(S, B, k, d), torch.randn(k, D - d)
    eager = fast_layer(params, X, C, codes, 1.0)
    torch._dynamo.reset()
    explanation = torch._dynamo.explain(fast_layer)(params, X, C, codes, 1.0)
    assert explanation.graph_break_count == 0
    compiled = torch.compile(fast_layer)(params, X, C, codes, 1.0)
    assert _rel(compiled, eager) < 1e-5


def test_a_kernel_that_cannot_be_built_warns_and_falls_back(tmp_path):
    fused_attention._library.cache_clear()
    try:
        with pytest.MonkeyPatch.context() as mp, warnings.catch_warnings(record=True) as caught:
            mp.setenv("LLOYD_KERNEL_CACHE", str(tmp_path))
            mp.setenv("CC", str(tmp_path / "no-such-compiler"))
            warnings.simplefilter("always")
            assert fused_attention._library() is None
        assert any("could not be built" in str(w.message) for w in caught)
    finally:
        fused_attention._library.cache_clear()
    assert fused_attention._library() is not None  # the real build again


def test_the_kernel_is_built_per_source_and_processor(monkeypatch, tmp_path):
    monkeypatch.setenv("LLOYD_KERNEL_CACHE", str(tmp_path))
    path = fused_attention.kernel_path()
    assert path.parent == tmp_path and path.name.startswith("lloyd_attention_") and path.suffix == ".so"
    monkeypatch.setattr(fused_attention, "SOURCE", fused_attention.SOURCE + "\n")
    assert fused_attention.kernel_path() != path


def _compiler_is_gcc() -> bool:
    try:
        out = subprocess.run([os.environ.get("CC", "cc"), "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return out.returncode == 0 and "free software foundation" in out.stdout.lower()  # gcc, under any name


@pytest.mark.skipif(not _compiler_is_gcc(), reason="reads gcc's vectorisation report")
def test_the_loops_with_exp_are_vectorised(tmp_path):
    """The forward's exp loop and the backward's row loop, once per compiled width (8 widths; the backward
    with and without the keys' gradient). Without -fno-trapping-math gcc keeps exp's clamp a branch and runs
    both loops one lane at a time, 3 to 4 times slower at n=512 (issue notes, stop 51)."""
    src = tmp_path / "kernel.c"
    src.write_text(fused_attention.SOURCE)
    flags = [f for f in fused_attention._FLAGS if f != "-shared"]
    out = subprocess.run(
        [os.environ.get("CC", "cc"), *flags, "-c", "-fopt-info-vec-optimized", str(src), "-o", str(tmp_path / "k.o")],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    vectorised = collections.Counter(
        int(m.group(1)) for m in re.finditer(r"kernel\.c:(\d+):\d+: optimized: loop vectorized", out.stderr)
    )
    lines = fused_attention.SOURCE.splitlines()
    row = next(i for i, ln in enumerate(lines) if "INLINE void bwd_row" in ln)
    exp_line = 1 + next(i for i, ln in enumerate(lines) if "s[j] = exp_neg(s[j] - mx);" in ln)
    bwd_line = 1 + next(i for i in range(row, len(lines)) if "sc += qs[a] * kT[a * mp + j];" in lines[i])
    assert vectorised[exp_line] >= fused_attention.MAX_WIDTH - 1
    assert vectorised[bwd_line] >= 2 * (fused_attention.MAX_WIDTH - 1)
