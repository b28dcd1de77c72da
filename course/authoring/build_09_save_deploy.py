"""Write course/solutions/09_save_deploy.ipynb, the instructor source of chapter 09 (saving,
resuming and deploying).

    python course/authoring/build_09_save_deploy.py

Edit this file, not the notebook: the notebook is rebuilt from it (``--check``: is it up to date?).
"""
import sys

from notebook_builder import Chapter

ch = Chapter("09", "save_deploy")

# why the cells that use the digits are learntorch only (see the banner)
DIGITS = "the digits ship with learntorch, as learntorch tensors"

ch.markdown(r"""
# 09 · Saving, resuming and deploying

A trained model that lives only in a running notebook is gone when the kernel stops. This chapter
is about everything that happens to a model **after** training: writing it to a file, reading it
back, carrying on with a training run that was interrupted — exactly as if it never had been — and
handing the model to a program that has never heard of PyTorch.

**After this chapter you can**

- read a model's and an optimizer's `state_dict`, and save and load them with `torch.save` /
  `torch.load`;
- write a **checkpoint** (model, optimizer, scheduler, epoch and random number generator states)
  from which a resumed run is **bit for bit** the uninterrupted one — and prove it;
- explain why loading a `pickle` can run code, see it happen (harmlessly, in a separate process),
  and say how `torch.load(weights_only=True)` and learntorch's own file format refuse it;
- load a checkpoint into a changed model with `strict=False` and read its missing and unexpected
  keys;
- export the trained digits CNN to **ONNX** with `torch.onnx.export`, check the file with
  `onnx.checker`, run it in **ONNX Runtime** and compare its outputs with the model's;
- look at the exported graph — its nodes and initializers — in a widget.
""")

ch.code(r"""
import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import learntorch as torch                     # the same code runs on PyTorch: `import torch`
from learntorch import nn
import learntorch.nn.functional as F
from learntorch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)                           # every random number below is repeatable
workdir = Path(tempfile.mkdtemp(prefix="chapter09-"))   # the files this chapter writes
print("running on", torch.__name__, torch.__version__)
""", on_pytorch="it prints PyTorch's name and version")

ch.code(r"""
from learntorch.datasets import Digits
""", learntorch_only=DIGITS)

ch.markdown(r"""
> **Same code, real PyTorch.** Every code cell runs unchanged with `import torch`, `from torch import nn`,
> `import torch.nn.functional as F` and `from torch.utils.data import ...`, and prints the same,
> except the cells whose first line says otherwise. `# learntorch only: ...` marks the cells that use
> what is not part of PyTorch: the 8×8 `Digits` (they ship with learntorch so the chapter runs
> offline), the widgets, and a look inside learntorch's own file format. `# on PyTorch: ...` marks
> the cells whose output differs there. The ONNX part needs the `onnx` and `onnxruntime` packages
> (the course's install has them); on PyTorch, `torch.onnx.export(..., dynamo=False)` runs the same
> cells (its default exporter needs one more package, `onnxscript`).

## 1 · What a model is made of: `state_dict`

A model's learned numbers are its parameters (and buffers, such as batch norm's running
statistics). `model.state_dict()` collects them in a dictionary, keyed by where they live in the
model: `"0.weight"` is the `weight` of submodule `0`. Only tensors go in — no code, no class — so the
same dictionary fits any model with the same names and shapes.
""")

ch.code(r"""
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, 4))
for name, tensor in model.state_dict().items():
    print(f"{name:10} {tuple(tensor.shape)}")
""")

ch.markdown(r"""
An optimizer has a state too. SGD without momentum has none; Adam keeps, for each parameter, a
running mean of its gradients (`exp_avg`), of their squares (`exp_avg_sq`) and its number of steps.
They are created by the first `step()`. The optimizer's `state_dict()` has two entries: `state`
(those tensors, per parameter **index** — not per name) and `param_groups` (the hyperparameters,
and which parameter indices each group holds).
""")

ch.code(r"""
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
print("before the first step:", optimizer.state_dict()["state"])

x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
F.cross_entropy(model(x), y).backward()
optimizer.step()

state = optimizer.state_dict()
print("entries:", list(state))
print("param_groups[0]: lr", state["param_groups"][0]["lr"], "params", state["param_groups"][0]["params"])
print("state per parameter index:", list(state["state"]))
print("state of parameter 0:", sorted(state["state"][0]), "after", int(state["state"][0]["step"]), "step")
""")

ch.markdown(r"""
`torch.save` writes such dictionaries to a file and `torch.load` reads them back. Loading gives
tensors, not a model: you build the model in code and pour the numbers in with `load_state_dict`.
""")

ch.code(r"""
torch.save(model.state_dict(), workdir / "model.pt")

torch.manual_seed(1)                                   # another model: other random weights
same_shape = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, 4))
print("equal before loading:", torch.equal(same_shape[0].weight, model[0].weight))
same_shape.load_state_dict(torch.load(workdir / "model.pt"))
print("equal after loading: ", all(torch.equal(a, b) for a, b in zip(same_shape.state_dict().values(),
                                                                       model.state_dict().values())))
""")

ch.markdown(r"""
## 2 · A checkpoint that resumes bit for bit

Long training runs get interrupted: a laptop closes, a cluster job hits its time limit. A
**checkpoint** saves everything the rest of the run depends on, so that training can go on later.
What is "everything"? Look at what one epoch reads besides the weights:

| what | where it lives | what goes wrong without it |
| --- | --- | --- |
| weights | `model.state_dict()` | training starts again from scratch |
| Adam's moments and step counts | `optimizer.state_dict()` | the first steps after resuming are too big (Adam restarts its bias correction) |
| the learning-rate schedule | `scheduler.state_dict()` | the schedule starts again from its first epoch |
| the epoch | a number | the loop does not know where it was |
| the random state | `torch.get_rng_state()` | other dropout masks, another shuffle order |

The last row is the one people forget. Dropout draws a new mask at every step and a shuffling
`DataLoader` draws a new order at every epoch, both from the default random generator. Seeding
again on resume does not help: it replays the numbers of epoch 1, not those of the epoch the run
had reached. `torch.get_rng_state()` is the generator's whole state, as a tensor of bytes
(`uint8`), so it goes into the checkpoint like any other tensor.

The run below has all of it: dropout, a shuffling loader, Adam, a schedule that halves the learning
rate every two epochs. Its data are generated: 160 points with 16 features, labelled by which of
the first four features is largest.
""")

ch.code(r"""
data_generator = torch.Generator().manual_seed(1234)   # the data are the same in every run
features = torch.randn(160, 16, generator=data_generator)
labels = features[:, :4].argmax(dim=1)
dataset = TensorDataset(features, labels)


def make_run(seed, loader_generator=None):
    # everything a training script builds: model, optimizer, scheduler, loader (from `seed`)
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, 4))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    loader = DataLoader(dataset, batch_size=16, shuffle=True, generator=loader_generator)
    return model, optimizer, scheduler, loader


def train_epochs(model, optimizer, scheduler, loader, epochs):
    # train for each epoch in `epochs` (a range); the loss of every step, in order
    losses = []
    for epoch in epochs:
        model.train()
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        scheduler.step()
    return losses
""")

ch.markdown(r"""
First the uninterrupted run: six epochs. Then the same run, stopped after three epochs with a
checkpoint written to disk. To be sure that nothing survives in memory, the resumed run rebuilds
everything **from another seed** (as a new process would: other weights, other random state) and
takes everything that matters from the file.
""")

ch.code(r"""
model, optimizer, scheduler, loader = make_run(seed=0)
straight_losses = train_epochs(model, optimizer, scheduler, loader, range(6))
straight_weights = [p.detach().clone() for p in model.parameters()]

model, optimizer, scheduler, loader = make_run(seed=0)
first_losses = train_epochs(model, optimizer, scheduler, loader, range(3))
checkpoint = {
    "model": model.state_dict(),
    "optimizer": optimizer.state_dict(),
    "scheduler": scheduler.state_dict(),
    "epoch": 3,                                  # epochs done: the next one is epoch 3
    "rng_state": torch.get_rng_state(),          # a uint8 tensor, saved like the weights
}
torch.save(checkpoint, workdir / "checkpoint.pt")
print("rng_state is a uint8 tensor:", checkpoint["rng_state"].dtype == torch.uint8)
del model, optimizer, scheduler, loader, checkpoint        # the interruption

model, optimizer, scheduler, loader = make_run(seed=99)   # a new process: nothing of the old run
checkpoint = torch.load(workdir / "checkpoint.pt")
model.load_state_dict(checkpoint["model"])
optimizer.load_state_dict(checkpoint["optimizer"])
scheduler.load_state_dict(checkpoint["scheduler"])
torch.set_rng_state(checkpoint["rng_state"])
rest_losses = train_epochs(model, optimizer, scheduler, loader, range(checkpoint["epoch"], 6))

resumed = first_losses + rest_losses
print(f"steps: {len(straight_losses)} uninterrupted, {len(first_losses)} + {len(rest_losses)} resumed")
print("every loss identical:  ", resumed == straight_losses)
print("every weight identical:", all(torch.equal(p, q) for p, q in zip(model.parameters(), straight_weights)))
print("learning rate now:", optimizer.param_groups[0]["lr"])
""")

ch.markdown(r"""
`==` on lists of floats, `torch.equal` on tensors: these are exact comparisons, not "close enough".
The resumed run made the same steps, drew the same dropout masks and shuffles, and ended with the
same weights, to the last bit. (On one machine, with the same library versions: other hardware or
another version may round differently.)

The control experiment: the same resume **without** `set_rng_state`.
""")

ch.code(r"""
model, optimizer, scheduler, loader = make_run(seed=99)
checkpoint = torch.load(workdir / "checkpoint.pt")
model.load_state_dict(checkpoint["model"])
optimizer.load_state_dict(checkpoint["optimizer"])
scheduler.load_state_dict(checkpoint["scheduler"])
# no torch.set_rng_state(...): the random numbers come from seed 99
no_rng_losses = first_losses + train_epochs(model, optimizer, scheduler, loader, range(3, 6))
first_difference = next(i for i, (a, b) in enumerate(zip(no_rng_losses, straight_losses)) if a != b)
print("every loss identical:", no_rng_losses == straight_losses)
print("first step that differs:", first_difference, f"(the resumed part starts at step {len(first_losses)})")
""")

ch.markdown(r"""
A loader with a generator of its own (`DataLoader(..., generator=g)`, as chapter 06 used) draws
its shuffles from `g`, not from the default generator: its state, `g.get_state()`, belongs in the
checkpoint too, and `g.set_state(...)` puts it back. You will write that in exercise 09.1.

## 3 · Why `pickle` is dangerous

`torch.save` writes a zip file with a **pickle** inside: Python's format for saving arbitrary
objects. To rebuild an object, a pickle may name any function importable in the reading process,
with arguments, and `pickle.loads` **calls it**. That is how a class chooses how it is rebuilt
(`__reduce__`) — and how a file from the internet can run any code on your machine the moment you
load it.

Here is a harmless one: an object whose rebuilding calls `print`. It could as well call
`os.system` with any command.
""")

ch.code(r"""
class Greeting:
    # rebuilt by calling print(...): any importable function could stand there
    def __reduce__(self):
        return (print, ("this line was printed by pickle.loads: reading the file ran code",))


payload = pickle.dumps({"weights": Greeting()})
print(len(payload), "bytes, naming the function to call:", b"builtins" in payload and b"print" in payload)
""")

ch.markdown(r"""
Never unpickle something you do not trust in your own process. To watch it happen anyway, we
unpickle it in a **throwaway Python process**: isolated mode (`-I`: no user site-packages, no
`PYTHON*` variables), an empty environment, an empty temporary folder as its working directory, and
a time limit. Our payload is harmless by construction; the separate process only keeps it away from
this kernel's memory.
""")

ch.code(r"""
with tempfile.TemporaryDirectory() as empty_folder:
    done = subprocess.run(
        [sys.executable, "-I", "-c", "import pickle, sys; pickle.loads(sys.stdin.buffer.read())"],
        input=payload, capture_output=True, cwd=empty_folder, env={}, timeout=60)
print("exit status:", done.returncode)
print("the other process printed:", done.stdout.decode().strip())
""")

ch.markdown(r"""
Nothing in that process asked for a greeting: loading the data was enough. PyTorch's answer is
`torch.load(..., weights_only=True)`, the default since PyTorch 2.6. It unpickles with a restricted
unpickler that rebuilds only tensors, dicts, lists, numbers, strings and a few other known types,
and refuses every other function a file names, with a `pickle.UnpicklingError`. learntorch goes one
step further: its files contain **no pickle at all**, so there is nothing to restrict; `torch.load`
refuses any pickle with its own `PickleNotAllowedError`, which is also an `UnpicklingError`. Either
way, the greeting never prints here:
""")

ch.code(r"""
(workdir / "greeting.pt").write_bytes(payload)
try:
    torch.load(workdir / "greeting.pt", weights_only=True)
except pickle.UnpicklingError as error:
    print("refused with", type(error).__name__)
""", on_pytorch="torch's restricted unpickler raises a plain UnpicklingError")

ch.markdown(r"""
What is in a learntorch file, then? A zip archive with the object's structure as **JSON** (dicts,
lists, numbers, strings, and references to tensors) and each tensor's bytes as a numpy `.npy` file.
Reading JSON and `.npy` runs no code, whatever the file says.
""")

ch.code(r"""
import json
import zipfile

with zipfile.ZipFile(workdir / "model.pt") as archive:
    print(archive.namelist())
    structure = json.loads(archive.read("learntorch/structure.json"))
print(json.dumps(structure)[:300])
""", learntorch_only="it opens learntorch's own file format (torch.save's zip holds a pickle, data.pkl)")

ch.markdown(r"""
A file can attack without code, too: a small zip that unpacks to gigabytes (a "zip bomb"), or a
header that lies about a tensor's size. `torch.load` in learntorch checks the sizes an archive
declares **before** it allocates anything — by default at most 1 GiB in all; `max_bytes=` (a
learntorch argument) raises or lowers the limit:
""")

ch.code(r"""
try:
    torch.load(workdir / "model.pt", max_bytes=1000)
except RuntimeError as error:
    print(type(error).__name__ + ":", error)
""", learntorch_only="max_bytes is learntorch's own argument")

ch.markdown(r"""
## 4 · Loading into a changed model: `strict=False`

Models change: a layer is added, one is renamed. `load_state_dict` is **strict** by default: every
key of the model must be in the file and every key of the file in the model, or it raises. With
`strict=False` it loads the keys that match and returns the ones that did not:

- `missing_keys`: in the model, not in the file (they keep their fresh values);
- `unexpected_keys`: in the file, not in the model (ignored).

Below, the new model has an extra `Dropout` at index 2, so the old `2.weight` is now `3.weight`.
""")

ch.code(r"""
torch.manual_seed(0)
old_model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
new_model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, 4))
saved = old_model.state_dict()

try:
    new_model.load_state_dict(saved)
except RuntimeError as error:
    print("strict: RuntimeError, naming the missing keys:", "Missing key" in str(error))

result = new_model.load_state_dict(saved, strict=False)
print("missing:   ", result.missing_keys)
print("unexpected:", result.unexpected_keys)
print("first layer loaded:", torch.equal(new_model[0].weight, old_model[0].weight))
print("last layer loaded: ", torch.equal(new_model[3].weight, old_model[2].weight))
""")

ch.markdown(r"""
`strict=False` is silent about what it skipped: **always read the result.** Here the last layer
kept its random weights, so the "loaded" model is broken. When you know how the names moved, rename
the keys and load strictly:
""")

ch.code(r"""
renamed = {key.replace("2.", "3.", 1) if key.startswith("2.") else key: value for key, value in saved.items()}
print(new_model.load_state_dict(renamed))
x = torch.randn(5, 16)
new_model.eval()
old_model.eval()
print("same outputs:", torch.equal(new_model(x), old_model(x)))
""")

ch.markdown(r"""
Shapes are never skipped: loading a `(32, 16)` weight into a `(64, 16)` parameter raises even with
`strict=False`.

## 5 · Deploying: the digits CNN in ONNX Runtime

A server, a phone or a browser may have no Python and no PyTorch. **ONNX** (Open Neural Network
Exchange) is a file format for the *computation* of a model: a graph of standard operations
(`Conv`, `Relu`, `Gemm`, ...) with the weights stored inside as **initializers**. Many runtimes
execute it; **ONNX Runtime** is the most common.

First a model worth deploying: the digits CNN of the course, trained for one epoch (a pass over
the 1438 training digits), and saved as a state dict — as it would be at the end of a training script.
""")

ch.code(r"""
def digits_cnn():
    # the CNN of the course: two 3x3 convolutions, max pooling, one linear layer
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
        nn.MaxPool2d(2), nn.Flatten(), nn.Linear(32 * 4 * 4, 10))


torch.manual_seed(0)
train_digits, test_digits = Digits(train=True), Digits(train=False)
digit_loader = DataLoader(train_digits, batch_size=32, shuffle=True, generator=torch.Generator().manual_seed(0))
test_images = torch.stack([image for image, _ in test_digits])
test_labels = torch.tensor([label for _, label in test_digits])

cnn = digits_cnn()
cnn_optimizer = torch.optim.Adam(cnn.parameters(), lr=5e-3)
cnn.train()
for images, digit_labels in digit_loader:               # one epoch
    loss = F.cross_entropy(cnn(images), digit_labels)
    cnn_optimizer.zero_grad()
    loss.backward()
    cnn_optimizer.step()
cnn.eval()
with torch.no_grad():
    accuracy = (cnn(test_images).argmax(dim=1) == test_labels).float().mean().item()
print(f"test accuracy after one epoch: {accuracy:.3f} on {len(test_labels)} digits")
torch.save(cnn.state_dict(), workdir / "digits_cnn.pt")
""", learntorch_only=DIGITS)

ch.markdown(r"""
`torch.onnx.export(model, args, f, ...)` runs the model once on the example input `args` (a tuple),
records every operation it does, and writes them as an ONNX graph to `f`:

- `input_names` / `output_names` name the graph's inputs and outputs — the names a runtime asks for;
- `dynamic_axes` says which dimensions may change: without it the graph is fixed to the example's
  batch of **one** image; `{0: "batch"}` makes dimension 0 a symbol, `batch`, that any size fills;
- the model should be in `eval()` mode: ONNX stores what inference computes (the export uses
  inference behaviour by default, `training=TrainingMode.EVAL`).

`dynamo=False` asks PyTorch for this exporter (whose arguments these are); its newer default builds
on `torch.export` and needs the `onnxscript` package. learntorch has one exporter and accepts the
argument. (The first export of a session also imports the `onnx` package: most of its time.)
""")

ch.code(r"""
deployed = digits_cnn()
deployed.load_state_dict(torch.load(workdir / "digits_cnn.pt"))
deployed.eval()

onnx_path = workdir / "digits_cnn.onnx"
start = time.perf_counter()
torch.onnx.export(deployed, (torch.zeros(1, 1, 8, 8),), onnx_path,
                  input_names=["images"], output_names=["logits"],
                  dynamic_axes={"images": {0: "batch"}, "logits": {0: "batch"}}, dynamo=False)
print(f"exported in {time.perf_counter() - start:.2f} s: {onnx_path.stat().st_size:,} bytes")
""", learntorch_only="it exports the digits CNN trained above (" + DIGITS + ")")

ch.markdown(r"""
`onnx.checker.check_model` validates the file against the ONNX specification (every operator known,
every input defined, types consistent); `full_check=True` also runs shape inference through the
graph. Then we read what it holds: the graph's input with its symbolic batch dimension, its nodes,
and its initializers — the weights.
""")

ch.code(r"""
import onnx

proto = onnx.load(onnx_path)
onnx.checker.check_model(proto, full_check=True)        # raises if anything is wrong
print("valid ONNX, opset", proto.opset_import[0].version)

graph_input = proto.graph.input[0]
print("input:", graph_input.name, [d.dim_param or d.dim_value for d in graph_input.type.tensor_type.shape.dim])
print("nodes:", [node.op_type for node in proto.graph.node])
print("initializers:")
for tensor in proto.graph.initializer:
    print(f"  {tensor.name:10} {list(tensor.dims)}")
""", learntorch_only="it reads the file exported above")

ch.markdown(r"""
Now the deployment itself: ONNX Runtime loads the file and runs it on numpy arrays. No model class,
no learntorch, no PyTorch — only the file. We feed it all 359 test digits at once (the batch
dimension is dynamic) and compare with the model's own outputs.
""")

ch.code(r"""
import onnxruntime as ort

session = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
print("the session asks for:", [(i.name, i.shape) for i in session.get_inputs()])
(onnx_logits,) = session.run(["logits"], {"images": test_images.numpy()})

with torch.no_grad():
    model_logits = deployed(test_images).numpy()
print("logits:", onnx_logits.shape, "largest difference:", float(np.abs(onnx_logits - model_logits).max()))
print("same predicted digit for all", len(test_labels), "images:",
      bool((onnx_logits.argmax(axis=1) == model_logits.argmax(axis=1)).all()))
""", learntorch_only="it runs the file exported above")

ch.markdown(r"""
The logits agree to a few millionths, not exactly: ONNX Runtime adds up the products of a
convolution in another order than learntorch, and floating-point addition depends on the order. What matters — the
predicted digits — is the same for every test image.

## 6 · The exported graph in the widget

`show_program` draws a program's graph: the graph's **input** (blue, with its symbolic batch),
the **initializers** (wheat, with their shapes), the **nodes** (grey, with their attributes —
`kernel_shape`, `pads` — and the type of what they make, as ONNX's shape inference follows the
`batch` symbol through the graph) and the **output** (green). Move the node slider to read one node:
its inputs, outputs and attributes. Untick *weights* to see only the computation.
""")

ch.code(r"""
from widgets import show_program

view = show_program(onnx_path)
view
""", learntorch_only="the widgets are learntorch's own")

ch.code(r"""
print(view)
print(view.describe("/convolution/Conv"))
""", learntorch_only="the widgets are learntorch's own")

ch.markdown(r"""
Compare it with the model: each `Conv2d` became a `Conv` node with its weight and bias as
initializers, `nn.Flatten` a `Flatten`, and the `nn.Linear` a `Gemm` (general matrix multiply:
`x @ W.T + b` in one node, `transB=1`). The initializers keep the parameter names of the
`state_dict` (`0.weight`, `6.bias`), so the file can be traced back to the model.

## Exercises

Each exercise has a cell for your code and a check cell below it. Replace the
`raise NotImplementedError(...)` lines with your code, run the cell, then run the check: it prints
`✓ passed`, or tells you what went wrong.

### Exercise 09.1 · A checkpoint that resumes exactly

Write two functions:

- `save_checkpoint(path, model, optimizer, scheduler, epoch, loader_generator)` writes to `path`
  (with `torch.save`) everything needed to go on training after `epoch` finished epochs;
- `resume(path, model, optimizer, scheduler, loader_generator)` reads it back into the freshly
  built `model`, `optimizer`, `scheduler` and `loader_generator`, **and** into the default random
  generator, and returns the epoch to go on from (the `epoch` given to `save_checkpoint`).

`loader_generator` is the `torch.Generator` the training loader shuffles with (section 2's run
with `make_run(seed, loader_generator=...)`); the default generator still draws the dropout masks.
The check runs section 2's experiment with your functions: the resumed run's losses and weights
must be **identical** to the uninterrupted run's.
""")

ch.solution("09.1", points=3, hint=(
    "section 2's checkpoint dict, plus loader_generator.get_state(); resume calls load_state_dict "
    "three times, torch.set_rng_state and loader_generator.set_state"), source=r"""
def save_checkpoint(path, model, optimizer, scheduler, epoch, loader_generator):
    # write everything needed to go on training after `epoch` finished epochs to `path`
    ### BEGIN SOLUTION
    torch.save({
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict(),
        "epoch": epoch,
        "rng_state": torch.get_rng_state(),
        "loader_rng_state": loader_generator.get_state(),
    }, path)
    ### END SOLUTION


def resume(path, model, optimizer, scheduler, loader_generator):
    # restore everything from `path`; return the epoch to go on from
    ### BEGIN SOLUTION
    checkpoint = torch.load(path)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    scheduler.load_state_dict(checkpoint["scheduler"])
    torch.set_rng_state(checkpoint["rng_state"])
    loader_generator.set_state(checkpoint["loader_rng_state"])
    return checkpoint["epoch"]
    ### END SOLUTION
""")

ch.check("09.1", r"""
from course.checks import exercise, check_equal


def exercise_run(seed):
    # section 2's run, its loader shuffling with a generator of its own (seeded from `seed` too)
    loader_generator = torch.Generator().manual_seed(seed + 1)
    return (*make_run(seed, loader_generator), loader_generator)


def tensors_in(value):
    # every tensor inside a loaded checkpoint (dicts, lists and tuples searched)
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in tensors_in(item)]
    return []


def check_resume(done, total, folder):
    # the uninterrupted run, then the run interrupted after `done` epochs and resumed with the
    # learner's functions in a run built from another seed: every check compares the two
    model, optimizer, scheduler, loader, loader_generator = exercise_run(0)
    straight = train_epochs(model, optimizer, scheduler, loader, range(total))
    straight_weights = [p.detach().clone() for p in model.parameters()]

    model, optimizer, scheduler, loader, loader_generator = exercise_run(0)
    first = train_epochs(model, optimizer, scheduler, loader, range(done))
    rng_state, loader_state = torch.get_rng_state(), loader_generator.get_state()
    adam_steps = len(first)
    path = os.path.join(folder, f"checkpoint_{done}.pt")
    save_checkpoint(path, model, optimizer, scheduler, done, loader_generator)
    check_equal(os.path.exists(path), True, name=f"a file at the path given to save_checkpoint (write it with torch.save)")
    saved = tensors_in(torch.load(path))
    check_equal(any(t.shape == rng_state.shape and torch.equal(t, rng_state) for t in saved), True,
                name="the checkpoint holds the default generator's state, torch.get_rng_state() (dropout draws from it)")
    check_equal(any(t.shape == loader_state.shape and torch.equal(t, loader_state) for t in saved), True,
                name="the checkpoint holds the loader's generator state, loader_generator.get_state() (the shuffles draw from it)")

    model, optimizer, scheduler, loader, loader_generator = exercise_run(99)   # "a new process"
    start = resume(path, model, optimizer, scheduler, loader_generator)
    check_equal(start, done, name=f"what resume(...) returns after save_checkpoint(..., epoch={done}, ...): the epoch to go on from")
    check_equal(torch.equal(torch.get_rng_state(), rng_state), True,
                name="the default generator after resume(...) is where it was at the checkpoint (torch.set_rng_state)")
    check_equal(torch.equal(loader_generator.get_state(), loader_state), True,
                name="the loader's generator after resume(...) is where it was at the checkpoint (loader_generator.set_state)")
    check_equal([int(s["step"]) for s in optimizer.state_dict()["state"].values()], [adam_steps] * 4,
                name="Adam's step count per parameter after resume(...) (optimizer.load_state_dict: "
                     "without it Adam starts again from step 0)")
    check_equal(scheduler.state_dict()["last_epoch"], done,
                name="the scheduler's last_epoch after resume(...) (scheduler.load_state_dict)")
    rest = train_epochs(model, optimizer, scheduler, loader, range(start, total))
    check_equal(first + rest, straight, name=f"every loss of the run resumed after epoch {done} vs the uninterrupted run's")
    check_equal([torch.equal(p, q) for p, q in zip(model.parameters(), straight_weights)], [True] * 4,
                name="each parameter after the resumed run is identical to the uninterrupted run's")


with exercise("09.1"):
    with tempfile.TemporaryDirectory() as folder:
        check_resume(done=3, total=6, folder=folder)
""")

ch.hidden_check("09.1", r"""
with exercise("09.1"):
    with tempfile.TemporaryDirectory() as folder:
        check_resume(done=1, total=4, folder=folder)
        check_resume(done=4, total=5, folder=folder)
""")

ch.markdown(r"""
### Exercise 09.2 · Deploy a model and run it in ONNX Runtime

Write two functions:

- `export_for_deployment(model, path)` exports `model` — any model that reads digit images of shape
  `(N, 1, 8, 8)` — to an ONNX file at `path`, with the input named `"images"`, the output named
  `"logits"`, and the batch dimension (dimension 0 of both) dynamic, named `"batch"`; the file must
  pass `onnx.checker.check_model`. The model may come in training mode: the file must compute what
  the model computes in `eval()` mode.
- `onnx_logits(path, images)` runs the ONNX file at `path` in ONNX Runtime on `images` (a tensor of
  shape `(N, 1, 8, 8)`) and returns the logits as a tensor.

ONNX Runtime's logits must match the model's (in `eval()` mode) within 1e-5, for one image and for
a hundred. The check uses a CNN with batch norm and dropout, which behave differently in training
and in eval mode.
""")

ch.solution("09.2", points=2, hint=(
    "section 5: torch.onnx.export with input_names, output_names, dynamic_axes and dynamo=False; "
    "ort.InferenceSession(str(path)).run, and torch.from_numpy on what it returns"), source=r"""
import onnxruntime as ort


def export_for_deployment(model, path):
    # write `model` to `path` as ONNX: input "images", output "logits", batch dimension "batch"
    ### BEGIN SOLUTION
    model.eval()
    torch.onnx.export(model, (torch.zeros(1, 1, 8, 8),), path,
                      input_names=["images"], output_names=["logits"],
                      dynamic_axes={"images": {0: "batch"}, "logits": {0: "batch"}}, dynamo=False)
    ### END SOLUTION


def onnx_logits(path, images):
    # the logits ONNX Runtime computes with the file at `path` for `images`, as a tensor
    ### BEGIN SOLUTION
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (logits,) = session.run(["logits"], {"images": images.numpy()})
    return torch.from_numpy(logits)
    ### END SOLUTION
""")

ch.check("09.2", r"""
import copy

import onnx

from course.checks import exercise, check_close, check_equal


def batch_norm_cnn(seed):
    # a CNN with batch norm (running statistics moved away from 0 and 1) and dropout, left in training mode
    torch.manual_seed(seed)
    model = nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Dropout(0.3), nn.Linear(8 * 4 * 4, 10))
    with torch.no_grad():
        for _ in range(3):
            model(torch.randn(32, 1, 8, 8) * 2 + 0.5)
    return model.train()


def dims(value):
    return [d.dim_param or d.dim_value for d in value.type.tensor_type.shape.dim]


def check_deployment(model, inputs, folder, label):
    # export with the learner's function, check the file, run it with the learner's function
    reference = copy.deepcopy(model).eval()
    with torch.no_grad():
        expected = {n: reference(x) for n, x in inputs.items()}
    path = os.path.join(folder, f"{label}.onnx")
    export_for_deployment(model, path)
    check_equal(os.path.exists(path), True, name=f"a file at the path given to export_for_deployment ({label})")
    proto = onnx.load(path)
    try:
        onnx.checker.check_model(proto, full_check=True)
        problem = None
    except Exception as error:
        problem = f"{type(error).__name__}: {error}"
    check_equal(problem, None, name=f"what onnx.checker.check_model says about the file ({label})")
    weights = {t.name for t in proto.graph.initializer}
    check_equal([i.name for i in proto.graph.input if i.name not in weights], ["images"],
                name="the graph's inputs (input_names=[\"images\"])")
    check_equal([o.name for o in proto.graph.output], ["logits"], name="the graph's outputs (output_names=[\"logits\"])")
    check_equal(dims(proto.graph.input[0]), ["batch", 1, 8, 8],
                name="the input's dimensions (dynamic_axes: dimension 0 of images and logits named \"batch\")")
    check_equal(dims(proto.graph.output[0]), ["batch", 10],
                name="the output's dimensions (dynamic_axes: dimension 0 of images and logits named \"batch\")")
    for n, x in inputs.items():
        got = onnx_logits(path, x)
        check_close(got, expected[n], atol=1e-5, rtol=0,
                    name=f"onnx_logits(path, images) for {n} vs the model's logits in eval mode ({label})")


with exercise("09.2"):
    with tempfile.TemporaryDirectory() as folder:
        generator = torch.Generator().manual_seed(7)
        inputs = {"1 image": torch.randn(1, 1, 8, 8, generator=generator),
                  "100 images": torch.randn(100, 1, 8, 8, generator=generator)}
        check_deployment(batch_norm_cnn(0), inputs, folder, "batch norm CNN")
""")

ch.hidden_check("09.2", r"""
with exercise("09.2"):
    with tempfile.TemporaryDirectory() as folder:
        generator = torch.Generator().manual_seed(8)
        inputs = {"3 images": torch.randn(3, 1, 8, 8, generator=generator),
                  "100 images": torch.randn(100, 1, 8, 8, generator=generator)}
        check_deployment(batch_norm_cnn(1), inputs, folder, "another batch norm CNN")
        torch.manual_seed(2)
        mlp = nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.Tanh(), nn.Linear(32, 10))
        check_deployment(mlp, inputs, folder, "an MLP")
""")

ch.markdown(r"""
## What's next

A model can now leave the notebook: as a `state_dict` to load into the same code, as a checkpoint
that resumes a run exactly, or as an ONNX file that runs wherever ONNX Runtime does. Next,
[**10 · Mixed precision**](10_mixed_precision.ipynb) trains the same kind of model with 16-bit
floats: what float16 and bfloat16 can hold, `torch.autocast`, and loss scaling with `GradScaler`.
""")

if __name__ == "__main__":
    sys.exit(ch.main())
