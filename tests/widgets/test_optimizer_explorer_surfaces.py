"""The loss surfaces: their gradients come from autograd, and their minima are where they say.

Oracle: each surface's formula uses only operators and indexing, so the very
same function runs on a PyTorch tensor -- PyTorch's autograd of the same formula
is the reference gradient.
"""
import math

import numpy as np
import pytest

import learntorch
from oracle import require_torch
from widgets._surfaces import SURFACES, Surface, make_surface, quadratic

ALL_SURFACES = [SURFACES[name]() for name in SURFACES] + [quadratic(25.0, angle=30.0)]
POINTS = [(-1.5, 2.0), (0.3, -0.7), (1.2, 0.9), (-2.5, -1.1)]


def _learntorch_grad(surface, point):
    p = learntorch.tensor(point, dtype=learntorch.float64, requires_grad=True)
    loss = surface(p)
    loss.backward()
    return loss.item(), p.grad.numpy()


@pytest.mark.parametrize("surface", ALL_SURFACES, ids=lambda s: s.label)
@pytest.mark.parametrize("point", POINTS)
def test_gradient_equals_torch_autograd_of_the_same_formula(surface, point):
    torch = require_torch()
    p = torch.tensor(point, dtype=torch.float64, requires_grad=True)
    expected_loss = surface(p)
    expected_loss.backward()
    loss, grad = _learntorch_grad(surface, point)
    assert loss == pytest.approx(expected_loss.item(), rel=1e-12)
    np.testing.assert_allclose(grad, p.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("surface", ALL_SURFACES, ids=lambda s: s.label)
def test_known_minima_are_minima(surface):
    """Zero gradient, the stated value, and every nearby point is higher."""
    for minimum in surface.minima:
        loss, grad = _learntorch_grad(surface, minimum)
        assert loss == pytest.approx(surface.min_value, abs=1e-12)
        np.testing.assert_allclose(grad, 0.0, atol=1e-9)
        for angle in np.linspace(0, 2 * math.pi, 8, endpoint=False):
            nearby = (minimum[0] + 1e-3 * math.cos(angle), minimum[1] + 1e-3 * math.sin(angle))
            assert _learntorch_grad(surface, nearby)[0] > loss


def test_rosenbrock_and_himmelblau_minima_match_the_textbook():
    assert SURFACES["rosenbrock"]().minima == ((1.0, 1.0),)
    himmelblau = SURFACES["himmelblau"]()
    assert len(himmelblau.minima) == 4
    assert (3.0, 2.0) in himmelblau.minima
    # the other three, as tabulated (to 6 decimals) in the optimization literature
    for tabulated in [(-2.805118, 3.131312), (-3.779310, -3.283186), (3.584428, -1.848126)]:
        assert any(np.allclose(m, tabulated, atol=1e-6) for m in himmelblau.minima)


def test_quadratic_curvatures_are_one_and_the_condition_number():
    # the Hessian by finite differences of the autograd gradient
    for kappa, angle in [(10.0, 0.0), (40.0, 25.0)]:
        bowl = quadratic(kappa, angle=angle)
        hessian = np.array([(_learntorch_grad(bowl, e * 1e-6)[1]) / 1e-6
                            for e in np.eye(2)])
        np.testing.assert_allclose(np.linalg.eigvalsh((hessian + hessian.T) / 2), [1.0, kappa],
                                   rtol=1e-6)


@pytest.mark.parametrize("surface", ALL_SURFACES, ids=lambda s: s.label)
def test_grid_values_equal_point_by_point_values(surface):
    xs, ys, values = surface.values_on_grid(resolution=7)
    assert values.shape == (7, 7)
    for i in [0, 3, 6]:
        for j in [1, 5]:
            point = learntorch.tensor([xs[j], ys[i]], dtype=learntorch.float64)
            assert values[i, j] == pytest.approx(surface(point).item(), rel=1e-12)


def test_a_function_that_is_not_elementwise_is_evaluated_point_by_point():
    matrix = learntorch.tensor([[2.0, 0.5], [0.5, 1.0]], dtype=learntorch.float64)
    surface = make_surface(lambda p: p @ matrix @ p)  # a grid tensor would not fit p @ A
    xs, ys, values = surface.values_on_grid(resolution=5)
    point = np.array([xs[4], ys[1]])
    assert values[1, 4] == pytest.approx(point @ matrix.numpy() @ point)


def test_your_own_function_becomes_a_surface_with_generic_window():
    def wavy(p):
        return p[0] ** 2 + p[1] ** 2

    surface = make_surface(wavy)
    assert (surface.name, surface.window, surface.start, surface.min_value) == \
        ("wavy", (-2.0, 2.0, -2.0, 2.0), (-1.5, 1.5), None)
    assert make_surface(lambda p: p[0] ** 2).name == "custom"
    moved = make_surface(wavy, window=(-1, 1, -3, 3), start=(0.5, 0.5))
    assert (moved.window, moved.start) == ((-1.0, 1.0, -3.0, 3.0), (0.5, 0.5))


def test_bad_surfaces_are_explained():
    with pytest.raises(ValueError, match="unknown surface 'banana'.*'rosenbrock'"):
        make_surface("banana")
    with pytest.raises(TypeError, match="surface must be a name.*got int"):
        make_surface(3)
    with pytest.raises(ValueError, match="condition_number only applies to the 'quadratic'"):
        make_surface("beale", condition_number=3)
    with pytest.raises(ValueError, match="condition_number must be >= 1"):
        quadratic(0.5)
    with pytest.raises(ValueError, match=r"start must be a point \(x, y\) of 2 numbers"):
        Surface("s", lambda p: p[0], start=(1.0, 2.0, 3.0))
    with pytest.raises(ValueError, match="window must be"):
        Surface("s", lambda p: p[0], window=(1, -1, 0, 1))
