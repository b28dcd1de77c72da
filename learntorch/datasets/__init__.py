"""Ready-made datasets and image transforms: what torchvision gives torch users.

Why here, as ``learntorch.datasets``?  torch itself has no datasets or image
transforms: they live in the separate ``torchvision`` package
(``torchvision.datasets.MNIST``, ``torchvision.transforms.ToTensor``).  learntorch
is one distribution, and a learner who also has the real torchvision installed
must not get ours by accident, so we neither ship a top-level ``torchvision``
nor hide these under ``learntorch.utils.data`` (where torch keeps only the
machinery: ``Dataset``, ``DataLoader``, samplers).  ``learntorch.datasets`` is a
learntorch-only name, listed as such in the API table, and the move to real
PyTorch is one import line::

    from learntorch.datasets import MNIST, transforms    # learntorch
    from torchvision.datasets import MNIST                # torch + torchvision
    from torchvision import transforms

What is here:

* ``Digits`` / ``load_digits`` -- the UCI 8x8 handwritten digits (1797 images),
  shipped inside the package: works offline, on Binder, in CI;
* ``make_moons``, ``make_circles``, ``make_spirals``, ``make_xor``,
  ``make_blobs`` -- small 2-D classification problems, generated from a seed;
* ``MNIST`` / ``FashionMNIST`` -- the 28x28 sets, downloaded on request
  (checksummed, cached under ``root``); for learners with internet;
* ``transforms`` -- ``Compose``, ``ToTensor``, ``Normalize``, random flips and
  crops, ``Lambda``; the random ones draw from learntorch's default generator,
  so ``manual_seed`` repeats them (also in DataLoader workers).
"""
from .digits import Digits, load_digits
from .synthetic import make_moons, make_circles, make_spirals, make_xor, make_blobs
from .mnist import MNIST, FashionMNIST
from . import transforms

__all__ = ["Digits", "load_digits", "make_moons", "make_circles", "make_spirals", "make_xor",
           "make_blobs", "MNIST", "FashionMNIST", "transforms"]
