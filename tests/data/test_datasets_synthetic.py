"""The synthetic 2-D sets: shapes, dtypes, determinism, and the geometry each one promises.

With ``noise=0`` every point must lie exactly on its class's curve (checked
with numpy in float64 against the float32 output); with noise, the spread of
the points around the curve must be the noise level.
"""
import numpy as np
import pytest

import learntorch
from learntorch.datasets import make_moons, make_circles, make_spirals, make_xor, make_blobs

MAKERS = [make_moons, make_circles, make_spirals, make_xor, make_blobs]
ATOL = 1e-6  # float32 coordinates


def arrays(X, y):
    return X.numpy().astype(np.float64), y.numpy()


@pytest.mark.parametrize("make", MAKERS)
@pytest.mark.parametrize("n", [7, 100])
def test_shapes_and_dtypes(make, n):
    X, y = make(n, seed=0)
    assert list(X.shape) == [n, 2] and X.dtype == learntorch.float32
    assert list(y.shape) == [n] and y.dtype == learntorch.int64


@pytest.mark.parametrize("make", MAKERS)
def test_a_seed_gives_the_same_data_and_leaves_the_global_generator_alone(make):
    learntorch.manual_seed(0)
    before = learntorch.get_rng_state()
    a = make(50, noise=0.1, seed=3)
    b = make(50, noise=0.1, seed=3)
    c = make(50, noise=0.1, seed=4)
    assert a[0].tolist() == b[0].tolist() and a[1].tolist() == b[1].tolist()
    assert a[0].tolist() != c[0].tolist()
    after = learntorch.get_rng_state()
    learntorch.set_rng_state(before)
    x = learntorch.rand(3).tolist()
    learntorch.set_rng_state(after)
    assert learntorch.rand(3).tolist() == x, "seed= must not touch the global generator"


@pytest.mark.parametrize("make", MAKERS)
def test_a_generator_or_manual_seed_makes_the_draw_repeatable(make):
    a = make(30, noise=0.2, generator=learntorch.Generator().manual_seed(1))
    b = make(30, noise=0.2, generator=learntorch.Generator().manual_seed(1))
    assert a[0].tolist() == b[0].tolist()
    learntorch.manual_seed(8)
    c = make(30, noise=0.2)
    learntorch.manual_seed(8)
    assert make(30, noise=0.2)[0].tolist() == c[0].tolist()


@pytest.mark.parametrize("make", [make_moons, make_circles, make_spirals, make_blobs])
def test_classes_are_balanced_and_shuffle_false_keeps_them_in_order(make):
    X, y = make(101, shuffle=False, seed=0)
    counts = np.bincount(y.numpy())
    assert counts.max() - counts.min() <= 1
    assert list(y.numpy()) == sorted(y.numpy())
    _, shuffled = make(101, seed=0)
    assert list(shuffled.numpy()) != sorted(shuffled.numpy())


def test_moons_lie_on_two_half_circles():
    X, y = arrays(*make_moons(200, seed=0))
    upper, lower = X[y == 0], X[y == 1]
    np.testing.assert_allclose(np.hypot(*upper.T), 1, atol=ATOL)
    assert (upper[:, 1] >= -ATOL).all()
    np.testing.assert_allclose(np.hypot(lower[:, 0] - 1, lower[:, 1] - 0.5), 1, atol=ATOL)
    assert (lower[:, 1] <= 0.5 + ATOL).all()


def test_circles_have_radius_1_and_factor():
    X, y = arrays(*make_circles(200, factor=0.3, seed=0))
    np.testing.assert_allclose(np.hypot(*X[y == 0].T), 1, atol=ATOL)
    np.testing.assert_allclose(np.hypot(*X[y == 1].T), 0.3, atol=ATOL)


@pytest.mark.parametrize("n_classes, turns", [(2, 1.0), (3, 1.5)])
def test_spiral_arms_wind_out_with_their_angle(n_classes, turns):
    X, y = arrays(*make_spirals(300, n_classes=n_classes, turns=turns, seed=0))
    r = np.hypot(*X.T)
    assert r.max() == pytest.approx(1, abs=ATOL) and r.min() == pytest.approx(0, abs=ATOL)
    angle = np.arctan2(X[:, 1], X[:, 0])
    expected = 2 * np.pi * (turns * r + y / n_classes)
    off = np.angle(np.exp(1j * (angle - expected)))  # the difference, wrapped to (-pi, pi]
    far = r > 1e-3  # the angle of a point at the origin is undefined
    np.testing.assert_allclose(off[far], 0, atol=1e-3)


def test_xor_labels_are_the_xor_of_the_signs():
    X, y = arrays(*make_xor(500, seed=0))
    assert (np.abs(X) <= 1).all()
    np.testing.assert_array_equal(y, (X[:, 0] * X[:, 1] < 0).astype(np.int64))
    assert 0.4 < y.mean() < 0.6


def test_blobs_gather_around_their_centres():
    centres = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]])
    X, y = arrays(*make_blobs(900, centers=centres, noise=0.5, seed=0))
    for k, c in enumerate(centres):
        members = X[y == k]
        np.testing.assert_allclose(members.mean(0), c, atol=0.1)
        np.testing.assert_allclose(members.std(0), 0.5, rtol=0.15)
    X2, y2, drawn = make_blobs(60, centers=4, n_features=3, center_box=(-2, 2), seed=1,
                               return_centers=True)
    assert list(X2.shape) == [60, 3] and list(drawn.shape) == [4, 3]
    assert (np.abs(drawn.numpy()) <= 2).all() and set(y2.tolist()) == {0, 1, 2, 3}


def test_noise_is_the_spread_around_the_clean_curve():
    X, y = arrays(*make_circles(4000, noise=0.05, factor=0.5, seed=2))
    residual = np.hypot(*X[y == 0].T) - 1
    assert abs(residual.mean()) < 0.01 and residual.std() == pytest.approx(0.05, rel=0.1)


@pytest.mark.parametrize("call", [
    lambda: make_moons(50, seed=1, generator=learntorch.Generator()),
    lambda: make_moons(1), lambda: make_moons(2.5), lambda: make_circles(10, noise=-1),
    lambda: make_circles(10, factor=1.0), lambda: make_spirals(10, n_classes=0),
    lambda: make_spirals(2, n_classes=3), lambda: make_spirals(10, turns=0),
    lambda: make_xor(0), lambda: make_blobs(10, centers=0), lambda: make_blobs(2, centers=3),
    lambda: make_blobs(10, centers=[1.0, 2.0]),
])
def test_bad_arguments_are_value_errors(call):
    with pytest.raises(ValueError):
        call()
