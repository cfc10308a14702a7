"""Tests of lloydlib.construction.costs: parameter counts and the price of the keep construction."""

from lloydlib.construction import (
    keep_price,
    param_count,
)


def test_param_count_and_keep_price():
    assert param_count(32, 32, "OH") == 12 * 64**2 and param_count(32, 32, "BN") == 12 * 37**2
    assert param_count(4, 6, "BN", biases=True) == 12 * 49 + 12 * 7
    assert param_count(4, 6, "BN", construction="keep") == 12 * (8 + 3 + 2) ** 2
    p = keep_price(8, 10, "BN")
    assert p == {"d_emb": 12, "d_emb_keep": 22, "extra_dims": 10, "extra_point_tokens": 11, "extra_center_tokens": 1}
