import numpy as np
from hypothesis import given

import learntorch
from oracle import arrays, broadcastable_pair, check_against_torch, check_against_finite_differences


@given(broadcastable_pair())
def test_mul_matches_torch_over_broadcast_and_views(pair):
    check_against_torch(lambda a, b: a * b, lambda a, b: a * b, *pair)


@given(arrays(min_dims=1))
def test_tanh_gradient_matches_finite_differences(a):
    check_against_finite_differences(lambda x: x.tanh(), a)
