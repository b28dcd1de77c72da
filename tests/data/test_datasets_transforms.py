"""Image transforms, each compared with the same operation written directly in numpy.

Random transforms are checked for what they may do (each output is one of the
allowed results), that every allowed result happens, that ``p`` is respected,
and that ``manual_seed`` repeats them.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import learntorch
from learntorch.datasets import transforms as T


def image(h=5, w=4, c=3, seed=0, dtype=np.uint8):
    return np.random.default_rng(seed).integers(0, 256, (h, w, c)).astype(dtype)


# -------------------------------------------------------------------- ToTensor
@given(hnp.arrays(np.uint8, hnp.array_shapes(min_dims=3, max_dims=3, max_side=5)))
def test_to_tensor_makes_chw_float_in_0_1(pic):
    out = T.ToTensor()(pic)
    assert out.dtype == learntorch.float32 and out.is_contiguous()
    np.testing.assert_allclose(out.numpy(), pic.transpose(2, 0, 1) / 255.0, rtol=1e-6)


def test_to_tensor_adds_a_channel_to_a_2d_image_and_reads_strided_arrays():
    pic = image(6, 4, 1)[:, :, 0]
    np.testing.assert_allclose(T.ToTensor()(pic).numpy(), pic[None] / 255.0, rtol=1e-6)
    flipped = image()[:, ::-1]
    np.testing.assert_allclose(T.ToTensor()(flipped).numpy(),
                               flipped.transpose(2, 0, 1) / 255.0, rtol=1e-6)


def test_to_tensor_keeps_other_dtypes_unscaled_like_torchvision():
    pic = np.random.default_rng(1).random((3, 2, 2))
    out = T.ToTensor()(pic)
    assert out.dtype == learntorch.float64
    np.testing.assert_array_equal(out.numpy(), pic.transpose(2, 0, 1))


@pytest.mark.parametrize("pic, error", [(learntorch.zeros(1, 2, 2), TypeError),
                                        ([[1, 2]], TypeError),
                                        (np.zeros((1, 2, 2, 3), np.uint8), ValueError),
                                        (np.zeros(4, np.uint8), ValueError)])
def test_to_tensor_errors(pic, error):
    with pytest.raises(error, match="pic should be"):
        T.ToTensor()(pic)


# ------------------------------------------------------------------- Normalize
@pytest.mark.parametrize("shape", [(3, 4, 5), (2, 3, 4, 5)])
def test_normalize_matches_numpy_per_channel(shape):
    x = np.random.default_rng(2).random(shape).astype(np.float32)
    mean, std = [0.1, 0.5, 0.9], [0.2, 1.0, 3.0]
    out = T.Normalize(mean, std)(learntorch.from_numpy(x.copy()))
    expected = (x - np.array(mean, np.float32)[:, None, None]) / \
        np.array(std, np.float32)[:, None, None]
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)


def test_normalize_inplace_writes_into_the_input_and_otherwise_copies():
    x = learntorch.ones(1, 2, 2)
    out = T.Normalize([0.5], [0.25])(x)
    assert x.tolist() == [[[1.0, 1.0], [1.0, 1.0]]] and out.tolist() == [[[2.0, 2.0], [2.0, 2.0]]]
    same = T.Normalize([0.5], [0.25], inplace=True)(x)
    assert same is x and x.tolist() == [[[2.0, 2.0], [2.0, 2.0]]]


def test_normalize_is_differentiable():
    x = learntorch.ones(2, 1, 1, requires_grad=True)
    T.Normalize([0.0, 1.0], [2.0, 4.0])(x).sum().backward()
    assert x.grad.flatten().tolist() == [0.5, 0.25]


@pytest.mark.parametrize("x, mean, std, error, message", [
    (np.zeros((3, 2, 2)), [0.0], [1.0], TypeError, "should be a torch tensor"),
    (learntorch.zeros(3, 2, 2, dtype=learntorch.int64), [0.0], [1.0], TypeError, "float tensor"),
    (learntorch.zeros(2, 2), [0.0], [1.0], ValueError, r"size \(..., C, H, W\)"),
    (learntorch.zeros(3, 2, 2), [0.0], [1.0, 0.0, 1.0], ValueError, "std evaluated to zero"),
    (learntorch.zeros(3, 2, 2), [0.0, 0.0], [1.0], RuntimeError, "mean has 2 values but the "
                                                                 "image has 3 channels"),
])
def test_normalize_errors(x, mean, std, error, message):
    with pytest.raises(error, match=message):
        T.Normalize(mean, std)(x)


# ------------------------------------------------------------------------ flips
FLIPS = [(T.RandomHorizontalFlip, lambda a: a[..., ::-1], lambda a: a[:, ::-1]),
         (T.RandomVerticalFlip, lambda a: a[..., ::-1, :], lambda a: a[::-1])]


@pytest.mark.parametrize("cls, tensor_flip, array_flip", FLIPS)
def test_flip_with_p_1_always_and_p_0_never(cls, tensor_flip, array_flip):
    chw = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(cls(p=1.0)(learntorch.from_numpy(chw)).numpy(), tensor_flip(chw))
    np.testing.assert_array_equal(cls(p=0.0)(learntorch.from_numpy(chw)).numpy(), chw)
    hwc = image()
    np.testing.assert_array_equal(cls(p=1.0)(hwc), array_flip(hwc))
    np.testing.assert_array_equal(cls(p=1.0)(hwc[:, :, 0]), array_flip(hwc[:, :, 0]))


@pytest.mark.parametrize("cls, tensor_flip, array_flip", FLIPS)
def test_flip_happens_with_probability_p_and_repeats_after_manual_seed(cls, tensor_flip,
                                                                      array_flip):
    x = np.arange(6, dtype=np.float32).reshape(1, 2, 3)

    def run(seed):
        learntorch.manual_seed(seed)
        flip = cls(p=0.3)
        return [not np.array_equal(flip(learntorch.from_numpy(x)).numpy(), x) for _ in range(400)]
    flipped = run(0)
    assert 0.23 < np.mean(flipped) < 0.37
    assert run(0) == flipped and run(1) != flipped


# ------------------------------------------------------------------------- crops
def windows(padded, th, tw):
    """Every (th, tw) window of a (C, H, W) array, by position."""
    h, w = padded.shape[-2:]
    return {(i, j): padded[..., i:i + th, j:j + tw] for i in range(h - th + 1)
            for j in range(w - tw + 1)}


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric"])
def test_random_crop_after_padding_is_a_window_of_the_numpy_padded_image(mode):
    chw = np.arange(2 * 5 * 6, dtype=np.float32).reshape(2, 5, 6)
    crop = T.RandomCrop((4, 5), padding=(1, 2), padding_mode=mode, fill=-1)
    kwargs = {"constant_values": -1} if mode == "constant" else {}
    padded = np.pad(chw, [(0, 0), (2, 2), (1, 1)], mode=mode, **kwargs)
    allowed = windows(padded, 4, 5)
    seen = set()
    for _ in range(300):
        out = crop(learntorch.from_numpy(chw)).numpy()
        assert out.shape == (2, 4, 5)
        matches = [pos for pos, win in allowed.items() if np.array_equal(out, win)]
        assert matches, "the crop is not a window of the padded image"
        seen.update(matches)
    assert seen == set(allowed), "every position is reachable"


def test_random_crop_on_numpy_images_and_four_sided_padding():
    hwc = image(5, 4, 3)
    out = T.RandomCrop(3, padding=(0, 1, 2, 3))(hwc)  # left, top, right, bottom
    padded = np.pad(hwc, [(1, 3), (0, 2), (0, 0)])
    assert out.shape == (3, 3, 3)
    assert any(np.array_equal(out, padded[i:i + 3, j:j + 3]) for i in range(7) for j in range(4))


def test_random_crop_of_the_full_size_draws_nothing_and_pad_if_needed_pads():
    x = learntorch.arange(12.0).reshape(1, 3, 4)
    learntorch.manual_seed(0)
    state = learntorch.rand(1).item()
    learntorch.manual_seed(0)
    assert T.RandomCrop((3, 4))(x).tolist() == x.tolist()
    assert learntorch.rand(1).item() == state, "no random numbers used"
    grown = T.RandomCrop((5, 6), pad_if_needed=True)(x)
    assert list(grown.shape) == [1, 5, 6] and grown.sum().item() == x.sum().item()


def test_random_crop_repeats_after_manual_seed():
    x = learntorch.from_numpy(np.arange(64, dtype=np.float32).reshape(1, 8, 8))
    crop = T.RandomCrop(5, padding=2)
    learntorch.manual_seed(3)
    a = [crop(x).tolist() for _ in range(10)]
    learntorch.manual_seed(3)
    assert [crop(x).tolist() for _ in range(10)] == a


@pytest.mark.parametrize("make, error, message", [
    (lambda: T.RandomCrop(5)(learntorch.zeros(1, 4, 8)), ValueError,
     r"Required crop size \(5, 5\) is larger than input image size \(4, 8\)"),
    (lambda: T.RandomCrop((1, 2, 3)), ValueError, "only two dimensions"),
    (lambda: T.RandomCrop(2, padding=(1, 2, 3)), ValueError, "1, 2, or 4 element tuple"),
    (lambda: T.RandomCrop(2, padding_mode="wrap"), ValueError, "Padding mode"),
    (lambda: T.RandomCrop(2)("image.png"), TypeError, "img should be a tensor"),
])
def test_random_crop_errors(make, error, message):
    with pytest.raises(error, match=message):
        make()


# ---------------------------------------------------------------- Compose, Lambda
def test_compose_applies_transforms_in_order():
    pipeline = T.Compose([T.ToTensor(), T.Lambda(lambda t: t * 2), T.Normalize([1.0], [0.5])])
    pic = image(2, 2, 1)
    np.testing.assert_allclose(pipeline(pic).numpy(),
                               (pic.transpose(2, 0, 1) / 255.0 * 2 - 1.0) / 0.5, rtol=1e-5)
    assert "ToTensor()" in repr(pipeline) and "Normalize(mean=[1.0], std=[0.5])" in repr(pipeline)


def test_lambda_and_compose_refuse_what_is_not_callable():
    with pytest.raises(TypeError, match="Argument lambd should be callable, got 'int'"):
        T.Lambda(3)
    with pytest.raises(TypeError, match="transform 1"):
        T.Compose([T.ToTensor(), "flip"])


@given(st.integers(1, 6), st.integers(1, 6), st.integers(0, 3))
def test_crop_with_padding_keeps_the_requested_size(h, w, pad):
    x = learntorch.zeros(1, h, w)
    size = (min(h + 2 * pad, 3), min(w + 2 * pad, 4))
    assert tuple(T.RandomCrop(size, padding=pad)(x).shape) == (1,) + size
