"""Write course/solutions/01_tensors.ipynb, the instructor source of chapter 01 (tensors).

    python course/authoring/build_01_tensors.py

Edit this file, not the notebook: the notebook is rebuilt from it (``--check``: is it up to date?).
"""
import sys

from notebook_builder import Chapter

ch = Chapter("01", "tensors")

ch.markdown(r"""
# 01 · Tensors: a grid of numbers, and the memory behind it

Everything in PyTorch is made of tensors: the data, the weights of a model, its gradients. A tensor
looks like a grid of numbers, but underneath it is a flat row of numbers in memory plus a few facts
that say how to read that row as a grid. Knowing those facts explains why some operations are free
and others copy, why `view` sometimes refuses, and what broadcasting really does.

**After this chapter you can**

- make tensors from data and with factory functions, and say which dtype and device each one gets;
- predict the dtype of an operation that mixes dtypes (type promotion);
- read and change a shape (`reshape`, `view`, `unsqueeze`, `squeeze`);
- explain storage, strides and offset, and tell a **view** (shares memory) from a **copy**;
- predict the shape that broadcasting gives, or the error it raises;
- tell basic indexing (views) from advanced indexing (copies).
""")

ch.code(r"""
import numpy as np

import learntorch as torch          # the same code runs on PyTorch: write `import torch` instead

torch.manual_seed(0)                # every random number below is repeatable
print("running on", torch.__name__, torch.__version__)
""", on_pytorch="it prints PyTorch's name and version")

ch.markdown(r"""
> **Same code, real PyTorch.** Every code cell of this chapter runs unchanged with `import torch`
> and prints the same (`torch.float64` where learntorch says `learntorch.float64`), except the cells
> whose first line says otherwise: `# learntorch only: ...` (the widgets) or `# on PyTorch: ...`
> (other random numbers: a seed repeats learntorch's own numbers, not PyTorch's; error messages in
> other words: learntorch's also say how to fix the mistake).

## 1 · Making tensors

`torch.tensor(data)` copies nested lists (or a numpy array) into a new tensor. Factory functions
make tensors of a given shape: filled with a constant, counting up, or random.
""")

ch.code(r"""
from_data = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
print(from_data)
print(torch.zeros(2, 3))                    # also: torch.ones, torch.full((2, 3), 7.0)
print(torch.arange(5), torch.arange(0, 1, 0.25))
print(torch.linspace(0, 1, 5))              # 5 evenly spaced numbers from 0 to 1, both ends included
print(torch.eye(3))
print(torch.randn(2, 3))                    # normal distribution, mean 0, standard deviation 1
print(torch.zeros_like(from_data).shape)    # *_like: the shape (and dtype) of another tensor
""", on_pytorch="other random numbers")

ch.markdown(r"""
Tensors and numpy arrays convert both ways. `torch.from_numpy(array)` and `tensor.numpy()` share
memory with the array: a change through one is seen by the other. `torch.tensor(array)` copies.
""")

ch.code(r"""
array = np.arange(4.0)
shared = torch.from_numpy(array)            # the same memory as `array`
copied = torch.tensor(array)                # a copy, made now
array[0] = 100.0
print("shared:", shared)
print("copied:", copied)
""")

ch.markdown(r"""
## 2 · dtype: what kind of number

Every tensor holds numbers of one **dtype**. Python floats become `float32` (the default float:
4 bytes each, plenty for training), Python ints become `int64`, and booleans `bool`. Numpy's
`float64` array above stayed `float64`. You choose with `dtype=` or convert with `.to(dtype)`
(or the short forms `.float()`, `.double()`, `.long()`).
""")

ch.code(r"""
for value in ([1.0, 2.0], [1, 2], [1, 2.5], [True, False]):
    t = torch.tensor(value)
    print(f"torch.tensor({value!s:13}) -> {t.dtype}, {t.element_size()}-byte elements")

print(torch.tensor([1.7, -1.7]).long())     # float -> int cuts towards zero
print(torch.zeros(2, dtype=torch.float64).dtype, torch.ones(2).to(torch.float16).dtype)
""")

ch.markdown(r"""
### Type promotion: what an operation on mixed dtypes gives

When an operation mixes dtypes, the result gets one dtype, by PyTorch's rules:

1. the **kind** of number decides first: bool < integer < floating point. The result is of the
   highest kind among the operands;
2. within that kind, tensors with at least one dimension decide the size (the number of bytes).
   A 0-d tensor (a single number, like `torch.tensor(2.0)`) or a Python number only matters when it
   is of a higher kind, or when no operand has a dimension;
3. a Python float meeting integers gives the default float, `float32`;
4. `/` is true division and always gives a float; `//` keeps integers.

**Predict** the dtype of each line, then run the cell:
""")

ch.code(r"""
ints = torch.tensor([1, 2, 3])                          # int64
floats = torch.tensor([1.0, 2.0, 3.0])                  # float32
doubles = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)

for code in ["ints + 1",
             "ints + 1.5",
             "ints / 2",
             "ints // 2",
             "floats + doubles",
             "floats + torch.tensor(1.0, dtype=torch.float64)",
             "ints + torch.tensor(1.0, dtype=torch.float64)",
             "torch.tensor([True, False]) + 1"]:
    print(f"{code:50s} -> {eval(code).dtype}")
""")

ch.markdown(r"""
Line 6 stays `float32`: the `float64` number is 0-d and of the same kind, so it does not upgrade the
tensor (rule 2). Line 7 gives `float64`: the 0-d tensor brings a higher kind, floating point, and with
it its size. `torch.result_type(a, b)` answers without computing, and `torch.promote_types` compares
two dtypes:
""")

ch.code(r"""
print(torch.result_type(ints, 1.5), torch.promote_types(torch.int64, torch.float16))
""")

ch.markdown(r"""
Dtypes matter for gradients too: only floating-point tensors can require grad. The error says how to
fix it:
""")

ch.code(r"""
try:
    torch.tensor([1, 2, 3], requires_grad=True)
except RuntimeError as error:
    print("RuntimeError:", error)
""", on_pytorch="the error message is worded differently (learntorch's also says how to fix it)")

ch.markdown(r"""
## 3 · Shape

A tensor's `shape` lists its size along each **dimension** (numpy says *axis*). `reshape` reads the
same numbers in the same order into another shape; one size may be `-1`, meaning "whatever is left".
`unsqueeze(d)` (or indexing with `None`) inserts a dimension of size 1; `squeeze` removes them.
""")

ch.code(r"""
t = torch.arange(12.0).reshape(3, 4)
print("shape", t.shape, "| size(1) =", t.size(1), "| dims:", t.dim(), "| elements:", t.numel())
print("reshape(2, -1):", t.reshape(2, -1).shape)
print("unsqueeze(0):  ", t.unsqueeze(0).shape, "| t[:, None]:", t[:, None].shape)
print("squeeze():     ", torch.zeros(1, 3, 1).squeeze().shape)
try:
    t.reshape(5, -1)
except RuntimeError as error:
    print("RuntimeError:", error)
""", on_pytorch="the error message is worded differently (learntorch's also says how to fix it)")

ch.markdown(r"""
## 4 · Device: where the numbers live

A tensor lives on a **device**: `cpu`, or `cuda` for an NVIDIA GPU. Factories take `device=`, and
`.to(device)` moves a tensor (a copy on the other device). All tensors of one operation must be on the
same device; mixing them is an error, not a silent copy. The usual pattern picks the GPU when there is
one, so the same notebook runs everywhere:
""")

ch.code(r"""
device = "cuda" if torch.cuda.is_available() else "cpu"
on_device = torch.ones(2, 3, device=device)
moved = torch.arange(3.0).to(device)
print("device:", (on_device + moved).device)

if torch.cuda.is_available():
    try:
        on_device + torch.ones(3)            # one operand on the GPU, one on the CPU
    except RuntimeError as error:
        print("RuntimeError:", error)
else:
    print("No GPU here: every tensor of this chapter lives on the CPU.")
""")

ch.markdown(r"""
## 5 · Storage, strides and views

Memory is one long row. A tensor is a **storage** (that row of numbers) plus three facts that say how
to read it as a grid:

- `shape`: the size along each dimension;
- `stride()`: how many storage cells one step along each dimension skips;
- `storage_offset()`: the storage cell of element `[0, 0, ...]`.

Element `[i, j]` of a 2-d tensor is stored at `storage_offset() + i * stride(0) + j * stride(1)`. For
`t` of shape `(3, 4)`, the stride is `(4, 1)`: the next row is 4 cells further, the next column 1.
""")

ch.code(r"""
t = torch.arange(12.0).reshape(3, 4)
print(t)
print("stride", t.stride(), "| storage_offset", t.storage_offset())
print("t[1, 2] =", t[1, 2].item(), "is storage cell", t.storage_offset() + 1 * t.stride(0) + 2 * t.stride(1))
""")

ch.markdown(r"""
A **view** is a new tensor on the **same storage**, with other numbers in those three facts. Nothing is
copied, so a view is made in no time whatever its size, and writing through a view changes the
original. Transposing, slicing, `expand`, `reshape` of a contiguous tensor, `view`, `unsqueeze` and
`permute` all make views.

### See it: TensorExplorer

`TensorExplorer(t)` shows a tensor and some views of it over their shared storage: pick a view from the
list, move the index sliders, and the picture shows which storage cell the selected element reads
(and which other elements read the same cell). Try `t.T`, `t[:, 1:]`, `t[::2]` and
`t[0].expand(3, 4)`.
""")

ch.code(r"""
from widgets import TensorExplorer

explorer = TensorExplorer(t)
explorer
""", learntorch_only="TensorExplorer is one of learntorch's widgets")

ch.markdown(r"""
The same explorer answers from code. Its `formula()` is the address arithmetic above, with the strides
of the selected view:
""")

ch.code(r"""
for view in ["t", "t.T", "t[:, 1:]", "t[::2]", "t[0].expand(3, 4)"]:
    explorer.select_view(view)
    explorer.select_index(1, 1)
    print(f"{view:18s} stride {str(explorer.current.stride()):8s}  {explorer.formula()}")
""", learntorch_only="TensorExplorer is one of learntorch's widgets")

ch.markdown(r"""
Read the strides:

- **`t.T`** swaps the strides to `(1, 4)`: a step along a row of `t.T` is a step down a column of
  `t`. Same storage, read in another order;
- **`t[:, 1:]`** keeps the strides and starts one cell later: `storage_offset()` is 1;
- **`t[::2]`** takes every other row: the row stride doubles to 8;
- **`t[0].expand(3, 4)`** repeats row 0 three times with a row stride of **0**: all three rows read the
  same four cells. Expanding is free, whatever the size.

`data_ptr()` is the memory address of a tensor's first element, so two views that share a storage
differ by `storage_offset() * element_size()` bytes. A write through a view lands in the shared storage:
""")

ch.code(r"""
corner = t[1:, 2:]
print("offset", corner.storage_offset(),
      "| bytes from t's first element:", corner.data_ptr() - t.data_ptr(),
      "=", corner.storage_offset(), "*", t.element_size())

m = torch.zeros(2, 3)
m.T[2, 0] = 7.0                              # writes through the transposed view ...
print(m)                                     # ... into m[0, 2]
""")

ch.markdown(r"""
### Contiguous, `view` and `reshape`

A tensor is **contiguous** when its elements, read row by row, sit one after the other in storage
(strides like `(4, 1)`). `t.T` is not. `view` never copies, so it refuses a shape that the storage
cannot give without moving numbers, and says so; `reshape` makes a view when it can and a copy when it
must; `contiguous()` copies into row-by-row order.
""")

ch.code(r"""
print("t contiguous:", t.is_contiguous(), "| t.T contiguous:", t.T.is_contiguous())
try:
    t.T.view(12)
except RuntimeError as error:
    print("RuntimeError:", error)
print("reshape copies instead:", t.T.reshape(12))
print("t.T.contiguous().stride():", t.T.contiguous().stride())
""", on_pytorch="the error message is worded differently (learntorch's also says how to fix it)")

ch.markdown(r"""
## 6 · Broadcasting

An operation on tensors of different shapes **broadcasts** them to a common shape, without copying:

1. line the shapes up from the **right**, padding the shorter one with 1s on the left;
2. in each dimension, the sizes must be equal, or one of them must be 1;
3. a size-1 dimension is stretched to the other one's size (even to 0): that size is the result's.

So `(3, 1) + (4,)`: pad to `(3, 1)` and `(1, 4)`, stretch both: `(3, 4)`. `torch.broadcast_shapes`
applies the rules to shapes alone.
""")

ch.code(r"""
column = torch.tensor([[0.0], [10.0], [20.0]])      # shape (3, 1)
row = torch.tensor([1.0, 2.0, 3.0, 4.0])            # shape (4,)
print(column + row)
print(torch.broadcast_shapes((3, 1), (4,)), torch.broadcast_shapes((2, 1, 5), (3, 1)))
""")

ch.markdown(r"""
Stretching is exactly `expand`: a stride of 0 along the stretched dimension, so the stretched operand
is never copied. When the rules fail, the error names both shapes:
""")

ch.code(r"""
print("column.expand(3, 4).stride():", column.expand(3, 4).stride(),
      "| row.expand(3, 4).stride():", row.expand(3, 4).stride())
try:
    torch.ones(3, 2) + torch.ones(4)
except RuntimeError as error:
    print("RuntimeError:", error)
""", on_pytorch="the error message is worded differently (learntorch's also says how to fix it)")

ch.markdown(r"""
### See it: the broadcasting view

`TensorExplorer.broadcast(a, b)` lines up two shapes, draws the result, and for the selected output
element shows which element of `a` and of `b` it reads. It also shows the other side of broadcasting:
an element read by four outputs receives four gradients in `backward()`, and they add up. That is why
the gradient of a broadcast operand is a sum (chapter 02 shows it in the graph).
""")

ch.code(r"""
broadcast = TensorExplorer.broadcast((3, 1), (4,))
broadcast
""", learntorch_only="TensorExplorer is one of learntorch's widgets")

ch.markdown(r"""
Broadcasting never complains when the rules allow something you did not mean. A classic bug:
predictions of shape `(4, 1)` minus targets of shape `(4,)` is not 4 differences but a `(4, 4)` table
of all 16 pairs, and a loss averaged over it is quietly wrong. Look at the shapes:
""")

ch.code(r"""
predictions = torch.randn(4, 1)
targets = torch.randn(4)
print("(predictions - targets).shape:", (predictions - targets).shape)
print("with the shapes matched:      ", (predictions.squeeze(1) - targets).shape)
""")

ch.markdown(r"""
## 7 · Indexing: views and copies

**Basic indexing** (integers, slices `a:b:step`, `None`, `...`) picks a regular pattern of elements, so
the result is a **view**: new strides and offset on the same storage.

**Advanced indexing** (a list or tensor of indices, or a boolean mask) can pick any elements in any
order, which no strides can describe: the result is a **copy**.

One exception: *assigning* to an indexed tensor, `t[mask] = 0`, always writes into `t` itself, whichever
kind of index it is.
""")

ch.code(r"""
grid = torch.arange(12.0).reshape(3, 4)

sliced = grid[0:2, 1]                       # basic: a view
picked = grid[[0, 1], 1]                    # advanced: a copy
masked = grid[grid > 8]                     # boolean mask: a copy (1-d, one entry per True)
print("sliced", sliced, "| picked", picked, "| masked", masked)

sliced[0] = -1.0                            # writes into grid[0, 1]
picked[1] = -5.0                            # writes into the copy only
print(grid)

grid[grid > 8] = 0.0                        # assignment with a mask writes into grid
print(grid)
""")

ch.markdown(r"""
Out-of-range indices are errors with the size that fits:
""")

ch.code(r"""
try:
    grid[3]
except IndexError as error:
    print("IndexError:", error)
""")

ch.markdown(r"""
## Exercises

Each exercise has a cell for your code and a check cell below it. Replace the
`raise NotImplementedError(...)` lines with your code, run the cell, then run the check: it prints
`✓ passed`, or tells you which input went wrong, what was expected and what came back.

### Exercise 01.1 · Where does an element live?

Write `storage_index(index, stride, offset)`: the storage cell that element `index` of a tensor with
strides `stride` and storage offset `offset` reads. `index` and `stride` are tuples of ints of the
same length (for a 0-d tensor both are `()`); return an `int`.

For example, `storage_index((1, 2), (4, 1), 0)` is `6`: element `[1, 2]` of `t` above.

The check uses a trick: it makes views of `base = torch.arange(24)`, whose storage holds 0, 1, 2, ...,
so the value of every element of a view *is* the storage cell it reads.
""")

ch.solution("01.1", points=2, hint=(
    "start at offset; each dimension adds its index times its stride (zip(index, stride))"), source=r"""
def storage_index(index, stride, offset):
    # the storage cell read by element `index` of a tensor with these strides and offset
    ### BEGIN SOLUTION
    position = offset
    for i, step in zip(index, stride):
        position += i * step
    return position
    ### END SOLUTION
""")

ch.check("01.1", r"""
import itertools

from course.checks import exercise, check_equal


def looks_like(got, index, stride, offset):
    # the mistake a wrong answer looks like, said in the check's name
    if offset and got == sum(i * s for i, s in zip(index, stride)):
        return " (the offset left out? element [0, 0, ...] is stored at the offset, not at 0)"
    return ""


def check_every_element(view, code):
    # the view of torch.arange(...) holds, at each index, the storage cell it reads
    stride, offset = view.stride(), view.storage_offset()
    for index in itertools.product(*(range(n) for n in view.shape)):
        got = storage_index(index, stride, offset)
        name = f"storage_index({index}, {stride}, {offset})"
        check_equal(type(got).__name__, "int", name=f"the type of what {name} returns (an int)",
                    inputs={"it returned": got})
        check_equal(got, int(view[index].item()), name=name + looks_like(got, index, stride, offset),
                    inputs={"view": code, "index": index})


with exercise("01.1"):
    check_equal(storage_index((1, 2), (4, 1), 0), 6, name="storage_index((1, 2), (4, 1), 0)")
    base = torch.arange(24).reshape(2, 3, 4)
    views = {"base": base,
             "base.transpose(0, 2)": base.transpose(0, 2),
             "base[1, :, 1:]": base[1, :, 1:],
             "base[:, ::2, ::3]": base[:, ::2, ::3],
             "base[0, 1].expand(3, 4)": base[0, 1].expand(3, 4),
             "base[1, 2, 3]  (0-d: index and stride are ())": base[1, 2, 3]}
    for code, view in views.items():
        check_every_element(view, code)
""")

ch.hidden_check("01.1", r"""
with exercise("01.1"):
    base = torch.arange(120).reshape(2, 3, 4, 5)
    views = {"base.permute(3, 1, 0, 2)[1:, :, 1]": base.permute(3, 1, 0, 2)[1:, :, 1],
             "base[0, 2, 1]": base[0, 2, 1],                      # 0-d: index () and stride ()
             "base[1][:, None, 2, 1:4:2]": base[1][:, None, 2, 1:4:2],
             "base[0, :, 1:2].expand(3, 4, 5)": base[0, :, 1:2].expand(3, 4, 5),
             "base.reshape(6, 20).T[5:]": base.reshape(6, 20).T[5:]}
    for code, view in views.items():
        check_every_element(view, code)
    check_equal(storage_index((2, 0, 3), (7, 100, 2), 11), 11 + 14 + 6,
                name="storage_index((2, 0, 3), (7, 100, 2), 11)")
""")

ch.markdown(r"""
### Exercise 01.2 · The shape of a broadcast

Write `broadcast_shape(a, b)`: the shape that broadcasting shapes `a` and `b` (tuples of ints) gives,
as a `tuple`, by the three rules of section 6. When the shapes cannot be broadcast, raise a
`RuntimeError`, as PyTorch does, whose message names the two sizes that clash and their dimension
(its number in the aligned shapes: counted from the left, or from the right as a negative number).

Write the rules yourself, in plain Python on the tuples: your function may not use `torch` or
`numpy` (no `broadcast_shapes`, no `broadcast_to`, no tensors made to be added together). The check
reads your function's code to make sure.

Careful with rule 3: a size-1 dimension takes the other size, whatever it is, so `(1,)` and `(0,)`
give `(0,)`, not the larger size `(1,)`.
""")

ch.solution("01.2", points=2, hint=(
    "pad the shorter shape with 1s on the left, then walk both shapes together: equal sizes, "
    "or a 1 that takes the other size; anything else is an error"), source=r"""
def broadcast_shape(a, b):
    # the shape of a broadcast of shapes a and b, or RuntimeError when they do not fit
    ### BEGIN SOLUTION
    ndim = max(len(a), len(b))
    a = (1,) * (ndim - len(a)) + tuple(a)
    b = (1,) * (ndim - len(b)) + tuple(b)
    result = []
    for dim, (m, n) in enumerate(zip(a, b)):
        if m == n or n == 1:
            result.append(m)
        elif m == 1:
            result.append(n)
        else:
            raise RuntimeError(f"The size of tensor a ({m}) must match the size of tensor b ({n}) "
                               f"at non-singleton dimension {dim}: shapes {a} and {b} cannot be "
                               f"broadcast")
    return tuple(result)
    ### END SOLUTION
""")

ch.check("01.2", r"""
from course.checks import exercise, check_equal, check_error_mentions, check_not_used


def outcome(a, b):
    # what broadcast_shape(a, b) did, as plain data: the shape it returned, or the error it raised
    try:
        return broadcast_shape(a, b)
    except NotImplementedError:
        raise                                   # not written yet: the stub's message says what to do
    except Exception as error:
        return f"{type(error).__name__}: {error}"


def check_pairs(pairs, note=""):
    # shapes that broadcast: the result must be torch.broadcast_shapes's, as a tuple
    for a, b in pairs:
        result, name = outcome(a, b), f"broadcast_shape({a}, {b})"
        check_equal(result, tuple(torch.broadcast_shapes(a, b)), name=name + note)
        check_equal(isinstance(result, tuple), True,
                    name=f"{name} returns a tuple (it returned a {type(result).__name__})")


def check_clash(a, b, sizes, dim):
    # shapes that do not broadcast: a RuntimeError naming the two sizes and their dimension
    ndim = max(len(a), len(b))
    check_error_mentions(broadcast_shape, (a, b), raises=RuntimeError, name=f"broadcast_shape({a}, {b})",
                         mentions={f"the size of a that clashes, {sizes[0]}": sizes[0],
                                   f"the size of b that clashes, {sizes[1]}": sizes[1],
                                   f"their dimension, {dim} (or {dim - ndim} from the right)": [dim, dim - ndim]})


with exercise("01.2"):
    check_not_used(broadcast_shape, ["torch", "np", "numpy"],
                   rule="the rules written out in plain Python on the tuples, without torch or numpy")
    check_pairs([((3, 1), (4,)), ((2, 1, 5), (3, 1)), ((), (2, 3)), ((5, 4), (5, 4))])
    check_pairs([((1,), (0,)), ((2, 1), (2, 0))],
                note=" (rule 3: a size-1 dimension takes the other size, even 0; the larger size is not the rule)")
    check_clash((3, 2), (4,), sizes=(2, 4), dim=1)
    check_clash((4, 3), (5, 3), sizes=(4, 5), dim=0)
""")

ch.hidden_check("01.2", r"""
with exercise("01.2"):
    check_pairs([((1, 0), (0,)), ((8, 1, 6, 1), (7, 1, 5)), ((1, 1), ()), ((4, 1), (1, 4)),
                 ((3,), (1, 1, 3)), ((6, 1, 4), (6, 5, 1))])
    check_clash((6, 7, 8), (9, 8), sizes=(7, 9), dim=1)
    check_clash((2, 1), (8, 4, 3), sizes=(2, 4), dim=1)
    check_clash((2,), (0,), sizes=(2, 0), dim=0)
    check_pairs([((0, 3), (1, 1, 3)), ((2, 1, 1, 4), (3, 1))])
""")

ch.markdown(r"""
## What's next

You can now read a tensor the way the engine does: a storage, a shape, strides and an offset; views
that share memory and copies that do not; shapes that broadcast and shapes that clash. Next,
[**02 · Autograd**](02_autograd.ipynb): how operations on tensors are recorded into a graph, and how `backward()` walks it to
compute gradients, including the sums that broadcasting leaves behind.
""")

if __name__ == "__main__":
    sys.exit(ch.main())
