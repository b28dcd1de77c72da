"""``learntorch.save`` / ``learntorch.load``: a file format that cannot run code.

``torch.save`` pickles, and unpickling a file can execute arbitrary code.
learntorch never unpickles.  A saved file is a zip archive holding

* ``learntorch/format``          -- the format name and version,
* ``learntorch/structure.json``  -- the saved object as JSON: dicts (ordered,
  with str/int keys), lists, tuples, numbers, strings, None, and references
  to tensors,
* ``learntorch/tensors/<n>.npy`` -- each tensor's data in numpy's .npy format.

A quantized tensor (``quantize_per_tensor``, a ``quantize_dynamic`` model's weights) is
stored as its integer codes (one byte each for qint8) plus its dtype, scale and zero point
(per channel: scales, zero points and axis) in the structure, so the file of a quantized
model is about a quarter of the float one, as with ``torch.save``.

So a state dict, an optimizer state dict, or nested containers of tensors
round-trip exactly; anything else (a whole Module, a function, an arbitrary
object) is refused at save time with a message saying what to save instead.
Each tensor is stored on its own: two views of one storage load back as two
independent tensors.

Loading treats the file as hostile (it may come from anywhere):

* it never unpickles, and reads only the entries above (nothing is extracted
  to disk, so entry names like ``../../x`` cannot go anywhere: they are refused);
* before anything is read, the sizes the archive declares must add up to at
  most ``max_bytes`` (``DEFAULT_MAX_BYTES``, 1 GiB, unless the caller raises
  it), and a tensor's .npy header must declare exactly as many bytes as its
  entry holds, so a small file cannot make ``load`` allocate a large one (a
  "zip bomb"); each tensor is read straight into its own array, once;
* containers may be nested ``MAX_DEPTH`` deep (``save`` refuses deeper ones,
  so whatever ``save`` wrote, ``load`` reads back);
* anything malformed raises ``LoadError`` (a ``RuntimeError``, the type
  ``torch.load`` raises for a damaged file) naming the file and what is wrong;
  a pickle raises ``PickleNotAllowedError``, which is also a
  ``pickle.UnpicklingError``, the type torch's ``weights_only=True`` raises
  when it refuses one.
"""
import collections
import io
import json
import math
import os
import pickle
import re
import zipfile
import zlib

import numpy as np

from . import _dtypes
from ._quantized_tensor import QuantizedTensor, per_tensor_affine
from ._tensor import Tensor

FORMAT = "learntorch-save"
VERSION = 1
_PREFIX = "learntorch/"
_FORMAT_ENTRY = _PREFIX + "format"
_STRUCTURE_ENTRY = _PREFIX + "structure.json"
_TENSOR_ENTRY = re.compile(r"learntorch/tensors/(0|[1-9][0-9]{0,8})\.npy\Z")

#: what the entries of one file may add up to, uncompressed, unless ``load(max_bytes=...)``
#: says otherwise: far above any model of the course, far below the memory of a laptop
DEFAULT_MAX_BYTES = 1 << 30
#: how deeply dicts/lists/tuples may nest (a state dict needs 3; JSON of 100,000 nested
#: lists would otherwise end in a RecursionError)
MAX_DEPTH = 100


class LoadError(RuntimeError):
    """``learntorch.load`` refused a file: damaged, truncated, foreign, too large, or malformed.

    A ``RuntimeError``, as torch raises for a damaged file; the message names the
    file and what is wrong with it.
    """


class PickleNotAllowedError(LoadError, pickle.UnpicklingError):
    """The file holds a pickle (``torch.save`` writes one), which could run code when loaded.

    Also a ``pickle.UnpicklingError``: what ``torch.load(..., weights_only=True)`` raises
    when it refuses a pickle, so code that catches either keeps working.
    """


# ---------------------------------------------------------------- save
class _Encoder:
    """Turns a Python object into JSON-able data plus a list of tensor arrays."""

    def __init__(self):
        self.arrays = []
        self.seen = {}
        self.path_ids = set()  # the containers being encoded, from the top down: a cycle test
        self.temporaries = []  # tensors made while encoding (a quantized tensor's codes)

    def encode(self, obj, path="obj", depth=0):
        from .nn.parameter import Parameter
        if isinstance(obj, QuantizedTensor):
            return {"quantized": self._quantized(obj, path, depth)}
        if isinstance(obj, Tensor):
            key = id(obj)
            if key not in self.seen:
                self.seen[key] = len(self.arrays)
                # a copy in C order, on the cpu, that keeps 0-d as 0-d
                array = np.array(obj.detach().cpu().numpy(), order="C")
                if obj.dtype is _dtypes.bfloat16:  # .npy knows no bfloat16: store its bits
                    array = array.view(np.uint16)
                self.arrays.append(array)
            node = {"tensor": self.seen[key], "requires_grad": bool(obj.requires_grad),
                    "parameter": isinstance(obj, Parameter)}
            if obj.dtype is _dtypes.bfloat16:
                node["bits_of"] = "bfloat16"  # the .npy holds uint16 bit patterns
            return node
        if obj is None or isinstance(obj, (bool, str, int)):
            return obj
        if isinstance(obj, float):
            if math.isfinite(obj):
                return obj
            return {"float": repr(obj)}  # inf/nan are not JSON numbers
        if isinstance(obj, (np.integer, np.floating, np.bool_)):
            return self.encode(obj.item(), path, depth)
        if isinstance(obj, _dtypes.dtype):
            return {"dtype": obj.name}
        if not isinstance(obj, (dict, list, tuple)):
            hint = (" Save model.state_dict() instead of the module." if hasattr(obj, "state_dict")
                    else "")
            raise TypeError(f"learntorch.save cannot store a {type(obj).__name__} (at {path}): "
                            "only tensors, numbers, strings, None and dicts/lists/tuples of them "
                            "are supported, so that loading never runs code." + hint)
        if id(obj) in self.path_ids:
            raise ValueError(f"learntorch.save: {path} contains itself (a reference cycle), which "
                             "cannot be written as a file; save a copy without the cycle")
        if depth >= MAX_DEPTH:
            raise ValueError(f"learntorch.save: {path} is nested more than {MAX_DEPTH} "
                             "containers deep, more than learntorch.load accepts; flatten it "
                             "(for example into a dict with tuple-like string keys)")
        self.path_ids.add(id(obj))
        try:
            return self._container(obj, path, depth + 1)
        finally:
            self.path_ids.discard(id(obj))

    def _quantized(self, q, path, depth):
        # the codes as a plain integer tensor; the parameters beside them.  The tensors made
        # here are kept alive until the end: ``seen`` knows tensors by id(), which a freed
        # temporary would hand on to the next one
        made = [q.int_repr()]
        fields = {"codes": self.encode(made[0], path, depth), "dtype": q.dtype.name}
        if q.qscheme() is per_tensor_affine:
            fields.update(scale=q.q_scale(), zero_point=q.q_zero_point())
        else:
            made += [q.q_per_channel_scales(), q.q_per_channel_zero_points()]
            fields.update(scales=self.encode(made[1], path, depth),
                          zero_points=self.encode(made[2], path, depth),
                          axis=q.q_per_channel_axis())
        self.temporaries.extend(made)
        return fields

    def _container(self, obj, path, depth):
        if isinstance(obj, dict):
            items = []
            for k, v in obj.items():
                if not isinstance(k, (str, int)) or isinstance(k, bool):
                    raise TypeError(f"learntorch.save: dict keys must be str or int, got "
                                    f"{type(k).__name__} at {path}")
                items.append([k, self.encode(v, f"{path}[{k!r}]", depth)])
            kind = "odict" if isinstance(obj, collections.OrderedDict) else "dict"
            return {kind: items}
        kind = "tuple" if isinstance(obj, tuple) else "list"
        return {kind: [self.encode(v, f"{path}[{i}]", depth) for i, v in enumerate(obj)]}


def save(obj, f, pickle_module=None, pickle_protocol=None, _use_new_zipfile_serialization=True):
    """Write ``obj`` (tensors in nested dicts/lists/tuples) to a path or binary file."""
    enc = _Encoder()
    structure = enc.encode(obj)
    opened = isinstance(f, (str, os.PathLike))
    handle = open(f, "wb") if opened else f
    try:
        with zipfile.ZipFile(handle, "w", compression=zipfile.ZIP_STORED) as z:
            z.writestr(_FORMAT_ENTRY, json.dumps({"format": FORMAT, "version": VERSION}))
            z.writestr(_STRUCTURE_ENTRY, json.dumps(structure))
            for i, arr in enumerate(enc.arrays):
                buf = io.BytesIO()
                np.save(buf, arr, allow_pickle=False)
                z.writestr(f"{_PREFIX}tensors/{i}.npy", buf.getvalue())
    finally:
        if opened:
            handle.close()


# ---------------------------------------------------------------- load
# what reading a damaged archive can raise, in zipfile, zlib and numpy's header parser
_READ_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, ValueError, NotImplementedError,
                OSError, OverflowError)


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None,
         max_bytes=DEFAULT_MAX_BYTES, **pickle_load_args):
    """Read an object written by ``learntorch.save``; never executes code from the file.

    ``max_bytes`` (learntorch only) is the most the file's entries may add up to,
    uncompressed: 1 GiB unless raised, checked before anything is read.  A file
    that is damaged, foreign or over the limit raises ``LoadError``; one holding a
    pickle raises ``PickleNotAllowedError``.  ``weights_only`` and ``mmap`` are
    accepted for torch's sake: learntorch loads weights only, always.
    """
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 0:
        raise TypeError(f"learntorch.load: max_bytes must be a non-negative int (a number of "
                        f"bytes), got {max_bytes!r}")
    where = _describe(f)
    opened = isinstance(f, (str, os.PathLike))
    handle = open(f, "rb") if opened else f
    try:
        try:
            archive = zipfile.ZipFile(handle)
        except (zipfile.BadZipFile, EOFError, ValueError, OSError, NotImplementedError) as e:
            raise _not_a_zip_error(handle, where, e) from None
        with archive:
            _check_entries(archive, where, max_bytes)
            header = _read_json(archive, _FORMAT_ENTRY, where)
            if not isinstance(header, dict) or header.get("format") != FORMAT:
                raise LoadError(f"learntorch.load: {where} is not a learntorch file (its "
                                f"format entry says {header!r:.80} instead of naming "
                                f"{FORMAT!r})")
            version = header.get("version")
            if isinstance(version, bool) or not isinstance(version, int) or version < 1:
                raise LoadError(f"learntorch.load: {where} is damaged: its format version is "
                                f"{version!r:.40}, not a positive whole number")
            if version > VERSION:
                raise LoadError(f"learntorch.load: {where} has file format version {version}, "
                                f"newer than this learntorch understands ({VERSION}); "
                                "upgrade learntorch")
            structure = _read_json(archive, _STRUCTURE_ENTRY, where)
            return _Decoder(archive, where, map_location).decode(structure, "obj", 0)
    finally:
        if opened:
            handle.close()


def _describe(f):
    """How a message names the file: its path, or what kind of file object it is."""
    if isinstance(f, (str, os.PathLike)):
        return repr(os.fspath(f))
    name = getattr(f, "name", None)
    if isinstance(name, (str, bytes)):
        return repr(name)
    return f"the {type(f).__name__} file object"


def _check_entries(archive, where, max_bytes):
    """Refuse, before reading a byte of data, an archive that is foreign, repeats an entry,
    holds names learntorch never writes (``../../x``) or declares more than ``max_bytes``."""
    infos = archive.infolist()
    names = [info.filename for info in infos]
    if _FORMAT_ENTRY not in names:
        if any(n.endswith("data.pkl") for n in names):
            raise PickleNotAllowedError(
                f"learntorch.load: {where} was written by torch.save (it contains a pickle, "
                "data.pkl, which could run code when loaded); learntorch never unpickles. "
                "Convert it in PyTorch: load it there and save each tensor with numpy "
                "(np.savez), or re-save its state_dict with learntorch.save.")
        raise LoadError(f"learntorch.load: {where} is not a learntorch file (the zip archive has "
                        f"no {_FORMAT_ENTRY!r} entry)")
    seen = set()
    for info in infos:
        name = info.filename
        if info.flag_bits & 0x1 or info.compress_type not in (zipfile.ZIP_STORED,
                                                             zipfile.ZIP_DEFLATED):
            raise LoadError(f"learntorch.load: {where} is damaged or was re-packed: the entry "
                            f"{name!r:.120} is encrypted or compressed in a way learntorch does "
                            "not read (it writes entries stored, and reads stored or deflated)")
        if name in seen:
            raise LoadError(f"learntorch.load: {where} is damaged or forged: the entry {name!r} "
                            "appears twice")
        seen.add(name)
        if name not in (_FORMAT_ENTRY, _STRUCTURE_ENTRY) and not _TENSOR_ENTRY.match(name):
            raise LoadError(f"learntorch.load: {where} holds an entry learntorch never writes, "
                            f"{name!r:.120}; refusing the file (it was changed after saving, "
                            "or made by another program)")
    total = sum(info.file_size for info in infos)
    if total > max_bytes:
        raise LoadError(
            f"learntorch.load: {where} would expand to {total:,} bytes, more than max_bytes="
            f"{max_bytes:,} ({len(infos)} entries, {sum(i.compress_size for i in infos):,} bytes "
            "in the file). If you trust the file and it is this large, pass a larger limit: "
            f"learntorch.load(f, max_bytes={_round_up(total)})")


def _round_up(n):
    """A limit above ``n`` that reads well in a message: the next power of two."""
    return 1 << max(n - 1, 1).bit_length()


def _read_json(archive, name, where):
    try:
        text = archive.read(name)
    except KeyError:
        raise LoadError(f"learntorch.load: {where} is damaged: the entry {name!r} is "
                        "missing") from None
    except _READ_ERRORS as e:
        raise LoadError(f"learntorch.load: {where} is damaged or truncated: reading {name!r} "
                        f"failed ({e})") from None
    try:
        return json.loads(text)
    except RecursionError:
        raise LoadError(f"learntorch.load: {where} is malformed: {name!r} is nested too deeply "
                        f"to parse (learntorch writes at most {MAX_DEPTH} levels)") from None
    except ValueError as e:  # bad JSON, bad UTF-8, a number of too many digits
        raise LoadError(f"learntorch.load: {where} is damaged: {name!r} is not valid JSON "
                        f"({str(e):.200})") from None


class _Counting:
    """A reader that counts the bytes read through it (the length of a .npy header)."""

    def __init__(self, stream):
        self.stream, self.count = stream, 0

    def read(self, n=-1):
        data = self.stream.read(n)
        self.count += len(data)
        return data


class _Decoder:
    """JSON structure -> Python objects and tensors, checking every node's shape."""

    def __init__(self, archive, where, map_location):
        self.archive = archive
        self.where = where
        self.map_location = map_location
        self.tensors = {}

    def fail(self, path, what):
        return LoadError(f"learntorch.load: {self.where} is damaged or malformed: {what} "
                         f"(at {path})")

    def decode(self, node, path, depth):
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if not isinstance(node, dict) or len(node) == 0:
            raise self.fail(path, f"unexpected entry {node!r:.80}")
        if "tensor" in node:
            return self.tensor_reference(node, path)
        if len(node) != 1:
            raise self.fail(path, f"an entry with several kinds {sorted(node)!r:.80}")
        (kind, value), = node.items()
        if kind == "float":
            if value not in ("nan", "inf", "-inf"):
                raise self.fail(path, f"{value!r:.40} is not one of the special floats "
                                      "'nan', 'inf', '-inf'")
            return float(value)
        if kind == "dtype":
            if not isinstance(value, str) or value not in _DTYPES_BY_NAME:
                raise self.fail(path, f"data type {value!r:.40} is not one of learntorch's: "
                                      + ", ".join(sorted(_DTYPES_BY_NAME)))
            return _DTYPES_BY_NAME[value]
        if kind == "quantized":
            return self.quantized(value, path, depth)
        if kind not in ("dict", "odict", "tuple", "list"):
            raise self.fail(path, f"unknown kind of entry {kind!r:.40}")
        if not isinstance(value, list):
            raise self.fail(path, f"a {kind} whose contents are a {type(value).__name__}, not "
                                  "a list")
        if depth >= MAX_DEPTH:
            raise self.fail(path, f"containers nested more than {MAX_DEPTH} deep (learntorch.save "
                                  "never writes that)")
        if kind in ("tuple", "list"):
            items = [self.decode(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(value)]
            return tuple(items) if kind == "tuple" else items
        pairs = []
        for item in value:
            if not (isinstance(item, list) and len(item) == 2):
                raise self.fail(path, f"a dict item that is not a [key, value] pair: "
                                      f"{item!r:.60}")
            key = item[0]
            if isinstance(key, bool) or not isinstance(key, (str, int)):
                raise self.fail(path, f"a dict key that is not a str or an int: {key!r:.40}")
            pairs.append((key, self.decode(item[1], f"{path}[{key!r:.40}]", depth + 1)))
        return collections.OrderedDict(pairs) if kind == "odict" else dict(pairs)

    def quantized(self, fields, path, depth):
        """A quantized tensor from its codes and parameters, each checked."""
        per_tensor = {"codes", "dtype", "scale", "zero_point"}
        per_channel = {"codes", "dtype", "scales", "zero_points", "axis"}
        if not isinstance(fields, dict) or set(fields) not in (per_tensor, per_channel):
            raise self.fail(path, f"a quantized tensor whose fields are not "
                                  f"{sorted(per_tensor)} or {sorted(per_channel)}")
        dtype = _DTYPES_BY_NAME.get(fields["dtype"]) if isinstance(fields["dtype"], str) else None
        if dtype not in _dtypes.QUANTIZED_DTYPES:
            raise self.fail(path, f"quantized dtype {fields['dtype']!r:.40} is not qint8, "
                                  "quint8 or qint32")
        codes = self.decode(fields["codes"], path, depth + 1)
        if not isinstance(codes, Tensor) or codes.numpy().dtype != dtype.np:
            raise self.fail(path, f"the codes of a {dtype.name} tensor are not "
                                  f"{dtype.np.name} numbers")
        codes = codes.numpy()
        if "scale" in fields:
            scale, zero_point = fields["scale"], fields["zero_point"]
            if (isinstance(scale, bool) or not isinstance(scale, (int, float))
                    or not math.isfinite(scale) or scale <= 0
                    or isinstance(zero_point, bool) or not isinstance(zero_point, int)):
                raise self.fail(path, f"a quantized tensor's scale {scale!r:.40} and zero point "
                                      f"{zero_point!r:.40} are not a positive number and an int")
            return QuantizedTensor._make(codes, dtype, scale, zero_point)
        scales = self.decode(fields["scales"], path, depth + 1)
        zero_points = self.decode(fields["zero_points"], path, depth + 1)
        axis = fields["axis"]
        if (not isinstance(scales, Tensor) or not isinstance(zero_points, Tensor)
                or isinstance(axis, bool) or not isinstance(axis, int)
                or not 0 <= axis < codes.ndim
                or tuple(scales.shape) != (codes.shape[axis],)
                or tuple(zero_points.shape) != (codes.shape[axis],)):
            raise self.fail(path, "a per-channel quantized tensor whose scales, zero points "
                                  "and axis do not fit its codes")
        return QuantizedTensor._make(codes, dtype, scales=scales, zero_points=zero_points,
                                     axis=axis)

    def tensor_reference(self, node, path):
        index = node["tensor"]
        flags = {k: node.get(k, False) for k in ("requires_grad", "parameter")}
        if set(node) - {"tensor", "requires_grad", "parameter", "bits_of"}:
            raise self.fail(path, f"a tensor entry with unknown fields {sorted(node)!r:.80}")
        if node.get("bits_of", "bfloat16") != "bfloat16":
            raise self.fail(path, f"a tensor stored as the bits of {node['bits_of']!r:.40}, "
                                  "which learntorch does not know (only 'bfloat16')")
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < 10 ** 9:
            raise self.fail(path, f"a tensor number that is not a whole number >= 0: "
                                  f"{index!r:.40}")
        for name, flag in flags.items():
            if not isinstance(flag, bool):
                raise self.fail(path, f"{name} is {flag!r:.40}, not true/false")
        t = self.tensors.get(index)
        if t is None:
            t = self.tensors[index] = _apply_map_location(
                self.read_tensor(index, path, "bits_of" in node), self.map_location)
        if flags["requires_grad"] and not t.dtype.is_floating_point:
            raise self.fail(path, f"tensor {index} is {t.dtype} but marked requires_grad "
                                  "(only floating point tensors can require gradients)")
        if flags["parameter"]:
            from .nn.parameter import Parameter
            return Parameter(t, flags["requires_grad"])
        if flags["requires_grad"]:
            return t.detach().requires_grad_(True)
        return t

    def read_tensor(self, index, path, bfloat16_bits=False):
        """Tensor ``index``, read from its .npy entry straight into its array (one allocation,
        sized from the header only after the entry was checked to hold that many bytes)."""
        name = f"{_PREFIX}tensors/{index}.npy"
        try:
            info = self.archive.getinfo(name)
        except KeyError:
            raise self.fail(path, f"tensor {index} is referenced but its entry {name!r} is "
                                  "missing") from None
        try:
            with self.archive.open(info) as raw:
                stream = _Counting(raw)
                shape, fortran, dtype = _read_npy_header(stream)
                what = self._check_array(index, path, shape, dtype, bfloat16_bits)
                count = math.prod(shape)
                payload = info.file_size - stream.count
                if count * dtype.itemsize != payload:
                    raise self.fail(path, f"tensor {index}'s header declares {what} = "
                                          f"{count * dtype.itemsize:,} bytes, but its entry "
                                          f"holds {payload:,}")
                flat = np.empty(count, dtype=dtype)
                _read_exactly(raw, flat.view(np.uint8), name)
                if raw.read(1):  # also where zipfile checks the CRC of what it read
                    raise self.fail(path, f"tensor {index}'s entry is longer than declared")
        except LoadError:
            raise
        except _READ_ERRORS as e:
            raise self.fail(path, f"tensor {index} could not be read ({str(e):.200})") from None
        array = flat.reshape(shape[::-1]).transpose() if fortran else flat.reshape(shape)
        if not dtype.isnative:
            array = array.astype(dtype.newbyteorder("="))
        if bfloat16_bits:
            array = array.view(_dtypes.bfloat16.np)
        return Tensor._wrap(array)

    def _check_array(self, index, path, shape, dtype, bfloat16_bits=False):
        """Only plain numbers of a learntorch dtype: no objects (pickles), no records;
        a bfloat16 tensor's entry holds its bit patterns as uint16 (``.npy`` has no bfloat16)."""
        if bfloat16_bits and dtype.newbyteorder("=") != np.dtype(np.uint16):
            raise self.fail(path, f"tensor {index} is marked as bfloat16 bits but holds numpy "
                                  f"dtype {dtype}, not uint16")
        if (dtype.hasobject or dtype.fields is not None or dtype.subdtype is not None
                or dtype.kind not in "biuf"):
            raise self.fail(path, f"tensor {index} is not plain numeric data (numpy dtype "
                                  f"{dtype}); refusing to load it")
        try:
            if not bfloat16_bits:
                _dtypes.from_numpy_dtype(dtype.newbyteorder("="))
        except TypeError:
            raise self.fail(path, f"tensor {index} has numpy dtype {dtype}, which learntorch "
                                  "has no tensor type for") from None
        if not (isinstance(shape, tuple)
                and all(isinstance(s, int) and not isinstance(s, bool) and s >= 0
                        for s in shape)):
            raise self.fail(path, f"tensor {index}'s shape {shape!r:.80} is not a tuple of "
                                  "sizes >= 0")
        return f"shape {list(shape)} of {dtype}"


def _read_npy_header(stream):
    """(shape, fortran_order, dtype) from a .npy header, with numpy's own bounded parser
    (``ast.literal_eval`` of at most 10,000 characters: no code runs, nothing large is made)."""
    version = np.lib.format.read_magic(stream)
    if version == (1, 0):
        return np.lib.format.read_array_header_1_0(stream)
    if version == (2, 0):
        return np.lib.format.read_array_header_2_0(stream)
    raise ValueError(f".npy format version {version} is not one learntorch writes (1.0, 2.0)")


def _read_exactly(stream, buffer, name):
    view = memoryview(buffer)
    filled = 0
    while filled < len(view):
        n = stream.readinto(view[filled:])
        if not n:
            raise EOFError(f"the entry {name!r} ends after {filled:,} of its {len(view):,} "
                           "bytes of data")
        filled += n


_DTYPES_BY_NAME = {d.name: d for d in _dtypes.ALL_DTYPES + _dtypes.QUANTIZED_DTYPES}


def _apply_map_location(t, map_location):
    if map_location is None:
        return t
    if callable(map_location):
        out = map_location(t, "cpu")
        return t if out is None else out
    if isinstance(map_location, dict):
        target = map_location.get("cpu", "cpu")
        return t.to(target)
    return t.to(map_location)


def _not_a_zip_error(handle, where, error):
    """The error for a file that is not a zip archive at all: say what it looks like."""
    try:
        handle.seek(0)
        head = handle.read(4)
    except (OSError, AttributeError, ValueError):
        head = b""
    if head[:1] == b"\x80":
        return PickleNotAllowedError(
            f"learntorch.load: {where} is a pickle file (for example from an old torch.save); "
            "learntorch never unpickles, because loading a pickle can run arbitrary code.")
    if not head:
        return LoadError(f"learntorch.load: {where} is empty")
    return LoadError(f"learntorch.load: {where} is not a learntorch file, or it is truncated or "
                     f"corrupted (it is not a valid zip archive: {error})")
