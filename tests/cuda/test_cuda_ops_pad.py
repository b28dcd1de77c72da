"""F.pad on cuda in every mode matches the cpu, forward and backward (and double backward)."""
import numpy as np
import pytest

import learntorch
import learntorch.nn.functional as F
from cuda_compare import check, rand, same

PADS = {1: (2, 1), 2: (1, 2, 2, 0), 3: (1, 0, 0, 1, 1, 1)}


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_every_mode_pads_the_last_k_dims_with_gradients(mode, k):
    x = rand(*(1, 2, 3, 4, 3)[:k + 2])
    # the backward of a reflect/replicate border adds several gradients into one element
    check(lambda t: F.pad(t, PADS[k], mode=mode) * 1.5, x)


def test_constant_padding_with_a_value_crops_with_negative_widths():
    x = rand(3, 6)
    check(lambda t: F.pad(t, (-1, 2, 1, -1), value=-3.0), x)


def test_reflect_pad_of_a_strided_view_and_its_double_backward():
    x = rand(4, 3, 5)
    results = {}
    for device in ("cpu", "cuda"):
        t = learntorch.tensor(x, device=device, requires_grad=True)
        y = F.pad(t.transpose(1, 2), (2, 2), mode="reflect")
        g, = learntorch.autograd.grad((y * y).sum(), t, create_graph=True)
        gg, = learntorch.autograd.grad((g * g).sum(), t)
        results[device] = (y, g, gg)
    for a, b in zip(results["cuda"], results["cpu"]):
        same(a, b, rtol=1e-5, atol=1e-5)


def test_integer_tensors_pad_too():
    x = np.arange(24).reshape(2, 3, 4)
    check(lambda t: F.pad(t, (1, 2), mode="circular"), x, grad=False)
    check(lambda t: F.pad(t, (3, 1), mode="replicate"), x, grad=False)
