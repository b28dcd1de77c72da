"""nn.init against its formulas (empirical moments of large tensors) and against torch."""
import inspect
import math

import numpy as np
import pytest

import learntorch
import learntorch.nn as nn
from learntorch.nn import init
from oracle import require_torch

NAMES = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_",
         "zeros_", "eye_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
         "kaiming_normal_", "_calculate_fan_in_and_fan_out"]


@pytest.mark.parametrize("name", NAMES)
def test_signatures_equal_torch(name):
    torch = require_torch()
    mine = inspect.signature(getattr(init, name)).parameters
    theirs = inspect.signature(getattr(torch.nn.init, name)).parameters
    assert [(p.name, p.default) for p in mine.values()] == \
        [(p.name, p.default) for p in theirs.values()]


# ---------------------------------------------------------------- gains and fans
@pytest.mark.parametrize("args", [("linear",), ("conv2d",), ("conv_transpose3d",), ("sigmoid",),
                                  ("tanh",), ("relu",), ("leaky_relu",), ("leaky_relu", 0.2),
                                  ("leaky_relu", 1), ("leaky_relu", math.sqrt(5)), ("selu",)])
def test_calculate_gain_equals_torch(args):
    torch = require_torch()
    assert init.calculate_gain(*args) == torch.nn.init.calculate_gain(*args)


@pytest.mark.parametrize("args", [("leaky_relu", True), ("leaky_relu", "0.1"), ("softmax",)])
def test_calculate_gain_errors_equal_torch(args):
    torch = require_torch()
    with pytest.raises(ValueError) as theirs:
        torch.nn.init.calculate_gain(*args)
    with pytest.raises(ValueError) as mine:
        init.calculate_gain(*args)
    assert str(mine.value) == str(theirs.value)


@pytest.mark.parametrize("shape", [(3, 5), (64, 32, 3, 3), (8, 4, 5), (2, 1, 1, 1, 1)])
def test_fan_in_and_fan_out_equal_torch(shape):
    torch = require_torch()
    assert init._calculate_fan_in_and_fan_out(learntorch.empty(shape)) == \
        torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))


def test_fans_of_a_vector_are_an_error_like_torch():
    for lib in (learntorch, require_torch()):
        with pytest.raises(ValueError, match="fewer than 2 dimensions"):
            lib.nn.init._calculate_fan_in_and_fan_out(lib.empty(5))


# ---------------------------------------------------------------- the distributions
def big(shape=(500, 400), dtype=learntorch.float32):
    return nn.Parameter(learntorch.empty(shape, dtype=dtype))


def check_uniform(values, bound):
    """Values inside [-bound, bound], reaching its edges, with U(-b, b)'s mean and variance."""
    assert np.abs(values).max() <= bound
    assert np.abs(values).max() > 0.999 * bound
    assert abs(values.mean()) < 5 * bound / math.sqrt(3 * values.size)
    assert values.var() == pytest.approx(bound ** 2 / 3, rel=0.02)


def check_normal(values, mean, std):
    assert abs(values.mean() - mean) < 5 * std / math.sqrt(values.size)
    assert values.std() == pytest.approx(std, rel=0.01)
    # a normal (not a uniform of the same variance): 4.6% of draws lie beyond 2 std
    assert np.mean(np.abs(values - mean) > 2 * std) == pytest.approx(0.0455, abs=0.005)


def test_uniform_and_normal_fill_in_place_and_return_the_tensor():
    w = big()
    assert init.uniform_(w, -0.5, 1.5) is w
    v = w.detach().numpy()
    assert v.min() >= -0.5 and v.max() <= 1.5 and v.mean() == pytest.approx(0.5, abs=0.01)
    assert init.normal_(w, 2.0, 0.5) is w
    check_normal(w.detach().numpy(), 2.0, 0.5)
    assert w.is_leaf and w.requires_grad and w.grad_fn is None  # no graph was recorded


@pytest.mark.parametrize("gain", [1.0, math.sqrt(2)])
@pytest.mark.parametrize("shape", [(500, 400), (64, 32, 3, 3)])
def test_xavier_uniform_and_normal_follow_the_formula(gain, shape):
    w = big(shape)
    fan_in, fan_out = init._calculate_fan_in_and_fan_out(w)
    std = gain * math.sqrt(2.0 / (fan_in + fan_out))
    check_uniform(init.xavier_uniform_(w, gain=gain).detach().numpy(), math.sqrt(3) * std)
    check_normal(init.xavier_normal_(w, gain=gain).detach().numpy(), 0.0, std)


@pytest.mark.parametrize("a, mode, nonlinearity", [(0, "fan_in", "leaky_relu"),
                                                   (math.sqrt(5), "fan_in", "leaky_relu"),
                                                   (0, "fan_out", "relu"),
                                                   (0.2, "fan_out", "leaky_relu"),
                                                   (0, "fan_in", "tanh")])
def test_kaiming_uniform_and_normal_follow_the_formula(a, mode, nonlinearity):
    w = big((64, 32, 3, 3))
    fan = 32 * 9 if mode == "fan_in" else 64 * 9
    std = init.calculate_gain(nonlinearity, a) / math.sqrt(fan)
    check_uniform(init.kaiming_uniform_(w, a, mode, nonlinearity).detach().numpy(),
                  math.sqrt(3) * std)
    check_normal(init.kaiming_normal_(w, a, mode, nonlinearity).detach().numpy(), 0.0, std)


def test_kaiming_mode_must_be_fan_in_or_fan_out_like_torch():
    torch = require_torch()
    for lib in (learntorch, torch):
        with pytest.raises(ValueError, match="Mode fan_avg not supported"):
            lib.nn.init.kaiming_uniform_(lib.empty(3, 4), mode="fan_avg")


def test_kaiming_of_an_empty_tensor_warns_and_does_nothing_like_torch():
    torch = require_torch()
    for lib in (learntorch, torch):
        for fn in (lib.nn.init.kaiming_uniform_, lib.nn.init.kaiming_normal_):
            w = lib.empty(0, 3)
            with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
                assert fn(w) is w


def test_trunc_normal_stays_in_bounds_with_the_truncated_moments():
    w = init.trunc_normal_(big(), mean=1.0, std=2.0, a=-1.0, b=4.0)
    v = w.detach().numpy().astype(np.float64)
    assert v.min() >= -1.0 and v.max() <= 4.0
    # moments of N(1, 2^2) truncated to [-1, 4]: alpha = -1, beta = 1.5 in standard units
    phi = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda z: 0.5 * (1 + math.erf(z / math.sqrt(2)))  # noqa: E731
    alpha, beta = -1.0, 1.5
    z = cdf(beta) - cdf(alpha)
    mean = 1.0 + 2.0 * (phi(alpha) - phi(beta)) / z
    var = 4.0 * (1 + (alpha * phi(alpha) - beta * phi(beta)) / z
                 - ((phi(alpha) - phi(beta)) / z) ** 2)
    assert v.mean() == pytest.approx(mean, abs=0.01)
    assert v.var() == pytest.approx(var, rel=0.02)


@pytest.mark.parametrize("mean, std, a, b", [(0.0, 1.0, 10.0, 12.0), (0.0, 1.0, -40.0, -39.0),
                                             (0.0, 1.0, 2.5, 30.0)])
def test_trunc_normal_in_a_far_tail_draws_torchs_distribution(mean, std, a, b):
    """[a, b] in a tail: the values pile up at the bound nearest the mean, as the exact
    truncated normal's (and torch's, which redraws) do."""
    torch = require_torch()
    with pytest.warns(UserWarning, match="mean is more than 2 std"):
        mine = init.trunc_normal_(big(), mean, std, a, b).detach().numpy()
    with pytest.warns(UserWarning, match="mean is more than 2 std"):
        theirs = torch.nn.init.trunc_normal_(torch.empty(60, 50), mean, std, a, b).numpy()
    assert mine.min() >= a and mine.max() <= b
    for q in (10, 50, 90):
        assert np.percentile(mine, q) == pytest.approx(np.percentile(theirs, q),
                                                       abs=0.02 * (b - a))


@pytest.mark.parametrize("mean, std, a, b", [(0.0, 1e-3, 3.0, 3.5), (5.0, 0.01, -2.0, 2.0),
                                             (0.0, 1.0, -1e4, -1e4 + 1)])
def test_trunc_normal_hundreds_of_std_away_returns_at_once_at_the_nearest_bound(mean, std, a, b):
    """So far out that rejection sampling (torch's) would practically never end: one pass.
    There the truncated normal is, to first order, the bound nearest the mean plus an
    exponential of scale std^2 / distance pointing inwards: so are the values (float64)."""
    with pytest.warns(UserWarning):
        v = init.trunc_normal_(big(dtype=learntorch.float64), mean, std, a, b).detach().numpy()
    near = a if abs(a - mean) < abs(b - mean) else b
    scale = std * std / abs(near - mean)
    offsets = np.abs(v - near)
    assert v.min() >= a and v.max() <= b
    assert offsets.mean() == pytest.approx(scale, rel=0.05)
    assert np.median(offsets) == pytest.approx(scale * math.log(2), rel=0.05)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_trunc_normal_quantiles_follow_the_truncated_distribution(dtype):
    """The inverse CDF maps evenly spread probabilities onto the truncated normal's
    quantiles: compare the sorted draws with scipy-free quantiles from erf."""
    x = learntorch.empty(20000, dtype=getattr(learntorch, dtype))
    v = np.sort(init.trunc_normal_(x, mean=0.5, std=1.5, a=-1.0, b=3.0).numpy())
    assert v.dtype == np.dtype(dtype)
    cdf = lambda z: 0.5 * (1 + math.erf((z - 0.5) / (1.5 * math.sqrt(2))))  # noqa: E731
    low, high = cdf(-1.0), cdf(3.0)
    for q in (0.05, 0.25, 0.5, 0.75, 0.95):
        value = v[int(q * (len(v) - 1))]
        assert (cdf(value) - low) / (high - low) == pytest.approx(q, abs=0.02)


def test_trunc_normal_uses_the_backends_transform():
    calls = []

    class Spy(learntorch.backends.NumpyBackend):
        def trunc_normal_from_uniform(self, *args):
            calls.append(args[1:])
            return super().trunc_normal_from_uniform(*args)

    with learntorch.backends.use(Spy()):
        init.trunc_normal_(learntorch.empty(3), 0.0, 2.0, -1.0, 1.0)
    assert calls == [(0.0, 2.0, -1.0, 1.0)]


def test_the_normal_quantile_of_the_init_family_equals_torchs_to_float64_rounding():
    torch = require_torch()
    from learntorch.backends.numpy_families.init import ndtri
    p = np.concatenate([np.linspace(0, 1, 4001), np.logspace(-320, -1, 200),
                        1 - np.logspace(-16, -1, 50), [1.5, -0.1, np.nan]])
    with np.errstate(all="ignore"):
        mine = ndtri(p)
    theirs = torch.special.ndtri(torch.tensor(p)).numpy()
    np.testing.assert_allclose(mine, theirs, rtol=4e-15, atol=0)  # (nan and inf alike)


# ---------------------------------------------------------------- deterministic fills
@pytest.mark.parametrize("shape", [(3, 3), (2, 5), (5, 2)])
def test_eye_constant_ones_zeros_equal_torch(shape):
    torch = require_torch()
    for name, args in (("eye_", ()), ("constant_", (0.25,)), ("ones_", ()), ("zeros_", ())):
        mine = getattr(init, name)(big(shape), *args)
        theirs = getattr(torch.nn.init, name)(torch.nn.Parameter(torch.empty(shape)), *args)
        assert np.array_equal(mine.detach().numpy(), theirs.detach().numpy()), name
        assert mine.requires_grad and mine.is_leaf


def test_eye_needs_a_matrix_like_torch():
    torch = require_torch()
    for lib in (learntorch, torch):
        with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
            lib.nn.init.eye_(lib.empty(2, 2, 2))


def test_fills_keep_the_dtype_and_bump_the_version():
    w = learntorch.empty(4, 4, dtype=learntorch.float64)
    for fn in (init.ones_, init.eye_, lambda t: init.normal_(t), init.xavier_uniform_):
        version = w._version
        assert fn(w) is w
        assert w.dtype is learntorch.float64 and w._version > version


# ---------------------------------------------------------------- randomness
def test_generator_keyword_gives_reproducible_draws_and_spares_the_default():
    def draw(fn):
        g = learntorch.Generator().manual_seed(11)
        return fn(learntorch.empty(20, 10), generator=g).numpy().copy()
    state = learntorch.get_rng_state()
    for fn in (init.uniform_, init.normal_, init.trunc_normal_, init.xavier_uniform_,
               init.xavier_normal_, init.kaiming_uniform_, init.kaiming_normal_):
        assert np.array_equal(draw(fn), draw(fn)), fn.__name__
    after = learntorch.rand(3).numpy()
    learntorch.set_rng_state(state)
    assert np.array_equal(after, learntorch.rand(3).numpy())  # the default stream is untouched


def test_default_draws_follow_manual_seed():
    learntorch.manual_seed(5)
    a = init.kaiming_normal_(learntorch.empty(10, 10)).numpy().copy()
    learntorch.manual_seed(5)
    b = init.kaiming_normal_(learntorch.empty(10, 10)).numpy()
    assert np.array_equal(a, b)
