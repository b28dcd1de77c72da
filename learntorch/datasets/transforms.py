"""Image transforms, as ``torchvision.transforms``: Compose, ToTensor, Normalize, flips, crops.

A transform is a callable that takes an image and returns one; ``Compose``
chains them.  Images are numpy arrays of shape (H, W) or (H, W, C) -- where
torchvision would take a PIL image -- or tensors of shape (..., C, H, W).
``ToTensor`` turns the first kind into the second.

The random transforms draw from learntorch's default generator (a ``rand(1)``
for a flip, two ``randint`` for a crop), as torchvision draws from torch's:
``learntorch.manual_seed`` repeats them, and inside DataLoader workers each
worker's generator is seeded from the loader's seed, so augmentations are
reproducible there too.
"""
import numbers

import numpy as np

from .._tensor import Tensor
from .. import factories
from .. import _dtypes


def _is_image(img):
    return isinstance(img, (Tensor, np.ndarray))


def _check_image(img, name):
    if not _is_image(img):
        raise TypeError(f"{name}: img should be a tensor (..., C, H, W) or a numpy array (H, W) "
                        f"or (H, W, C). Got {type(img)}")


def _size_hw(img):
    """(height, width): tensors are (..., H, W), arrays (H, W) or (H, W, C)."""
    if isinstance(img, Tensor):
        if img.ndim < 2:
            raise ValueError(f"Expected a tensor image with at least 2 dimensions (..., H, W), "
                             f"got shape {list(img.shape)}")
        return img.shape[-2], img.shape[-1]
    if img.ndim not in (2, 3):
        raise ValueError(f"Expected a numpy image of shape (H, W) or (H, W, C), got shape "
                         f"{img.shape}")
    return img.shape[0], img.shape[1]


def _repr(obj, **fields):
    inner = ", ".join(f"{k}={v!r}" for k, v in fields.items())
    return f"{type(obj).__name__}({inner})"


def apply_to_sample(img, target, transform=None, target_transform=None):
    """``(transform(img), target_transform(target))``, skipping a transform that is None:
    what every dataset's ``__getitem__`` does with its two optional transforms."""
    if transform is not None:
        img = transform(img)
    if target_transform is not None:
        target = target_transform(target)
    return img, target


class Compose:
    """Apply ``transforms`` one after the other."""

    def __init__(self, transforms):
        self.transforms = list(transforms)
        for i, t in enumerate(self.transforms):
            if not callable(t):
                raise TypeError(f"Compose: transform {i} ({t!r}) is not callable")

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self):
        lines = "".join(f"\n    {t}" for t in self.transforms)
        return f"{type(self).__name__}({lines}\n)"


class ToTensor:
    """A numpy image (H, W, C) or (H, W) -> a tensor (C, H, W).

    uint8 images (0..255) become float tensors (default dtype, float32) in [0, 1];
    other dtypes keep their dtype and values, exactly as torchvision does.
    """

    def __call__(self, pic):
        if isinstance(pic, Tensor):
            raise TypeError(f"pic should be PIL Image or ndarray. Got {type(pic)} -- it is "
                            "already a tensor: leave ToTensor out of the pipeline")
        if not isinstance(pic, np.ndarray):
            raise TypeError(f"pic should be PIL Image or ndarray. Got {type(pic)} (learntorch "
                            "reads images as numpy arrays of shape (H, W) or (H, W, C))")
        if pic.ndim not in {2, 3}:
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        if pic.ndim == 2:
            pic = pic[:, :, None]
        chw = np.ascontiguousarray(pic.transpose(2, 0, 1))
        img = factories.from_numpy(chw)
        if chw.dtype == np.uint8:
            return img.to(_dtypes.get_default_dtype()).div(255)
        return img

    def __repr__(self):
        return f"{type(self).__name__}()"


class Normalize:
    """``(x - mean[c]) / std[c]`` for each channel c of a float tensor (..., C, H, W).

    ``mean`` and ``std`` are sequences with one value per channel (or a single
    value for all).  ``inplace=True`` overwrites the input instead of making a
    new tensor.  Differentiable, like any other tensor arithmetic.
    """

    def __init__(self, mean, std, inplace=False):
        self.mean, self.std, self.inplace = mean, std, inplace

    def __call__(self, tensor):
        if not isinstance(tensor, Tensor):
            raise TypeError(f"Input tensor should be a torch tensor. Got {type(tensor)}.")
        if not tensor.is_floating_point():
            raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")
        if tensor.ndim < 3:
            raise ValueError(f"Expected tensor to be a tensor image of size (..., C, H, W). Got "
                             f"tensor.size() = {tensor.size()}.")
        dt = tensor.dtype.np
        mean = np.atleast_1d(np.asarray(self.mean, dtype=dt))
        std = np.atleast_1d(np.asarray(self.std, dtype=dt))
        if (std == 0).any():
            raise ValueError(f"std evaluated to zero after conversion to {tensor.dtype}, leading "
                             f"to division by zero.")
        channels = tensor.shape[-3]
        for name, values in (("mean", mean), ("std", std)):
            if values.ndim != 1 or len(values) not in (1, channels):
                raise RuntimeError(f"Normalize: {name} has {values.size} values but the image "
                                   f"has {channels} channels (shape {list(tensor.shape)}); give "
                                   "one value per channel")
        mean_t = Tensor._wrap(mean.reshape(-1, 1, 1))
        std_t = Tensor._wrap(std.reshape(-1, 1, 1))
        if self.inplace:
            return tensor.sub_(mean_t).div_(std_t)
        return (tensor - mean_t) / std_t

    def __repr__(self):
        return _repr(self, mean=self.mean, std=self.std)


def hflip(img):
    """Mirror left-right (the width axis)."""
    _check_image(img, "hflip")
    _size_hw(img)
    if isinstance(img, Tensor):
        return img.flip(-1)
    return np.ascontiguousarray(img[:, ::-1])


def vflip(img):
    """Mirror top-bottom (the height axis)."""
    _check_image(img, "vflip")
    _size_hw(img)
    if isinstance(img, Tensor):
        return img.flip(-2)
    return np.ascontiguousarray(img[::-1])


class RandomHorizontalFlip:
    """Mirror the image left-right with probability ``p``."""

    def __init__(self, p=0.5):
        self.p = p

    def __call__(self, img):
        _check_image(img, type(self).__name__)
        if factories.rand(1).item() < self.p:
            return hflip(img)
        return img

    def __repr__(self):
        return _repr(self, p=self.p)


class RandomVerticalFlip(RandomHorizontalFlip):
    """Mirror the image top-bottom with probability ``p``."""

    def __call__(self, img):
        _check_image(img, type(self).__name__)
        if factories.rand(1).item() < self.p:
            return vflip(img)
        return img


_PAD_MODES = {"constant": "constant", "edge": "edge", "reflect": "reflect",
              "symmetric": "symmetric"}


def _padding_ltrb(padding):
    """(left, top, right, bottom) from an int, (left/right, top/bottom) or 4 numbers."""
    if isinstance(padding, numbers.Number) and not isinstance(padding, bool):
        return (int(padding),) * 4
    padding = tuple(int(p) for p in padding)
    if len(padding) == 1:
        return padding * 4
    if len(padding) == 2:
        return (padding[0], padding[1], padding[0], padding[1])
    if len(padding) == 4:
        return padding
    raise ValueError(f"Padding must be an int or a 1, 2, or 4 element tuple, not a "
                     f"{len(padding)} element tuple")


def pad(img, padding, fill=0, padding_mode="constant"):
    """Pad the borders of an image: ``padding`` as (left, top, right, bottom) or shorter."""
    _check_image(img, "pad")
    if padding_mode not in _PAD_MODES:
        raise ValueError(f"Padding mode should be either constant, edge, reflect or symmetric, "
                         f"got {padding_mode!r}")
    left, top, right, bottom = _padding_ltrb(padding)
    if min(left, top, right, bottom) < 0:
        raise ValueError(f"padding must be non-negative, got {padding!r}")
    kwargs = {"constant_values": fill} if padding_mode == "constant" else {}
    if isinstance(img, Tensor):
        a = img._data
        widths = [(0, 0)] * (a.ndim - 2) + [(top, bottom), (left, right)]
        return Tensor._wrap(np.pad(a, widths, mode=_PAD_MODES[padding_mode], **kwargs))
    widths = [(top, bottom), (left, right)] + [(0, 0)] * (img.ndim - 2)
    return np.pad(img, widths, mode=_PAD_MODES[padding_mode], **kwargs)


def crop(img, top, left, height, width):
    """The window of ``height`` x ``width`` pixels whose top-left corner is (top, left)."""
    if isinstance(img, Tensor):
        return img[..., top:top + height, left:left + width]
    return img[top:top + height, left:left + width].copy()


def _pair(size, what):
    if isinstance(size, numbers.Number) and not isinstance(size, bool):
        return int(size), int(size)
    size = tuple(size)
    if len(size) == 1:
        return int(size[0]), int(size[0])
    if len(size) != 2:
        raise ValueError(f"Please provide only two dimensions (h, w) for {what}.")
    return int(size[0]), int(size[1])


class RandomCrop:
    """Cut a ``size`` window at a random position, after padding the borders if asked.

    ``padding`` (int, (left/right, top/bottom) or (left, top, right, bottom)) is
    applied first, filled with ``fill`` or by ``padding_mode`` ('edge', 'reflect',
    'symmetric'); ``pad_if_needed`` pads an image smaller than ``size``.  Padding
    4 pixels and cropping back to the original size shifts the picture by up to
    4 pixels: a classic augmentation for small images.
    """

    def __init__(self, size, padding=None, pad_if_needed=False, fill=0,
                 padding_mode="constant"):
        self.size = _pair(size, "size")
        self.padding = padding
        self.pad_if_needed = pad_if_needed
        self.fill = fill
        self.padding_mode = padding_mode
        if padding is not None:
            _padding_ltrb(padding)  # reject a malformed padding now, not at the first image
        if padding_mode not in _PAD_MODES:
            raise ValueError(f"Padding mode should be either constant, edge, reflect or "
                             f"symmetric, got {padding_mode!r}")

    @staticmethod
    def get_params(img, output_size):
        """(top, left, height, width) of a random window of ``output_size`` inside ``img``."""
        h, w = _size_hw(img)
        th, tw = output_size
        if h < th or w < tw:
            raise ValueError(f"Required crop size {(th, tw)} is larger than input image size "
                             f"{(h, w)}")
        if h == th and w == tw:
            return 0, 0, h, w  # nothing to choose: no random numbers drawn, as in torchvision
        i = factories.randint(0, h - th + 1, size=(1,)).item()
        j = factories.randint(0, w - tw + 1, size=(1,)).item()
        return i, j, th, tw

    def __call__(self, img):
        _check_image(img, type(self).__name__)
        if self.padding is not None:
            img = pad(img, self.padding, self.fill, self.padding_mode)
        h, w = _size_hw(img)
        th, tw = self.size
        if self.pad_if_needed and w < tw:
            img = pad(img, [tw - w, 0], self.fill, self.padding_mode)
        if self.pad_if_needed and h < th:
            img = pad(img, [0, th - h], self.fill, self.padding_mode)
        return crop(img, *self.get_params(img, self.size))

    def __repr__(self):
        return _repr(self, size=self.size, padding=self.padding)


class Lambda:
    """Use a function of your own as a transform: ``Lambda(lambda x: x * 2)``."""

    def __init__(self, lambd):
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {type(lambd).__name__!r}")
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)

    def __repr__(self):
        return f"{type(self).__name__}()"
