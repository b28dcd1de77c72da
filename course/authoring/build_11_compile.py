"""Write course/solutions/11_compile.ipynb, the instructor source of chapter 11 (compile).

    python course/authoring/build_11_compile.py

Edit this file, not the notebook: the notebook is rebuilt from it (``--check``: is it up to date?).
"""
import sys

from notebook_builder import Chapter

ch = Chapter("11", "compile")

# why cells are learntorch only / print otherwise on PyTorch (see the banner)
INTROSPECTION = ("reads what learntorch.compile made (.graphs, .code, .kernels, .stats); torch keeps "
                 "these in its logs (TORCH_LOGS=graph_code,output_code,recompiles)")
WIDGET = "the widgets draw learntorch's compiled graph"
TIMES = "other times: torch's eager ops and torch.compile's C++ kernels are not learntorch's"

ch.markdown(r"""
# 11 · Compile: from Python ops to one generated kernel

Every line of a PyTorch program runs as it is reached: `x * 1.5` computes a whole new tensor, then
`+ 0.5` another, and so on. This is **eager mode**: easy to read and debug, and slower than it has to
be. `torch.compile` (PyTorch 2.0) turns a function into a **graph** of ops, **fuses** chains of
elementwise ops into one loop, and **generates code** for it — guarded so that it is used only on
inputs like the ones it was made for. learntorch has the same `torch.compile`, in a form you can read:
the graph is printable Python, each fused group becomes a Numba kernel whose source you can open.

**After this chapter you can**

- measure what eager mode costs: one Python call and one pass over memory per op;
- compile a function with `torch.compile`, read the graph it captured and the kernel it generated;
- say which ops fuse (elementwise chains, a final reduction) and which do not (matmul, conv), and
  count the memory traffic fusion saves;
- predict when a compiled function **recompiles** (its guards: shapes, dtypes, `requires_grad`, grad
  mode) and what a **graph break** is, and make `fullgraph=True` find one;
- write a fusion pass of your own over the graph.
""")

ch.code(r"""
import time

import learntorch as torch                    # the same code runs on PyTorch: `import torch`
import learntorch.nn.functional as F

torch.manual_seed(0)
print("running on", torch.__name__, torch.__version__)
""", on_pytorch="it prints PyTorch's name and version")

ch.markdown(r"""
> **Same code, real PyTorch.** The cells that only *use* `torch.compile` run unchanged with
> `import torch` (there, `torch.compile` generates C++ with a compiler found on the machine, and takes
> seconds to compile). The cells that open up what was compiled are marked `# learntorch only: ...`:
> learntorch shows its graphs, guards and kernels as attributes of the compiled function, where
> PyTorch prints them to its logs (`TORCH_LOGS=graph_code,output_code,recompiles`).
> `# on PyTorch: ...` marks cells whose output differs there (times, messages).

## 1 · What eager mode costs

Here is a chain of eight elementwise ops on a million numbers. A timing helper first: the fastest
of five measurements, each the mean of ten calls (the fastest, because other work on the machine can
only slow a measurement down).
""")

ch.code(r"""
def chain(x):
    y = (x * 1.5 + 0.5).relu() * x - 0.25           # 5 ops: mul, add, relu, mul, sub
    return (y.clamp(-2.0, 2.0) + x) * 0.5           # 3 more: clamp, add, mul


def best_ms(fn, *args, repeats=5, number=10):
    # the fastest of `repeats` measurements of fn(*args), each the mean of `number` calls, in ms
    fn(*args)                                       # a first call: kernels compiled, caches warm
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            fn(*args)
        times.append((time.perf_counter() - start) / number)
    return min(times) * 1e3


x = torch.randn(1_000_000)
one_op = best_ms(lambda x: x * 1.5, x)
eight_ops = best_ms(chain, x)
print(f"one op:     {one_op:.2f} ms")
print(f"eight ops:  {eight_ops:.2f} ms  ({eight_ops / one_op:.1f} times one op)")
""", on_pytorch=TIMES)

ch.markdown(r"""
Eight ops cost many times what one costs (the ratio is printed above): each op is a full pass over
memory, into a new result tensor. `x * 1.5` reads the million float32 numbers of `x` (4 MB) and writes a million new
ones (4 MB more); `+ 0.5` reads those back and writes another 4 MB; and so on. The arithmetic is
trivial — one multiply per number — so the time goes into moving memory. Each op also pays a fixed
cost in Python: finding the op, checking shapes and dtypes, making the result tensor. On small
tensors that fixed cost is all there is:
""")

ch.code(r"""
tiny = torch.randn(10)
per_op_us = best_ms(chain, tiny, number=1000) / 8 * 1e3
print(f"on 10 numbers: {per_op_us:.1f} µs per op, almost all of it Python's bookkeeping")

traffic_mb = 8 * 2 * x.numel() * x.element_size() / 1e6
print(f"the chain on 1e6 numbers moves {traffic_mb:.0f} MB: 8 ops, each reading and writing 4 MB")
""", on_pytorch=TIMES)

ch.markdown(r"""
A loop that did all eight ops on one number at a time — read `x[i]` once, compute in registers,
write the result once — would move 8 MB instead of 64 MB, and cross from Python into compiled code
once instead of eight times. Writing that loop by hand for every model is what nobody wants to do.
A compiler writes it for you.

## 2 · Capture: from a function to a graph

`torch.compile(fn)` returns a function that, on its first call, **captures** what `fn` does: it runs
`fn` on the real inputs and records every op into a graph (torch's *Dynamo* does the same by reading
the function's bytecode). Later calls **replay** the compiled version.
""")

ch.code(r"""
fast_chain = torch.compile(chain)
y = fast_chain(x)                                  # first call: capture, compile, run
print("same values as eager:", torch.allclose(y, chain(x), atol=1e-6))
""")

ch.markdown(r"""
The captured graph is a list of nodes, printable as Python: one line per op, with the dtype and
shape each op made. It is the same function, with every op named and every intermediate value
given a name:
""")

ch.code(r"""
print(fast_chain.graphs[0].code)
""", learntorch_only=INTROSPECTION)

ch.markdown(r"""
Then comes **fusion**: the eight elementwise ops all make tensors of the same shape, so they can
share one loop. The compiler writes that loop as Python source and hands it to Numba, which compiles
it to machine code. Here is what the compiled function runs instead of the eight ops — one call of a
generated kernel — and the kernel itself: one line per op of the graph, named like its node, on one
element at a time:
""")

ch.code(r"""
print(fast_chain.code)
print(fast_chain.kernels[0].text)
""", learntorch_only=INTROSPECTION)

ch.markdown(r"""
Read the kernel's loop: `x` is read once per element (`in0[i0]`), every intermediate (`mul`, `add`,
`relu`, ...) lives in a local variable, and only the last one is stored (`out0[i0] = ...`). The
constants are typed (`np.float32(1.5)`), so the kernel rounds exactly as the eager ops do: the
results are the same bit for bit, not just close. And the time:
""")

ch.code(r"""
compiled_ms = best_ms(fast_chain, x)
print(f"eager:    {eight_ops:.2f} ms")
print(f"compiled: {compiled_ms:.2f} ms  ({eight_ops / compiled_ms:.1f}x faster)")
print("bit for bit equal:", torch.equal(fast_chain(x), chain(x)))
""", on_pytorch=TIMES + "; torch.compile's C++ may contract a * b + c into one fused multiply-add, "
     "so its values can differ from eager's in the last bit")

ch.markdown(r"""
## 3 · Fusing a layer: `gelu(x @ W + b) * scale`

A real layer mixes kinds of ops. A matrix multiply is not elementwise — every output reads a whole
row and a whole column — and BLAS already has the best loop for it, so the compiler leaves it to the
engine. What follows it (the bias add, the GELU, the scaling) is an elementwise chain, and fuses.
""")

ch.code(r"""
def layer(x, W, b, scale):
    return F.gelu(x @ W + b) * scale


torch.manual_seed(0)
xs, W, b = torch.randn(256, 512), torch.randn(512, 512) / 512 ** 0.5, torch.randn(512)
fast_layer = torch.compile(layer)
print("same values as eager:", torch.allclose(fast_layer(xs, W, b, 0.5), layer(xs, W, b, 0.5), atol=1e-6))
""")

ch.markdown(r"""
`show_compiled` draws the captured graph. Switch between **before fusion** (every op its own pass
over memory) and **after fusion** (each generated kernel framed, the matmul outside), and pick a
kernel to read its source beside the ops it came from. The line above the picture counts the bytes
the tensors moved: every input read and every output written, op by op.
""")

ch.code(r"""
from widgets import show_compiled

view = show_compiled(fast_layer)
view
""", learntorch_only=WIDGET)

ch.code(r"""
traffic = view.traffic()
print(f"memory traffic: eager {traffic['eager'] / 1e6:.1f} MB, fused {traffic['fused'] / 1e6:.1f} MB")
eager_layer_ms = best_ms(layer, xs, W, b, 0.5)
fast_layer_ms = best_ms(fast_layer, xs, W, b, 0.5)
print(f"eager {eager_layer_ms:.2f} ms, compiled {fast_layer_ms:.2f} ms "
      f"({eager_layer_ms / fast_layer_ms:.2f}x)")
""", learntorch_only=INTROSPECTION)

ch.markdown(r"""
The traffic falls by the passes the kernel no longer makes: the GELU's and the scaling's reads and
writes (the bias add's pass became the kernel's). How much time that saves depends on how much of the
layer the matmul takes, which fusion cannot touch. In real models matmuls take a large part, which is
why compilers also generate matmul code of their own (Inductor's *templates*) and tune it — the last
section says more. One thing a compiler can do for the matmul that eager code cannot is **freezing**,
for inference: `torch.compile(model, options={"freezing": True})` under `no_grad` stores each layer's
weight once more, already laid out as BLAS reads it, instead of handing BLAS the transposed view on
every call (learntorch has it too: `learntorch/compiler/freezing.py` says what it gains and when it
copies the weight again).

**Backward.** A compiled function still trains: gradients flow through a kernel as through any op.
learntorch's kernel records one node in the autograd graph, whose backward *recomputes* the kernel's
ops with the engine's own (differentiable) ops and runs their backward — so the gradients are eager's
exactly. (torch's AOTAutograd captures the backward as a second graph and compiles it too.)
""")

ch.code(r"""
Wg = W.clone().requires_grad_()
fast_layer(xs, Wg, b, 0.5).sum().backward()
compiled_grad = Wg.grad.clone()
Wg.grad = None
layer(xs, Wg, b, 0.5).sum().backward()
print("gradient of W, compiled vs eager:", torch.allclose(compiled_grad, Wg.grad, atol=1e-5))
""")

ch.markdown(r"""
## 4 · Guards: when is the compiled code reused?

The compiled code was made for inputs of particular shapes and dtypes: the kernel's loop sizes, the
float32 constants, whether to record a graph for autograd — all depend on them. So each compiled
version carries **guards**, a test of the new inputs; it runs only if the test passes. learntorch
prints its guards as a Python function:
""")

ch.code(r"""
def double(x):
    return F.gelu(x) * 2


fast_double = torch.compile(double, dynamic=False)
fast_double(torch.randn(4, 8))
print(fast_double.guards)
""", learntorch_only=INTROSPECTION)

ch.markdown(r"""
A call whose inputs break a guard **recompiles**: a new capture, new guards, a new entry in the
function's cache. The cache keeps every entry, most recent first, and a call runs the first entry
whose guards hold. So the sequence below compiles three times — the last call matches the first
entry again:
""")

ch.code(r"""
calls = [torch.randn(4, 8), torch.randn(4, 8),                 # same shape: reused
         torch.randn(5, 8),                                     # a new shape: recompile
         torch.randn(5, 8, dtype=torch.float64),                # a new dtype: recompile
         torch.randn(4, 8)]                                     # the first entry again
for x_call in calls:
    before = fast_double.stats["captures"]
    fast_double(x_call)
    print(f"{str(tuple(x_call.shape)):8} {str(x_call.dtype):14} "
          f"{'compiled' if fast_double.stats['captures'] > before else 'reused'}")
print("why it recompiled:")
for reason in fast_double.recompile_reasons:
    print("  ", reason)
""", learntorch_only=INTROSPECTION)

ch.markdown(r"""
The guards are torch's: shape, dtype, device, strides and `requires_grad` of every tensor input,
and global state such as grad mode (`torch.no_grad()` needs no autograd node: another entry). Each
recompile costs a capture and maybe new kernels, so torch stops after
`torch._dynamo.config.recompile_limit` (8) of them, warns, and runs the function eagerly.

`dynamic=False` above makes every shape a new entry. The default, `dynamic=None`, is smarter: when a
second call differs from the first only in some sizes, the new entry accepts *any* size there (torch's
"automatic dynamic shapes"), so a batch size that changes every call costs one recompile, not one
per size.

### Exercise 11.2 · Predict the recompiles

Write `recompiles(calls)`: `calls` is a list of tensors, the argument of each call of
`torch.compile(fn, dynamic=False)` in order (a new compiled function, one tensor input). Return a
list of booleans, one per call: `True` when that call compiles (the first call always does), `False`
when it reuses an entry. Use the guards of this section — a call reuses an entry when an **earlier
call compiled** one for a tensor with the same **shape**, **dtype** and **`requires_grad`** (all the
tensors here are contiguous, with grad mode on, and the lists are shorter than the recompile limit).
Work it out from the tensors: do not compile anything.
""")

ch.solution("11.2", points=2, hint=(
    "keep the (shape, dtype, requires_grad) of every entry compiled so far -- all of them, not only "
    "the latest: the cache keeps every entry"), source=r"""
def recompiles(calls):
    # for each call of torch.compile(fn, dynamic=False) in order: True when it compiles, else False
    ### BEGIN SOLUTION
    entries = set()
    answers = []
    for t in calls:
        key = (tuple(t.shape), t.dtype, t.requires_grad)
        answers.append(key not in entries)
        entries.add(key)
    return answers
    ### END SOLUTION
""")

ch.check("11.2", r"""
from course.checks import exercise, check_equal, check_not_called


def what_compile_does(calls):
    # the compiler itself, on a fresh function: does each call capture?
    compiled = torch.compile(lambda t: t * 2, dynamic=False)
    answers = []
    for t in calls:
        before = compiled.stats["captures"]
        compiled(t)
        answers.append(compiled.stats["captures"] > before)
    return answers


def describe(calls):
    return ", ".join(f"{tuple(t.shape)} {str(t.dtype).replace('torch.', '')}"
                     f"{' requires_grad' if t.requires_grad else ''}" for t in calls)


with exercise("11.2"):
    f64 = torch.float64
    cases = [
        ("same shapes", [torch.ones(3), torch.ones(3), torch.ones(3)]),
        ("a new shape, then the first again (the cache keeps every entry, not only the latest)",
         [torch.ones(3), torch.ones(4), torch.ones(3), torch.ones(4)]),
        ("a new dtype", [torch.ones(2, 3), torch.ones(2, 3, dtype=f64), torch.ones(2, 3)]),
        ("requires_grad changes", [torch.ones(5), torch.ones(5, requires_grad=True), torch.ones(5)]),
        ("same number of elements, other shape", [torch.ones(2, 6), torch.ones(3, 4), torch.ones(12)]),
    ]
    for why, calls in cases:
        answer = check_not_called(recompiles, (calls,), ["torch.compile"],
                                  rule="predict from the tensors: do not compile anything",
                                  name="recompiles(calls)")
        check_equal(answer, what_compile_does(calls),
                    name=f"recompiles(calls) for calls of {describe(calls)} ({why})")
""", learntorch_only=INTROSPECTION)

ch.hidden_check("11.2", r"""
with exercise("11.2"):
    i64 = torch.int64
    more = [
        [torch.ones(2, 2), torch.ones(2, 2, dtype=i64), torch.ones(2, 2, dtype=f64),
         torch.ones(2, 2, dtype=i64), torch.ones(2, 2)],
        [torch.ones(1), torch.ones(1, 1), torch.ones(1), torch.ones(1, 1, requires_grad=True),
         torch.ones(1, 1)],
        [torch.ones(7)],
    ]
    for calls in more:
        check_equal(recompiles(calls), what_compile_does(calls),
                    name=f"recompiles(calls) for calls of {describe(calls)}")
""")

ch.markdown(r"""
## 5 · Graph breaks

A graph holds tensor ops. What if the Python code *looks at* a tensor's value?
""")

ch.code(r"""
def clipped_step(x):
    if x.abs().max() > 1:                  # Python reads a value computed from x
        x = x / x.abs().max()
    return x * 0.9


fast_step = torch.compile(clipped_step)
small, large = torch.tensor([0.5, -0.25]), torch.tensor([4.0, -2.0])
print(fast_step(small), fast_step(large))
print(clipped_step(small), clipped_step(large))
""")

ch.markdown(r"""
The results are right on both sides of the `if`. But the `if` cannot be inside the graph: which ops
come next depends on a value the graph computes. torch's Dynamo **breaks the graph** there: it
compiles the ops before the `if` as one graph, runs the Python `if` itself, and starts a second
graph after it. learntorch cannot resume a Python function in the middle, so its compiled code
*checks* the value Python read and, when the code would take the other branch, captures that
branch too (one more recompile). Either way, a break costs speed: fewer ops per graph, less to fuse.

`fullgraph=True` says "this whole function must be one graph" and turns every break into an error,
which names the line — the way to find breaks in a model you want fast:
""")

ch.code(r"""
try:
    torch.compile(clipped_step, fullgraph=True)(large)
except RuntimeError as error:
    print(type(error).__name__)
    print(str(error).splitlines()[0])
    print(str(error).splitlines()[-1].strip())
""", on_pytorch="torch's Unsupported error has more lines; its first and last lines say the same thing "
     "in its own words")

ch.markdown(r"""
The hint in the message is the fix: `torch.where(condition, a, b)` computes both sides and picks per
element, inside the graph, with no Python `if`. `.item()`, `.tolist()`, `print(tensor)` and numpy
calls break graphs the same way. Code that draws random numbers (dropout in training mode) cannot be
*replayed* at all by learntorch's compiler — a replay would repeat the same numbers — so it runs
eagerly, with a warning saying why.

## 6 · Write a fusion pass

The compiler's fusion pass reads the graph and returns **groups**: lists of nodes, each to become one
kernel. You can give `torch.compile` your own, `options={"fusion": my_pass}` (learntorch's option;
torch's Inductor has its own scheduler), and the compiler then checks your groups and generates a
kernel for each. What it needs to know about a node:

- `node.op` is `"call_function"` for an op (others: `"placeholder"` for an input, `"get_attr"` for a
  parameter or constant, `"output"`);
- `fusible(node)` (below) is `True` when the node is an op that can be one line of a kernel: an
  elementwise op with a scalar formula (`Add`, `Gelu`, `Relu`, ...), not a matmul, not a reduction;
- `node.tensor_meta.shape` is the shape of the tensor it made.
""")

ch.code(r"""
from learntorch.compiler.fusion import lowerable


def fusible(node):
    # an op that can be one line of a generated kernel
    return node.op == "call_function" and lowerable(node)


def show_groups(fn, *inputs, fusion=None):
    # compile fn with the fusion pass `fusion` (None: the compiler's own), run it, print the kernels
    compiled = torch.compile(fn, options={"fusion": fusion} if fusion else None)
    result = compiled(*inputs)
    for kernel in compiled.kernels:
        print(kernel.name, "fuses", [node.name for node in kernel.group.nodes])
    return compiled, result


_ = show_groups(layer, xs, W, b, 0.5)
""", learntorch_only="learntorch.compile's fusion option and its graph nodes")

ch.markdown(r"""
### Exercise 11.1 · Fuse consecutive elementwise ops

Write `fuse_consecutive(graph)`, a fusion pass. Walk `graph.nodes` in order and collect **runs**: a
run is a sequence of *consecutive* nodes that are all `fusible` and all make tensors of the **same
shape** (the first node of the run sets it). Any other node ends the current run:

- a node that is not fusible ends the run and belongs to no run;
- a fusible node of *another* shape ends the run and **starts a new one**.

Return the runs of **two or more** nodes, in order, each as a list of nodes (a kernel for one op
saves nothing; the compiler refuses groups of one). The graph's last node is always its `output`
node, which is not fusible. Your groups must make the compiled function compute what the eager one
does.
""")

ch.solution("11.1", points=3, hint=(
    "keep the current run in a list; when a node cannot join it, keep the run if it has 2+ nodes and "
    "start again (with this node, if it is fusible)"), source=r"""
def fuse_consecutive(graph):
    # lists of consecutive fusible nodes of one shape, two or more per list, in graph order
    ### BEGIN SOLUTION
    groups, run = [], []
    for node in graph.nodes:
        if fusible(node) and (not run or node.tensor_meta.shape == run[0].tensor_meta.shape):
            run.append(node)
            continue
        if len(run) >= 2:
            groups.append(run)
        run = [node] if fusible(node) else []
    if len(run) >= 2:
        groups.append(run)
    return groups
    ### END SOLUTION
""")

ch.check("11.1", r"""
from course.checks import exercise, check_close, check_equal


def fused_by_learner(fn, *inputs):
    # (node names of each group your pass returned, the compiled result, the compiler's objection or None)
    seen = {}

    def spy(graph):
        seen["groups"] = fuse_consecutive(graph)
        return seen["groups"]
    compiled = torch.compile(fn, options={"fusion": spy})
    try:
        result = compiled(*inputs)
    except ValueError as error:          # the compiler checks the groups (learntorch/compiler/fusion.py)
        result, objection = None, str(error)
    else:
        objection = None
    groups = [[node.name for node in group] for group in seen.get("groups") or []]
    return groups, result, objection


def expect(name, fn, inputs, groups):
    got, result, objection = fused_by_learner(fn, *inputs)
    check_equal(objection, None, name=f"what the compiler says of the groups fuse_consecutive returned "
                                      f"for {name} (they were {got})")
    check_equal(got, groups, name=f"fuse_consecutive's groups (node names) for {name}")
    expected = fn(*inputs)
    if isinstance(expected, tuple):                  # a function of several results: each one
        for i, (r, e) in enumerate(zip(result, expected)):
            check_close(r, e, name=f"result {i} of the compiled {name}, vs eager", atol=1e-6)
    else:
        check_close(result, expected, name=f"the compiled {name}, vs eager", atol=1e-6)


with exercise("11.1"):
    v, u = torch.randn(6), torch.randn(6)
    m, w, bias = torch.randn(4, 6), torch.randn(6, 3), torch.randn(3)
    expect("x.exp() * 2 + 1 (one run)", lambda x: x.exp() * 2 + 1, (v,), [["exp", "mul", "add"]])
    expect("a chain ending at the end of the graph", lambda x, y: (x * y).relu() + y, (v, u),
           [["mul", "relu", "add"]])
    expect("a matmul between two chains", lambda x, w, b: ((x * 2).relu() @ w + b).tanh() * 3, (m, w, bias),
           [["mul", "relu"], ["add", "tanh", "mul_1"]])
    square = torch.randn(6, 6)
    expect("a single op on each side of a matmul of one shape (no group of one, no group across the matmul)",
           lambda x, w: (x.exp() @ w).sin(), (m, square), [])
    expect("a change of shape: a (4, 6) run, then a (6,) run", lambda x, y: ((x * 2 + 1), (y.exp() - 1) * 3),
           (m, v), [["mul", "add"], ["exp", "sub", "mul_1"]])
""", learntorch_only="learntorch.compile's fusion option and its graph nodes")

ch.hidden_check("11.1", r"""
with exercise("11.1"):
    expect("a reduction after a run", lambda x: (x * x + 1).sum() * 2, (m,), [["mul", "add"]])
    expect("three shapes in a row", lambda x, y, z: ((x + 1) * 2, (y - 1) * 3, (z * 4).exp()),
           (m, v, torch.randn(2, 3)), [["add", "mul"], ["sub", "mul_1"], ["mul_2", "exp"]])
    expect("one op only", lambda x: x + 1, (v,), [])
""")

ch.markdown(r"""
Compare your pass with the compiler's own (`learntorch/compiler/fusion.py`): it does not need the ops
to be *consecutive*. An op may join the group of *any* of its inputs, as long as no op outside the
group has read from it yet — so `a = x.exp(); b = y.sin(); c = a * b` can be one kernel although
`a` and `b` are not related. And it lets a final `sum` or `mean` end a group: the kernel adds up the
values instead of storing them.

## 7 · What `torch.compile` adds beyond this

learntorch's compiler is the same idea at teaching size. PyTorch's has three large parts:

- **Dynamo** captures graphs by reading the function's Python **bytecode** as CPython runs it, not by
  running it on a tracer: it sees the Python around the ops (loops, `if`s, calls into other
  functions), inlines what it can, and *resumes* the Python function after a graph break, in the
  middle — learntorch re-captures from the start instead. It traces shapes **symbolically**
  (`s0 * 8`), so one dynamic entry fits every size without capturing again.
- **AOTAutograd** traces the **backward** ahead of time into a second graph, so the backward is fused
  and compiled too; learntorch recomputes a kernel's ops and runs their eager backward.
- **Inductor** lowers graphs to loops and generates **Triton** kernels for GPUs and **C++/OpenMP**
  with SIMD vectorisation for CPUs (learntorch: Numba, serial unless `mode="max-autotune"`). It fuses
  more (reductions in the middle, pointwise ops *into* matmul epilogues), plans memory, and with
  `mode="max-autotune"` **autotunes**: it benchmarks several versions of each kernel (tile sizes,
  matmul templates) and keeps the fastest. `mode="reduce-overhead"` records **CUDA graphs**, so one
  launch replays a whole step of small kernels.

## What's next

You have seen where eager mode's time goes, how a compiler captures a graph, fuses it and generates
code, and what it must check to reuse that code. Next, [**12 · Distributed**](12_distributed.ipynb)
trains one model on several processes at once.
""")

if __name__ == "__main__":
    sys.exit(ch.main())
