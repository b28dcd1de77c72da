"""The fast tier against the reference tier on one program: the same arrays, bit for bit."""
import numpy as np


def tiers_agree(run, *args):
    """``run(tier, *args)`` (a list of numpy arrays) in the fast and the reference tier:
    asserts that both give the same shapes and bits (NaN where NaN), returns the fast ones."""
    fast, reference = run("fast", *args), run("reference", *args)
    assert len(fast) == len(reference)
    for got, expected in zip(fast, reference):
        assert got.shape == expected.shape
        assert np.array_equal(got, expected, equal_nan=True)
    return fast
