"""ConvExplorer's numbers are torch's: the output, the im2col rows and each window's multiply-add."""
import numpy as np
import pytest
import torch

import learntorch
from learntorch import backends
from widgets.conv_explorer import ConvExplorer

SETTINGS = [(0, 1, 1), (1, 1, 1), (2, 2, 1), (1, 2, 2), (0, 3, 1), (3, 1, 2)]


def _random(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("padding, stride, dilation", SETTINGS)
def test_output_and_im2col_match_torch(padding, stride, dilation):
    image, kernel = _random((7, 9), 0), _random((3, 2), 1)
    explorer = ConvExplorer(learntorch.tensor(image), learntorch.tensor(kernel),
                            padding=padding, stride=stride, dilation=dilation)
    x, w = torch.tensor(image)[None, None], torch.tensor(kernel)[None, None]
    want = torch.nn.functional.conv2d(x, w, padding=padding, stride=stride, dilation=dilation)[0, 0]
    np.testing.assert_allclose(explorer.output(), want.numpy(), rtol=1e-5, atol=1e-5)
    assert explorer.output_shape == tuple(want.shape)
    # torch's unfold is the im2col matrix transposed: (kh*kw, L) against (L, kh*kw)
    cols = torch.nn.functional.unfold(x, (3, 2), padding=padding, stride=stride, dilation=dilation)[0]
    np.testing.assert_array_equal(explorer.im2col_matrix(), cols.T.numpy())


@pytest.mark.parametrize("padding, stride, dilation", SETTINGS)
def test_every_position_sums_its_window_times_the_kernel(padding, stride, dilation):
    image, kernel = _random((6, 6), 2), _random((2, 3), 3)
    explorer = ConvExplorer(learntorch.tensor(image), learntorch.tensor(kernel),
                            padding=padding, stride=stride, dilation=dilation)
    padded = np.pad(image, padding)
    for position in range(explorer.positions):
        explorer.select(position)
        taps = explorer.taps()
        # each tap reads the padded pixel it names, and the products add up to the output pixel
        assert all(padded[pixel] == value for _, pixel, value in taps)
        total = sum(value * kernel[tap] for tap, _, value in taps)
        assert total == pytest.approx(explorer.value(), abs=1e-4)
        assert explorer.multiply_add().endswith(f"= {explorer.multiply_add().rsplit('= ', 1)[1]}")


def test_step_walks_the_positions_row_by_row_and_wraps():
    explorer = ConvExplorer(learntorch.arange(16.).reshape(4, 4), learntorch.ones(2, 2), stride=2)
    seen = []
    for _ in range(5):
        seen.append(explorer.out_index)
        explorer.step()
    assert seen == [(0, 0), (0, 1), (1, 0), (1, 1), (0, 0)]
    explorer.reset()
    assert explorer.position == 0


def test_a_setting_that_leaves_no_window_is_refused_and_nothing_changes():
    explorer = ConvExplorer(learntorch.zeros(4, 4), learntorch.ones(3, 3))
    with pytest.raises(ValueError, match="spans 5x5 pixels: more than the padded image"):
        explorer.set(dilation=2)
    assert (explorer.dilation, explorer.output_shape) == (1, (2, 2))
    with pytest.raises(IndexError, match="positions 0..3"):
        explorer.select(4)


def test_the_position_is_kept_where_it_still_fits_after_a_setting_changes():
    explorer = ConvExplorer(learntorch.zeros(8, 8), learntorch.ones(3, 3), padding=1, position=63)
    explorer.set(stride=2)                      # 8x8 -> 4x4: the last position becomes 15
    assert explorer.position == 15 and explorer.output_shape == (4, 4)


def test_the_numbers_come_from_the_active_backend():
    # a learner's backend whose im2col doubles every window: the explorer's matrix doubles, and
    # so does its output (the reference conv2d is im2col + one product)
    class Doubling(backends.NumpyBackend):
        calls = []

        def im2col(self, x, g):
            self.calls.append("im2col")
            return 2 * super().im2col(x, g)

    image, kernel = learntorch.arange(9.).reshape(3, 3), learntorch.ones(2, 2)
    plain = ConvExplorer(image, kernel)
    with backends.use(Doubling()):
        doubled = ConvExplorer(image, kernel)
    assert Doubling.calls == ["im2col", "im2col"]          # once inside conv2d, once for the matrix
    np.testing.assert_array_equal(doubled.output(), 2 * plain.output())
    np.testing.assert_array_equal(doubled.im2col_matrix(), 2 * plain.im2col_matrix())


def test_the_default_is_a_shipped_digit_and_an_edge_kernel():
    explorer = ConvExplorer()
    assert explorer.image.shape == (8, 8) and 0 <= explorer.image.min() and explorer.image.max() <= 1
    assert explorer.kernel.tolist() == [[-1, 0, 1]] * 3
    assert repr(explorer).startswith("ConvExplorer(input 8x8, kernel 3x3, padding 0, stride 1, dilation 1 "
                                     "-> output 6x6, position 0 = (0, 0): ")
