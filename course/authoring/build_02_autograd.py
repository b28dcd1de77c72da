"""Write course/solutions/02_autograd.ipynb, the instructor source of chapter 02 (autograd).

    python course/authoring/build_02_autograd.py

Edit this file, not the notebook: the notebook is rebuilt from it (``--check``: is it up to date?).
"""
import sys

from notebook_builder import Chapter

ch = Chapter("02", "autograd")

ch.markdown(r"""
# 02 · Autograd: how PyTorch finds every gradient

Training a model means nudging each weight against the gradient of the loss, $\partial
\text{loss}/\partial w$. Nobody writes those derivatives by hand: while your code runs, PyTorch
**records** every operation on tensors that require gradients, and `loss.backward()` walks that
record backwards, applying the chain rule at each step. This chapter opens the record and watches
the walk.

**After this chapter you can**

- say what `requires_grad`, `is_leaf`, `grad_fn` and `next_functions` are, and read the graph that
  autograd records as your code runs (define-by-run);
- work out a gradient by hand with the chain rule, and check it against `backward()` and against
  finite differences;
- step through `backward()` node by node and say what each node sends to its inputs;
- explain why gradients add up in `.grad`, and use `retain_graph`, `torch.no_grad()` and `detach()`;
- predict the gradient of an input that was broadcast (a sum over the broadcast dimensions);
- write your own `torch.autograd.Function` with `ctx.save_for_backward`, and verify it with
  `torch.autograd.gradcheck`;
- open the engine's own files in reading order and follow `a * b + c` and `backward()` through
  them, with `code_walk` listing every function your expression runs.
""")

ch.code(r"""
import math

import learntorch as torch          # the same code runs on PyTorch: write `import torch` instead

torch.manual_seed(0)                # every random number below is repeatable
print("running on", torch.__name__, torch.__version__)
""", on_pytorch="it prints PyTorch's name and version")

ch.markdown(r"""
> **Same code, real PyTorch.** Every code cell of this chapter runs unchanged with `import torch`
> and prints the same, except the cells whose first line says otherwise: `# learntorch only: ...`
> (the widgets, and `learntorch.autograd.graph`, learntorch's own tools for looking inside the
> graph) or `# on PyTorch: ...` (other random numbers, messages in other words).

## 1 · Define-by-run: the graph is recorded as the code runs

Give a tensor `requires_grad=True` and every operation that uses it is recorded. The result of
each operation remembers the operation that made it in its `grad_fn`; a tensor you created yourself
is a **leaf** and has no `grad_fn`.
""")

ch.code(r"""
x = torch.tensor(2.0, requires_grad=True)
w = torch.tensor(-0.5, requires_grad=True)
b = torch.tensor(0.5, requires_grad=True)

z = w * x + b
y = torch.tanh(z)
loss = (y - 1) ** 2                 # how far y is from the target 1

for name, t in [("x", x), ("w", w), ("b", b), ("z", z), ("y", y), ("loss", loss)]:
    node = t.grad_fn.name() if t.grad_fn is not None else None
    print(f"{name:4s}  is_leaf={str(t.is_leaf):5s}  grad_fn={node}")
""")

ch.markdown(r"""
Each `grad_fn` is a node of the graph. Its `next_functions` point to the nodes that made its
inputs, one `(node, output index)` pair per input, so from `loss.grad_fn` you can reach every
node. A leaf shows up as an `AccumulateGrad` node: the place where backward will store the leaf's
gradient. Its `.variable` is the leaf itself.

Read the tape by following `next_functions`:
""")

ch.code(r"""
def print_tape(node, depth=0):
    # follow next_functions from `node` towards the leaves (fine for small graphs)
    label = node.name().split("::")[-1]            # "torch::autograd::AccumulateGrad" -> last part
    if hasattr(node, "variable"):                   # an AccumulateGrad node: a leaf
        label += f"  (leaf holding {node.variable.item()})"
    print("    " * depth + label)
    for next_node, _ in node.next_functions:
        if next_node is not None:                   # None: that input needs no gradient
            print_tape(next_node, depth + 1)


print_tape(loss.grad_fn)
""")

ch.markdown(r"""
Notice what is **not** there: `1` and `2` are plain numbers, so they have no node. And nothing was
planned ahead: the graph is whatever your Python code did. Loops and `if`s decide how big it
gets, and a different input can record a different graph. That is *define-by-run*.
`learntorch.autograd.graph.walk` lists every node behind a tensor (learntorch only; on PyTorch,
follow `next_functions` as above):
""")

ch.code(r"""
from learntorch.autograd.graph import walk


def double_until_big(v):
    # how many multiplications run depends on the values, not on the code
    while v.abs().sum() < 10:
        v = v * 2
    return v.sum()


for start in ([1.0, 1.0], [0.01, 0.01]):
    v = torch.tensor(start, requires_grad=True)
    nodes = walk(double_until_big(v))
    print(f"start {start}: {len(nodes)} nodes:", " <- ".join(n.name for n in nodes))
""", learntorch_only="walk is learntorch's introspection API (learntorch.autograd.graph)")

ch.markdown(r"""
### See it: the recorded graph

`show_graph` draws the graph behind a tensor: a record for each tensor (its name and shape, its
`data`, and for a leaf its `grad`) and a small box for each operation (with the shape it computed),
left to right in the order the forward pass ran. `params` gives tensors their names.
""")

ch.code(r"""
from widgets import show_graph, BackpropStepper

show_graph(loss, params={"x": x, "w": w, "b": b, "y": y})
""", learntorch_only="show_graph is one of learntorch's widgets")

ch.markdown(r"""
## 2 · The chain rule, by hand and by the engine

For $\text{loss} = (\tanh(wx + b) - 1)^2$, write $z = wx + b$ and $y = \tanh z$. The chain rule
multiplies the local derivatives along the path from the loss to each input:

$$\frac{\partial\,\text{loss}}{\partial w} = \underbrace{2(y - 1)}_{\partial \text{loss}/\partial y}
\cdot \underbrace{(1 - y^2)}_{\partial y/\partial z} \cdot \underbrace{x}_{\partial z/\partial w},
\qquad \frac{\partial\,\text{loss}}{\partial x} = 2(y - 1)(1 - y^2) \cdot w,
\qquad \frac{\partial\,\text{loss}}{\partial b} = 2(y - 1)(1 - y^2) \cdot 1.$$

Compute that with plain Python numbers, then ask the engine:
""")

ch.code(r"""
xv, wv, bv = 2.0, -0.5, 0.5
yv = math.tanh(wv * xv + bv)
upstream = 2 * (yv - 1) * (1 - yv ** 2)        # ∂loss/∂z, shared by all three paths
by_hand = {"x": upstream * wv, "w": upstream * xv, "b": upstream * 1.0}

loss.backward()                                # fills .grad of every leaf that requires grad
for name, leaf in [("x", x), ("w", w), ("b", b)]:
    print(f"∂loss/∂{name}: by hand {by_hand[name]:+.6f}   autograd {leaf.grad.item():+.6f}")
""")

ch.markdown(r"""
A third opinion needs no calculus at all: nudge one input a little each way and look at how the
loss moves, $(f(w + h) - f(w - h)) / 2h$. Finite differences are slow (two forward passes per
number) and inexact, but they are the referee that every gradient in learntorch is tested against.
Use `float64`: in `float32` the rounding error swamps a difference this small.
""")

ch.code(r"""
def loss_at(xv, wv, bv):
    x, w, b = (torch.tensor(v, dtype=torch.float64) for v in (xv, wv, bv))
    return ((torch.tanh(w * x + b) - 1) ** 2).item()


h = 1e-6
numeric = (loss_at(xv, wv + h, bv) - loss_at(xv, wv - h, bv)) / (2 * h)
print(f"∂loss/∂w: finite differences {numeric:+.6f}   autograd {w.grad.item():+.6f}")
""")

ch.markdown(r"""
### See it: backward, one node at a time

`BackpropStepper(loss)` runs the engine's own backward and stops after every node. At each node
it shows the gradient that arrived ($g = \partial\text{loss}/\partial\text{out}$), the node's local
derivative, and what it sends to each of its inputs (their product), naming them as the node's
formula does ("input a", "input b") and the leaves by their names ("leaf w"). A leaf's `.grad`
fills in when its `AccumulateGrad` node runs. Press **Next** (or drag the slider) and compare each
number with the formula above.
""")

ch.code(r"""
x2 = torch.tensor(2.0, requires_grad=True)     # fresh leaves: the ones above already have .grad
w2 = torch.tensor(-0.5, requires_grad=True)
b2 = torch.tensor(0.5, requires_grad=True)
loss2 = (torch.tanh(w2 * x2 + b2) - 1) ** 2

stepper = BackpropStepper(loss2, params={"x": x2, "w": w2, "b": b2})
stepper
""", learntorch_only="BackpropStepper is one of learntorch's widgets")

ch.markdown(r"""
The stepper is also a plain Python object: `step()`, `previous()`, `go_to(k)`, `run_to_end()`,
and `describe()` for the current step in words. The leaves follow the step shown: go back to step 0
and their `.grad` is what it was before backward; at the end it is what `backward()` leaves, and the
graph is freed as `backward()` frees it. Here is the `tanh` node, the third to run:
""")

ch.code(r"""
stepper.go_to(3)
print(stepper.describe())
""", learntorch_only="the stepper is one of learntorch's widgets")

ch.code(r"""
stepper.run_to_end()                           # what loss2.backward() would have done, graph freed too
print("same gradients as backward():",
      all(math.isclose(mine.grad.item(), theirs.grad.item(), rel_tol=1e-6)
          for mine, theirs in [(x2, x), (w2, w), (b2, b)]))
""", learntorch_only="the stepper is one of learntorch's widgets")

ch.markdown(r"""
## 3 · Gradients add up

`backward()` **adds** into `.grad`, it does not overwrite it. That is what makes a tensor used twice
come out right: $x \cdot x$ records two edges to the same leaf, each delivers $x$, and the sum is
$2x$.
""")

ch.code(r"""
a = torch.tensor(3.0, requires_grad=True)
(a * a).backward()
print("d(a*a)/da at a = 3:", a.grad.item())
""")

ch.markdown(r"""
The same rule means that gradients from two `backward()` calls add up too, which is why a training
loop zeroes them before each step (`optimizer.zero_grad()`, or `a.grad = None`). And a second
`backward()` through the same graph is refused: backward frees what the forward pass saved for
it, unless you ask it to keep it with `retain_graph=True`.
""")

ch.code(r"""
a.grad = None
square = a * a
square.backward(retain_graph=True)
square.backward(retain_graph=True)             # adds a second 2a = 6
print("after two backward calls:", a.grad.item())

square.backward()                              # without retain_graph: frees what was saved
try:
    square.backward()
except RuntimeError as error:
    print("RuntimeError:", error)
""")

ch.markdown(r"""
Sometimes you want numbers **without** a recorded history: evaluating a model, or updating
weights. `with torch.no_grad():` records nothing inside the block, and `t.detach()` gives the
same numbers cut off from the graph.
""")

ch.code(r"""
with torch.no_grad():
    update = w * 0.1
print("inside no_grad: requires_grad =", update.requires_grad, "| grad_fn =", update.grad_fn)
print("detached:       requires_grad =", (w * 0.1).detach().requires_grad)
""")

ch.markdown(r"""
## 4 · Gradients through broadcasting

Broadcasting reuses an input: `x * w + b` with `x` of shape `(4, 3)`, `w` of shape `(3,)` and `b`
of shape `(1,)` uses each weight `w[j]` in all 4 rows, and `b` in all 12 elements. An element
reused $k$ times influences the loss along $k$ paths, and (as for `a * a` above) the gradients of
the paths **add up**. So the gradient of a broadcast input is the gradient of the output, **summed
over the dimensions it was broadcast along**:

- dimensions the input does not have (on the left) are summed away;
- dimensions where the input has size 1 are summed, keeping size 1.
""")

ch.code(r"""
x = torch.randn(4, 3)                          # a batch of 4 rows of 3 features
w = torch.randn(3, requires_grad=True)
b = torch.zeros(1, requires_grad=True)

out = x * w + b                                # shape (4, 3)
out.sum().backward()                           # ∂loss/∂out is all ones

print("w.grad:", w.grad, " = x summed over the rows:", x.sum(dim=0))
print("b.grad:", b.grad, " = 12 ones summed")
""", on_pytorch="other random numbers")

ch.markdown(r"""
### See it: who reads which element

`TensorExplorer.broadcast(a, b, op="mul")` draws `a * b` for two small tensors of the given shapes
(here those of `x` and `w`), `a` filled with 1, 2, 3, ... and `b` with 10, 20, 30, .... Backward
starts from an upstream gradient $g = \partial\text{loss}/\partial\text{out}$ that counts 1, 2, 3, ...
as well (drawn beside the result; `grad=` sets another), so that every contribution is different.
Pick an output element with the sliders: the view marks the elements of `a` and `b` it reads. Below
the grids, each input's gradient and the sum that makes it: `b`'s element is read by all 4 rows, so
its gradient adds 4 contributions, each $g$ times the element of `a` it multiplied. For `b[0]`:
$1 \cdot 1 + 4 \cdot 4 + 7 \cdot 7 + 10 \cdot 10 = 166$.
""")

ch.code(r"""
from widgets import TensorExplorer

TensorExplorer.broadcast((4, 3), (3,), op="mul")   # a has x's shape, b has w's shape
""", learntorch_only="TensorExplorer is one of learntorch's widgets")

ch.markdown(r"""
Every backward rule in the engine is written as if nothing had been broadcast; the engine then
sums each gradient down to its input's shape before sending it on. `backward_steps` (learntorch's
introspection API) runs the engine's backward one node at a time, and each step shows that sum:
`grad_inputs` is what the node's rule returned, `reduced` what was sent on.
""")

ch.code(r"""
from learntorch.autograd.graph import backward_steps

w.grad = b.grad = None
for step in backward_steps((x * w + b).sum()):
    for i in step.broadcast_reduced:           # the inputs whose gradient had to be summed
        print(f"{step.node.name()}: input {i} got shape {tuple(step.grad_inputs[i].shape)} "
              f"-> summed to {tuple(step.reduced[i].shape)}")
print("w.grad:", w.grad)
""", learntorch_only="backward_steps is learntorch's introspection API (learntorch.autograd.graph)")

ch.markdown(r"""
The stepper says the same in words: at the `Add` node, `b`'s gradient of shape (4, 3) is summed
over dims (0, 1) to fit `b`'s shape (1,).
""")

ch.code(r"""
w.grad = b.grad = None
broadcast_stepper = BackpropStepper((x * w + b).sum(), params={"w": w, "b": b})
broadcast_stepper.go_to(2)
print(broadcast_stepper.describe())
""", learntorch_only="the stepper is one of learntorch's widgets")

ch.markdown(r"""
## 5 · Your own autograd Function

A `torch.autograd.Function` is one node type: a `forward` that computes the result from plain
tensors, and a `backward` that receives $g = \partial\text{loss}/\partial\text{out}$ and returns
$\partial\text{loss}/\partial\text{input}$ for each input. `ctx` is the node's notebook: whatever
`forward` stores with `ctx.save_for_backward(...)`, `backward` reads from `ctx.saved_tensors`.
Call it with `.apply`. Here is the sigmoid $\sigma(x) = 1/(1 + e^{-x})$, whose derivative
$\sigma(1 - \sigma)$ needs only the output, so that is what it saves:
""")

ch.code(r"""
class MySigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        out = 1 / (1 + torch.exp(-x))          # inside forward, nothing is recorded
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        (out,) = ctx.saved_tensors
        return grad_out * out * (1 - out)      # chain rule: g times the local derivative


v = torch.tensor([-2.0, 0.0, 3.0], requires_grad=True)
s = MySigmoid.apply(v)
s.sum().backward()
print("node:", s.grad_fn.name())
print("ours:    ", v.grad)
with torch.no_grad():                          # the expected numbers, without recording them
    print("expected:", torch.sigmoid(v) * (1 - torch.sigmoid(v)))
""")

ch.markdown(r"""
`torch.autograd.gradcheck(fn, inputs)` compares the gradients of `fn` with finite differences, for
every input element and every output element, and raises an error showing both when they
disagree. Give it `float64` inputs. A classic bug is forgetting to multiply by `grad_out`:
`.sum().backward()` does not notice (there `grad_out` is all ones), gradcheck does.
""")

ch.code(r"""
class ForgetfulSigmoid(MySigmoid):
    @staticmethod
    def backward(ctx, grad_out):
        (out,) = ctx.saved_tensors
        return out * (1 - out)                 # bug: ignores grad_out


v64 = torch.tensor([-2.0, 0.5, 3.0], dtype=torch.float64, requires_grad=True)
print("MySigmoid passes gradcheck:", torch.autograd.gradcheck(MySigmoid.apply, (v64,)))
try:
    torch.autograd.gradcheck(ForgetfulSigmoid.apply, (v64,))
except RuntimeError as error:
    print("ForgetfulSigmoid:", error)
""", on_pytorch="gradcheck's message is worded differently")

ch.markdown(r"""
Read the two Jacobians (rows: inputs, columns: outputs). The numerical one is diagonal: each
output of an elementwise function depends on one input only. The forgetful backward puts a number
in every column, because it ignores which output the gradient came from.
""")

ch.markdown(r"""
## 6 · Read the engine

Everything this chapter showed -- the recorded graph, the chain rule node by node, gradients that
add up, broadcasting's sums, your own `Function` -- is learntorch code you can open. Its *reference
tier* is written to be read, in this order (the folder `learntorch/` of the course's repository):

1. `_tensor.py` -- a `Tensor` is an array plus `requires_grad`, `grad`, `grad_fn`; `Tensor._wrap`
   makes every tensor; `backward()` hands over to the engine;
2. `autograd/function.py` -- `Function.apply`: when the tape records, it makes the `BackwardNode`
   (your `ctx`), runs `forward` with recording off, and makes the node the output's `grad_fn`;
3. `ops/arithmetic.py` -- `Mul` and `Add`, each a `Function` like your `MySigmoid`: `forward`
   computes on arrays through the backend, `backward` is written with tensors;
4. `backends/reference.py` -- the numpy backend: the primitive array operations every op calls
   (you can pass your own with `learntorch.backends.use(...)`);
5. `ops/reductions.py` -- `Sum`, and `SumToSize`: broadcasting's backward, `Tensor.sum_to_size`;
6. `autograd/engine.py` -- `backward_steps`: the walk back, node by node, that the stepper above
   showed you.

`code_walk` runs a piece of code and lists every learntorch function it entered, file by file, in
the order it reached them, with each function's lines of code (not counting comments, blank lines
and docstrings). Here it follows this section's example, `a * b + c` with `c` broadcast:
""")

ch.code(r"""
from learntorch.utils.code_walk import code_walk

a = torch.randn(3, 4, requires_grad=True)
b = torch.randn(3, 4, requires_grad=True)
c = torch.randn(4, requires_grad=True)
walk = code_walk(lambda: (a * b + c).sum().backward())
print(f"{len(walk.functions)} functions, {walk.lines} lines of code, {len(walk.files)} files")
walk
""", learntorch_only="code_walk traces learntorch's own source")

ch.markdown(r"""
Open the files in the order of the table and read the functions it lists: that is everything the
line `(a * b + c).sum().backward()` runs. Try your own expression too -- a `tanh`, a `mean`, a
matrix product -- and see which files it adds.

learntorch also has a *fast tier* (`learntorch/_fast/`): the same bookkeeping done with fewer
Python steps, and compiled kernels in the backend. It is on by default, and tests prove it computes
exactly what the reference tier computes. `code_walk` always walks the reference tier; to run your
own code in it, use `with torch.tiers.use("reference"): ...`.
""")

ch.markdown(r"""
## Exercises

Each exercise has a cell for your code and a check cell below it. Replace the
`raise NotImplementedError(...)` lines with your code, run the cell, then run the check: it prints
`✓ passed`, or tells you which input went wrong, what was expected and what came back.

### Exercise 02.1 · A custom Function: smoothstep

The *smoothstep* curve goes smoothly from 0 to 1:

$$s(x) = \begin{cases} 0 & x < 0 \\ 3x^2 - 2x^3 & 0 \le x \le 1 \\ 1 & x > 1 \end{cases}
\qquad s'(x) = \begin{cases} 6x(1 - x) & 0 \le x \le 1 \\ 0 & \text{otherwise} \end{cases}$$

Write `SmoothStep`, a `torch.autograd.Function`:

- `forward(ctx, x)` returns $s(x)$ elementwise, for a tensor `x` of any shape, and saves what
  backward needs with `ctx.save_for_backward` (a tensor kept as an attribute, `ctx.t = t`, does not
  count: it escapes the checks that `save_for_backward` makes for you, such as an in-place change
  before backward);
- `backward(ctx, grad_out)` returns `grad_out` times $s'(x)$.

`x.clamp(0, 1)` handles the outside pieces: with $t$ = `x.clamp(0, 1)`, $s(x) = 3t^2 - 2t^3$.
The check reads what your forward saved from the recorded graph node (`y.grad_fn` is the `ctx`),
compares your values and gradients with autograd's on the formula, on a vector and on a matrix,
and runs `gradcheck`.
""")

ch.solution("02.1", points=3, hint=(
    "forward: clamp x into [0, 1] first, then the cubic, and save what backward will need; "
    "backward: grad_out times the derivative (what is the derivative outside [0, 1]?)"), source=r"""
class SmoothStep(torch.autograd.Function):
    # s(x) = 3x² - 2x³ on [0, 1], 0 below, 1 above

    @staticmethod
    def forward(ctx, x):
        ### BEGIN SOLUTION
        t = x.clamp(0, 1)
        ctx.save_for_backward(t)
        return t * t * (3 - 2 * t)
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_out):
        ### BEGIN SOLUTION
        (t,) = ctx.saved_tensors
        return grad_out * 6 * t * (1 - t)
        ### END SOLUTION
""")

ch.check("02.1", r"""
from course.checks import exercise, check_close, check_equal, check_saved_for_backward


def smoothstep_formula(x):
    # s(x) written with ordinary operations: autograd differentiates this one for us
    t = x.clamp(0, 1)
    return 3 * t ** 2 - 2 * t ** 3


def looks_like(got, x, g):
    # the mistake a wrong gradient looks like, said in the check's name
    x, got = x.detach(), got.detach()
    x_ones = x.clone().requires_grad_(True)
    smoothstep_formula(x_ones).sum().backward()
    if got.shape == x.shape and torch.allclose(got, x_ones.grad):
        return " (grad_out left out? backward returns grad_out times s'(x))"
    inside = (x >= 0) & (x <= 1)
    if got.shape == x.shape and torch.allclose(got[inside], (x_ones.grad * g)[inside]):
        return " (wrong only outside [0, 1], where s is flat: its derivative there is 0)"
    return ""


with exercise("02.1"):
    x = torch.tensor([-0.5, 0.0, 0.25, 0.5, 0.9, 1.0, 1.5])
    check_close(SmoothStep.apply(x), smoothstep_formula(x), name="SmoothStep.apply(x)", inputs={"x": x})
    matrix = torch.tensor([[-1.0, 0.1, 0.7], [0.3, 2.0, 0.95]], requires_grad=True)
    check_close(SmoothStep.apply(matrix), smoothstep_formula(matrix.detach()),
                name="SmoothStep.apply(x) for x of shape (2, 3)", inputs={"x": matrix})
    check_saved_for_backward(SmoothStep.apply(matrix), name="SmoothStep.forward")

    # backward with an upstream gradient that is not all ones: grad_out must be multiplied in
    x = torch.tensor([-0.5, 0.0, 0.25, 0.5, 0.9, 1.0, 1.5], requires_grad=True)
    g = torch.tensor([1.0, 2.0, -1.0, 0.5, 3.0, 1.0, 1.0])
    SmoothStep.apply(x).backward(g)
    x_ref = x.detach().clone().requires_grad_(True)
    smoothstep_formula(x_ref).backward(g)
    check_close(x.grad, x_ref.grad, name="x.grad after SmoothStep.apply(x).backward(g)" + looks_like(x.grad, x, g),
                inputs={"x": x, "g": g})

    # the referee: finite differences on 20 random float64 points in [-0.5, 1.5]
    x64 = (torch.rand(20, dtype=torch.float64) * 2 - 0.5).requires_grad_(True)
    check_equal(torch.autograd.gradcheck(SmoothStep.apply, (x64,), raise_exception=False), True,
                name="torch.autograd.gradcheck(SmoothStep.apply, (x,))", inputs={"x": x64})
""")

ch.hidden_check("02.1", r"""
with exercise("02.1"):
    # any shape, dtype kept
    x = (torch.randn(3, 4) * 0.8 + 0.5).requires_grad_(True)
    y = SmoothStep.apply(x)
    check_equal((tuple(y.shape), y.dtype), ((3, 4), torch.float32), name="SmoothStep.apply(x): shape and dtype",
                inputs={"x": x})
    check_saved_for_backward(SmoothStep.apply(x.double()), name="SmoothStep.forward, float64")

    # inside a bigger graph: the gradient flows through it to an earlier tensor
    x_ref = x.detach().clone().requires_grad_(True)
    (SmoothStep.apply(2 * x - 0.5) ** 2).sum().backward()
    (smoothstep_formula(2 * x_ref - 0.5) ** 2).sum().backward()
    check_close(x.grad, x_ref.grad, name="x.grad of (SmoothStep.apply(2x - 0.5) ** 2).sum()", inputs={"x": x})

    x64 = (torch.rand(3, 5, dtype=torch.float64) * 3 - 1).requires_grad_(True)
    check_equal(torch.autograd.gradcheck(SmoothStep.apply, (x64,), raise_exception=False), True,
                name="gradcheck(SmoothStep.apply) on a (3, 5) float64 tensor in [-1, 2]", inputs={"x": x64})
""")

ch.markdown(r"""
### Exercise 02.2 · Summing a gradient back to its input's shape

This is the step the engine takes for every broadcast input (section 4). Write
`sum_to_shape(grad, shape)`: `grad` is the gradient of an operation's output, and `shape` the shape
of an input that was broadcast to the output's shape. Return `grad` summed over the broadcast
dimensions, a tensor of shape exactly `shape`:

- sum over the leading dimensions that `shape` does not have;
- then sum, with `keepdim=True`, over every dimension where `shape` has size 1 but `grad` does not.

If `shape` cannot be broadcast to `grad.shape` (sizes that differ and are not 1, or more
dimensions than `grad`), raise a `RuntimeError` whose message names both shapes.

Write the sums yourself with `Tensor.sum`: the engine's own version, `Tensor.sum_to_size` (the
same name as PyTorch's, shown after the exercise), is off limits, and the check reads your
function's code to make sure. It then compares your function with the gradients the engine
gives to `a` in `a + other`.
""")

ch.solution("02.2", points=3, hint=(
    "compare grad.dim() with len(shape): sum the extra leading dims away first, then look for "
    "the 1s in shape"), source=r"""
def sum_to_shape(grad, shape):
    # the gradient of a broadcast input: grad summed over the dims broadcasting added
    shape = tuple(shape)
    ### BEGIN SOLUTION
    lead = grad.dim() - len(shape)
    if lead < 0 or any(size not in (1, g) for size, g in zip(shape, grad.shape[lead:])):
        raise RuntimeError(f"cannot sum a gradient of shape {tuple(grad.shape)} to shape {shape}: "
                           f"{shape} does not broadcast to {tuple(grad.shape)}")
    if lead > 0:
        grad = grad.sum(dim=tuple(range(lead)))
    stretched = tuple(i for i, size in enumerate(shape) if size == 1 and grad.shape[i] != 1)
    if stretched:
        grad = grad.sum(dim=stretched, keepdim=True)
    return grad
    ### END SOLUTION
""")

ch.check("02.2", r"""
from course.checks import exercise, check_close, check_error_mentions, check_not_used


def engine_gradient(shape, other_shape):
    # what the engine gives `a` in `a + other` for an upstream gradient g: the oracle
    a = torch.randn(shape, requires_grad=True)
    out = a + torch.randn(other_shape)
    g = torch.randn(out.shape)
    out.backward(g)
    return g, a.grad


def check_refused(grad_shape, shape):
    # a RuntimeError whose message names both shapes
    check_error_mentions(sum_to_shape, {"grad": torch.ones(grad_shape), "shape": shape}, raises=RuntimeError,
                         name=f"sum_to_shape(grad of shape {grad_shape}, {shape})",
                         mentions={f"grad's shape, {grad_shape}": grad_shape, f"the shape asked for, {shape}": shape})


with exercise("02.2"):
    check_not_used(sum_to_shape, ["sum_to_size", "broadcast"],
                   rule="the sums written with Tensor.sum, not the engine's sum_to_shape or Tensor.sum_to_size")
    for shape, other_shape in [((3,), (4, 3)),          # a leading dim added
                               ((4, 1), (4, 3)),        # a size-1 dim stretched
                               ((1, 3), (2, 4, 3)),     # both
                               ((), (2, 3)),            # a 0-d input: everything summed
                               ((2, 3), (2, 3))]:       # nothing broadcast: grad unchanged
        g, expected = engine_gradient(shape, other_shape)
        got = sum_to_shape(g, shape)
        hint = ""
        if tuple(getattr(got, "shape", ())) == tuple(n for n in shape if n != 1) != shape:
            hint = " (the size-1 dims are gone: sum them with keepdim=True)"
        check_close(got, expected, name=f"sum_to_shape(g, {shape}){hint}", inputs={"g": g})
    check_refused((2, 3), (4,))             # 4 against 3: that gradient cannot belong to that input
    check_refused((2, 3), (1, 2, 3))        # more dims than the gradient
""")

ch.hidden_check("02.2", r"""
with exercise("02.2"):
    for shape, other_shape in [((1, 1), (5, 2)),
                               ((2, 1, 4), (3, 1)),        # out (2, 3, 4): the middle dim only
                               ((3, 1), (3, 1)),           # size 1 that stayed 1
                               ((1,), (1, 6, 1))]:
        g, expected = engine_gradient(shape, other_shape)
        check_close(sum_to_shape(g, shape), expected, name=f"sum_to_shape(g, {shape})", inputs={"g": g})
    g, expected = engine_gradient((4, 1), (4, 3))
    check_close(sum_to_shape(g, torch.zeros(4, 1).shape), expected,
                name="sum_to_shape(g, torch.Size([4, 1]))", inputs={"g": g})
    check_refused((2, 3), (2, 2))           # 2 against 3: not broadcastable
    check_refused((5,), (3, 5))
""")

ch.markdown(r"""
The engine's own version is `SumToSize` in `learntorch/ops/reductions.py` (it is what
`Tensor.sum_to_size` runs, and what the engine calls for every broadcast input): a dozen lines,
worth reading next to yours.

## What's next

You can now read the graph autograd records, follow backward through it, and add your own nodes.
Next, [**03 · Modules**](03_modules.ipynb) packages weights and the code that uses them into `nn.Module`s, so
that a model with thousands of parameters is as easy to differentiate as `tanh(w * x + b)`.
""")

if __name__ == "__main__":
    sys.exit(ch.main())
