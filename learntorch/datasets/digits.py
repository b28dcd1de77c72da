"""The UCI handwritten digits: 1797 images of 8x8 pixels, shipped with learntorch.

Data: "Optical Recognition of Handwritten Digits", E. Alpaydin and C. Kaynak
(1998), UCI Machine Learning Repository,
https://archive.ics.uci.edu/dataset/80/optical+recognition+of+handwritten+digits ,
licensed CC BY 4.0 -- the same copy scikit-learn distributes as ``load_digits()``
(see ``data/DIGITS_ATTRIBUTION.md``).  Each pixel counts the "on" pixels of a
4x4 block of a 32x32 bitmap, so values run from 0 to 16.

It is small enough to ship inside the package (about 60 kB compressed) and big
enough to train an MLP or a small CNN to ~97% accuracy in seconds: the chapters
use it so that they run offline.
"""
import functools
import gzip
from importlib import resources

import numpy as np

from .._tensor import Tensor
from ..utils.data import Dataset
from .transforms import apply_to_sample

MAX_PIXEL = 16          # a pixel counts the 'on' pixels of a 4x4 block
NUM_IMAGES = 1797
_FILE = "digits.csv.gz"


@functools.lru_cache(maxsize=1)
def _read():
    """(pixels uint8 (1797, 8, 8), labels int64 (1797,)) read once from the shipped file."""
    with resources.files(__package__).joinpath("data", _FILE).open("rb") as raw:
        with gzip.open(raw, "rt") as text:
            table = np.loadtxt(text, delimiter=",", dtype=np.int64)
    if table.shape != (NUM_IMAGES, 65):
        raise RuntimeError(f"{_FILE} is damaged: expected {NUM_IMAGES} rows of 64 pixels and a "
                           f"label, got a table of shape {table.shape}; reinstall learntorch")
    pixels = table[:, :64].reshape(-1, 8, 8).astype(np.uint8)
    labels = table[:, 64].copy()
    pixels.flags.writeable = labels.flags.writeable = False  # shared by every caller
    return pixels, labels


def load_digits(raw=False):
    """All 1797 digits as ``(images, labels)`` tensors.

    ``images``: float32 of shape (1797, 1, 8, 8) scaled to [0, 1] (pixel / 16),
    ready for a CNN (``images.flatten(1)`` for an MLP); with ``raw=True`` the
    original counts instead, uint8 of shape (1797, 8, 8) in 0..16.
    ``labels``: int64 of shape (1797,), the digit 0..9.
    """
    pixels, labels = _read()
    images = pixels.copy() if raw else _scaled(pixels)
    return Tensor._wrap(images), Tensor._wrap(labels.copy())


def _scaled(pixels):
    return (pixels.astype(np.float32) / MAX_PIXEL)[:, None, :, :]


def stratified_split(labels, test_fraction, seed):
    """(train indices, test indices): each class split in the same proportion.

    Within each class the indices are shuffled by a generator seeded with
    ``seed`` and the first ``round(n_class * test_fraction)`` go to the test set,
    so both sets keep the class balance of the whole.  Indices come back sorted.
    """
    rng = np.random.Generator(np.random.PCG64(seed))
    train, test = [], []
    for c in np.unique(labels):
        members = rng.permutation(np.flatnonzero(labels == c))
        n_test = int(round(len(members) * test_fraction))
        test.append(members[:n_test])
        train.append(members[n_test:])
    return np.sort(np.concatenate(train)), np.sort(np.concatenate(test))


class Digits(Dataset):
    """The 8x8 handwritten digits as a map-style ``Dataset`` of ``(image, label)``.

    ``train=True`` gives the training part of a deterministic, stratified split
    (``test_fraction`` of each class is held out, chosen by ``split_seed``), and
    ``train=False`` the held-out part; the two never overlap.

    ``dataset[i]`` is ``(image, label)``: ``image`` a new float32 tensor of shape
    (1, 8, 8) scaled to [0, 1], ``label`` an int (collated into an int64
    tensor).  ``transform`` is applied to that image tensor (e.g.
    ``transforms.Normalize``) and ``target_transform`` to the label.  The raw
    values stay available as ``data`` (uint8, (N, 8, 8), 0..16) and ``targets``
    (int64, (N,)), as in torchvision's MNIST; ``indices`` are the rows of the
    full set.

    Data: E. Alpaydin and C. Kaynak (1998), "Optical Recognition of Handwritten
    Digits", UCI Machine Learning Repository, CC BY 4.0.
    """

    classes = [f"{d}" for d in range(10)]

    def __init__(self, train=True, transform=None, target_transform=None, split_seed=0,
                 test_fraction=0.2):
        if not isinstance(train, bool):
            raise TypeError(f"train must be True or False, got {train!r}")
        if isinstance(test_fraction, bool) or not isinstance(test_fraction, (int, float)) or \
                not 0 < test_fraction < 1:
            raise ValueError(f"test_fraction must be a number strictly between 0 and 1 (the "
                             f"share of each class held out for testing), got {test_fraction!r}")
        if isinstance(split_seed, bool) or not isinstance(split_seed, (int, np.integer)) or \
                split_seed < 0:
            raise ValueError(f"split_seed must be a non-negative int, got {split_seed!r}")
        pixels, labels = _read()
        train_idx, test_idx = stratified_split(labels, test_fraction, int(split_seed))
        self.indices = train_idx if train else test_idx
        self.train = train
        self.transform = transform
        self.target_transform = target_transform
        self.data = Tensor._wrap(pixels[self.indices])       # fancy indexing copies
        self.targets = Tensor._wrap(labels[self.indices])
        self._images = _scaled(pixels[self.indices])

    def __getitem__(self, index):
        # a fresh tensor per call: an in-place transform (Normalize(inplace=True)) must not
        # change the dataset itself
        img = Tensor._wrap(self._images[index].copy())
        target = int(self.targets._data[index])
        return apply_to_sample(img, target, self.transform, self.target_transform)

    def __len__(self):
        return len(self.indices)

    def __repr__(self):
        split = "train" if self.train else "test"
        return f"Digits(split={split!r}, samples={len(self)}, image shape=(1, 8, 8))"
