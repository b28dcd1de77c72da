"""Write course/solutions/08_kernels_devices.ipynb, the instructor source of chapter 08 (kernels and
devices).

    python course/authoring/build_08_kernels_devices.py

Edit this file, not the notebook: the notebook is rebuilt from it (``--check``: is it up to date?).
"""
import sys

from notebook_builder import Chapter

ch = Chapter("08", "kernels_devices")

# why cells are learntorch only / print otherwise on PyTorch (see the banner)
TIMES = "other times: the machine, and on PyTorch its own kernels"
BACKENDS = ("learntorch.backends is learntorch's one dispatch point; PyTorch's kernels are C++ "
            "registered with its dispatcher (torch.library), not a Python object you swap in")
DIGITS = "the digits ship with learntorch, as learntorch tensors"
WIDGET = "the widgets are learntorch's own"
NO_GPU = ("PyTorch has no CUDA simulator: on a machine without a GPU torch.cuda.is_available() is "
          "False there and everything stays on the cpu")

ch.markdown(r"""
# 08 · Kernels and devices: your own kernel, the GPU's threads, the profiler

Every tensor operation ends in a **kernel**: a loop that visits the elements and computes each
one. PyTorch's kernels are C++ and CUDA; learntorch's are numpy calls, Numba-compiled loops and
numba-cuda kernels — small enough to read, and pluggable: you can hand the engine a kernel of your
own and a whole model trains on it, forward and backward.

**After this chapter you can**

- write a kernel as a loop over elements, and say why that loop is slow in Python and fast once
  Numba compiles it (`@njit`), and when splitting it over threads (`prange`) pays;
- read the engine's **backend contract** — which primitive array operations exist, and where the
  ops call them — and swap in a backend of your own with `backends.use(...)`, proving with a call
  counter that a training step's forward *and* backward ran on it;
- **fuse** a chain of elementwise ops into one kernel and measure what it saves;
- explain the GPU's programming model — threads, blocks, a grid, shared memory, `syncthreads` — and
  write a shared-memory **tree reduction** in numba-cuda (on a GPU, or on Numba's CUDA simulator);
- move models and tensors between devices, and read the error for mixing them;
- profile a training step with `torch.profiler.profile()`, find its slowest op and fix it.
""")

ch.code(r"""
import ctypes.util
import os
import time

# Numba decides when numba.cuda is first imported whether CUDA kernels go to a GPU or to its
# simulator (every GPU thread a Python thread on the CPU). No NVIDIA driver here: simulate.
if ctypes.util.find_library("cuda") is None and "NUMBA_ENABLE_CUDASIM" not in os.environ:
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

import numpy as np
from numba import njit, prange

import learntorch as torch                    # the same code runs on PyTorch: `import torch`
import learntorch.nn as nn
import learntorch.nn.functional as F

torch.manual_seed(0)
print("running on", torch.__name__, torch.__version__)
""", on_pytorch="it prints PyTorch's name and version")

ch.code(r"""
from learntorch import backends
from learntorch.backends import NumpyBackend
from learntorch.datasets import Digits
from widgets import KernelGrid, ProfilerView
""", learntorch_only=BACKENDS)

ch.markdown(r"""
> **Same code, real PyTorch — where PyTorch has the thing.** The Numba kernels are plain Python and
> run anywhere; the cells that time things print other times on PyTorch (`# on PyTorch: ...`). The
> cells that open the engine up — its backend object, your backend swapped in, the widgets — are
> marked `# learntorch only: ...`: PyTorch's kernels are C++ behind its dispatcher, not a Python
> object you can replace.

## 1 · A kernel is a loop over elements

`relu` computes one number per element: `max(x, 0)`. Written as the loop every kernel is:
""")

ch.code(r"""
def relu_loop(x, out):
    # the kernel: visit every element, compute it, store it
    for i in range(x.size):
        out[i] = x[i] if x[i] > 0 else 0.0


def best_ms(fn, *args, repeats=5, number=3):
    # the fastest of `repeats` measurements of fn(*args), each the mean of `number` calls, in ms
    fn(*args)                                   # a first call: compiled, caches warm
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            fn(*args)
        times.append((time.perf_counter() - start) / number)
    return min(times) * 1e3


x = np.random.default_rng(0).standard_normal(200_000).astype(np.float32)
out = np.empty_like(x)
relu_loop(x, out)
print("the loop computes relu:", np.array_equal(out, np.maximum(x, 0)))

loop_ms = best_ms(relu_loop, x, out, repeats=2, number=1)
numpy_ms = best_ms(lambda x: np.maximum(x, 0), x)
print(f"Python loop over {x.size:,} elements: {loop_ms:8.2f} ms")
print(f"numpy's compiled loop:              {numpy_ms:8.2f} ms  ({loop_ms / numpy_ms:.0f}x faster)")
""", on_pytorch=TIMES)

ch.markdown(r"""
Same loop, same result, and the Python version is the slow one by a wide factor (printed above). Each
turn of the Python loop reads `x[i]` as a Python float *object*, compares, makes another object,
stores it back — dozens of machine instructions of bookkeeping around one comparison. numpy's
`maximum` runs the same loop in C: a few instructions per element.

## 2 · Numba: compile your own loop

**Numba** compiles a Python function to machine code the first time it is called with given types
(`@njit`: "no Python objects"). The loop stays the same:
""")

ch.code(r"""
@njit
def relu_kernel(x, out):
    for i in range(x.size):
        out[i] = x[i] if x[i] > 0 else 0.0


start = time.perf_counter()
relu_kernel(x, out)                     # first call: Numba compiles it for float32 arrays
compile_s = time.perf_counter() - start
print(f"first call (compiles): {compile_s:.2f} s; same result: {np.array_equal(out, np.maximum(x, 0))}")
njit_ms = best_ms(relu_kernel, x, out)
print(f"@njit loop:   {njit_ms:.3f} ms  ({loop_ms / njit_ms:.0f}x the Python loop's speed)")
print(f"numpy:        {numpy_ms:.3f} ms")
""", on_pytorch=TIMES)

ch.markdown(r"""
The compiled loop runs at numpy's speed or better (numpy also allocates a new result array each
call; `relu_kernel` writes into `out`). The first call costs the compilation — noticeable in a
notebook, so the engine's own kernels are compiled with `cache=True` and load from disk after the
first time.

`prange` instead of `range` (with `@njit(parallel=True)`) tells Numba that the iterations are
independent, so it may split them over several **threads**, one per CPU core. Section 6 measures
when that pays.
""")

ch.code(r"""
@njit(parallel=True)
def relu_parallel(x, out):
    for i in prange(x.size):                 # iterations split over the cores
        out[i] = x[i] if x[i] > 0 else 0.0


relu_parallel(x, out)
print("same result:", np.array_equal(out, np.maximum(x, 0)))
""")

ch.markdown(r"""
## 3 · The backend contract: the kernels the engine calls

learntorch's ops never compute on arrays themselves: each one calls the **current backend**
(`learntorch.backends.current`), an object with one method per primitive array operation. The
reference backend, `NumpyBackend`, defines all of them in plain numpy — its core methods in
`backends/reference.py`, larger families one file each in `backends/numpy_families/`. Which
primitives are there? Ask the class:
""")

ch.code(r"""
primitives = sorted(name for name in dir(NumpyBackend)
                    if not name.startswith("_") and callable(getattr(NumpyBackend, name)))
print(len(primitives), "primitives, e.g.", ", ".join(n for n in primitives if "relu" in n or "tanh" in n))

for family in NumpyBackend.__mro__[1:6]:     # the first families mixed into NumpyBackend
    methods = sorted(n for n in vars(family) if not n.startswith("_"))
    print(f"{family.__name__:16} {len(methods):3} methods: {', '.join(methods[:5])}, ...")
print("the backend now:", type(backends.current).__name__)
""", learntorch_only=BACKENDS)

ch.markdown(r"""
The backend in use is the fast tier's `NumbaBackend`, a subclass of `NumpyBackend` that overrides
the methods where a compiled kernel beats numpy. **Where** do ops call these methods?
`learntorch.utils.code_walk` runs a piece of code under Python's tracer and lists every learntorch
function it enters — the whole path of `(a * b + c).sum().backward()`, file by file:
""")

ch.code(r"""
import sys
from learntorch.utils.code_walk import code_walk

a = torch.ones(3, 4, requires_grad=True)
b, c = torch.ones(3, 4), torch.ones(4)
walk = code_walk(lambda: (a * b + c).sum().backward())
print(f"{walk.lines} lines in {len(walk.files)} files:", ", ".join(walk.files))
print("backend methods entered:", [f.name for f in walk.functions if f.name.startswith("NumpyBackend.")])
""", learntorch_only=BACKENDS)

ch.markdown(r"""
To see *who* calls each primitive, a backend can look at the frame that asked for the method:
`sys._getframe(1)` is the caller. This spy is `NumpyBackend` itself, writing down each primitive
asked for and where, while the forward and then the backward run:
""")

ch.code(r"""
class WhoCalls(NumpyBackend):
    def __init__(self):
        self.seen = []

    def __getattribute__(self, name):
        method = super().__getattribute__(name)
        if callable(method) and not name.startswith("_"):
            caller = sys._getframe(1).f_code
            where = caller.co_filename.replace(os.sep, "/").split("learntorch/")[-1]
            self.seen.append(f"{where:20} {caller.co_qualname:24} -> {name}")
        return method


spy = WhoCalls()
with backends.use(spy):
    del spy.seen[:]                  # (use() checked that the spy has every primitive)
    out = (a * b + c).sum()
    print("forward:", *spy.seen, sep="\n  ")
    del spy.seen[:]
    out.backward()
    print("backward:", *spy.seen, sep="\n  ")
""", learntorch_only=BACKENDS)

ch.markdown(r"""
Read it top to bottom: in the forward, the `Function`s of `mul`, `add` and `sum` each call one
primitive; in the backward, the node of `sum` broadcasts the gradient back (`broadcast_to`) and the
node of `mul` multiplies (`mul`) — the same primitives, called from the backward code. **Forward
and backward go through one dispatch point.** Replace a method there and both passes use your
kernel.

## 4 · Your backend: train a model on your kernels

A backend of your own is a subclass of `NumpyBackend` that overrides what you want to replace;
everything else is inherited. Here `relu` and its derivative run on Numba kernels — the
`relu_kernel` of section 2 and one more — and every call is counted:
""")

ch.code(r"""
@njit
def relu_backward_kernel(y, grad, out):
    # relu's derivative: pass the gradient where the output is positive, 0 elsewhere
    for i in range(y.size):
        out[i] = grad[i] if y[i] > 0 else 0.0


class MyBackend(NumpyBackend):
    def __init__(self):
        self.calls = {"relu": 0, "relu_backward": 0}

    def relu(self, x):
        self.calls["relu"] += 1
        flat = np.ascontiguousarray(x).reshape(-1)
        out = np.empty_like(flat)
        relu_kernel(flat, out)
        return out.reshape(x.shape)

    def relu_backward(self, y, grad):
        self.calls["relu_backward"] += 1
        flat_y = np.ascontiguousarray(y).reshape(-1)
        out = np.empty(flat_y.size, dtype=grad.dtype)
        relu_backward_kernel(flat_y, np.ascontiguousarray(grad).reshape(-1), out)
        return out.reshape(grad.shape)


mine = MyBackend()
v = torch.tensor([-1.0, 0.5, 2.0], requires_grad=True)
with backends.use(mine):
    v.relu().sum().backward()
print(v.grad, mine.calls)
""", learntorch_only=BACKENDS)

ch.markdown(r"""
One `relu` in the forward, one `relu_backward` in the backward: both yours. Now chapter 06's MLP
on the digits, trained for three epochs inside `backends.use(mine)`:
""")

ch.code(r"""
from learntorch.utils.data import DataLoader

digits = Digits(train=True)
loader = DataLoader(digits, batch_size=64, shuffle=True, generator=torch.Generator().manual_seed(0))
images, labels = next(iter(DataLoader(digits, batch_size=len(digits))))

torch.manual_seed(0)
mlp = nn.Sequential(nn.Flatten(), nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
optimizer = torch.optim.SGD(mlp.parameters(), lr=0.1, momentum=0.9)


def accuracy(model):
    with torch.no_grad():
        return (model(images).argmax(1) == labels).float().mean().item()


mine = MyBackend()
print(f"before training: accuracy {accuracy(mlp):.2f}")
steps = 0
with backends.use(mine):
    for epoch in range(3):
        for x_batch, y_batch in loader:
            loss = F.cross_entropy(mlp(x_batch), y_batch)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            steps += 1
print(f"after {steps} steps on MyBackend: accuracy {accuracy(mlp):.2f}")
print("your kernels ran:", mine.calls)
""", learntorch_only=DIGITS)

ch.markdown(r"""
The model learned, and the counter proves where: `relu` ran once per training step in the
forward and `relu_backward` once per step in the backward — every step of the training went
through your two kernels. (The accuracy is measured outside the `with` block, on the default
backend.)

## 5 · Fusion: one pass instead of three

A linear layer with a relu, `relu(x @ W + b)`, runs three kernels: the matmul, then `+ b` (a pass
over the whole output, writing a new array), then `relu` (another pass, another array). The last
two are *elementwise*: they could share one loop that reads each matmul result once, adds the
bias, clamps and stores — a **fused** kernel:
""")

ch.code(r"""
@njit
def bias_relu(h, b, out):
    # relu(h + b) in one pass over h: one read, one write per element
    rows, cols = h.shape
    for i in range(rows):
        for j in range(cols):
            v = h[i, j] + b[j]
            out[i, j] = v if v > 0 else 0.0


rng = np.random.default_rng(0)
h = rng.standard_normal((2048, 512)).astype(np.float32)      # what x @ W gave
bias = rng.standard_normal(512).astype(np.float32)
fused_out = np.empty_like(h)
bias_relu(h, bias, fused_out)
print("same values:", np.array_equal(fused_out, np.maximum(h + bias, 0)))

unfused_ms = best_ms(lambda: np.maximum(h + bias, 0))       # two kernels, a temporary array
fused_ms = best_ms(lambda: bias_relu(h, bias, fused_out))
mb = h.nbytes / 1e6
print(f"add, then relu: {unfused_ms:.2f} ms   (reads {2 * mb:.0f} MB, writes {2 * mb:.0f} MB)")
print(f"fused:          {fused_ms:.2f} ms   (reads {mb:.0f} MB, writes {mb:.0f} MB)"
      f"  -> {unfused_ms / fused_ms:.1f}x")
""", on_pytorch=TIMES)

ch.markdown(r"""
The fused kernel moves half the memory, and elementwise kernels are limited by memory, not by
arithmetic: the speed-up printed above comes from that. (Chapter 11's compiler writes such fused
loops for you.)

The backward pass has the same chains. tanh's derivative, written with its saved output
`y = tanh(x)`, is `grad * (1 - y * y)`: in numpy three ops — `y * y`, `1 - ...`, `grad * ...` —
three passes and two temporary arrays. That is exactly how the reference backend writes it:
""")

ch.code(r"""
import inspect

print(inspect.getsource(NumpyBackend.tanh_backward))
""", learntorch_only=BACKENDS)

ch.markdown(r"""
### Exercise 08.1 · A fused backward kernel, plugged into the engine

Write `tanh_backward_kernel(y, grad, out)`, a Numba `@njit` kernel that stores
`grad[i] * (1 - y[i] * y[i])` into `out[i]` for every `i` of three **flat** (1-D, contiguous) arrays
of the same size — one loop, one pass.

Then write `FusedBackend`, a subclass of `NumpyBackend` whose `tanh_backward(self, y, grad)` computes
its result **with your kernel** and, like every backend method:

- gives the reference's values (`NumpyBackend().tanh_backward(y, grad)`) for float32 and float64
  arrays of **any shape** — 1-D, 2-D, empty, and non-contiguous ones such as a transposed array (make
  flat contiguous copies with `np.ascontiguousarray(a).reshape(-1)` where needed);
- returns a **new** array of `grad`'s shape and `grad`'s dtype;
- does **not modify** `y` or `grad` (the engine may still need them).

The check then trains a tanh network for a few steps on your backend: its gradients must equal the
reference backend's, and your `tanh_backward` must be the one that ran in the backward pass.
""")

ch.solution("08.1", points=3, hint=(
    "the kernel: for i in range(y.size): out[i] = grad[i] * (1 - y[i] * y[i]); the method: flat "
    "contiguous copies of y and grad, out = np.empty(size, dtype=grad.dtype), call the kernel, "
    "return out.reshape(grad.shape)"), source=r"""
@njit
def tanh_backward_kernel(y, grad, out):
    # out[i] = grad[i] * (1 - y[i] * y[i]) for every i of three flat arrays of one size
    ### BEGIN SOLUTION
    for i in range(y.size):
        out[i] = grad[i] * (1 - y[i] * y[i])
    ### END SOLUTION


class FusedBackend(NumpyBackend):
    def tanh_backward(self, y, grad):
        # a new array of grad's shape and dtype, computed by tanh_backward_kernel
        ### BEGIN SOLUTION
        flat_y = np.ascontiguousarray(y).reshape(-1)
        flat_grad = np.ascontiguousarray(grad).reshape(-1)
        out = np.empty(flat_grad.size, dtype=grad.dtype)
        tanh_backward_kernel(flat_y, flat_grad, out)
        return out.reshape(grad.shape)
        ### END SOLUTION
""", learntorch_only=BACKENDS)

ch.check("08.1", r"""
import numba
from course import observe
from course.checks import exercise, check_close, check_equal

reference = NumpyBackend()


def tanh_backward_cases():
    # (what, y, grad): the outputs of tanh, in (-1, 1), and incoming gradients
    rng = np.random.default_rng(8)
    y2 = np.tanh(rng.standard_normal((4, 6))).astype(np.float32)
    g2 = rng.standard_normal((4, 6)).astype(np.float32)
    return [
        ("1-D float32", y2[0].copy(), g2[0].copy()),
        ("2-D float32", y2, g2),
        ("2-D float64", y2.astype(np.float64), g2.astype(np.float64)),
        ("transposed (non-contiguous) float32", y2.T, g2.T),
        ("empty float32", np.zeros((0, 3), np.float32), np.zeros((0, 3), np.float32)),
    ]


def check_fused_tanh_backward(what, y, grad):
    y_before, grad_before = y.copy(), grad.copy()
    got = FusedBackend().tanh_backward(y, grad)
    check_equal(np.array_equal(y, y_before) and np.array_equal(grad, grad_before), True,
                name=f"y and grad unchanged after FusedBackend().tanh_backward(y, grad) ({what}): "
                     "write the result into a new array, never into grad or y")
    check_close(got, reference.tanh_backward(y, grad), check_dtype=True, rtol=1e-6, atol=1e-7,
                name=f"FusedBackend().tanh_backward(y, grad) for {what} y and grad of shape "
                     f"{y.shape} (the result has grad's shape and dtype)")


def train_tanh_network(backend, steps=3):
    # a few SGD steps of a small tanh network on `backend`; its final gradients
    torch.manual_seed(1)
    net = nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 3))
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    inputs, targets = torch.randn(32, 5), torch.randint(0, 3, (32,))
    with backends.use(backend):
        for _ in range(steps):
            loss = F.cross_entropy(net(inputs), targets)
            opt.zero_grad()
            loss.backward()
            opt.step()
    return [p.grad.clone() for p in net.parameters()]


class WatchedFused(FusedBackend):
    # your backend, counting how often the engine called your tanh_backward
    ran = 0

    def tanh_backward(self, y, grad):
        WatchedFused.ran += 1
        return super().tanh_backward(y, grad)


with exercise("08.1"):
    check_equal(isinstance(tanh_backward_kernel, numba.core.dispatcher.Dispatcher), True,
                name="is tanh_backward_kernel a Numba kernel (decorated with @njit)?")
    y1 = np.array([0.0, 0.5, -0.9, 0.99], np.float32)
    g1 = np.array([1.0, 2.0, -1.0, 3.0], np.float32)
    out1 = np.zeros(4, np.float32)
    tanh_backward_kernel(y1, g1, out1)
    check_close(out1, reference.tanh_backward(y1, g1), rtol=1e-6,
                name="out after tanh_backward_kernel(y, grad, out) with y = [0, 0.5, -0.9, 0.99], "
                     "grad = [1, 2, -1, 3] (out[i] = grad[i] * (1 - y[i]**2))")
    check_equal(bool(observe.uses(FusedBackend, ["tanh_backward_kernel"])), True,
                name="does FusedBackend's tanh_backward call tanh_backward_kernel (the arithmetic "
                     "must run in your kernel, not in numpy)?")
    for what, y, grad in tanh_backward_cases():
        check_fused_tanh_backward(what, y, grad)
    expected_grads = train_tanh_network(NumpyBackend())
    got_grads = train_tanh_network(WatchedFused())
    check_equal(WatchedFused.ran >= 3, True,
                name="did the engine call FusedBackend.tanh_backward in the backward passes of 3 "
                     "training steps?")
    for i, (got, want) in enumerate(zip(got_grads, expected_grads)):
        check_close(got, want, rtol=1e-5, atol=1e-6,
                    name=f"the gradient of parameter {i} of a tanh network after 3 steps on "
                         "FusedBackend, vs the reference backend")
""", learntorch_only=BACKENDS)

ch.hidden_check("08.1", r"""
with exercise("08.1"):
    rng = np.random.default_rng(81)
    y3 = np.tanh(rng.standard_normal((2, 3, 5)))
    g3 = rng.standard_normal((2, 3, 5))
    for what, y, grad in [("3-D float64", y3, g3),
                          ("3-D float32, a strided slice", y3.astype(np.float32)[:, :, ::2],
                           g3.astype(np.float32)[:, :, ::2]),
                          ("one element", np.array([0.25], np.float32), np.array([-2.0], np.float32))]:
        check_fused_tanh_backward(what, y, grad)
""")

ch.markdown(r"""
Your fused kernel against the reference's three numpy ops, on the size of section 5:
""")

ch.code(r"""
y_big = np.tanh(h)
g_big = rng.standard_normal(h.shape).astype(np.float32)
reference_ms = best_ms(NumpyBackend().tanh_backward, y_big, g_big)
print(f"reference (3 numpy ops): {reference_ms:.2f} ms")
try:
    yours_ms = best_ms(FusedBackend().tanh_backward, y_big, g_big)
    print(f"your fused kernel:       {yours_ms:.2f} ms  -> {reference_ms / yours_ms:.1f}x")
except NotImplementedError:
    print("your fused kernel:       (write it in exercise 08.1 first)")
""", learntorch_only=BACKENDS)

ch.markdown(r"""
## 6 · Threads, and when they pay

`relu_parallel` (section 2) splits its loop over threads. Starting the threads and waiting for all
of them to finish costs time of its own, whatever the size of the tensor. On a small tensor that
fixed cost is all there is; on a large one it is spread over many elements:
""")

ch.code(r"""
import numba

engine_threads = numba.get_num_threads()              # the engine sets it for its own kernels
numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)   # every core, for this experiment
print("Numba's threads:", numba.get_num_threads())
first_paying = None
for n in (100, 10_000, 1_000_000):
    xs = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    outs = np.empty_like(xs)
    serial_us = best_ms(relu_kernel, xs, outs, number=20) * 1e3
    parallel_us = best_ms(relu_parallel, xs, outs, number=20) * 1e3
    if first_paying is None and parallel_us < serial_us:
        first_paying = n
    print(f"{n:>9,} elements: one thread {serial_us:9.1f} µs, threads {parallel_us:9.1f} µs")
print("threads paid from", f"{first_paying:,} elements" if first_paying else
      "none of these sizes (the other cores were busy)")
numba.set_num_threads(engine_threads)                   # as the engine had it
""", on_pytorch=TIMES)

ch.markdown(r"""
On 100 elements the parallel kernel is slower: the whole loop takes less time than waking the
threads. Where the machine has idle cores, the threads win on the large tensor (the last line says
where they paid on this run). That is why the engine's Numba kernels only go parallel above a
size threshold measured per kernel (`benchmarks/calibrate.py`), and small tensors stay on one
thread.

## 7 · The GPU's model: threads, blocks, a grid

A GPU runs *thousands* of threads at once, grouped in **blocks** (up to 1024 threads, which can
share fast on-chip memory and wait for each other); the blocks of one launch form the **grid**. A
kernel is written for *one* thread: it reads its own coordinates — `cuda.blockIdx.x`,
`cuda.threadIdx.x`, `cuda.blockDim.x` — and works out which element is its own. The launch says
how many blocks of how many threads: `kernel[blocks, threads_per_block](arguments)`.

numba-cuda compiles such kernels for NVIDIA GPUs. Without one, Numba's **CUDA simulator** (chosen
in the first cell of this chapter) runs every thread as a Python thread on the CPU — slow, so the
sizes here are small, but it runs the very same kernel code, barriers and shared memory included:
""")

ch.code(r"""
from numba import cuda

print("kernels run on:", "Numba's CUDA simulator" if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
      else "a GPU")


@cuda.jit
def add_one(x, out):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x     # = cuda.grid(1)
    if i < x.size:                   # the last block may have threads past the end
        out[i] = x[i] + 1


threads_per_block = 8
values = np.arange(20, dtype=np.float32)
blocks = (values.size + threads_per_block - 1) // threads_per_block    # round up: 3 blocks
result = np.zeros_like(values)
add_one[blocks, threads_per_block](values, result)
print(f"{blocks} blocks x {threads_per_block} threads for {values.size} elements:", result)
""", on_pytorch="the same on a machine without a GPU (the simulator); on a GPU it names the GPU")

ch.markdown(r"""
Two details every CUDA kernel has: the number of blocks is **rounded up** (20 elements need 3 blocks
of 8, and 4 of the 24 threads have nothing to do), so the kernel **checks its bounds**
(`if i < x.size`) before touching memory.

`KernelGrid` runs a kernel like this one with the launch geometry learntorch's own elementwise CUDA
kernels use, and records, for every element, which block and thread computed it. Hover over a
cell for its thread:
""")

ch.code(r"""
KernelGrid(np.arange(36, dtype=np.float32).reshape(3, 12), kernel="map")
""", learntorch_only=WIDGET)

ch.markdown(r"""
### Shared memory and a tree reduction

A **reduction** — the sum of a row — is harder: many threads must combine their numbers into one.
learntorch's CUDA `sum(dim=1)` (`backends/cuda/reduction.py`) gives each row a block of `T`
threads:

1. **fold**: thread `t` adds up elements `t, t + T, t + 2T, ...` of the row (a *stride* of `T`, so
   any row length works) and writes its partial sum to slot `t` of a **shared array** — memory on
   the chip that all threads of the block can read, declared with
   `cuda.shared.array(T, float32)`;
2. **tree**: in log2(T) rounds, thread `t < step` adds slot `t + step` into slot `t`, with
   `step = T/2, T/4, ..., 1`; after the last round slot 0 holds the row's sum;
3. between the rounds — and between the fold and the first round — every thread waits at
   **`cuda.syncthreads()`**, a barrier: no thread may read a slot before the thread that writes it
   has written it.

`KernelGrid(kernel="reduce")` runs that kernel and records the shared array after each barrier.
Step through the rounds: red slots are written, blue ones read.
""")

ch.code(r"""
tree = KernelGrid(np.arange(36, dtype=np.float32).reshape(3, 12) % 7, kernel="reduce", threads=8)
tree
""", learntorch_only=WIDGET)

ch.code(r"""
for block in range(3):
    tree.reset()
    rounds = [tree.shared(block).tolist()]
    while tree.round < tree.rounds:
        tree.step()
        rounds.append(tree.shared(block).tolist()[: tree.active_step()])
    print(f"block {block}:", " -> ".join(str(r) for r in rounds))
print("row sums:", tree.result(), " engine's sum(dim=1) on cuda agrees:", tree.matches_engine())
""", learntorch_only=WIDGET)

ch.markdown(r"""
### Exercise 08.2 · A row-sum kernel

Write `row_sum_kernel(x, out)`, a numba-cuda kernel, and `row_sum(x)`, which launches it and
returns `out`, so that `row_sum(x)` equals `x.sum(dim=1)` for a 2-D float32 numpy array `x` with
any number of rows and rows of **any length** — shorter than, equal to or longer than a block, and
not a multiple of it. The layout is the one above:

- **one block per row** (`cuda.blockIdx.x` is the row), `THREADS = 8` threads per block;
- **fold** with a stride of `THREADS`, each thread only reading elements that exist;
- a shared array of `THREADS` float32 slots (`cuda.shared.array(THREADS, float32)`), a **tree** in
  which only threads `t < step` add `t + step` into `t`;
- **`cuda.syncthreads()`** after the fold and after every round — the check looks for it: without
  it a kernel may give right answers on one run or one GPU and wrong ones on the next;
- thread 0 writes `out[row]`.
""")

ch.solution("08.2", points=3, hint=(
    "row, t = cuda.blockIdx.x, cuda.threadIdx.x; acc = 0 then for j in range(t, x.shape[1], "
    "THREADS); partial[t] = acc; syncthreads; step = THREADS // 2; while step > 0: if t < step: "
    "..., syncthreads, step //= 2; launch row_sum_kernel[x.shape[0], THREADS]"), source=r"""
from numba import float32

THREADS = 8


@cuda.jit
def row_sum_kernel(x, out):
    # one block per row, THREADS threads: fold, shared-memory tree, thread 0 writes out[row]
    ### BEGIN SOLUTION
    row, t = cuda.blockIdx.x, cuda.threadIdx.x
    partial = cuda.shared.array(THREADS, float32)
    acc = float32(0)
    for j in range(t, x.shape[1], THREADS):
        acc += x[row, j]
    partial[t] = acc
    cuda.syncthreads()
    step = THREADS // 2
    while step > 0:
        if t < step:
            partial[t] += partial[t + step]
        cuda.syncthreads()
        step //= 2
    if t == 0:
        out[row] = partial[0]
    ### END SOLUTION


def row_sum(x):
    # the sums of the rows of the 2-D float32 array x, computed by launching row_sum_kernel
    ### BEGIN SOLUTION
    out = np.zeros(x.shape[0], dtype=np.float32)
    row_sum_kernel[x.shape[0], THREADS](x, out)
    return out
    ### END SOLUTION
""", on_pytorch="runs the same numba-cuda kernel (on the simulator without a GPU)")

ch.check("08.2", r"""
from course import observe
from course.checks import exercise, check_close, check_equal


def integer_rows(rows, n, seed):
    # small whole numbers as float32: every order of adding them gives the same exact sum
    return np.random.default_rng(seed).integers(-5, 6, (rows, n)).astype(np.float32)


def diagnose(x, got, expected):
    # the classic mistakes, named from what came back
    if got.shape != expected.shape:
        return "one sum per row expected"
    wrong = ~np.isclose(got, expected)
    if not wrong.any():
        return "ok"
    if wrong[-1] and not wrong[:-1].any() and got[-1] == 0:
        return "the last row was never summed: is the grid one block per row?"
    # what a fold with a stride of 1 gives: thread t adds up x[row, t:]
    stride_one = sum(x[:, t:].sum(axis=1) for t in range(THREADS))
    if np.allclose(got, stride_one):
        return "elements counted more than once: does the fold step by THREADS?"
    return ("wrong sums: an element missed or counted twice by the fold, or a slot read before it "
            "was written (cuda.syncthreads() after the fold and after each round)?")


def check_row_sum(x, why):
    expected = torch.tensor(x).sum(dim=1).numpy()
    try:
        got, error = np.asarray(row_sum(x)), None
    except NotImplementedError:
        raise                            # the exercise is not done yet
    except Exception as raised:
        got, error = None, f"{type(raised).__name__}: {str(raised).splitlines()[0][:160]}"
    check_equal(error, None, name=f"the error row_sum(x) raised for x of shape {x.shape} ({why}); "
                                  "an index past the end -- of a row (the fold's bounds) or of the "
                                  "shared array (only threads t < step may read slot t + step)?")
    check_close(got, expected, name=f"row_sum(x) for x of shape {x.shape} ({why}): "
                                    f"{diagnose(x, got, expected)}")


with exercise("08.2"):
    cases = [((3, 13), "13 elements: longer than a block, not a multiple of it"),
             ((2, 8), "exactly one block's worth"),
             ((4, 3), "rows shorter than a block"),
             ((5, 20), "five rows")]
    for shape, why in cases:
        for repeat in range(2):          # a race shows on some runs only: run each twice
            check_row_sum(integer_rows(*shape, seed=len(shape) * shape[1] + repeat), why)
    kernel_code = getattr(row_sum_kernel, "py_func", None) or row_sum_kernel.fn
    check_equal(bool(observe.uses(kernel_code, ["syncthreads"])), True,
                name="does row_sum_kernel call cuda.syncthreads() (the barrier between writing "
                     "the shared array and reading it)?")
""", on_pytorch="runs the same numba-cuda kernel (on the simulator without a GPU)")

ch.hidden_check("08.2", r"""
with exercise("08.2"):
    for shape, why in [((1, 1), "one element"), ((6, 16), "two blocks' worth"),
                       ((2, 33), "33 elements")]:
        check_row_sum(integer_rows(*shape, seed=shape[0] * 100 + shape[1]), why)
""")

ch.markdown(r"""
A real GPU runs the same code with `THREADS = 256` or more and thousands of rows at once. The
simulator showed you every thread; on a GPU a missing `syncthreads` may still give the right
answer on small blocks — threads in groups of 32 (a *warp*) run in lock-step — and then fail on
larger ones, which is why the check reads your kernel for it.

## 8 · Devices: moving tensors and models

A tensor lives on a **device**. `.to(device)` (or `.cuda()`, `.cpu()`) makes a copy there;
`model.to(device)` moves every parameter and buffer of a model. The usual pattern picks the GPU when
there is one; on learntorch, the simulator counts as one:
""")

ch.code(r"""
device = "cuda" if torch.cuda.is_available() else "cpu"
print("device:", device, "·", torch.cuda.get_device_name() if device == "cuda" else "no GPU")

torch.manual_seed(0)
small = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
twin = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
twin.load_state_dict(small.state_dict())           # the same weights, staying on the cpu
small.to(device)
print("a parameter's device:", next(small.parameters()).device)

inputs = torch.randn(5, 3)
loss = small(inputs.to(device)).pow(2).mean()      # the input moved to the model's device
loss.backward()
twin(inputs).pow(2).mean().backward()
print("same loss:", abs(loss.item() - twin(inputs).pow(2).mean().item()) < 1e-6)
print("same gradient:", torch.allclose(small[0].weight.grad.cpu(), twin[0].weight.grad, atol=1e-6))
""", on_pytorch=NO_GPU)

ch.markdown(r"""
Every op runs where its inputs are, and all its tensors must be on **one** device: mixing them is an
error, never a silent copy (a silent copy to or from a GPU would hide the slowest thing in a
program). The message names both devices and the fix:
""")

ch.code(r"""
if device == "cuda":
    try:
        small(torch.randn(2, 3))                   # the model is on cuda, the input on the cpu
    except RuntimeError as error:
        print("RuntimeError:", error)
else:
    print("one device only here: nothing to mix")
""", on_pytorch=NO_GPU)

ch.markdown(r"""
And on a machine without a GPU *and* without the simulator, asking for `cuda` is itself the error —
here a fresh Python process without the simulator's variable (on a machine with a GPU it simply
works):
""")

ch.code(r"""
import subprocess
import sys

no_simulator = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
run = subprocess.run([sys.executable, "-c", "import learntorch as torch\n"
                      "try:\n    torch.ones(2).cuda(); print('a GPU: the copy worked')\n"
                      "except RuntimeError as e:\n    print('RuntimeError:', e)"],
                     capture_output=True, text=True, env=no_simulator, timeout=120)
print(run.stdout.strip() or run.stderr.strip()[-500:])
""", learntorch_only="asks learntorch, in a new process, for a cuda tensor without the simulator")

ch.markdown(r"""
## 9 · The profiler: where did the step's time go?

`torch.profiler.profile()` records every op of a block of code — each op's forward under its
name (`Linear`), each backward node under the node's name (`LinearBackward0`) — and
`key_averages().table()` prints them: **Self CPU** is the time in the op itself, **CPU total**
includes the ops it called; `record_function("name")` labels a region of your own code.

Here are five training steps of an MLP like chapter 06's (wider: 512 hidden units), on as many samples as the digits (random
stand-ins, so that the cell runs on PyTorch too), with a habit that looks harmless: after every
step it logs the accuracy on the whole training set.
""")

ch.code(r"""
from learntorch.profiler import profile, record_function

torch.manual_seed(0)
all_x, all_y = torch.rand(1438, 64), torch.randint(0, 10, (1438,))   # as many as the digits
x_batch, y_batch = all_x[:64], all_y[:64]
model = nn.Sequential(nn.Linear(64, 512), nn.ReLU(), nn.Linear(512, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.1)


def step_logging_everything():
    with record_function("train_step"):
        loss = F.cross_entropy(model(x_batch), y_batch)
        opt.zero_grad()
        loss.backward()
        opt.step()
    with record_function("log_accuracy"):
        with torch.no_grad():
            return (model(all_x).argmax(1) == all_y).float().mean().item()


step_logging_everything()                          # a warm-up step: kernels loaded
with profile(record_shapes=True) as prof:
    for _ in range(5):                             # five steps: one slow moment weighs less
        step_logging_everything()
print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=8))
""", on_pytorch="torch's table has more columns and rows (aten:: ops) and other times")

ch.markdown(r"""
Read the rows from the top: the two `record_function` regions come first, with the time of
everything inside them (their *CPU total*), then the ops. `ProfilerView` draws the same records:
one bar per op (blue forward, orange backward, grey your labelled regions), or a timeline of every
event with the ops inside a region drawn below it:
""")

ch.code(r"""
view = ProfilerView(prof, sort_by="cpu_time_total")
totals = {op.key: op.cpu_time_total for op in view.ops()}
share = totals["log_accuracy"] / (totals["train_step"] + totals["log_accuracy"])
print(f"train_step: {totals['train_step']:.0f} µs, log_accuracy: {totals['log_accuracy']:.0f} µs "
      f"({share:.0%} of the time goes to logging)")
view
""", learntorch_only=WIDGET)

ch.markdown(r"""
Which single op is the slowest? The table adds up all calls of one name, and on a busy machine one
call can be slow because something else ran. So group the events by op *and* input shapes — the
`Linear` calls of the step (a batch of 64 rows) and of the logging (1438 rows) apart — and take the
fastest of each one's five calls, the one least disturbed. The three slowest:
""")

ch.code(r"""
fastest = {}                                       # (op, input shapes) -> its fastest call, µs
for event in prof.events():
    key = (event.name, str(event.input_shapes))
    fastest[key] = min(fastest.get(key, float("inf")), event.self_cpu_time_total)
for (name, shapes), us in sorted(fastest.items(), key=lambda item: -item[1])[:3]:
    print(f"{name:16} {us:8.0f} µs  inputs {shapes}")
""", on_pytorch="torch's rows are aten:: ops (aten::addmm, ...) with other times")

ch.markdown(r"""
On a quiet machine the top row is the logging's first `Linear` (inputs of 1438 rows): it multiplies
every sample through the layer after every step, where the step itself only needs its batch of 64.
(On a busy one, a library's worker threads that wait for a core can make any small op slow: the
numbers above then jump from run to run — profile again, and trust what repeats.) The fix is to log what the step already computed — the accuracy
on its batch — and to evaluate on the whole set once per epoch, not once per step:
""")

ch.code(r"""
def step_logging_the_batch():
    with record_function("train_step"):
        scores = model(x_batch)
        loss = F.cross_entropy(scores, y_batch)
        opt.zero_grad()
        loss.backward()
        opt.step()
    with record_function("log_accuracy"):
        return (scores.argmax(1) == y_batch).float().mean().item()


before_ms = best_ms(step_logging_everything, repeats=5, number=1)
after_ms = best_ms(step_logging_the_batch, repeats=5, number=1)
print(f"step + logging, the fastest of 5: {before_ms:.2f} ms before, {after_ms:.2f} ms after")
""", on_pytorch="other times")

ch.markdown(r"""
The profiler does not guess: it measures, op by op, and the largest row is where to look first.
Profile before optimising; a kernel you fuse by hand only helps if it was the slow part.

## What's next

You have written kernels — a Python loop, a Numba loop, a fused one plugged into the engine's
backward, a CUDA tree reduction — and seen how the engine dispatches every op through one backend,
how devices keep tensors apart, and how the profiler finds the slow part of a step. Next,
[**09 · Saving, resuming and deploying**](09_save_deploy.ipynb) shows what happens to a model after
training: saving it, resuming an interrupted run exactly, and deploying it with ONNX.
""")

if __name__ == "__main__":
    sys.exit(ch.main())
