"""lloydlib.theory.head: the sandwiches of Lemmas I.3-I.8 hold for the constants and catch wrong ones."""

import pytest
import torch

from lloydlib import theory as T
from lloydlib.attention import distance_attention
from lloydlib.theory import head as H
from lloydlib.theory import sandwich as S

SETTING = T.AttentionSetting(m=3, m_p=4, d_emb=3, gamma=0.5, Gamma1=1.0, Gamma2=1.0, rho=1.0, rho_p=1.0)


def test_batched_attention_equals_library_operator():
    g = torch.Generator().manual_seed(0)
    Z = torch.rand(3, 5, 4, generator=g, dtype=torch.float64)
    Zp = torch.rand(3, 6, 4, generator=g, dtype=torch.float64)
    W = [T.random_spectral((3, 4, 4), 1.5, generator=g) for _ in range(3)]
    ours = H.batched_attention(Z, Zp, *W, 0.7)
    lib = torch.cat([distance_attention(Z[i : i + 1], Zp[i : i + 1], W[0][i], W[1][i], W[2][i], 0.7) for i in range(3)])
    assert torch.allclose(ours, lib, atol=1e-13)
    assert torch.allclose(S.spec(W[0]), torch.full((3,), 1.5, dtype=torch.float64))


def test_setting_constant_and_delta():
    assert SETTING.delta == pytest.approx(0.5 / 3**0.5 * 4)
    assert SETTING.constant("I.5") == 3.0  # kappa2 = m rho'
    assert isinstance(T.AttentionSetting(m=2, m_p=2, d_emb=2, gamma=1).gamma, float)


def test_lemma_I3_as_stated_fails_and_the_sharp_constant_holds():
    res = T.softmax_sandwich(8, 0.3, restarts=8, steps=60, random_pairs=128)
    assert res["stated"].violated and not res["sharp"].violated
    assert res["linf"] <= res["linf_bound"]


@pytest.mark.parametrize("lemma", T.LEMMAS)
def test_sandwich_holds_for_the_lemmas_constants(lemma):
    res = T.attention_sandwich(lemma, SETTING, restarts=8, steps=60, random_pairs=32)
    assert not res.violated, (res, res.pair)
    assert 0 < res.ratio <= res.bound


def test_sandwich_catches_a_wrong_constant():
    # kappa2 with a factor 1/2 too few: the values lemma is tight, so the sandwich must catch it
    wrong = 0.5 * T.kappa2(SETTING.m, SETTING.rho_p)
    res = T.attention_sandwich("I.5", SETTING, restarts=8, steps=60, random_pairs=32, bound=wrong)
    assert res.violated and res.ratio > 1.5 * wrong
    # kappa5 without its factor m (the sum over the m queries), at a small gamma where kappa5 is tight
    cold = T.AttentionSetting(m=3, m_p=4, d_emb=3, gamma=0.01)
    res = T.attention_sandwich("I.8", cold, restarts=8, steps=60, random_pairs=32, bound=cold.constant("I.8") / 3)
    assert res.violated and res.ratio > 2 * res.bound, res


def test_sharpened_query_and_key_constants():
    s = SETTING
    for lemma, f in (("I.6", T.kappa3_sharpened), ("I.7", T.kappa4_sharpened)):
        bound = f(s.m, s.rho, s.rho_p, s.Gamma1, s.Gamma2, s.gamma, s.d_emb)
        assert bound < s.constant(lemma)
        res = T.attention_sandwich(lemma, s, restarts=8, steps=100, random_pairs=32, bound=bound)
        assert not res.violated, res
        if lemma == "I.6":  # the query constant is attained
            assert res.ratio > 0.95 * bound, res


def test_dispersion_bound_is_tight_in_the_ball():
    res = T.dispersion_sandwich(SETTING, restarts=8, steps=100, random_pairs=32)
    assert not res.violated and res.ratio > 0.99 * res.bound


def test_box_tokens_stay_in_the_unit_box():
    box = T.AttentionSetting(m=2, m_p=3, d_emb=3, tokens="box")
    res = T.attention_sandwich("I.8", box, restarts=2, steps=5, random_pairs=8)
    assert float(res.pair["Zp"].min()) >= 0 and float(res.pair["Zp"].max()) <= 1 and not res.violated


@pytest.mark.parametrize(
    "call,exc,match",
    [
        (lambda: T.AttentionSetting(m=0, m_p=2, d_emb=3), ValueError, "m must be >= 1"),
        (lambda: T.AttentionSetting(m=2, m_p=2, d_emb=3, rho=0.0), ValueError, "rho must be > 0"),
        (lambda: T.AttentionSetting(m=2, m_p=2, d_emb=3, Gamma1=True), TypeError, "Gamma1 must be a real number"),
        (lambda: T.AttentionSetting(m=2, m_p=2, d_emb=3, tokens="cube"), ValueError, "tokens must be one of"),
        (lambda: T.attention_sandwich("I.9", SETTING), ValueError, "lemma must be one of"),
        (lambda: T.attention_sandwich("I.5", {"m": 2}), TypeError, "setting must be an AttentionSetting"),
        (lambda: T.attention_sandwich("I.5", SETTING, restarts=0), ValueError, "restarts must be >= 1"),
        (lambda: T.attention_sandwich("I.5", SETTING, bound=-1.0), ValueError, "bound must be > 0"),
        (lambda: T.attention_sandwich("I.5", SETTING, seed=-1), ValueError, "seed must be >= 0"),
        (lambda: T.dispersion_sandwich("ball"), TypeError, "setting must be an AttentionSetting"),
        (lambda: T.dispersion_sandwich(SETTING, lr=-0.1), ValueError, "lr must be > 0"),
        (lambda: T.softmax_sandwich(1, 0.3), ValueError, "m must be >= 2"),
        (lambda: T.softmax_sandwich(3, 0.0), ValueError, "delta_value must be > 0"),
        (lambda: T.softmax_sandwich(3, 0.3, steps=-1), ValueError, "steps must be >= 0"),
    ],
)
def test_bad_input_names_the_argument(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
