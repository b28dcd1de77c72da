"""learntorch.load against hostile files: every bad file is one clear error, nothing runs,
nothing large is allocated before the file proves it holds that much.

Each class of bad file found when attacking load has a test here: headers whose values
have the wrong type (once a bare ``ValueError: invalid literal for int()`` or ``TypeError:
'>' not supported``), unknown dtypes (``data type 'evil' not understood``), deep nesting
(``RecursionError``), zip bombs, path traversal, truncation, wrong magic, real torch.save
pickles -- and hypothesis varies the inputs where they can vary.
"""
import collections
import inspect
import io
import json
import os
import pickle
import tracemalloc
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import learntorch
from learntorch.serialization import (DEFAULT_MAX_BYTES, MAX_DEPTH, LoadError,
                                      PickleNotAllowedError)
from oracle import require_torch
import zip_files as zf


def saved_bytes(obj):
    buf = io.BytesIO()
    learntorch.save(obj, buf)
    return buf.getvalue()


def load_bytes(data, **kwargs):
    return learntorch.load(io.BytesIO(data), **kwargs)


def npy(array):
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=False)
    return buf.getvalue()


def refused(data, match=None, **kwargs):
    """``data`` must be refused with LoadError (and ``match`` in the message); returns it."""
    with pytest.raises(LoadError, match=match) as info:
        load_bytes(data, **kwargs)
    assert "learntorch.load" in str(info.value)
    return str(info.value)


class peak_memory:
    """Peak bytes allocated (numpy's arrays included: numpy reports them to tracemalloc)."""

    def __enter__(self):
        tracemalloc.start()
        return self

    def __exit__(self, *exc):
        self.peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return False


# ---------------------------------------------------------------- the error type
def test_load_errors_are_runtime_errors_and_pickle_refusals_are_unpickling_errors_too():
    assert issubclass(LoadError, RuntimeError)              # torch's type for a damaged file
    assert issubclass(PickleNotAllowedError, LoadError)
    assert issubclass(PickleNotAllowedError, pickle.UnpicklingError)  # weights_only=True's


def test_the_message_names_the_file_it_refuses(tmp_path):
    path = tmp_path / "weights.pt"
    path.write_bytes(b"not a model")
    with pytest.raises(LoadError, match="weights.pt"):
        learntorch.load(path)
    with pytest.raises(LoadError, match="BytesIO"):
        load_bytes(b"not a model")
    with open(path, "rb") as handle, pytest.raises(LoadError, match="weights.pt"):
        learntorch.load(handle)


# ---------------------------------------------------------------- headers of the wrong type
def test_a_tensor_number_that_is_not_an_int_is_refused():
    # was: ValueError: invalid literal for int() with base 10: 'abc'
    for index in ("abc", "0", 1.5, -1, True, None, [0], 10 ** 30):
        refused(zf.learntorch_file({"tensor": index}, [npy(np.ones(2, np.float32))]),
                "tensor number")


def test_a_format_version_that_is_not_an_int_is_refused():
    # was: TypeError: '>' not supported between instances of 'str' and 'int'
    for version in ("1", None, [1], 1.0, True, 0, -3):
        refused(zf.learntorch_file(None, format_entry={"format": "learntorch-save",
                                                       "version": version}), "version")
    refused(zf.learntorch_file(None, format_entry=["learntorch-save", 1]), "not a learntorch")


def test_an_unknown_dtype_is_refused_in_the_structure_and_in_a_tensor_header():
    # was: TypeError: data type 'evil' not understood
    refused(zf.learntorch_file({"dtype": "evil"}), "data type 'evil'")
    header = zf.raw_npy_header("{'descr': 'evil', 'fortran_order': False, 'shape': (2,), }")
    refused(zf.learntorch_file({"tensor": 0}, [header + bytes(8)]), "tensor 0")


@pytest.mark.parametrize("descr, reason", [
    ("|O", "not plain numeric"),                       # objects: numpy would unpickle them
    ("[('a', '<f4'), ('b', '<i8')]", "not plain numeric"),   # records
    ("<c8", "not plain numeric"),                      # complex: no learntorch dtype
    ("<U3", "not plain numeric"),
    ("<u4", "no tensor type"),                          # numeric, but not a learntorch dtype
])
def test_tensors_that_are_not_plain_numbers_of_a_learntorch_dtype_are_refused(descr, reason):
    header = zf.raw_npy_header(f"{{'descr': {descr!r}, 'fortran_order': False, 'shape': (1,), }}"
                               if not descr.startswith("[") else
                               f"{{'descr': {descr}, 'fortran_order': False, 'shape': (1,), }}")
    refused(zf.learntorch_file({"tensor": 0}, [header + bytes(16)]), reason)


@pytest.mark.parametrize("structure, reason", [
    ({"dict": [["a"]]}, "pair"),
    ({"dict": [[1.5, 2]]}, "key"),
    ({"dict": {"a": 1}}, "not a list"),
    ({"list": [1], "tuple": [2]}, "several kinds"),
    ({"float": "1e5"}, "special floats"),
    ({"set": [1, 2]}, "unknown kind"),
    ({}, "unexpected entry"),
    ({"tensor": 0, "requires_grad": "yes"}, "true/false"),
    ({"tensor": 0, "device": "cuda"}, "unknown fields"),
    ({"tensor": 5}, "missing"),
])
def test_malformed_structure_entries_are_refused_with_what_is_wrong(structure, reason):
    refused(zf.learntorch_file(structure, [npy(np.ones(2, np.float32))]), reason)


def test_an_integer_tensor_marked_requires_grad_is_refused():
    refused(zf.learntorch_file({"tensor": 0, "requires_grad": True}, [npy(np.arange(3))]),
            "requires_grad")


def test_structure_that_is_not_json_or_not_utf8_is_refused():
    refused(zf.learntorch_file("{'tensor': 0"), "not valid JSON")
    refused(zf.learntorch_file(b'"caf\xe9"'), "not valid JSON")             # latin-1, not UTF-8
    refused(zf.learntorch_file("9" * 5000), "not valid JSON")   # past Python's int-digit limit


json_leaves = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8),
                        st.floats(allow_nan=False, allow_infinity=False))
kinds = st.sampled_from(["tensor", "dict", "odict", "list", "tuple", "float", "dtype",
                         "requires_grad", "parameter", "x"])
json_values = st.recursive(
    json_leaves,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(kinds, inner, max_size=3),
    max_leaves=25)


@given(json_values)
@settings(suppress_health_check=[HealthCheck.too_slow])
def test_any_json_structure_loads_or_is_refused_with_load_error(structure):
    data = zf.learntorch_file(structure, [npy(np.arange(4, dtype=np.float32))])
    try:
        load_bytes(data)
    except LoadError:
        pass


@given(descr=st.one_of(st.sampled_from(["<f4", ">f8", "|b1", "<i8", "|u1", "<f2", "evil",
                                         "|O", "<f4x", "", "<V4"]), st.text(max_size=6)),
       shape=st.one_of(st.tuples(st.integers(-3, 5)), st.tuples(st.integers(0, 4),
                                                                 st.integers(0, 4)),
                       st.just((1 << 40,)), st.just(("a",)), st.just([2]), st.just(None)),
       fortran=st.one_of(st.booleans(), st.just(1), st.just("yes")),
       payload=st.integers(0, 40))
def test_any_npy_header_loads_as_declared_or_is_refused_with_load_error(descr, shape, fortran,
                                                                         payload):
    header = zf.raw_npy_header(f"{{'descr': {descr!r}, 'fortran_order': {fortran!r}, "
                               f"'shape': {shape!r}, }}")
    data = zf.learntorch_file({"tensor": 0}, [header + bytes(payload)])
    try:
        t = load_bytes(data)
    except LoadError:
        return
    assert tuple(t.shape) == tuple(shape)
    assert t.numel() * t.element_size() == payload


def test_byte_order_and_fortran_order_are_read_as_numpy_means_them():
    big_endian = np.arange(6, dtype=">f8").reshape(2, 3)
    fortran = np.asfortranarray(np.arange(12, dtype=np.int64).reshape(3, 4))
    back = load_bytes(zf.learntorch_file({"list": [{"tensor": 0}, {"tensor": 1}]},
                                         [npy(big_endian), npy(fortran)]))
    np.testing.assert_array_equal(back[0].numpy(), big_endian)
    np.testing.assert_array_equal(back[1].numpy(), fortran)
    assert back[0].dtype is learntorch.float64


# ---------------------------------------------------------------- nesting
def nested(depth, leaf=1):
    obj = leaf
    for _ in range(depth):
        obj = [obj]
    return obj


def test_containers_nested_max_depth_deep_round_trip():
    obj = nested(MAX_DEPTH, learntorch.ones(2))
    back = load_bytes(saved_bytes(obj))
    for _ in range(MAX_DEPTH):
        back = back[0]
    assert back.tolist() == [1.0, 1.0]


def test_save_refuses_deeper_nesting_and_cycles_that_load_would_refuse():
    with pytest.raises(ValueError, match=f"more than {MAX_DEPTH}"):
        learntorch.save(nested(MAX_DEPTH + 1), io.BytesIO())
    loop = [1]
    loop.append({"again": loop})
    with pytest.raises(ValueError, match="contains itself"):
        learntorch.save(loop, io.BytesIO())
    shared = [1, 2]
    assert load_bytes(saved_bytes([shared, shared])) == [[1, 2], [1, 2]]  # shared is not a cycle


def test_deep_nesting_in_a_file_is_refused_not_a_recursion_error():
    # was: RecursionError
    encoded = {"list": []}
    node = encoded
    for _ in range(MAX_DEPTH + 5):
        child = {"list": []}
        node["list"].append(child)
        node = child
    refused(zf.learntorch_file(json.dumps(encoded)), "nested more than")
    very_deep = '{"list": [' * 200_000 + "1" + "]}" * 200_000
    refused(zf.learntorch_file(very_deep), "nested too deeply")


# ---------------------------------------------------------------- sizes: zip bombs
@pytest.fixture(scope="module")
def zip_bomb():
    """1 MB on disk, a 1 GiB float32 tensor (2**28 zeros) once inflated."""
    data = zf.zip_bomb(1 << 30)
    assert len(data) < 1.1e6
    return data


def test_a_zip_bomb_is_refused_before_anything_is_allocated(zip_bomb):
    assert DEFAULT_MAX_BYTES == 1 << 30
    with peak_memory() as memory:
        message = refused(zip_bomb, "max_bytes")
    assert memory.peak < 8 << 20, f"refusing a zip bomb allocated {memory.peak:,} bytes"
    assert "1,073,742" in message and "max_bytes=2147483648" in message  # the size, the fix


def test_an_entry_that_inflates_past_its_declared_size_is_cut_off_and_refused():
    # the headers declare a 400-byte tensor; the data would inflate to 1 GiB
    header = zf.npy_header("<f4", (100,))
    raw, _ = zf.deflated_zeros(1 << 30, prefix=header)
    data = zf.build([zf.stored("learntorch/format", '{"format": "learntorch-save", "version": 1}'),
                     zf.stored("learntorch/structure.json", '{"tensor": 0}'),
                     zf.Entry("learntorch/tensors/0.npy", raw, zf.DEFLATED,
                              crc=12345, size=len(header) + 400)])
    with peak_memory() as memory:
        refused(data, "could not be read|longer than declared")
    assert memory.peak < 8 << 20


def test_a_header_declaring_more_data_than_the_entry_holds_allocates_nothing():
    header = zf.npy_header("<f8", (1 << 37,))            # 1 TiB declared, 64 bytes present
    with peak_memory() as memory:
        refused(zf.learntorch_file({"tensor": 0}, [header + bytes(64)]), "declares")
    assert memory.peak < 1 << 20


def test_max_bytes_can_be_raised_for_a_large_trusted_file():
    data = saved_bytes({"w": learntorch.zeros(300_000)})   # 1.2 MB of float32
    message = refused(data, "max_bytes", max_bytes=1_000_000)
    assert "max_bytes=2097152" in message
    assert load_bytes(data, max_bytes=2_097_152)["w"].shape == (300_000,)
    with pytest.raises(TypeError, match="max_bytes"):
        load_bytes(data, max_bytes="1GB")


def test_load_has_torchs_parameters_plus_the_one_size_limit():
    torch = require_torch()
    mine = inspect.signature(learntorch.load).parameters
    theirs = inspect.signature(torch.load).parameters
    assert [n for n in mine if n != "max_bytes"] == list(theirs)
    assert mine["max_bytes"].kind is inspect.Parameter.KEYWORD_ONLY


# ---------------------------------------------------------------- archives: names, damage
@pytest.mark.parametrize("name", ["../../escaped.txt", "/tmp/escaped.txt",
                                  "learntorch/../../escaped.txt", "learntorch/tensors/0.npy/..",
                                  "learntorch/tensors/01.npy", "learntorch/notes.txt"])
def test_entries_learntorch_never_writes_are_refused_and_nothing_is_written(name, tmp_path,
                                                                            monkeypatch):
    monkeypatch.chdir(tmp_path)
    data = zf.build([zf.stored("learntorch/format", '{"format": "learntorch-save", "version": 1}'),
                     zf.stored("learntorch/structure.json", "1"),
                     zf.stored(name, b"owned")])
    refused(data, "never writes")
    assert list(tmp_path.iterdir()) == []
    assert not os.path.exists("/tmp/escaped.txt")


def test_an_entry_given_twice_is_refused():
    data = zf.build([zf.stored("learntorch/format", '{"format": "learntorch-save", "version": 1}'),
                     zf.stored("learntorch/structure.json", '{"tensor": 0}'),
                     zf.stored("learntorch/tensors/0.npy", npy(np.zeros(2, np.float32))),
                     zf.stored("learntorch/tensors/0.npy", npy(np.ones(2, np.float32)))])
    refused(data, "twice")


def test_encrypted_or_unusually_compressed_entries_are_refused():
    fmt = '{"format": "learntorch-save", "version": 1}'
    bzip2 = zf.Entry("learntorch/structure.json", b"BZh9...", method=12, crc=0, size=1)
    encrypted = zf.build([zf.stored("learntorch/format", fmt), zf.stored(
        "learntorch/structure.json", "1")]).replace(b"PK\x01\x02\x14\x00\x14\x00\x00\x00",
                                                    b"PK\x01\x02\x14\x00\x14\x00\x01\x00")
    refused(zf.build([zf.stored("learntorch/format", fmt), bzip2]), "compressed in a way")
    refused(encrypted, "encrypted")


GOOD = {"model": collections.OrderedDict([("w", learntorch.arange(40.0).reshape(8, 5)),
                                          ("b", learntorch.ones(5))]),
        "epoch": 3, "rng": learntorch.get_rng_state()}


def same_as_good(back):
    assert list(back["model"]) == ["w", "b"] and back["epoch"] == 3
    assert learntorch.equal(back["model"]["w"], GOOD["model"]["w"])
    assert learntorch.equal(back["rng"], GOOD["rng"])


@given(st.data())
def test_a_truncated_file_is_refused(data):
    good = saved_bytes(GOOD)
    cut = data.draw(st.integers(0, len(good) - 1))
    refused(good[:cut])


@given(st.data())
def test_any_damaged_byte_gives_load_error_or_the_very_same_data(data):
    """Bytes the format checks (data CRCs, names, sizes, JSON) raise LoadError; bytes it
    does not need (timestamps, version-made-by) change nothing: never another exception."""
    good = bytearray(saved_bytes(GOOD))
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(good) - 1))
        good[at] = data.draw(st.integers(0, 255).filter(lambda b, old=good[at]: b != old))
    try:
        back = load_bytes(bytes(good))
    except LoadError:
        return
    same_as_good(back)


def test_wrong_magic_numbers_are_refused():
    good = saved_bytes(GOOD)
    refused(b"XK" + good[2:])                                  # the first local header
    npy_at = good.index(b"\x93NUMPY")
    refused(good[:npy_at] + b"\x93NUMPZ" + good[npy_at + 6:])  # a tensor's .npy magic
    refused(b"GIF89a" + bytes(100), "not a valid zip")


def test_a_changed_tensor_byte_fails_the_crc_check():
    good = bytearray(saved_bytes({"w": learntorch.zeros(64)}))
    npy_at = good.index(b"\x93NUMPY")
    good[npy_at + 128 + 10] ^= 1                               # inside the data, after the header
    refused(bytes(good), "CRC")


# ---------------------------------------------------------------- pickles never run
class _Exploit:
    """Unpickling this object would create a file: proof that code ran."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_real_torch_save_files_are_refused_as_pickles_and_run_nothing(tmp_path):
    torch = require_torch()
    marker = tmp_path / "pwned"
    for name, kwargs in (("zip.pt", {}), ("legacy.pt", {"_use_new_zipfile_serialization": False})):
        path = tmp_path / name
        torch.save({"w": torch.ones(3), "exploit": _Exploit(str(marker))}, path, **kwargs)
        with pytest.raises(PickleNotAllowedError, match="never unpickles"):
            learntorch.load(path)
        with pytest.raises(pickle.UnpicklingError):             # what torch's callers catch
            learntorch.load(path)
    state = torch.nn.Linear(2, 3).state_dict()
    path = tmp_path / "state.pt"
    torch.save(state, path)
    with pytest.raises(PickleNotAllowedError, match="torch.save"):
        learntorch.load(path)
    assert not marker.exists(), "loading a file executed code"


def test_what_save_writes_is_what_the_hardened_load_reads(tmp_path):
    path = tmp_path / "ok.pt"
    learntorch.save(GOOD, path)
    same_as_good(learntorch.load(path))
    with zipfile.ZipFile(path) as z:   # learntorch's own files are never compressed
        assert {i.compress_type for i in z.infolist()} == {zipfile.ZIP_STORED}
