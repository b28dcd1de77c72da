"""The shipped UCI digits: what load_digits and Digits hand out, checked against the file itself.

The oracle is an independent read of ``digits.csv.gz`` with the csv module;
the split is checked for what it promises (disjoint, complete, stratified,
deterministic), and a nearest-centroid classifier checks that images and
labels really belong together.
"""
import csv
import gzip
import tomllib
from fnmatch import fnmatch
from pathlib import Path

import numpy as np
import pytest

import learntorch
from learntorch.datasets import Digits, load_digits, transforms as T
from learntorch.utils.data import DataLoader

ROOT = Path(__file__).resolve().parents[2]
DATA_DIR = ROOT / "learntorch" / "datasets" / "data"


def read_csv():
    with gzip.open(DATA_DIR / "digits.csv.gz", "rt") as f:
        rows = [[int(v) for v in row] for row in csv.reader(f)]
    table = np.array(rows)
    return table[:, :64].reshape(-1, 8, 8), table[:, 64]


PIXELS, LABELS = read_csv()


def test_load_digits_gives_all_1797_images_scaled_to_0_1():
    images, labels = load_digits()
    assert list(images.shape) == [1797, 1, 8, 8] and images.dtype == learntorch.float32
    assert list(labels.shape) == [1797] and labels.dtype == learntorch.int64
    np.testing.assert_allclose(images.numpy()[:, 0], PIXELS / 16.0, rtol=0, atol=1e-7)
    np.testing.assert_array_equal(labels.numpy(), LABELS)
    assert images.min().item() == 0.0 and images.max().item() == 1.0


def test_load_digits_raw_gives_the_original_counts_0_to_16():
    images, labels = load_digits(raw=True)
    assert list(images.shape) == [1797, 8, 8] and images.dtype == learntorch.uint8
    np.testing.assert_array_equal(images.numpy(), PIXELS)
    assert images.numpy().max() == 16


def test_callers_get_their_own_copies():
    images, _ = load_digits()
    images.zero_()
    assert load_digits()[0].sum().item() > 0


def test_train_and_test_split_the_whole_set_without_overlap():
    train, test = Digits(train=True), Digits(train=False)
    assert len(train) + len(test) == 1797
    assert not set(train.indices) & set(test.indices)
    assert sorted(list(train.indices) + list(test.indices)) == list(range(1797))


@pytest.mark.parametrize("fraction", [0.2, 0.5, 0.1])
def test_the_split_is_stratified(fraction):
    test = Digits(train=False, test_fraction=fraction)
    for digit in range(10):
        in_class = int((LABELS == digit).sum())
        held_out = int((test.targets.numpy() == digit).sum())
        assert held_out == round(in_class * fraction), digit


def test_the_split_is_deterministic_and_follows_split_seed():
    assert list(Digits(split_seed=3).indices) == list(Digits(split_seed=3).indices)
    assert list(Digits(split_seed=3).indices) != list(Digits(split_seed=4).indices)
    learntorch.manual_seed(99)  # the global seed plays no part
    assert list(Digits().indices) == list(Digits(split_seed=0).indices)


def test_samples_are_float_images_and_int_labels_matching_the_file():
    ds = Digits(train=False)
    for i in [0, 17, len(ds) - 1, -1]:
        image, label = ds[i]
        row = ds.indices[i]
        assert isinstance(image, learntorch.Tensor) and image.dtype == learntorch.float32
        assert list(image.shape) == [1, 8, 8]
        np.testing.assert_allclose(image.numpy()[0], PIXELS[row] / 16.0, atol=1e-7)
        assert type(label) is int and label == LABELS[row]
    assert ds.data.dtype == learntorch.uint8 and list(ds.data.shape) == [len(ds), 8, 8]
    np.testing.assert_array_equal(ds.data.numpy(), PIXELS[ds.indices])
    assert ds.targets.dtype == learntorch.int64


def test_transforms_apply_and_an_inplace_transform_leaves_the_dataset_alone():
    ds = Digits(transform=T.Normalize([0.5], [0.5], inplace=True), target_transform=lambda y: -y)
    first, label = ds[0]
    np.testing.assert_allclose(first.numpy(), (Digits()[0][0].numpy() - 0.5) / 0.5, atol=1e-6)
    assert label == -Digits()[0][1]
    again, _ = ds[0]
    np.testing.assert_allclose(again.numpy(), first.numpy())


def test_a_dataloader_batches_digits_into_float_images_and_int64_labels():
    images, labels = next(iter(DataLoader(Digits(), batch_size=32, shuffle=True)))
    assert list(images.shape) == [32, 1, 8, 8] and images.dtype == learntorch.float32
    assert list(labels.shape) == [32] and labels.dtype == learntorch.int64


def test_images_and_labels_belong_together():
    # a nearest-centroid classifier on the training part must do far better than chance
    train, test = Digits(train=True), Digits(train=False)
    x_train = train.data.numpy().reshape(len(train), -1).astype(float)
    y_train = train.targets.numpy()
    centroids = np.stack([x_train[y_train == d].mean(0) for d in range(10)])
    x_test = test.data.numpy().reshape(len(test), -1).astype(float)
    predicted = ((x_test[:, None, :] - centroids[None]) ** 2).sum(-1).argmin(1)
    assert (predicted == test.targets.numpy()).mean() > 0.85


@pytest.mark.parametrize("kwargs, error", [
    (dict(test_fraction=0), ValueError), (dict(test_fraction=1.0), ValueError),
    (dict(test_fraction="0.2"), ValueError), (dict(split_seed=-1), ValueError),
    (dict(split_seed=1.5), ValueError), (dict(train="yes"), TypeError),
])
def test_bad_arguments_are_refused(kwargs, error):
    with pytest.raises(error):
        Digits(**kwargs)


def test_the_docstring_credits_the_data_and_its_licence():
    for text in (Digits.__doc__, (DATA_DIR / "DIGITS_ATTRIBUTION.md").read_text()):
        assert "Alpaydin" in text and "Kaynak" in text and "CC BY 4.0" in text


def test_every_shipped_data_file_is_declared_as_package_data():
    # what an ordinary `pip install .` (Binder) copies besides the Python files
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    package_data = config["tool"]["setuptools"]["package-data"]
    declared = []
    for package, patterns in package_data.items():
        base = Path(*package.split("."))
        declared += [str(base / p) for p in patterns]
    shipped = [p.relative_to(ROOT) for p in DATA_DIR.iterdir() if p.is_file()]
    assert shipped
    for path in shipped:
        assert any(fnmatch(str(path), pattern) for pattern in declared), \
            f"{path} is not in [tool.setuptools.package-data]"
