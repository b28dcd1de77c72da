"""The quantized digits MLP against float32: size, accuracy and speed (chapter 13's figures).

    python -m benchmarks.quantization                 # 15 repeats, prints a table
    python -m benchmarks.quantization --repeats 31 --json quantization.json
    OPENBLAS_NUM_THREADS=1 python -m benchmarks.quantization --one-thread   # a busy machine

On a machine busy with other work, multi-threaded kernels (numpy's BLAS, PyTorch's intra-op
pool) spend a tiny layer's time waiting for each other and the float32 figures measure the
contention, not the arithmetic; ``--one-thread`` (with numpy's BLAS limited by the environment
variable, which must be set before numpy loads) times every library on one thread.

The model is chapter 06's digits MLP (64 -> 128 -> ReLU -> 10), trained as there (Adam,
lr 1e-2, 8 epochs, batches of 64, seed 0) on ``Digits(train=True)``, then
``quantize_dynamic(model, {nn.Linear}, dtype=qint8)``.  Three figures, each against the
float32 model (the issue's targets: >= 3.5x smaller, within 1 point of accuracy, an int8
forward on a batch of 256 at least as fast):

* **size** -- the bytes of the state dict's tensors (what the weights take in memory:
  numel x element size; one byte per qint8 weight) and the bytes of the file
  ``learntorch.save(model.state_dict(), f)`` writes (headers included), beside what
  ``torch.save`` writes for torch's twins.  The file shrinks less than the tensors: each
  tensor it stores costs a fixed ~250 bytes of headers (its .npy header and its zip entry;
  torch's files pay about as much), and the quantized state dict stores twice as many
  tensors (each layer's scale and zero point too, as torch's), so on this 10 kB model the
  headers are a quarter of the int8 file;
* **accuracy** -- on the 359 test digits (``Digits(train=False)``);
* **speed** -- one forward of a batch of 256 digits under ``no_grad``.  Pair mode: the
  float and int8 models of learntorch and of PyTorch (the same trained weights copied
  in, quantized by torch's own ``quantize_dynamic``) run in this one process, taking
  turns repeat by repeat, so a noisy neighbour slows all four alike.  Each repeat times
  a loop of calls lasting ~0.1 s; the table gives the median per call, and the spread
  as min..max and the interquartile range over the repeats.
"""
import argparse
import io
import json
import os
import statistics
import time
import warnings

import numpy as np

import learntorch
from learntorch import nn
from learntorch.ao.quantization import quantize_dynamic
from learntorch.datasets import Digits
from learntorch.utils.data import DataLoader

from .machine import describe

try:
    import torch
except ImportError:  # PyTorch is the yardstick, not a dependency
    torch = None

BATCH = 256


def train_digits_mlp(epochs=8, seed=0):
    """Chapter 06's digits MLP, trained as there."""
    learntorch.manual_seed(seed)
    model = nn.Sequential(nn.Flatten(), nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    optimizer = learntorch.optim.Adam(model.parameters(), lr=1e-2)
    loader = DataLoader(Digits(train=True), batch_size=64, shuffle=True,
                        generator=learntorch.Generator().manual_seed(seed))
    for _ in range(epochs):
        for images, labels in loader:
            loss = nn.functional.cross_entropy(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return model.eval()


def tensor_bytes(state_dict):
    """The bytes of every tensor in a state dict (nested tuples included)."""
    total = 0
    for value in state_dict.values():
        for t in value if isinstance(value, tuple) else (value,):
            if isinstance(t, learntorch.Tensor):
                total += t.numel() * t.element_size()
    return total


def file_bytes(state_dict):
    buffer = io.BytesIO()
    learntorch.save(state_dict, buffer)
    return len(buffer.getvalue())


def torch_file_bytes(state_dict):
    """The bytes ``torch.save`` writes for the same state dict (the yardstick for
    ``file_bytes``: both files carry headers per tensor besides the data)."""
    buffer = io.BytesIO()
    torch.save(state_dict, buffer)
    return len(buffer.getvalue())


def accuracy(model, images, labels):
    with learntorch.no_grad():
        return (model(images).argmax(dim=1) == labels).float().mean().item()


def torch_twins(model):
    """PyTorch's float model with ``model``'s weights, and torch's own quantize_dynamic of it."""
    twin = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, 128), torch.nn.ReLU(),
                               torch.nn.Linear(128, 10))
    with torch.no_grad():
        for name, value in model.state_dict().items():
            twin.state_dict()[name].copy_(torch.from_numpy(value.numpy()))
    twin.eval()
    with warnings.catch_warnings():  # torch 2.13 deprecates the API in favour of torchao
        warnings.simplefilter("ignore")
        return twin, torch.ao.quantization.quantize_dynamic(twin, {torch.nn.Linear},
                                                            dtype=torch.qint8)


def _loops_for(fn, seconds=0.1):
    start = time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-7)
    return max(1, int(seconds / once))


def time_in_turns(contenders, repeats):
    """{name: [seconds per call, one per repeat]}: every contender once per repeat, in turn."""
    loops = {}
    for name, fn in contenders.items():
        for _ in range(3):
            fn()  # warm up: compile, fill caches
        loops[name] = _loops_for(fn)
    samples = {name: [] for name in contenders}
    for _ in range(repeats):
        for name, fn in contenders.items():
            start = time.perf_counter()
            for _ in range(loops[name]):
                fn()
            samples[name].append((time.perf_counter() - start) / loops[name])
    return samples


def spread(values):
    q1, median, q3 = statistics.quantiles(values, n=4)
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "q1": q1, "q3": q3, "repeats": len(values)}


def measure(repeats=15, epochs=8):
    model = train_digits_mlp(epochs)
    quantized = quantize_dynamic(model, {nn.Linear}, dtype=learntorch.qint8)
    test = Digits(train=False)
    images, labels = next(iter(DataLoader(test, batch_size=len(test))))
    sizes = {"float32": {"tensor_bytes": tensor_bytes(model.state_dict()),
                         "file_bytes": file_bytes(model.state_dict())},
             "int8": {"tensor_bytes": tensor_bytes(quantized.state_dict()),
                      "file_bytes": file_bytes(quantized.state_dict())}}
    accuracies = {"float32": accuracy(model, images, labels),
                  "int8": accuracy(quantized, images, labels)}

    batch = learntorch.from_numpy(
        np.random.default_rng(0).random((BATCH, 1, 8, 8), dtype=np.float32))

    def forward(m, x, grad_off):
        def call():
            with grad_off():
                m(x)
        return call
    contenders = {"learntorch float32": forward(model, batch, learntorch.no_grad),
                  "learntorch int8": forward(quantized, batch, learntorch.no_grad)}
    if torch is not None:
        twin, twin_int8 = torch_twins(model)
        torch_batch = torch.from_numpy(batch.numpy())
        contenders["torch float32"] = forward(twin, torch_batch, torch.no_grad)
        contenders["torch int8"] = forward(twin_int8, torch_batch, torch.no_grad)
        sizes["torch float32"] = {"file_bytes": torch_file_bytes(twin.state_dict())}
        sizes["torch int8"] = {"file_bytes": torch_file_bytes(twin_int8.state_dict())}
        with torch.no_grad():
            torch_images = torch.from_numpy(images.numpy())
            accuracies["torch int8"] = (twin_int8(torch_images).argmax(1) == torch.from_numpy(
                labels.numpy())).float().mean().item()
    speed = {name: spread(values) for name, values in time_in_turns(contenders, repeats).items()}
    threads = {"learntorch": learntorch.get_num_threads(),
               "torch": torch.get_num_threads() if torch is not None else None,
               "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS")}
    return {"machine": describe(), "threads": threads, "repeats": repeats, "batch": BATCH,
            "sizes": sizes,
            "accuracy": accuracies, "seconds_per_forward": speed}


def report(result):
    sizes, acc, speed = result["sizes"], result["accuracy"], result["seconds_per_forward"]
    lines = ["| | float32 | int8 | float32 / int8 |", "| --- | --- | --- | --- |"]
    for key, what in (("tensor_bytes", "weights in memory (bytes)"),
                      ("file_bytes", "saved state dict (bytes)")):
        f, q = sizes["float32"][key], sizes["int8"][key]
        lines.append(f"| {what} | {f:,} | {q:,} | {f / q:.2f}× |")
    if "torch int8" in sizes:
        f, q = sizes["torch float32"]["file_bytes"], sizes["torch int8"]["file_bytes"]
        lines.append(f"| torch.save of torch's twins (bytes) | {f:,} | {q:,} | {f / q:.2f}× |")
    lines.append(f"| test accuracy (359 digits) | {acc['float32']:.4f} | {acc['int8']:.4f} | "
                 f"{100 * (acc['float32'] - acc['int8']):+.2f} points |")
    lines += ["", f"forward of a batch of {result['batch']}, µs per call, {result['repeats']} "
                  f"repeats in turns (pair mode; threads: {result['threads']}):", "",
              "| model | median | min .. max | interquartile range |", "| --- | --- | --- | --- |"]
    for name, s in speed.items():
        lines.append(f"| {name} | {s['median'] * 1e6:.0f} | {s['min'] * 1e6:.0f} .. "
                     f"{s['max'] * 1e6:.0f} | {s['q1'] * 1e6:.0f} .. {s['q3'] * 1e6:.0f} |")
    for library in ("learntorch", "torch"):
        if f"{library} int8" in speed:
            ratio = speed[f"{library} float32"]["median"] / speed[f"{library} int8"]["median"]
            lines.append(f"\n{library}: the int8 forward takes {1 / ratio:.2f}× the float32 "
                         f"forward's time")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--json", metavar="PATH", help="save every figure as JSON")
    parser.add_argument("--one-thread", action="store_true",
                        help="learntorch's kernels and PyTorch on one thread "
                             "(set OPENBLAS_NUM_THREADS=1 for numpy's BLAS)")
    args = parser.parse_args(argv)
    if args.one_thread:
        learntorch.set_num_threads(1)  # learntorch's parallel Numba kernels
        if torch is not None:
            torch.set_num_threads(1)
    result = measure(args.repeats, args.epochs)
    print(report(result))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
