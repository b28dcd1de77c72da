"""``learntorch.save`` / ``learntorch.load``: a file format that cannot run code.

``torch.save`` pickles, and unpickling a file can execute arbitrary code.
learntorch never unpickles.  A saved file is a zip archive holding

* ``learntorch/format``          -- the format name and version,
* ``learntorch/structure.json``  -- the saved object as JSON: dicts (ordered,
  with str/int keys), lists, tuples, numbers, strings, None, and references
  to tensors,
* ``learntorch/tensors/<n>.npy`` -- each tensor's data in numpy's .npy format,
  read back with ``allow_pickle=False``.

So a state dict, an optimizer state dict, or nested containers of tensors
round-trip exactly; anything else (a whole Module, a function, an arbitrary
object) is refused at save time with a message saying what to save instead.
Each tensor is stored on its own: two views of one storage load back as two
independent tensors.
"""
import io
import json
import math
import os
import zipfile
import collections

import numpy as np

from . import _dtypes
from ._tensor import Tensor

FORMAT = "learntorch-save"
VERSION = 1
_PREFIX = "learntorch/"


class _Encoder:
    """Turns a Python object into JSON-able data plus a list of tensor arrays."""

    def __init__(self):
        self.arrays = []
        self.seen = {}

    def encode(self, obj, path="obj"):
        from .nn.parameter import Parameter
        if isinstance(obj, Tensor):
            key = id(obj)
            if key not in self.seen:
                self.seen[key] = len(self.arrays)
                self.arrays.append(np.array(obj.detach()._data, order="C"))  # keeps 0-d as 0-d
            return {"tensor": self.seen[key], "requires_grad": bool(obj.requires_grad),
                    "parameter": isinstance(obj, Parameter)}
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, int):
            return obj
        if isinstance(obj, float):
            if math.isfinite(obj):
                return obj
            return {"float": repr(obj)}  # inf/nan are not JSON numbers
        if isinstance(obj, (np.integer, np.floating, np.bool_)):
            return self.encode(obj.item(), path)
        if isinstance(obj, _dtypes.dtype):
            return {"dtype": obj.name}
        if isinstance(obj, dict):
            items = []
            for k, v in obj.items():
                if not isinstance(k, (str, int)) or isinstance(k, bool):
                    raise TypeError(f"learntorch.save: dict keys must be str or int, got "
                                    f"{type(k).__name__} at {path}")
                items.append([k, self.encode(v, f"{path}[{k!r}]")])
            kind = "odict" if isinstance(obj, collections.OrderedDict) else "dict"
            return {kind: items}
        if isinstance(obj, tuple):
            return {"tuple": [self.encode(v, f"{path}[{i}]") for i, v in enumerate(obj)]}
        if isinstance(obj, list):
            return {"list": [self.encode(v, f"{path}[{i}]") for i, v in enumerate(obj)]}
        hint = (" Save model.state_dict() instead of the module." if hasattr(obj, "state_dict")
                else "")
        raise TypeError(f"learntorch.save cannot store a {type(obj).__name__} (at {path}): only "
                        "tensors, numbers, strings, None and dicts/lists/tuples of them are "
                        "supported, so that loading never runs code." + hint)


def save(obj, f, pickle_module=None, pickle_protocol=None, _use_new_zipfile_serialization=True):
    """Write ``obj`` (tensors in nested dicts/lists/tuples) to a path or binary file."""
    enc = _Encoder()
    structure = enc.encode(obj)
    opened = isinstance(f, (str, os.PathLike))
    handle = open(f, "wb") if opened else f
    try:
        with zipfile.ZipFile(handle, "w", compression=zipfile.ZIP_STORED) as z:
            z.writestr(_PREFIX + "format", json.dumps({"format": FORMAT, "version": VERSION}))
            z.writestr(_PREFIX + "structure.json", json.dumps(structure))
            for i, arr in enumerate(enc.arrays):
                buf = io.BytesIO()
                np.save(buf, arr, allow_pickle=False)
                z.writestr(f"{_PREFIX}tensors/{i}.npy", buf.getvalue())
    finally:
        if opened:
            handle.close()


class _Decoder:
    def __init__(self, archive, map_location):
        self.archive = archive
        self.map_location = map_location
        self.tensors = {}

    def tensor(self, index, requires_grad, parameter):
        if index not in self.tensors:
            name = f"{_PREFIX}tensors/{index}.npy"
            try:
                data = self.archive.read(name)
            except KeyError:
                raise RuntimeError(f"learntorch.load: the file is damaged: tensor {index} is "
                                   "missing") from None
            try:
                array = np.load(io.BytesIO(data), allow_pickle=False)
            except ValueError as e:
                raise RuntimeError(f"learntorch.load: tensor {index} is not plain numeric data "
                                   f"({e}); refusing to load it") from None
            _dtypes.from_numpy_dtype(array.dtype)
            t = Tensor._wrap(array)
            t = _apply_map_location(t, self.map_location)
            self.tensors[index] = t
        t = self.tensors[index]
        if parameter:
            from .nn.parameter import Parameter
            return Parameter(t, requires_grad)
        if requires_grad:
            t = t.detach().requires_grad_(True)
        return t

    def decode(self, node):
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if isinstance(node, dict) and len(node) >= 1:
            if "tensor" in node:
                return self.tensor(int(node["tensor"]), bool(node.get("requires_grad")),
                                   bool(node.get("parameter")))
            if "float" in node:
                return float(node["float"])
            if "dtype" in node:
                return _dtypes.to_dtype(node["dtype"])
            if "dict" in node:
                return {self._key(k): self.decode(v) for k, v in node["dict"]}
            if "odict" in node:
                return collections.OrderedDict((self._key(k), self.decode(v))
                                               for k, v in node["odict"])
            if "tuple" in node:
                return tuple(self.decode(v) for v in node["tuple"])
            if "list" in node:
                return [self.decode(v) for v in node["list"]]
        raise RuntimeError(f"learntorch.load: the file is damaged: unexpected entry {node!r:.80}")

    @staticmethod
    def _key(k):
        if not isinstance(k, (str, int)):
            raise RuntimeError("learntorch.load: the file is damaged: a dict key is not str/int")
        return k


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


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None,
         **pickle_load_args):
    """Read an object written by ``learntorch.save``; never executes code from the file."""
    opened = isinstance(f, (str, os.PathLike))
    handle = open(f, "rb") if opened else f
    try:
        try:
            archive = zipfile.ZipFile(handle)
        except zipfile.BadZipFile:
            raise RuntimeError(_foreign_message(handle)) from None
        with archive:
            names = set(archive.namelist())
            if _PREFIX + "format" not in names:
                if any(n.endswith("data.pkl") for n in names):
                    raise RuntimeError(
                        "learntorch.load: this file was written by torch.save (it contains a "
                        "pickle, which could run code when loaded); learntorch never unpickles. "
                        "Convert it in PyTorch: save each tensor with numpy (np.savez) or load "
                        "it there and re-save with learntorch.save.")
                raise RuntimeError("learntorch.load: not a learntorch file (no 'learntorch/format' "
                                   "entry in the archive)")
            try:
                header = json.loads(archive.read(_PREFIX + "format"))
                structure = json.loads(archive.read(_PREFIX + "structure.json"))
            except (KeyError, ValueError, zipfile.BadZipFile) as e:
                raise RuntimeError(f"learntorch.load: the file is damaged or truncated ({e})") \
                    from None
            if not isinstance(header, dict) or header.get("format") != FORMAT:
                raise RuntimeError("learntorch.load: not a learntorch file (unknown format)")
            if header.get("version", 0) > VERSION:
                raise RuntimeError(f"learntorch.load: file format version {header['version']} is "
                                   f"newer than this learntorch understands ({VERSION}); "
                                   "upgrade learntorch")
            try:
                return _Decoder(archive, map_location).decode(structure)
            except zipfile.BadZipFile as e:
                raise RuntimeError(f"learntorch.load: the file is damaged or truncated ({e})") \
                    from None
    finally:
        if opened:
            handle.close()


def _foreign_message(handle):
    try:
        handle.seek(0)
        head = handle.read(4)
    except (OSError, AttributeError):
        head = b""
    if head[:1] == b"\x80":
        return ("learntorch.load: this is a pickle file (for example from an old torch.save); "
                "learntorch never unpickles, because loading a pickle can run arbitrary code.")
    if not head:
        return "learntorch.load: the file is empty"
    return ("learntorch.load: not a learntorch file, or the file is truncated/corrupted (it is not "
            "a valid zip archive)")
