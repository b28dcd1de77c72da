"""Toy 2-D classification problems, generated from a seed: moons, circles, spirals, xor, blobs.

Each ``make_*`` returns ``(X, y)``: ``X`` a float32 tensor of shape
(n_samples, 2) (``make_blobs``: (n_samples, n_features)), ``y`` an int64 tensor
of class labels 0, 1, ...  They are small enough to plot and to train on in a
second, and each needs a different kind of decision boundary: a line fails on
all but the blobs, which is the point of using them.

Randomness: pass ``seed=`` for a self-contained, repeatable draw (it does not
touch the global generator), or ``generator=`` a ``learntorch.Generator``; with
neither, numbers come from learntorch's default generator (``manual_seed``).
``noise`` is the standard deviation of Gaussian noise added to each coordinate
(for ``make_blobs``: the spread of each blob).  Points are shuffled unless
``shuffle=False``, in which case they come class by class.

The names and defaults follow scikit-learn's ``make_moons``, ``make_circles``
and ``make_blobs`` where those exist (its ``random_state`` is our ``seed``).
"""
import numpy as np

from .._tensor import Tensor
from .. import random as _random


def _rng(seed, generator):
    if seed is not None and generator is not None:
        raise ValueError("pass either seed= or generator=, not both")
    if seed is not None:
        return _random.Generator().manual_seed(seed)
    return _random._generator(generator)


def _check_n(n_samples, minimum):
    if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)) or \
            n_samples < minimum:
        raise ValueError(f"n_samples must be an int >= {minimum} (at least one point per class), "
                         f"got {n_samples!r}")


def _check_noise(noise, name="noise"):
    if not np.isfinite(noise) or noise < 0:
        raise ValueError(f"{name} must be a finite number >= 0 (a standard deviation), "
                         f"got {noise!r}")


def _per_class(n_samples, n_classes):
    """How many points each class gets: as equal as possible, the first classes one more."""
    return [n_samples // n_classes + (1 if k < n_samples % n_classes else 0)
            for k in range(n_classes)]


def _finish(points, labels, noise, shuffle, rng):
    points = np.asarray(points, dtype=np.float64)
    if noise:
        points = points + noise * rng.standard_normal(points.shape)
    labels = np.asarray(labels, dtype=np.int64)
    if shuffle:
        order = rng.permutation(len(labels))
        points, labels = points[order], labels[order]
    return Tensor._wrap(points.astype(np.float32)), Tensor._wrap(labels)


def make_moons(n_samples=100, noise=0.0, *, shuffle=True, seed=None, generator=None):
    """Two interleaving half circles of radius 1: class 0 the upper arc centred at (0, 0),
    class 1 the lower arc centred at (1, 0.5)."""
    _check_n(n_samples, 2)
    _check_noise(noise)
    rng = _rng(seed, generator)
    n_out, n_in = n_samples // 2, n_samples - n_samples // 2
    t_out, t_in = np.linspace(0, np.pi, n_out), np.linspace(0, np.pi, n_in)
    outer = np.stack([np.cos(t_out), np.sin(t_out)], 1)
    inner = np.stack([1 - np.cos(t_in), 0.5 - np.sin(t_in)], 1)
    return _finish(np.concatenate([outer, inner]), [0] * n_out + [1] * n_in, noise, shuffle, rng)


def make_circles(n_samples=100, noise=0.0, *, factor=0.8, shuffle=True, seed=None,
                 generator=None):
    """Two concentric circles around the origin: class 0 of radius 1, class 1 of radius
    ``factor`` (0 <= factor < 1)."""
    _check_n(n_samples, 2)
    _check_noise(noise)
    if not 0 <= factor < 1:
        raise ValueError(f"factor has to be between 0 and 1 (the inner circle's radius), "
                         f"got {factor!r}")
    rng = _rng(seed, generator)
    n_out, n_in = n_samples // 2, n_samples - n_samples // 2
    t_out = np.linspace(0, 2 * np.pi, n_out, endpoint=False)
    t_in = np.linspace(0, 2 * np.pi, n_in, endpoint=False)
    outer = np.stack([np.cos(t_out), np.sin(t_out)], 1)
    inner = factor * np.stack([np.cos(t_in), np.sin(t_in)], 1)
    return _finish(np.concatenate([outer, inner]), [0] * n_out + [1] * n_in, noise, shuffle, rng)


def make_spirals(n_samples=100, noise=0.0, *, n_classes=2, turns=1.0, shuffle=True, seed=None,
                 generator=None):
    """``n_classes`` spiral arms winding out from the origin.

    A point of class k at radius r in [0, 1] sits at the angle
    ``2 * pi * (turns * r + k / n_classes)``: the arms are rotated copies of one
    spiral that turns ``turns`` times on its way out.
    """
    if isinstance(n_classes, bool) or not isinstance(n_classes, (int, np.integer)) or \
            n_classes < 1:
        raise ValueError(f"n_classes must be an int >= 1, got {n_classes!r}")
    _check_n(n_samples, n_classes)
    _check_noise(noise)
    if not turns > 0:
        raise ValueError(f"turns must be > 0, got {turns!r}")
    rng = _rng(seed, generator)
    points, labels = [], []
    for k, n in enumerate(_per_class(n_samples, n_classes)):
        r = np.linspace(0.0, 1.0, n)
        theta = 2 * np.pi * (turns * r + k / n_classes)
        points.append(np.stack([r * np.cos(theta), r * np.sin(theta)], 1))
        labels += [k] * n
    return _finish(np.concatenate(points), labels, noise, shuffle, rng)


def make_xor(n_samples=100, noise=0.0, *, shuffle=True, seed=None, generator=None):
    """Points uniform in the square [-1, 1]^2; class 1 where the two coordinates have
    different signs (the XOR of "x > 0" and "y > 0"), class 0 where they agree.

    The labels are those of the clean points; ``noise`` then moves points, so some
    cross the axes (label noise near the boundary, as in real data).
    """
    _check_n(n_samples, 1)
    _check_noise(noise)
    rng = _rng(seed, generator)
    points = rng.uniform(-1.0, 1.0, (n_samples, 2))
    labels = ((points[:, 0] > 0) != (points[:, 1] > 0)).astype(np.int64)
    # already in random order; sorting by class first makes shuffle=False mean "by class"
    if not shuffle:
        order = np.argsort(labels, kind="stable")
        points, labels = points[order], labels[order]
    return _finish(points, labels, noise, False, rng)


def make_blobs(n_samples=100, centers=3, noise=1.0, *, n_features=2, center_box=(-10.0, 10.0),
               shuffle=True, seed=None, generator=None, return_centers=False):
    """Gaussian blobs: class k scattered around ``centers[k]`` with standard deviation ``noise``.

    ``centers`` is a number of blobs (their centres drawn uniformly in
    ``center_box`` along each axis) or an array of centres of shape
    (n_blobs, n_features).  With ``return_centers=True`` also returns the centres.
    """
    _check_noise(noise)
    rng = _rng(seed, generator)
    if isinstance(centers, (int, np.integer)) and not isinstance(centers, bool):
        if centers < 1:
            raise ValueError(f"centers must be >= 1 (the number of blobs), got {centers!r}")
        low, high = center_box
        centre_points = rng.uniform(low, high, (int(centers), n_features))
    else:
        centre_points = np.asarray(centers._data if isinstance(centers, Tensor) else centers,
                                   dtype=np.float64)
        if centre_points.ndim != 2:
            raise ValueError(f"centers must be an int or an array of shape (n_blobs, "
                             f"n_features), got shape {centre_points.shape}")
    k = len(centre_points)
    _check_n(n_samples, k)
    sizes = _per_class(n_samples, k)
    points = np.concatenate([np.repeat(centre_points[i:i + 1], n, 0) for i, n in
                             enumerate(sizes)])
    labels = np.repeat(np.arange(k), sizes)
    X, y = _finish(points, labels, noise, shuffle, rng)
    if return_centers:
        return X, y, Tensor._wrap(centre_points.astype(np.float32))
    return X, y
