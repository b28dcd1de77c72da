"""MNIST and Fashion-MNIST: download, verify, cache, and read the IDX files.

``MNIST(root, train=True, transform=None, target_transform=None, download=False)``
behaves like torchvision's: the four gzipped IDX files live in
``root/MNIST/raw`` (``root/FashionMNIST/raw``); ``download=True`` fetches the
missing ones, trying each mirror in order, and keeps a file only if its
checksum matches the published one.  Nothing is downloaded unless you ask.

The IDX format (http://yann.lecun.com/exdb/mnist/) is tiny enough to read by
hand, which is why it is spelled out here instead of hidden in a library:

    byte 0-1   0x00 0x00        the magic number starts with two zero bytes
    byte 2     type code        0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32,
                                0x0D float32, 0x0E float64
    byte 3     ndim             number of dimensions
    then       ndim x uint32    the size of each dimension, big-endian
    then       the values       row-major, big-endian

So an MNIST image file starts 00 00 08 03 | 60000 | 28 | 28 and a label file
00 00 08 01 | 60000.  A header that is not like this, or a file whose data do
not fill the announced shape, is reported as an error naming the file.

``dataset[i]`` is ``(image, label)`` with ``image`` a uint8 numpy array of
shape (28, 28) -- where torchvision hands its transforms a PIL image -- so
``transform=transforms.ToTensor()`` gives the usual float32 (1, 28, 28) tensor
in [0, 1]; ``label`` is an int.  ``data`` (uint8, (N, 28, 28)) and ``targets``
(int64, (N,)) hold everything, as in torchvision.
"""
import gzip
import hashlib
import os
import struct

import numpy as np

from .._tensor import Tensor
from ..utils.data import Dataset
from .transforms import apply_to_sample

# IDX type code -> numpy dtype, big-endian as stored
IDX_DTYPES = {0x08: np.dtype(">u1"), 0x09: np.dtype(">i1"), 0x0B: np.dtype(">i2"),
              0x0C: np.dtype(">i4"), 0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}

DOWNLOAD_TIMEOUT = 60       # seconds without data before a mirror counts as failed
_CHUNK = 1 << 20


def urlopen(request, timeout):
    """``urllib.request.urlopen``, imported on first use: urllib (with http.client and
    email) would add ~10-30 ms to every ``import learntorch`` for a download that most
    sessions never make.  Tests replace this function to download without a network."""
    from urllib.request import urlopen as _urlopen
    return _urlopen(request, timeout=timeout)


class ChecksumError(RuntimeError):
    """A file's checksum differs from the published one (corrupt, truncated or foreign)."""


def file_checksum(path, algorithm):
    digest = hashlib.new(algorithm, usedforsecurity=False)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(_CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def checksum_algorithm(expected):
    """The hash a published hex digest was made with, read off its length."""
    algorithms = {32: "md5", 40: "sha1", 64: "sha256"}
    if expected is None or len(expected) not in algorithms:
        raise ValueError(f"expected an MD5, SHA-1 or SHA-256 hex digest, got {expected!r}")
    return algorithms[len(expected)]


def verify_checksum(path, expected):
    """Raise ChecksumError unless the file at ``path`` has the hex digest ``expected``.

    MD5 (what MNIST's publishers give) is not a defence against an attacker, but
    it reliably catches what happens in practice: a truncated download, an HTML
    error page saved under the file's name, a different version of the data.
    """
    algorithm = checksum_algorithm(expected)
    actual = file_checksum(path, algorithm)
    if actual != expected.lower():
        raise ChecksumError(f"{path}: {algorithm} checksum {actual} does not match the expected "
                            f"{expected} -- the file is corrupt, incomplete or not the "
                            "published one; delete it and download it again")


def download_url(url, path, expected):
    """Stream ``url`` into ``path``, keeping it only if its checksum is ``expected``.

    The data go to ``path + '.part'`` first and are renamed at the end, so an
    interrupted download never leaves a file that looks complete.
    """
    from urllib.request import Request
    partial = path + ".part"
    digest = hashlib.new(checksum_algorithm(expected), usedforsecurity=False)
    # some servers refuse Python's default User-Agent
    request = Request(url, headers={"User-Agent": "learntorch"})
    try:
        with urlopen(request, timeout=DOWNLOAD_TIMEOUT) as response, open(partial, "wb") as out:
            for block in iter(lambda: response.read(_CHUNK), b""):
                digest.update(block)
                out.write(block)
        if digest.hexdigest() != expected.lower():
            raise ChecksumError(f"{url}: downloaded data have checksum {digest.hexdigest()}, "
                                f"expected {expected}")
        os.replace(partial, path)
    finally:
        if os.path.exists(partial):
            os.remove(partial)


def read_idx(path):
    """The array stored in an IDX file (gzipped if its name ends in .gz), in native byte order."""
    path = os.fspath(path)
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rb") as f:
            header = f.read(4)
            if len(header) < 4:
                raise RuntimeError(f"{path}: not an IDX file: it is only {len(header)} bytes long "
                                   "(an IDX header has 4 bytes of magic number)")
            zero0, zero1, code, ndim = header
            if zero0 != 0 or zero1 != 0:
                raise RuntimeError(f"{path}: not an IDX file: the magic number is "
                                   f"0x{header.hex()}, but an IDX magic number starts with two "
                                   "zero bytes (0x0000, then the type code and the number of "
                                   "dimensions)")
            if code not in IDX_DTYPES:
                raise RuntimeError(f"{path}: unknown IDX type code 0x{code:02X} in the magic "
                                   f"number 0x{header.hex()} (known: "
                                   f"{', '.join(f'0x{c:02X}' for c in IDX_DTYPES)})")
            dims_bytes = f.read(4 * ndim)
            if len(dims_bytes) < 4 * ndim:
                raise RuntimeError(f"{path}: truncated IDX header: it announces {ndim} "
                                   f"dimensions but holds only {len(dims_bytes)} of the "
                                   f"{4 * ndim} bytes that give their sizes")
            dims = struct.unpack(f">{ndim}I", dims_bytes)
            dtype = IDX_DTYPES[code]
            expected = int(np.prod(dims, dtype=np.int64)) * dtype.itemsize
            payload = f.read(expected + 1)  # one byte more tells "too long" from "exact"
    except (OSError, EOFError) as e:  # gzip.BadGzipFile is an OSError
        raise RuntimeError(f"{path}: cannot read the file ({type(e).__name__}: {e}); it may be "
                           "corrupt: delete it and download it again") from e
    if len(payload) != expected:
        what = "more than" if len(payload) > expected else f"only {len(payload)} bytes, not"
        raise RuntimeError(f"{path}: the IDX header announces shape {list(dims)} of "
                           f"{dtype.name} ({expected} bytes of data), but the file holds "
                           f"{what} that")
    return np.frombuffer(payload, dtype=dtype).astype(dtype.newbyteorder("="),
                                                      copy=True).reshape(dims)


class MNIST(Dataset):
    """The MNIST handwritten digits, 28x28 (60000 training, 10000 test images).

    See the module docstring for the files, the format, and what ``dataset[i]``
    holds.  ``download=True`` fetches missing files from ``mirrors`` (in order),
    checking each against ``resources``.
    """

    mirrors = ["https://ossci-datasets.s3.amazonaws.com/mnist/",
               "http://yann.lecun.com/exdb/mnist/"]
    resources = [("train-images-idx3-ubyte.gz", "f68b3c2dcbeaaa9fbdd348bbdeb94873"),
                 ("train-labels-idx1-ubyte.gz", "d53e105ee54ea40749a09fcbcd1e9432"),
                 ("t10k-images-idx3-ubyte.gz", "9fb629c4189551a2d022fa330f9573f3"),
                 ("t10k-labels-idx1-ubyte.gz", "ec29112dd5afa0611ce80d1b7f02629c")]
    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five",
               "6 - six", "7 - seven", "8 - eight", "9 - nine"]

    def __init__(self, root, train=True, transform=None, target_transform=None,
                 download=False):
        self.root = os.path.expanduser(os.fspath(root))
        self.train = train
        self.transform = transform
        self.target_transform = target_transform
        if download:
            self.download()
        missing = [name for name in self._files() if not os.path.exists(self._path(name))]
        if missing:
            raise RuntimeError(f"Dataset not found: {', '.join(missing)} missing in "
                               f"{self.raw_folder}. You can use download=True to download it")
        self.data, self.targets = self._load_data()

    @property
    def raw_folder(self):
        return os.path.join(self.root, type(self).__name__, "raw")

    @property
    def class_to_idx(self):
        return {name: i for i, name in enumerate(self.classes)}

    def _files(self):
        prefix = "train" if self.train else "t10k"
        return [f"{prefix}-images-idx3-ubyte.gz", f"{prefix}-labels-idx1-ubyte.gz"]

    def _path(self, name):
        return os.path.join(self.raw_folder, name)

    def _checksum(self, name):
        return dict(self.resources)[name]

    def _load_data(self):
        image_file, label_file = self._files()
        for name in (image_file, label_file):
            verify_checksum(self._path(name), self._checksum(name))
        images, labels = read_idx(self._path(image_file)), read_idx(self._path(label_file))
        if images.ndim != 3 or labels.ndim != 1 or len(images) != len(labels):
            raise RuntimeError(f"{self.raw_folder}: expected images of shape (N, H, W) and "
                               f"labels of shape (N,), got {list(images.shape)} and "
                               f"{list(labels.shape)}")
        return Tensor._wrap(images.astype(np.uint8)), Tensor._wrap(labels.astype(np.int64))

    def _intact(self, name):
        path = self._path(name)
        if not os.path.exists(path):
            return False
        try:
            verify_checksum(path, self._checksum(name))
        except ChecksumError:
            return False
        return True

    def download(self):
        """Fetch every file that is missing or damaged, trying the mirrors in order."""
        from urllib.error import URLError
        os.makedirs(self.raw_folder, exist_ok=True)
        for name, checksum in self.resources:
            if self._intact(name):
                continue
            errors = []
            for mirror in self.mirrors:
                url = f"{mirror}{name}"
                print(f"Downloading {url}")
                try:
                    download_url(url, self._path(name), checksum)
                except (URLError, OSError, ChecksumError) as e:
                    print(f"Failed to download (trying next mirror): {e}")
                    errors.append(f"{url}: {type(e).__name__}: {e}")
                    continue
                break
            else:
                raise RuntimeError(f"Error downloading {name}: every mirror failed:\n  " +
                                   "\n  ".join(errors))

    def __getitem__(self, index):
        img = self.data._data[index].copy()  # a copy: transforms may write into it
        target = int(self.targets._data[index])
        return apply_to_sample(img, target, self.transform, self.target_transform)

    def __len__(self):
        return len(self.data)

    def __repr__(self):
        return (f"{type(self).__name__}(root={self.root!r}, split="
                f"{'train' if self.train else 'test'!r}, samples={len(self)})")


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST: 28x28 pictures of clothes, a drop-in replacement for MNIST."""

    mirrors = ["http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",
               "https://raw.githubusercontent.com/zalandoresearch/fashion-mnist/master/data/"
               "fashion/"]
    resources = [("train-images-idx3-ubyte.gz", "8d4fb7e6c68d591d4c3dfef9ec88bf0d"),
                 ("train-labels-idx1-ubyte.gz", "25c81989df183df01b3e8a0aad5dffbe"),
                 ("t10k-images-idx3-ubyte.gz", "bef4ecab320f06d8554ea6380940ec79"),
                 ("t10k-labels-idx1-ubyte.gz", "bb300cfdad3c16e7a12a480ee83cd310")]
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
               "Sneaker", "Bag", "Ankle boot"]
