"""A float16 running sum or product keeps its total in float32 and rounds each output once, as
torch's CPU kernel: adding 0.1 ten thousand times reaches 1000, where a float16 total stalls
at 256 (from there 256 + 0.1 rounds back to 256).  Compared bit for bit with torch 2.13."""
import numpy as np
import pytest

import learntorch
from oracle import require_torch, torch


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_running_totals_of_16_bit_floats_are_torchs_bits(op, dtype):
    require_torch()
    rs = np.random.RandomState(0)
    values = (rs.rand(6, 3000) * 0.2 + (0.9 if op == "cumprod" else 0.0)).astype(np.float32)
    got = getattr(learntorch.tensor(values).to(getattr(learntorch, dtype)), op)(1)
    want = getattr(torch.tensor(values).to(getattr(torch, dtype)), op)(1)
    assert str(got.dtype) == str(want.dtype).replace("torch", "learntorch")
    np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())


def test_a_long_float16_running_sum_does_not_stall():
    x = learntorch.full((10000,), 0.1, dtype=learntorch.float16)
    total = x.cumsum(0)[-1].item()
    assert total == 1000.0                               # 0.1 in float16 is 0.0999755..
    naive = np.float16(0)
    for v in x.numpy():                                  # the float16 running total
        naive = np.float16(naive + v)
    assert naive == 256.0
