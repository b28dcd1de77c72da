"""torch.rot90 (an augmentation CNN programs call): values, layout and gradients against torch,
for every number of quarter turns and pair of dimensions, and torch's errors."""
import numpy as np
import pytest

import learntorch
from oracle import both_raise, check_against_torch, require_torch, torch

TURNS = [-5, -1, 0, 1, 2, 3, 4, 6]
PLANES = [(0, 1), (1, 0), (2, 3), (-1, -2), (1, 3), (0, -1)]


@pytest.mark.parametrize("k", TURNS)
@pytest.mark.parametrize("dims", PLANES)
def test_rot90_values_and_gradients_match_torch(k, dims):
    x = np.random.default_rng(k + 10).standard_normal((2, 3, 4, 5))[:, :, ::-1, 1:]   # strided
    out = check_against_torch(lambda t: learntorch.rot90(t, k, dims), lambda t: torch.rot90(t, k, dims), x)
    # the same layout as torch's: a view of a flipped copy for odd turns, contiguous otherwise
    # (every result is a new array, so the input's own strides do not matter; torch cannot take
    # numpy's negative strides, hence its contiguous copy)
    want = torch.rot90(torch.from_numpy(np.ascontiguousarray(x)), k, dims)
    assert out.is_contiguous() == want.is_contiguous()
    assert out.stride() == want.stride()


def test_the_method_and_the_defaults_turn_the_first_two_dims_counter_clockwise():
    require_torch()
    image = [[1, 2, 3], [4, 5, 6]]
    assert learntorch.tensor(image).rot90().tolist() == torch.tensor(image).rot90().tolist() == \
        [[3, 6], [2, 5], [1, 4]]
    assert learntorch.tensor(image).rot90(2, [1, 0]).tolist() == [[6, 5, 4], [3, 2, 1]]


@pytest.mark.parametrize("shape, k, dims", [
    ((2, 3), 1, [0]), ((2, 3), 1, [0, 1, 1]), ((3,), 1, [0, 1]), ((3,), 1, [0, 0]),
    ((2, 3), 1, [0, 0]), ((2, 3), 1, [0, -2]), ((2, 3), 1, [1, -1]), ((2, 3), 1, [0, 2]),
    ((2, 3), 1, [-3, 0]),
])
def test_rot90_refuses_what_torch_refuses(shape, k, dims):
    both_raise(lambda m: m.rot90(m.zeros(*shape), k, dims))
