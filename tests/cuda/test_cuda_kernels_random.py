"""The GPU's Philox4x32-10 generator: known answers, determinism, and the distributions it makes.

The bit generator is checked against the known-answer vectors published with
Random123 (the reference implementation); the distributions against their
exact laws with Kolmogorov-Smirnov distances and moments, on 4096 samples
(bounds at ~5 standard errors: a correct generator fails them about once in
a million runs, and the seeds are fixed, so a run never flakes).
"""
import math

import numpy as np
import pytest

import learntorch
from learntorch.backends.cuda import random as gpu_random
from learntorch.backends.cuda.array import CudaArray
from learntorch.backends.cuda.driver import numba_cuda

cuda = numba_cuda()
N = 4096
KS_BOUND = 1.95 / math.sqrt(N)   # Kolmogorov-Smirnov critical distance at alpha = 0.001

# philox4x32 10 lines of Random123's tests/kat_vectors: counter words, key words, output words
KNOWN_ANSWERS = [
    ((0x00000000, 0x00000000, 0x00000000, 0x00000000), (0x00000000, 0x00000000),
     (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)),
    ((0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff), (0xffffffff, 0xffffffff),
     (0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd)),
    ((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344), (0xa4093822, 0x299f31d0),
     (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1)),
]


@cuda.jit
def _philox_once(counter, key, out):
    words = cuda.local.array(4, np.uint64)
    gpu_random.philox4x32(counter[0], counter[1], counter[2], counter[3], key[0], key[1], words)
    for i in range(4):
        out[i] = words[i]


@pytest.mark.parametrize("counter,key,expected", KNOWN_ANSWERS)
def test_philox_matches_the_random123_known_answers(counter, key, expected):
    out = cuda.device_array(4, np.uint64)
    _philox_once[1, 1](cuda.to_device(np.array(counter, np.uint64)),
                       cuda.to_device(np.array(key, np.uint64)), out)
    assert [hex(w) for w in out.copy_to_host()] == [hex(w) for w in expected]


def _normal_cdf(x):
    return 0.5 * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def _ks_distance(samples, cdf):
    """Largest gap between the empirical distribution of ``samples`` and ``cdf``."""
    x = np.sort(samples.astype(np.float64))
    f = cdf(x)
    i = np.arange(1, len(x) + 1)
    return max(np.max(i / len(x) - f), np.max(f - (i - 1) / len(x)))


@pytest.mark.parametrize("dtype,bits", [(np.float32, 24), (np.float64, 53)])
def test_uniform_numbers_lie_in_zero_one_on_a_grid_of_random_bits(dtype, bits):
    gpu_random.manual_seed(0)
    u = gpu_random.rand((N,), dtype).copy_to_host()
    assert u.dtype == dtype and u.shape == (N,)
    assert u.min() >= 0 and u.max() < 1
    scaled = u.astype(np.float64) * 2.0 ** bits   # every value is k / 2**bits
    np.testing.assert_array_equal(scaled, np.floor(scaled))
    assert _ks_distance(u, lambda x: x) < KS_BOUND
    assert abs(u.mean() - 0.5) < 5 * math.sqrt(1 / 12 / N)
    assert abs(u.var() - 1 / 12) < 5 * math.sqrt(1 / 180 / N)  # Var of the sample variance


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_normal_numbers_follow_the_standard_normal_law(dtype):
    gpu_random.manual_seed(1)
    z = gpu_random.randn((N,), dtype).copy_to_host()
    assert z.dtype == dtype and np.isfinite(z).all()
    assert _ks_distance(z, _normal_cdf) < KS_BOUND
    assert abs(z.mean()) < 5 / math.sqrt(N)
    assert abs(z.var() - 1) < 5 * math.sqrt(2 / N)
    # Box-Muller makes pairs from one draw: the two halves of a pair must be uncorrelated
    assert abs(np.corrcoef(z[0::2], z[1::2])[0, 1]) < 5 / math.sqrt(N // 2)


def test_same_seed_same_numbers_and_every_call_new_ones():
    gpu_random.manual_seed(7)
    first, second = gpu_random.rand((300,)).copy_to_host(), gpu_random.rand((300,)).copy_to_host()
    gpu_random.manual_seed(7)
    np.testing.assert_array_equal(gpu_random.rand((300,)).copy_to_host(), first)
    np.testing.assert_array_equal(gpu_random.rand((300,)).copy_to_host(), second)
    assert np.mean(first == second) < 0.01  # the offset moved on between the calls
    gpu_random.manual_seed(8)
    assert np.mean(gpu_random.rand((300,)).copy_to_host() == first) < 0.01


def test_learntorch_cuda_manual_seed_seeds_this_generator():
    learntorch.cuda.manual_seed(123)
    via_cuda = gpu_random.randn((50,), np.float64).copy_to_host()
    gpu_random.manual_seed(123)
    np.testing.assert_array_equal(gpu_random.randn((50,), np.float64).copy_to_host(), via_cuda)


def test_each_element_depends_only_on_its_index_not_on_the_launch():
    # a longer array has more threads and blocks, yet starts with the numbers of the shorter one
    gpu_random.manual_seed(3)
    short = gpu_random.rand((13,)).copy_to_host()
    gpu_random.manual_seed(3)
    long = gpu_random.rand((200,)).copy_to_host()
    np.testing.assert_array_equal(long[:13], short)


def test_saved_state_replays_the_same_numbers():
    gpu_random.manual_seed(11)
    gpu_random.rand((10,))
    state = gpu_random.default_generator.get_state()
    after = gpu_random.randn((10,)).copy_to_host()
    gpu_random.default_generator.set_state(state)
    np.testing.assert_array_equal(gpu_random.randn((10,)).copy_to_host(), after)
    # a private generator has its own state: using it leaves the default one where it was
    private = gpu_random.rand((10,), generator=gpu_random.PhiloxGenerator(11)).copy_to_host()
    assert gpu_random.default_generator.get_state() == (11, 2)
    gpu_random.manual_seed(11)
    np.testing.assert_array_equal(gpu_random.rand((10,)).copy_to_host(), private)


def test_uniform_and_normal_take_their_range_and_moments():
    out = CudaArray.empty((2, 50), np.float64)
    gpu_random.manual_seed(5)
    base_u = gpu_random.uniform_(out.copy()).copy_to_host()
    base_z = gpu_random.normal_(out.copy()).copy_to_host()
    gpu_random.manual_seed(5)
    np.testing.assert_allclose(gpu_random.uniform_(out, -2.0, 3.0).copy_to_host(),
                               -2 + 5 * base_u, rtol=1e-15)
    np.testing.assert_allclose(gpu_random.normal_(out, 3.0, 0.5).copy_to_host(),
                               3 + 0.5 * base_z, rtol=1e-15)


def test_bernoulli_with_one_probability():
    gpu_random.manual_seed(2)
    draws = gpu_random.bernoulli_(CudaArray.empty((N,), np.float32), 0.3).copy_to_host()
    assert set(np.unique(draws)) <= {0.0, 1.0}
    assert abs(draws.mean() - 0.3) < 5 * math.sqrt(0.3 * 0.7 / N)


def test_bernoulli_with_a_probability_per_element():
    p = np.tile(np.array([0.0, 1.0, 0.5, 0.9], np.float64), 256)
    gpu_random.manual_seed(4)
    draws = gpu_random.bernoulli_(CudaArray.empty(p.shape, np.float64),
                                  CudaArray.from_host(p)).copy_to_host()
    assert (draws[p == 0] == 0).all() and (draws[p == 1] == 1).all()
    for prob in (0.5, 0.9):
        assert abs(draws[p == prob].mean() - prob) < 5 * math.sqrt(prob * (1 - prob) / 256)


def test_bad_requests_raise_with_the_fix():
    with pytest.raises(RuntimeError, match="int64.*float32 or float64"):
        gpu_random.uniform_(CudaArray.empty((4,), np.int64))
    with pytest.raises(RuntimeError, match=r"p to be in \[0, 1\].*1.5"):
        gpu_random.bernoulli_(CudaArray.empty((4,), np.float32), 1.5)
    with pytest.raises(RuntimeError, match="std >= 0.0"):
        gpu_random.normal_(CudaArray.empty((4,), np.float32), 0.0, -1.0)
    with pytest.raises(RuntimeError, match=r"shape \(3,\).*shape \(4,\)"):
        gpu_random.bernoulli_(CudaArray.empty((4,), np.float32),
                              CudaArray.from_host(np.zeros(3, np.float32)))


def test_torch_rand_and_randn_on_cuda_are_made_by_the_device_generator():
    learntorch.manual_seed(21)                   # seeds the cpu generator and this one
    u = learntorch.rand(3, 5, device="cuda")
    z = learntorch.randn(4, dtype=learntorch.float64, device="cuda", requires_grad=True)
    assert isinstance(u._data, CudaArray) and u.device == learntorch.device("cuda", 0)
    assert u.dtype is learntorch.float32 and tuple(u.shape) == (3, 5)
    assert z.dtype is learntorch.float64 and z.requires_grad and z.is_leaf
    gpu_random.manual_seed(21)
    np.testing.assert_array_equal(u.cpu().numpy(), gpu_random.rand((3, 5)).copy_to_host())
    np.testing.assert_array_equal(z.detach().cpu().numpy(),
                                  gpu_random.randn((4,), np.float64).copy_to_host())


def test_a_cpu_generator_argument_keeps_the_cpu_numbers():
    g = learntorch.Generator().manual_seed(0)
    on_cuda = learntorch.rand(6, generator=g, device="cuda")
    np.testing.assert_array_equal(on_cuda.cpu().numpy(),
                                  learntorch.rand(6, generator=learntorch.Generator()
                                                  .manual_seed(0)).numpy())
