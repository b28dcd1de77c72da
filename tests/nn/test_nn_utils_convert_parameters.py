"""parameters_to_vector / vector_to_parameters against torch: values, gradients, memory, errors."""
import numpy as np
import pytest

import learntorch
from oracle import require_torch


def make_params(lib):
    rng = np.random.default_rng(0)
    return [lib.nn.Parameter(lib.from_numpy(np.array(rng.standard_normal(s))))
            for s in [(3, 2), (4,), ()]]


def test_parameters_to_vector_concatenates_in_order_and_is_differentiable():
    torch = require_torch()
    results = []
    for lib in (learntorch, torch):
        params = make_params(lib)
        vec = lib.nn.utils.parameters_to_vector(params)
        assert vec.requires_grad and tuple(vec.shape) == (11,)
        (vec * lib.arange(11.0, dtype=lib.float64)).sum().backward()
        results.append((vec.detach().numpy().copy(), [p.grad.numpy().copy() for p in params]))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    for mine, theirs in zip(results[0][1], results[1][1]):
        np.testing.assert_array_equal(mine, theirs)


def test_vector_to_parameters_makes_each_parameter_a_view_of_its_slice():
    torch = require_torch()
    for lib in (learntorch, torch):
        params = make_params(lib)
        vec = lib.arange(11.0, dtype=lib.float64)
        lib.nn.utils.vector_to_parameters(vec, params)
        np.testing.assert_array_equal(params[0].detach().numpy(), [[0, 1], [2, 3], [4, 5]])
        assert params[2].item() == 10.0 and params[0].requires_grad
        vec[6] = -1.0  # shares memory with vec, as in torch
        assert params[1][0].item() == -1.0


def test_round_trip_restores_the_parameters():
    params = make_params(learntorch)
    saved = learntorch.nn.utils.parameters_to_vector(params).detach().clone()
    with learntorch.no_grad():
        for p in params:
            p.zero_()
    learntorch.nn.utils.vector_to_parameters(saved, params)
    np.testing.assert_array_equal(learntorch.nn.utils.parameters_to_vector(params)
                                  .detach().numpy(), saved.numpy())


@pytest.mark.parametrize("case", ["not a tensor", "too short", "non-contiguous"])
def test_bad_input_raises_torchs_error(case):
    torch = require_torch()
    errors = []
    for lib in (learntorch, torch):
        params = make_params(lib)
        try:
            if case == "not a tensor":
                lib.nn.utils.vector_to_parameters([1.0] * 11, params)
            elif case == "too short":
                lib.nn.utils.vector_to_parameters(lib.zeros(7, dtype=lib.float64), params)
            else:
                lib.nn.utils.parameters_to_vector([lib.nn.Parameter(params[0].detach().t())])
        except Exception as e:  # noqa: BLE001 -- comparing what is raised
            errors.append((type(e), str(e)))
    assert len(errors) == 2 and errors[0][0] is errors[1][0]
    if case == "not a tensor":
        assert errors[0][1] == errors[1][1] == "expected torch.Tensor, but got: list"
