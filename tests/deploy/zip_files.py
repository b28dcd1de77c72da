"""Hand-made zip archives for the hostile-file tests: entries whose declared sizes may lie.

``zipfile`` cannot write an entry from data compressed elsewhere, nor one whose
headers disagree with its data; these helpers write the three zip records
themselves (local header + data, central directory, end record), so a test can
make a 1 MB file that inflates to 1 GiB in a fraction of a second.
"""
import io
import json
import struct
import zlib

import numpy as np

STORED, DEFLATED = 0, 8


class Entry:
    """One archive member: ``data`` as written in the file, and what the headers declare."""

    def __init__(self, name, data, method=STORED, crc=None, size=None):
        self.name = name.encode()
        self.data, self.method = data, method
        self.crc = zlib.crc32(data) if crc is None else crc
        self.size = len(data) if size is None else size


def stored(name, data):
    return Entry(name, data.encode() if isinstance(data, str) else data)


def build(entries):
    """The bytes of a zip archive holding ``entries`` (each written exactly as given)."""
    out, central = io.BytesIO(), []
    for e in entries:
        offset = out.tell()
        out.write(struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, e.method, 0, 0x21, e.crc,
                              len(e.data), e.size, len(e.name), 0))
        out.write(e.name + e.data)
        central.append(struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, e.method, 0, 0x21,
                                   e.crc, len(e.data), e.size, len(e.name), 0, 0, 0, 0, 0,
                                   offset) + e.name)
    start = out.tell()
    for record in central:
        out.write(record)
    out.write(struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(entries), len(entries),
                          out.tell() - start, start, 0))
    return out.getvalue()


def npy_header(descr="<f4", shape=(3,), fortran_order=False):
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": fortran_order,
                                               "shape": shape})
    return buf.getvalue()


def raw_npy_header(text):
    """A .npy 1.0 header whose dict is ``text`` exactly (it need not be what numpy writes)."""
    body = text.encode("latin1", "replace")
    body += b" " * (-(10 + len(body) + 1) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(body)) + body


def learntorch_file(structure, tensors=(), format_entry=None):
    """A learntorch archive from parts: the structure (JSON-able, or raw str/bytes) and the
    .npy blobs of its tensors."""
    if format_entry is None:
        format_entry = {"format": "learntorch-save", "version": 1}
    entries = [stored("learntorch/format", json.dumps(format_entry)),
               stored("learntorch/structure.json",
                      structure if isinstance(structure, (str, bytes)) else json.dumps(structure))]
    entries += [stored(f"learntorch/tensors/{i}.npy", blob) for i, blob in enumerate(tensors)]
    return build(entries)


def deflated_zeros(n_bytes, prefix=b""):
    """(raw deflate stream, crc32) of ``prefix`` followed by ``n_bytes`` zero bytes.

    Each 16 MiB block of zeros is compressed once and its bytes repeated: after a
    full flush the compressor starts afresh, so every block compresses the same.
    """
    block = 1 << 24
    assert n_bytes % block == 0
    head = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = head.compress(prefix) + head.flush(zlib.Z_FULL_FLUSH)
    body = zlib.compressobj(9, zlib.DEFLATED, -15)
    one_block = body.compress(bytes(block)) + body.flush(zlib.Z_FULL_FLUSH)
    tail = zlib.compressobj(9, zlib.DEFLATED, -15).flush(zlib.Z_FINISH)
    zeros = bytes(block)
    crc = zlib.crc32(prefix)
    for _ in range(n_bytes // block):
        crc = zlib.crc32(zeros, crc)
    return first + one_block * (n_bytes // block) + tail, crc


def zip_bomb(n_bytes=1 << 30):
    """A learntorch file of about 1 MB whose one tensor (float32 zeros) inflates to
    ``n_bytes`` of data: its headers tell the truth, it is just very compressible."""
    header = npy_header("<f4", (n_bytes // 4,))
    raw, crc = deflated_zeros(n_bytes, prefix=header)
    return build([stored("learntorch/format", '{"format": "learntorch-save", "version": 1}'),
                  stored("learntorch/structure.json", '{"tensor": 0}'),
                  Entry("learntorch/tensors/0.npy", raw, DEFLATED, crc, len(header) + n_bytes)])
