"""The graph's value summaries: a mean that is zero but for rounding reads "≈ 0", so the
picture (its width too) does not change with the summation order."""
import numpy as np

from widgets._dot import _summary_text


def test_a_mean_that_is_rounding_noise_reads_approximately_zero():
    rows = np.random.default_rng(0).standard_normal((16, 10)).astype(np.float32)
    softmax_grad = rows - rows.mean(axis=1, keepdims=True)   # each row sums to 0
    assert "mean ≈ 0" in _summary_text(softmax_grad, "float32")


def test_a_real_mean_and_an_exact_zero_keep_their_digits():
    assert "mean 0.25" in _summary_text(np.array([0.0, 0.5, 0.25]), "float64")
    assert "mean 0\n" in _summary_text(np.array([-1.0, 1.0]), "float64")
    assert "mean 1e-07" in _summary_text(np.array([1e-7, 1e-7]), "float64")
