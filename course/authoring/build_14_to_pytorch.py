"""Write course/solutions/14_to_pytorch.ipynb, the instructor source of chapter 14 (moving to PyTorch).

    python course/authoring/build_14_to_pytorch.py

Edit this file, not the notebook: the notebook is rebuilt from it (``--check``: is it up to date?).
"""
import sys

from notebook_builder import Chapter

ch = Chapter("14", "to_pytorch")

# every code cell of this chapter uses both libraries side by side
BOTH = "it compares learntorch with PyTorch, so it imports both"

ch.markdown(r"""
# 14 · Moving to PyTorch

The course promised from its first cell that its code is PyTorch's: change `import learntorch as torch`
into `import torch`, and it runs. This last chapter keeps that promise in the open. It takes the
training program of chapter 06, changes that one line, runs it on PyTorch itself, and compares the
two runs. Then it says what changes once you work in PyTorch every day, and what learntorch left out.

**After this chapter you can**

- install PyTorch's CPU build, and run a course program on it by changing one import;
- compare two runs of the same program fairly: results, and speed;
- write code that runs on either library (the library passed in as an argument);
- move a model to a GPU, and name what `torch.compile`, pinned memory, torchvision and the wider
  ecosystem add;
- say what learntorch left out, and where to find it in PyTorch.

The course's second half builds on chapter 06's MLP; a convolutional network (chapter 07) is still
being written, so the program here is chapter 06's. Everything below works the same for a CNN.
""")

ch.code(r"""
import contextlib
import difflib
import importlib.util
import io
import json
from pathlib import Path

import numpy as np

import learntorch
from learntorch.datasets import Digits
from course.plain_pytorch import on_pytorch
import course.programs.train_digits_mlp as program

INSTALL = "pip install torch --index-url https://download.pytorch.org/whl/cpu"
if importlib.util.find_spec("torch") is not None:
    import torch
    print("PyTorch", torch.__version__, "is installed: every cell below runs on it.")
else:
    torch = None
    print("PyTorch is not installed in this environment. Its CPU build (about 200 MB) installs with\n"
          f"    {INSTALL}\n"
          "in a terminal (or `%pip install ...` in a cell); then restart the kernel. Until then the cells\n"
          "that need PyTorch print that they skip.")
SKIP = f"skipped: PyTorch is not installed ({INSTALL}, then restart the kernel)"
""", learntorch_only=BOTH)

ch.markdown(r"""
> **This chapter is about both libraries.** Every other chapter's code runs unchanged on PyTorch; here
> every code cell imports both, side by side, so they carry the mark `# learntorch only: ...` (there is
> nothing marked `# on PyTorch: ...`): to run them you need learntorch, and PyTorch for the comparisons.
> `import torch` means the real PyTorch in this chapter, `learntorch` means learntorch.

## 1 · Installing PyTorch

PyTorch publishes builds per platform and accelerator. On a laptop without an NVIDIA GPU, the CPU build
is the one to install; it is also much smaller than the CUDA builds:

```
pip install torch --index-url https://download.pytorch.org/whl/cpu
```

With an NVIDIA GPU, the selector on pytorch.org gives the command for your CUDA version. The cell above
checked whether PyTorch is here; if it was not, install it, restart the kernel and run the chapter again.

## 2 · One program, two libraries

Chapter 06's training loop, written as a program (`course/programs/train_digits_mlp.py`). Read it: every
line is what chapters 01–06 taught.
""")

ch.code(r"""
source = Path(program.__file__).read_text()
print(source[source.index("import argparse"):])           # the program, after its docstring
""", learntorch_only=BOTH)

ch.markdown(r"""
To move it to PyTorch, change the import. `on_pytorch` does exactly that to a program's text (it is the
function the course's tests use to run every chapter on PyTorch): every `import learntorch...` of a module
PyTorch also has becomes `import torch...`; learntorch's own modules — the digits — stay. The difference
between the two programs:
""")

ch.code(r"""
torch_source = on_pytorch(source)
for line in difflib.unified_diff(source.splitlines(), torch_source.splitlines(), "learntorch", "PyTorch",
                                 lineterm="", n=0):
    print(line)
""", learntorch_only=BOTH)

ch.markdown(r"""
One line. Now run both. `run_program` runs a program's text in a fresh namespace, as `python program.py`
would, and returns the record it prints last.

One thing to set first: PyTorch uses every CPU core for each operation by default. For a model this small
each operation takes microseconds, and on a busy machine the threads spend longer waiting for each other
than computing; learntorch's own kernels also stay on one thread for calls this small. So the comparison
gives PyTorch one thread (`torch.set_num_threads(1)`); on a big model you would leave it at the default.
""")

ch.code(r"""
def run_program(text, epochs=8):
    # run a program's text as `python program.py --epochs N` would; return its last printed line, as a dict
    namespace = {"__name__": "course_program"}
    exec(compile(text, "train_digits_mlp.py", "exec"), namespace)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        namespace["main"](["--epochs", str(epochs)])
    lines = printed.getvalue().splitlines()
    print(lines[-2])
    return json.loads(lines[-1])


runs = {"learntorch": run_program(source)}
if torch is not None:
    torch.set_num_threads(1)
    runs["torch"] = run_program(torch_source)
else:
    print(SKIP)
""", learntorch_only=BOTH)

ch.code(r"""
print(f"{'library':10s}  {'test accuracy':>13s}  {'training seconds':>16s}")
for name, run in runs.items():
    print(f"{name:10s}  {run['accuracy']:13.4f}  {run['seconds']:16.2f}")
if "torch" in runs:
    print(f"accuracy difference {100 * (runs['torch']['accuracy'] - runs['learntorch']['accuracy']):+.2f} points; "
          f"learntorch took {runs['learntorch']['seconds'] / runs['torch']['seconds']:.1f}x PyTorch's time")
""", learntorch_only=BOTH)

ch.markdown(r"""
The two accuracies are close but rarely equal, and that is not a bug: each library has its own random
number generator, so `manual_seed(0)` gives different initial weights and a different shuffle. To compare
the *arithmetic*, start both from the same weights and feed the same batches in the same order. Then the
two libraries should agree to within float32 rounding, step after step:
""")

ch.code(r"""
train_images, train_labels = program.as_tensors(train=True)          # learntorch tensors


def twin_of(model):
    # a PyTorch MLP with `model`'s layer sizes, holding exactly its weights (copied through numpy)
    hidden, out = model[1].out_features, model[3].out_features
    twin = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, out))
    twin.load_state_dict({name: torch.from_numpy(value.numpy().copy()) for name, value in model.state_dict().items()})
    return twin


if torch is None:
    print(SKIP)
else:
    learntorch.manual_seed(0)
    ours = learntorch.nn.Sequential(learntorch.nn.Flatten(), learntorch.nn.Linear(64, 128), learntorch.nn.ReLU(),
                                    learntorch.nn.Linear(128, 10))
    theirs = twin_of(ours)
    our_optimizer = learntorch.optim.Adam(ours.parameters(), lr=1e-2)
    their_optimizer = torch.optim.Adam(theirs.parameters(), lr=1e-2)
    worst = 0.0
    for step in range(15):                                           # the first 15 batches, in order
        images, labels = train_images[64 * step:64 * (step + 1)], train_labels[64 * step:64 * (step + 1)]
        our_loss = learntorch.nn.functional.cross_entropy(ours(images), labels)
        their_loss = torch.nn.functional.cross_entropy(theirs(torch.from_numpy(images.numpy())),
                                                       torch.from_numpy(labels.numpy()))
        for library_loss, optimizer in ((our_loss, our_optimizer), (their_loss, their_optimizer)):
            optimizer.zero_grad()
            library_loss.backward()
            optimizer.step()
        worst = max(worst, abs(our_loss.item() - their_loss.item()))
        if step in (0, 4, 14):
            print(f"step {step + 1:2d}: loss learntorch {our_loss.item():.6f}, PyTorch {their_loss.item():.6f}")
    weight_gap = max(np.abs(ours.state_dict()[k].numpy() - theirs.state_dict()[k].numpy()).max()
                     for k in theirs.state_dict())
    print(f"after 15 steps: largest loss difference {worst:.2e}, largest weight difference {weight_gap:.2e}")
""", learntorch_only=BOTH)

ch.markdown(r"""
Same weights, same batches: the same losses to about six digits, 15 Adam steps later. The tiny
differences are float32 rounding: the two libraries add up the same numbers in different orders
(blocked matrix products, vectorised sums), and each order rounds a little differently.

The numbers agree; the recorded graphs do not quite. Walk both from the last loss back to the
parameters (`grad_fn.name()` and `next_functions`, the same API in both), and draw learntorch's with
`show_graph`, left to right from the parameters to the loss:
""")

ch.code(r"""
from widgets import show_graph


def node_names(grad_fn):
    # the names of the graph's nodes, from the loss back to the leaves, depth first
    names, stack, seen = [], [grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.append(node.name())
        stack.extend(reversed([next_node for next_node, _ in node.next_functions]))
    return names


if torch is None:
    print(SKIP)
    learntorch.manual_seed(0)                                         # learntorch's side alone
    ours = learntorch.nn.Sequential(learntorch.nn.Flatten(), learntorch.nn.Linear(64, 128), learntorch.nn.ReLU(),
                                    learntorch.nn.Linear(128, 10))
    our_loss = learntorch.nn.functional.cross_entropy(ours(train_images[:64]), train_labels[:64])
else:
    print("PyTorch:   ", node_names(their_loss.grad_fn))
print("learntorch:", node_names(our_loss.grad_fn))
show_graph(our_loss)
""", learntorch_only=BOTH)

ch.markdown(r"""
learntorch records one node per layer-sized operation (`LinearBackward0`, `CrossEntropyLossBackward0`),
which keeps its graphs readable. PyTorch records the primitive operations its C++ library (ATen)
decomposes them into: a Linear layer is a transpose (`TBackward0`) and a fused multiply-add
(`AddmmBackward0`), cross-entropy is `LogSoftmaxBackward0` then `NllLossBackward0`. The gradients are
the same; code that inspects a graph by node names has to expect PyTorch's.

**Speed.** On this small model PyTorch is faster; how much depends on the machine. learntorch pays for
being readable: every operation goes through Python (the `Function`, the backend call, the graph node),
where PyTorch crosses into C++ once per operation and runs kernels tuned over many years. For
big operations — a 1000×1000 matrix product — both spend their time in the same kind of optimised
kernel and the gap closes; for many small ones, PyTorch's lower overhead per call wins.
(`python -m benchmarks` compares the two operation by operation.)

## 3 · What changes in PyTorch

**Tensors on a GPU.** A tensor lives on a device; operations run where their inputs are. The idiom:

```python
device = "cuda" if torch.cuda.is_available() else "cpu"    # "mps" on Apple silicon
model = model.to(device)                                    # moves the parameters
for images, labels in loader:
    images, labels = images.to(device), labels.to(device)   # every batch, every step
    loss = F.cross_entropy(model(images), labels)
```

Everything else stays. The traps are the ones learntorch's `cuda` device already showed you: mixing
devices in one operation raises an error, `.item()` and `.numpy()` wait for the GPU and copy back, and
printing a loss every step slows a GPU loop down.
""")

ch.code(r"""
if torch is None:
    print(SKIP)
else:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = twin_of(ours).to(device)
    images = torch.from_numpy(train_images[:4].numpy()).to(device)
    print("device:", device, "| parameters on", next(model.parameters()).device, "| scores on", model(images).device)
""", learntorch_only=BOTH)

ch.markdown(r"""
**`torch.compile`.** `model = torch.compile(model)` traces the model's Python into a graph (like
`learntorch.fx` did in its small way), fuses operations into fewer kernels, and generates code for them
(C++/OpenMP on a CPU, Triton on a GPU). The first call compiles — seconds to minutes — and later calls
run faster, often 1.3–2× for training. It needs a C compiler, so this chapter does not run it.

**The DataLoader's pinned memory and workers.** `DataLoader(dataset, batch_size=64, shuffle=True,
num_workers=4, pin_memory=True)`: chapter 05's workers load batches in other processes while the GPU
trains; `pin_memory=True` puts each batch in page-locked memory, from which the copy to the GPU is faster
and can overlap with computation (`images.to(device, non_blocking=True)`). On a CPU-only machine pinned
memory does nothing for you.

**torchvision datasets.** The digits ship with learntorch so the course runs offline. In PyTorch,
`torchvision.datasets.MNIST(root="data", train=True, download=True, transform=torchvision.transforms.ToTensor())`
downloads the 28×28 MNIST digits once and gives a `Dataset` exactly like chapter 05's; CIFAR-10,
ImageNet and dozens more work the same way, and `torchvision.models` has pretrained networks.

**The ecosystem.** Around PyTorch: **PyTorch Lightning** and **Hugging Face Accelerate** write the
training loop of chapter 06 for you (logging, checkpoints, several GPUs); **Hugging Face Transformers**
holds pretrained language and vision models; **torch.distributed** and **FSDP** train one model on many
GPUs (chapter 12's ideas at scale); **torchao** quantizes (chapter 13); **torch.export** and ONNX take
a model to other runtimes; **TorchServe**, **ExecuTorch** serve it on servers and phones.

## 4 · What learntorch left out

learntorch implements what the course needs to explain how PyTorch works, and not much more. Roughly,
in numbers — the public names of a few of PyTorch's namespaces, and how many of them learntorch has:
""")

ch.code(r"""
def public(module):
    return {name for name in dir(module) if not name.startswith("_")}


if torch is None:
    print(SKIP)
else:
    for path in ("", ".nn", ".nn.functional", ".optim", ".utils.data"):
        theirs = public(eval("torch" + path))
        ours = public(eval("learntorch" + path))
        print(f"torch{path:16s} {len(theirs & ours):4d} of {len(theirs):4d} public names are in learntorch{path}")
""", learntorch_only=BOTH)

ch.markdown(r"""
The big pieces that are missing, and where they live in PyTorch:

| left out | what it is | in PyTorch |
| --- | --- | --- |
| most operations | about 2,000 tensor functions (FFT, linear algebra, special functions, sorting, scatter/gather variants); learntorch has the few hundred the course uses | `torch`, `torch.linalg`, `torch.fft`, `torch.special` |
| more dtypes | `complex64/128`, float8, int4 (learntorch stops at the four float types and the integers: float16, bfloat16, float32, float64) | `torch.complex64`, `torch.float8_e4m3fn` |
| a compiler that captures Python | bytecode capture (Dynamo) and generated C++/Triton kernels (Inductor); learntorch's `compile` (chapter 11) records by running the function once and fuses elementwise chains into Numba kernels | `torch.compile`, `torch.export` |
| real GPUs at speed | cuDNN, cuBLAS, CUDA streams and graphs, tensor cores, multi-GPU | `torch.cuda`, `torch.backends.cudnn` |
| function transforms | per-sample gradients, Jacobians, vectorising a function over a batch | `torch.func.vmap`, `grad`, `jacrev` |
| recurrent layers and Transformer blocks | LSTM, GRU, `nn.Transformer`, fused attention kernels (learntorch has `nn.MultiheadAttention` and `F.scaled_dot_product_attention`, written with ops you have met) | `nn.LSTM`, `nn.TransformerEncoderLayer`, flash attention |
| sparse and nested tensors | tensors that store only their non-zeros, batches of different lengths | `torch.sparse`, `torch.nested` |
| quantization beyond dynamic Linear | static quantization, quantization-aware training, int4 weights | torchao |
| production tooling | the profiler's GPU timeline, TorchScript, mobile runtimes | `torch.profiler`, ExecuTorch |

What learntorch *has* it has with PyTorch's names and behaviour, so the code you wrote in this course is
PyTorch code. What it adds is the part PyTorch cannot show you: every line that runs is Python you can
read (`docs/reading_the_engine.md` walks through it), and widgets that draw the graph, the gradients,
the optimizer and the quantization grid while they work.

## Exercises

Each exercise has a cell for your code and a check cell below it. Replace the
`raise NotImplementedError(...)` lines with your code, run the cell, then run the check: it prints
`✓ passed`, tells you what went wrong — or, without PyTorch installed, that it skipped.

### Exercise 14.1 · Port the digits to PyTorch

`Digits` is learntorch-only: its items are learntorch tensors, which PyTorch's models cannot take. Write
`to_torch_dataset(digits)`, which takes a learntorch `Digits` dataset and returns a PyTorch
`torch.utils.data.TensorDataset` with the same samples, in the same order:

- images as a **PyTorch** float32 tensor of shape `(N, 1, 8, 8)`, scaled to `[0, 1]` exactly as `Digits`
  does (its raw pixels `digits.data` count 0…16: divide by 16);
- labels as a **PyTorch** int64 tensor of shape `(N,)`.

Go through numpy (`.numpy()`, `torch.from_numpy`): it is the common currency of the two libraries.
""")

ch.solution("14.1", points=2, hint=(
    "digits.data.numpy() is a uint8 array (N, 8, 8): astype('float32') / 16, then "
    "torch.from_numpy(...).unsqueeze(1); digits.targets.numpy() for the labels"), source=r"""
def to_torch_dataset(digits):
    # a PyTorch TensorDataset of (image float32 (1, 8, 8) in [0, 1], label int64), as `digits` has them
    ### BEGIN SOLUTION
    images = torch.from_numpy(digits.data.numpy().astype(np.float32) / 16).unsqueeze(1)
    labels = torch.from_numpy(digits.targets.numpy())
    return torch.utils.data.TensorDataset(images, labels)
    ### END SOLUTION
""", learntorch_only=BOTH)

ch.check("14.1", r"""
from course.checks import exercise, check_equal, check_close


def check_ported(digits):
    data = to_torch_dataset(digits)
    check_equal(isinstance(data, torch.utils.data.Dataset), True,
                name=f"to_torch_dataset(...) returns a PyTorch Dataset (it returned a {type(data).__name__})")
    check_equal(len(data), len(digits), name="the number of samples (one per digit)")
    for index in (0, 7, len(digits) - 1):
        image, label = data[index]
        want_image, want_label = digits[index]
        check_equal(type(image).__module__.split(".")[0], "torch",
                    name=f"the library of image {index} (a PyTorch tensor, made with torch.from_numpy)")
        check_equal((tuple(image.shape), str(image.dtype)), ((1, 8, 8), "torch.float32"),
                    name=f"(shape, dtype) of image {index} (float32 with a channel dimension: (1, 8, 8))")
        check_close(image.numpy(), want_image.numpy(),
                    name=f"the pixels of image {index} (scaled to [0, 1]: the raw counts divided by 16)")
        check_equal((type(label).__module__.split(".")[0], str(label.dtype), label.item()),
                    ("torch", "torch.int64", want_label),
                    name=f"label {index}: a PyTorch int64 tensor holding the digit")


if torch is None:
    print(SKIP)
else:
    with exercise("14.1"):
        check_ported(Digits(train=False))
""", learntorch_only=BOTH)

ch.hidden_check("14.1", r"""
if torch is not None:
    with exercise("14.1"):
        check_ported(Digits(train=True))
        check_ported(Digits(train=False, split_seed=3, test_fraction=0.1))
""")

ch.markdown(r"""
### Exercise 14.2 · One training step for either library

Code that takes the library as an argument runs on both — handy while you move a project over, and the
way this chapter compared the two. Write `train_step(torch, model, optimizer, images, labels)`: one
training step of `model` on one batch, using **only the library passed in as `torch`** (never a
module-level `learntorch` or `torch`):

- the loss is the mean cross-entropy of `model(images)` against `labels`;
- clear the old gradients, backpropagate, step the optimizer;
- return the loss **before** the step, as a Python `float`.

The check runs it on learntorch and on PyTorch from the same weights and wants the same losses.
""")

ch.solution("14.2", points=2, hint=(
    "torch.nn.functional.cross_entropy(model(images), labels); optimizer.zero_grad(); "
    "loss.backward(); optimizer.step(); return loss.item()"), source=r"""
def train_step(torch, model, optimizer, images, labels):
    # one step on the library `torch` (learntorch or PyTorch); returns the loss as a Python float
    ### BEGIN SOLUTION
    loss = torch.nn.functional.cross_entropy(model(images), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
    ### END SOLUTION
""", learntorch_only=BOTH)

ch.check("14.2", r"""
from course.checks import exercise, check_equal, check_close


def reference_losses(library, model, images, labels, steps, lr):
    # what `steps` SGD steps on the same batch give, written out here, before the learner's code runs
    optimizer = library.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        loss = library.nn.functional.cross_entropy(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def learner_losses(library, model, images, labels, steps, lr):
    optimizer = library.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for step in range(steps):
        try:
            losses.append(train_step(library, model, optimizer, images, labels))
        except NotImplementedError:
            raise                                    # the unsolved stub speaks for itself
        except (TypeError, AttributeError, RuntimeError) as error:
            check_equal(f"{type(error).__name__}: {error}", "no error",
                        name=f"train_step(torch={library.__name__}, ...) at step {step + 1}: it raised (use only "
                             f"the library passed in as `torch`; a module-level learntorch or torch cannot "
                             f"work on the other library's tensors)")
    return losses


def check_both_libraries(seed, batch, steps=4, lr=0.5):
    learntorch.manual_seed(seed)
    start = learntorch.nn.Sequential(learntorch.nn.Flatten(), learntorch.nn.Linear(64, 16), learntorch.nn.ReLU(),
                                     learntorch.nn.Linear(16, 10))
    images, labels = train_images[:batch], train_labels[:batch]
    torch_images, torch_labels = torch.from_numpy(images.numpy()), torch.from_numpy(labels.numpy())
    twin = lambda: twin_of(start)
    want = reference_losses(learntorch, copy_of(start), images, labels, steps, lr)
    want_torch = reference_losses(torch, twin(), torch_images, torch_labels, steps, lr)
    for library, model, x, y, expected in ((learntorch, copy_of(start), images, labels, want),
                                           (torch, twin(), torch_images, torch_labels, want_torch)):
        got = learner_losses(library, model, x, y, steps, lr)
        check_equal([type(loss).__name__ for loss in got], ["float"] * steps,
                    name=f"what train_step(torch={library.__name__}, ...) returns (the loss as a Python float: .item())")
        check_close(got[0], expected[0], rtol=1e-5, atol=1e-6,
                    name=f"the loss of the first step on {library.__name__} (mean cross-entropy of model(images))")
        check_close(got, expected, rtol=1e-4, atol=1e-5,
                    name=f"the losses of {steps} steps on {library.__name__} from the same weights (each step "
                         f"clears the old gradients with optimizer.zero_grad(), then backward, then step; "
                         f"it returns the loss from before the step)")


def copy_of(model):
    clone = learntorch.nn.Sequential(learntorch.nn.Flatten(), learntorch.nn.Linear(64, 16), learntorch.nn.ReLU(),
                                     learntorch.nn.Linear(16, 10))
    clone.load_state_dict(model.state_dict())
    return clone


if torch is None:
    print(SKIP)
else:
    with exercise("14.2"):
        check_both_libraries(seed=0, batch=32)
""", learntorch_only=BOTH)

ch.hidden_check("14.2", r"""
if torch is not None:
    with exercise("14.2"):
        check_both_libraries(seed=5, batch=64, steps=6, lr=0.2)
""")

ch.markdown(r"""
## What's next

This is the last chapter of the course. You have built, piece by piece, the machinery behind every
PyTorch program — tensors and their storage, the recorded graph and backward, modules, losses and
optimizers, data loading, the training loop, and int8 inference — and you have just run your own program
on PyTorch itself. From here on, write `import torch`. When something in PyTorch surprises you, the
learntorch version of it is still there to read: the same names, in a few hundred lines of Python.
""")

if __name__ == "__main__":
    sys.exit(ch.main())
