"""MNIST / FashionMNIST on small IDX files written by the tests: parsing, checksums, download.

Nothing here reaches the network: the files are written into a temporary
folder by ``write_idx`` (the format spelled out with ``struct``, independently
of the reader), the published checksums are replaced by those of these files,
and "downloads" come from ``file://`` mirrors or a fake ``urlopen``.  A guard
fails any test that tries an http(s) URL.
"""
import gzip
import hashlib
import io
import os
import struct
from urllib.error import URLError

import numpy as np
import pytest

import learntorch
from learntorch.datasets import MNIST, FashionMNIST, transforms as T
from learntorch.datasets import mnist as mnist_module
from learntorch.utils.data import DataLoader

TYPE_CODES = {np.uint8: 0x08, np.int8: 0x09, np.int16: 0x0B, np.int32: 0x0C, np.float32: 0x0D,
              np.float64: 0x0E}


def idx_bytes(array):
    array = np.asarray(array)
    header = bytes([0, 0, TYPE_CODES[array.dtype.type], array.ndim])
    dims = struct.pack(">" + "I" * array.ndim, *array.shape)
    return header + dims + array.astype(array.dtype.newbyteorder(">")).tobytes()


def write_idx(path, array_or_bytes):
    data = array_or_bytes if isinstance(array_or_bytes, bytes) else idx_bytes(array_or_bytes)
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wb") as f:
        f.write(data)
    return path


def md5(path):
    return hashlib.md5(path.read_bytes()).hexdigest()


RNG = np.random.default_rng(0)
ARRAYS = {"train-images-idx3-ubyte.gz": RNG.integers(0, 256, (6, 5, 4), dtype=np.uint8),
          "train-labels-idx1-ubyte.gz": RNG.integers(0, 10, 6).astype(np.uint8),
          "t10k-images-idx3-ubyte.gz": RNG.integers(0, 256, (3, 5, 4), dtype=np.uint8),
          "t10k-labels-idx1-ubyte.gz": RNG.integers(0, 10, 3).astype(np.uint8)}


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    real = mnist_module.urlopen

    def guarded(request, *args, **kwargs):
        url = request.full_url if hasattr(request, "full_url") else request
        if not url.startswith("file:"):
            raise AssertionError(f"a test tried to reach the network: {url}")
        return real(request, *args, **kwargs)
    monkeypatch.setattr(mnist_module, "urlopen", guarded)


@pytest.fixture
def mirror(tmp_path, monkeypatch):
    """A folder holding the four files, as a mirror; MNIST's checksums set to theirs."""
    source = tmp_path / "mirror"
    source.mkdir()
    resources = [(name, md5(write_idx(source / name, array))) for name, array in ARRAYS.items()]
    for cls in (MNIST, FashionMNIST):
        monkeypatch.setattr(cls, "resources", resources)
        monkeypatch.setattr(cls, "mirrors", [source.as_uri() + "/"])
    return source


@pytest.fixture
def root(tmp_path, mirror):
    """A root whose MNIST/raw folder already holds the files (a filled cache)."""
    raw = tmp_path / "root" / "MNIST" / "raw"
    raw.mkdir(parents=True)
    for name in ARRAYS:
        (raw / name).write_bytes((mirror / name).read_bytes())
    return tmp_path / "root"


# --------------------------------------------------------------------- read_idx
@pytest.mark.parametrize("dtype", list(TYPE_CODES))
@pytest.mark.parametrize("shape", [(7,), (3, 2), (2, 3, 4), (1, 1, 1, 2)])
@pytest.mark.parametrize("gz", [True, False])
def test_read_idx_gives_back_what_was_written(tmp_path, dtype, shape, gz):
    array = (np.arange(np.prod(shape)).reshape(shape) * 3 - 5).astype(dtype)
    path = write_idx(tmp_path / ("a.idx.gz" if gz else "a.idx"), array)
    read = mnist_module.read_idx(path)
    assert read.dtype == array.dtype and read.dtype.isnative and read.shape == shape
    np.testing.assert_array_equal(read, array)


@pytest.mark.parametrize("content, message", [
    (b"\x01\x00\x08\x01" + struct.pack(">I", 1) + b"\x05", "not an IDX file: the magic number"),
    (b"\x00\x00\x07\x01" + struct.pack(">I", 1) + b"\x05", "unknown IDX type code 0x07"),
    (b"\x00\x00", "only 2 bytes long"),
    (b"\x00\x00\x08\x03" + struct.pack(">I", 2), "truncated IDX header: it announces 3"),
    (b"\x00\x00\x08\x02" + struct.pack(">II", 2, 3) + b"\x00" * 5,
     r"shape \[2, 3\] of uint8 \(6 bytes of data\), but the file holds only 5 bytes"),
    (b"\x00\x00\x08\x01" + struct.pack(">I", 2) + b"\x00" * 3, "holds more than that"),
])
def test_a_corrupt_header_or_size_is_a_runtime_error_naming_the_file(tmp_path, content, message):
    path = write_idx(tmp_path / "bad.gz", content)
    with pytest.raises(RuntimeError, match=message) as caught:
        mnist_module.read_idx(path)
    assert "bad.gz" in str(caught.value)


def test_a_file_that_is_not_gzip_is_a_runtime_error(tmp_path):
    path = tmp_path / "fake.gz"
    path.write_bytes(b"<html>404 Not Found</html>")
    with pytest.raises(RuntimeError, match="cannot read the file.*delete it and download"):
        mnist_module.read_idx(path)


def test_real_mnist_headers_parse(tmp_path):
    # the header of the real train-images file: 00 00 08 03, 60000, 28, 28 (data cut short)
    header = bytes.fromhex("00000803") + struct.pack(">III", 60000, 28, 28)
    path = write_idx(tmp_path / "x.gz", header + b"\x00" * 10)
    with pytest.raises(RuntimeError, match=r"shape \[60000, 28, 28\] of uint8 \(47040000 bytes"):
        mnist_module.read_idx(path)


# ------------------------------------------------------------------ the dataset
def test_mnist_reads_the_cached_files(root):
    train, test = MNIST(root), MNIST(root, train=False)
    assert len(train) == 6 and len(test) == 3
    assert train.data.dtype == learntorch.uint8 and list(train.data.shape) == [6, 5, 4]
    np.testing.assert_array_equal(train.data.numpy(), ARRAYS["train-images-idx3-ubyte.gz"])
    assert test.targets.dtype == learntorch.int64
    np.testing.assert_array_equal(test.targets.numpy(), ARRAYS["t10k-labels-idx1-ubyte.gz"])
    image, label = train[2]
    assert isinstance(image, np.ndarray) and image.dtype == np.uint8 and image.shape == (5, 4)
    np.testing.assert_array_equal(image, ARRAYS["train-images-idx3-ubyte.gz"][2])
    assert type(label) is int and label == ARRAYS["train-labels-idx1-ubyte.gz"][2]


def test_mnist_with_to_tensor_gives_float_images_in_0_1_and_batches(root):
    ds = MNIST(root, transform=T.ToTensor(), target_transform=lambda y: y + 100)
    image, label = ds[0]
    assert list(image.shape) == [1, 5, 4] and image.dtype == learntorch.float32
    np.testing.assert_allclose(image.numpy()[0], ARRAYS["train-images-idx3-ubyte.gz"][0] / 255,
                               rtol=1e-6)
    assert label == ARRAYS["train-labels-idx1-ubyte.gz"][0] + 100
    images, labels = next(iter(DataLoader(ds, batch_size=4)))
    assert list(images.shape) == [4, 1, 5, 4] and labels.dtype == learntorch.int64


def test_a_missing_dataset_says_where_and_suggests_download(tmp_path, mirror):
    with pytest.raises(RuntimeError, match="Dataset not found.*MNIST.raw.*download=True"):
        MNIST(tmp_path / "empty")


def test_a_corrupt_file_fails_its_checksum(root):
    path = root / "MNIST" / "raw" / "train-labels-idx1-ubyte.gz"
    content = bytearray(path.read_bytes())
    content[len(content) // 2] ^= 0xFF  # one damaged byte
    path.write_bytes(bytes(content))
    with pytest.raises(RuntimeError, match="md5 checksum .* does not match the expected") as e:
        MNIST(root)
    assert "train-labels-idx1-ubyte.gz" in str(e.value)
    assert len(MNIST(root, train=False)) == 3, "the test files are still fine"


def test_sha256_checksums_are_understood(root, monkeypatch):
    raw = root / "MNIST" / "raw"
    monkeypatch.setattr(MNIST, "resources", [
        (name, hashlib.sha256((raw / name).read_bytes()).hexdigest()) for name in ARRAYS])
    assert len(MNIST(root)) == 6
    monkeypatch.setattr(MNIST, "resources", [(name, "0" * 64) for name in ARRAYS])
    with pytest.raises(RuntimeError, match="sha256 checksum"):
        MNIST(root)


# --------------------------------------------------------------------- download
def test_download_fills_the_cache_from_the_first_working_mirror(tmp_path, mirror, monkeypatch,
                                                                 capsys):
    dead = (tmp_path / "nowhere").as_uri() + "/"
    monkeypatch.setattr(MNIST, "mirrors", [dead, mirror.as_uri() + "/"])
    ds = MNIST(tmp_path / "cache", download=True)
    assert len(ds) == 6
    raw = tmp_path / "cache" / "MNIST" / "raw"
    assert sorted(os.listdir(raw)) == sorted(ARRAYS), "all four files, no leftovers"
    out = capsys.readouterr().out
    assert "nowhere" in out and "trying next mirror" in out


def test_a_mirror_serving_wrong_data_is_skipped(tmp_path, mirror, monkeypatch):
    wrong = tmp_path / "wrong"
    wrong.mkdir()
    for name in ARRAYS:
        (wrong / name).write_bytes(b"not the file")
    monkeypatch.setattr(MNIST, "mirrors", [wrong.as_uri() + "/", mirror.as_uri() + "/"])
    assert len(MNIST(tmp_path / "cache", download=True)) == 6


def test_when_every_mirror_fails_the_error_lists_them(tmp_path, mirror, monkeypatch):
    wrong = tmp_path / "wrong"
    wrong.mkdir()
    (wrong / "train-images-idx3-ubyte.gz").write_bytes(b"not the file")
    monkeypatch.setattr(MNIST, "mirrors", [wrong.as_uri() + "/", (tmp_path / "x").as_uri() + "/"])
    with pytest.raises(RuntimeError, match="(?s)every mirror failed.*ChecksumError.*URLError"):
        MNIST(tmp_path / "cache", download=True)
    assert not any(p.name.endswith(".part") for p in (tmp_path / "cache").rglob("*"))


def test_download_skips_intact_files_and_replaces_damaged_ones(root, monkeypatch):
    raw = root / "MNIST" / "raw"
    (raw / "t10k-labels-idx1-ubyte.gz").write_bytes(b"damaged")
    fetched = []
    payloads = {name: (raw.parent.parent.parent / "mirror" / name).read_bytes()
                for name in ARRAYS}

    def fake_urlopen(request, timeout=None):  # the opener, replaced: no file, no network
        url = request.full_url
        fetched.append(url)
        assert request.get_header("User-agent") == "learntorch"
        return io.BytesIO(payloads[url.rsplit("/", 1)[1]])
    monkeypatch.setattr(mnist_module, "urlopen", fake_urlopen)
    monkeypatch.setattr(MNIST, "mirrors", ["https://example.invalid/mnist/"])
    assert len(MNIST(root, train=False, download=True)) == 3
    assert fetched == ["https://example.invalid/mnist/t10k-labels-idx1-ubyte.gz"]


def test_fashion_mnist_uses_its_own_folder_and_classes(tmp_path, mirror):
    ds = FashionMNIST(tmp_path / "cache", download=True)
    assert (tmp_path / "cache" / "FashionMNIST" / "raw" / "train-images-idx3-ubyte.gz").exists()
    assert len(ds) == 6 and ds.classes[9] == "Ankle boot"
    assert MNIST.classes[3] == "3 - three" and MNIST(tmp_path / "cache", download=True)


def test_the_published_checksums_and_mirrors_are_torchvisions():
    # checked by hand against torchvision's source; guards against an accidental edit
    assert dict(MNIST.resources)["train-images-idx3-ubyte.gz"] == \
        "f68b3c2dcbeaaa9fbdd348bbdeb94873"
    assert dict(FashionMNIST.resources)["t10k-labels-idx1-ubyte.gz"] == \
        "bb300cfdad3c16e7a12a480ee83cd310"
    assert MNIST.mirrors[0] == "https://ossci-datasets.s3.amazonaws.com/mnist/"
    assert all(m.endswith("/") for cls in (MNIST, FashionMNIST) for m in cls.mirrors)


def test_url_errors_are_what_urlopen_raises_for_a_missing_file(tmp_path):
    with pytest.raises(URLError):
        mnist_module.download_url((tmp_path / "none.gz").as_uri(), str(tmp_path / "out"), "0" * 32)
