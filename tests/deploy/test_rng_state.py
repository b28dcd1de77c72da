"""get_rng_state / set_rng_state and Generator.get_state / set_state: torch's uint8 tensors.

A checkpoint must hold the random state (learntorch.save refuses arbitrary objects), and
restoring it must give back exactly the numbers that followed it -- including numpy's
buffered half of a 64-bit draw, which float32 draws leave behind.
"""
import io

import numpy as np
import pytest

import learntorch
from oracle import both_raise, require_torch


def test_the_state_is_a_one_dimensional_uint8_tensor_like_torchs():
    torch = require_torch()
    mine, theirs = learntorch.get_rng_state(), torch.get_rng_state()
    assert isinstance(mine, learntorch.Tensor)
    assert mine.dtype is learntorch.uint8 and str(theirs.dtype) == "torch.uint8"
    assert mine.ndim == theirs.ndim == 1
    g = learntorch.Generator().manual_seed(3)
    assert g.get_state().dtype is learntorch.uint8


@pytest.mark.parametrize("draw", [
    lambda g: learntorch.rand(7, generator=g),          # float32: leaves a buffered 32-bit half
    lambda g: learntorch.randn(5, dtype=learntorch.float64, generator=g),
    lambda g: learntorch.randint(0, 1000, (9,), generator=g),
    lambda g: learntorch.randperm(20, generator=g),
], ids=["rand-float32", "randn-float64", "randint", "randperm"])
def test_restoring_a_state_replays_the_numbers_that_followed_it(draw):
    g = learntorch.Generator().manual_seed(11)
    draw(g)                        # move somewhere into the stream (an odd number of halves)
    state = g.get_state()
    expected = [draw(g).tolist() for _ in range(3)]
    g.set_state(state)
    assert [draw(g).tolist() for _ in range(3)] == expected


def test_the_default_generator_state_survives_save_and_load():
    learntorch.manual_seed(123)
    learntorch.rand(3)
    buf = io.BytesIO()
    learntorch.save({"rng": learntorch.get_rng_state()}, buf)
    expected = learntorch.rand(5).tolist()
    learntorch.manual_seed(999)    # anything else in between
    buf.seek(0)
    learntorch.set_rng_state(learntorch.load(buf)["rng"])
    assert learntorch.rand(5).tolist() == expected
    assert learntorch.initial_seed() == 123  # the seed travels with the state, as in torch


def test_one_generator_continues_anothers_stream_from_its_state():
    a = learntorch.Generator().manual_seed(5)
    learntorch.rand(3, generator=a)
    b = learntorch.Generator()
    b.set_state(a.get_state())
    assert learntorch.rand(4, generator=b).tolist() == learntorch.rand(4, generator=a).tolist()


def test_a_state_is_a_copy_not_a_live_view():
    g = learntorch.Generator().manual_seed(1)
    state = g.get_state()
    before = state.clone()
    learntorch.rand(10, generator=g)
    assert learntorch.equal(state, before)


def test_wrong_kinds_of_state_raise_torchs_exception_types():
    both_raise(lambda lib: lib.set_rng_state([1, 2, 3]))                        # TypeError
    both_raise(lambda lib: lib.set_rng_state(lib.zeros(53)))                    # float: TypeError
    message = both_raise(lambda lib: lib.set_rng_state(lib.zeros(3, dtype=lib.uint8)))
    assert "size" in message and "3" in message
    both_raise(lambda lib: lib.Generator().set_state(lib.zeros(3, dtype=lib.uint8)))


def test_torchs_own_state_is_recognised_and_refused_with_the_reason():
    torch = require_torch()
    theirs = learntorch.from_numpy(torch.get_rng_state().numpy())
    with pytest.raises(RuntimeError, match="Mersenne Twister"):
        learntorch.set_rng_state(theirs)


def test_a_damaged_state_is_refused_and_the_generator_is_left_unchanged():
    g = learntorch.Generator().manual_seed(8)
    good = g.get_state().numpy()
    bad_marker = good.copy()
    bad_marker[0] ^= 0xFF
    even_increment = good.copy()
    even_increment[8 + 8 + 16] &= 0xFE          # the lowest byte of `inc`: PCG64 needs it odd
    expected = learntorch.rand(3, generator=learntorch.Generator().manual_seed(8)).tolist()
    for damaged, match in ((bad_marker, "not made by learntorch"), (even_increment, "damaged")):
        with pytest.raises(RuntimeError, match=match):
            g.set_state(learntorch.from_numpy(damaged))
    assert learntorch.rand(3, generator=g).tolist() == expected


def test_set_rng_state_takes_torchs_parameter_name():
    state = learntorch.get_rng_state()
    x = learntorch.rand(2).tolist()
    learntorch.set_rng_state(new_state=state)
    assert learntorch.rand(2).tolist() == x
    np.testing.assert_array_equal(learntorch.Generator().set_state(new_state=state)
                                  .get_state().numpy(), state.numpy())
