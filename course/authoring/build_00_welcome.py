"""Write course/solutions/00_welcome.ipynb, the instructor source of chapter 00 (welcome).

    python course/authoring/build_00_welcome.py

Edit this file, not the notebook: the notebook is rebuilt from it (``--check``: is it up to date?).

This chapter is the course's first impression (often on Binder, on a cold machine): it stays
short and runs in a few seconds. PyTorch is optional here, as everywhere in the course.
"""
import sys

from notebook_builder import Chapter

ch = Chapter("00", "welcome")

ch.markdown(r"""
# 00 · Welcome: how this course works

This course teaches how PyTorch works from the inside. You will use **learntorch**, a small tensor and
autograd engine whose API *is* PyTorch's: the same names, the same arguments, the same behaviour, in
code short enough to read. Widgets show what the engine does as your code runs, and exercises with
instant feedback let you rebuild the important pieces yourself.

**After this chapter you can**

- run a chapter and read what a widget shows;
- make a first tensor, see the graph that autograd records, and read a gradient from `.grad`;
- do an exercise: find your cell, run its check, and read the feedback;
- move your code to real PyTorch by changing one line.
""")

ch.markdown(r"""
## 1 · How a chapter works

A chapter is a Jupyter notebook read from top to bottom. Run the cells in order with
**Shift+Enter**; if something looks odd, *Kernel → Restart Kernel and Run All Cells* starts again from
a clean slate. Every chapter seeds its random numbers, so you see the same numbers every time you run it.

The first code cell of every chapter imports the engine under PyTorch's name:
""")

ch.code(r"""
import learntorch as torch          # the same code runs on PyTorch: write `import torch` instead

torch.manual_seed(0)                # every random number below is repeatable
print("running on", torch.__name__, torch.__version__)
""", on_pytorch="it prints PyTorch's name and version")

ch.markdown(r"""
## 2 · A first tensor, its graph and its gradient

A **tensor** is a grid of numbers. Ask for `requires_grad=True` and autograd records every operation
done with it, so that it can later work out derivatives. Take $y = x^2 + 2x$ at $x = 3$:
""")

ch.code(r"""
x = torch.tensor(3.0, requires_grad=True)
y = x ** 2 + 2 * x
print("y =", y)
print("y was made by", y.grad_fn.name())  # the last operation autograd recorded
""")

ch.markdown(r"""
### See it: the recorded graph

`show_graph` draws what autograd recorded behind `y`, left to right in the order the code ran: a
record for each named tensor with its value (`data`) and, for the input `x`, its gradient (`grad`,
`None` until `backward()` runs), and a grey box for each operation. The `params` dict gives the tensors
their names in the picture. Spot the `Mul` that `2 * x` recorded, and `AccumulateGrad`: the step that
will store a gradient into `x.grad`.

Widgets come from the `widgets` package that ships with the course (they are not part of PyTorch).
In JupyterLab they are live; a saved or exported notebook keeps a picture of them.
""")

ch.code(r"""
from widgets import show_graph

show_graph(y, params={"x": x, "y": y})
""", learntorch_only="show_graph draws learntorch's recorded graph (a widget)")

ch.markdown(r"""
`y.backward()` walks that graph backwards, from `y` to `x`, applying the chain rule at each operation,
and stores $\frac{dy}{dx}$ in `x.grad`. By hand: $\frac{dy}{dx} = 2x + 2 = 8$ at $x = 3$.
**Predict** what `x.grad` will be, then run:
""")

ch.code(r"""
y.backward()
print("x.grad =", x.grad)
""")

ch.markdown(r"""
Draw the graph again: the record of `x` now holds its gradient.
""")

ch.code(r"""
show_graph(y, params={"x": x, "y": y})
""", learntorch_only="show_graph draws learntorch's recorded graph (a widget)")

ch.markdown(r"""
Chapter 02 takes this apart: how the graph is recorded, and how `backward()` runs through it, one node
at a time.

## 3 · learntorch and PyTorch, side by side

Everything you write with `import learntorch as torch` is PyTorch code: change that one line to
`import torch` and a cell runs on PyTorch and prints the same. A few cells cannot, and say so on their
first line: `# learntorch only: ...` (a widget, say), or `# on PyTorch: ...` when PyTorch prints
something else there (its own name and version, other random numbers). The function below takes the
library as an argument and runs the same lines with it. If PyTorch is installed, the cell runs them on
both and compares; if it is not, the cell says so and goes on: **this course never needs PyTorch**.
""")

ch.code(r"""
def first_gradient(library):
    # the same four lines, whichever library runs them
    x = library.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x ** 2 + 2 * x).sum()
    y.backward()
    return x.grad.tolist()


print(f"{torch.__name__}:", first_gradient(torch))
try:
    import torch as pytorch           # real PyTorch, only if it happens to be installed
except ImportError:
    print("PyTorch is not installed here, and nothing in this course needs it.")
else:
    print("PyTorch:   ", first_gradient(pytorch))
    print("same gradients:", first_gradient(pytorch) == first_gradient(torch))
""")

ch.markdown(r"""
The one thing that differs is **random numbers**: `manual_seed(0)` makes learntorch repeat its own
numbers run after run, but they are not the numbers PyTorch draws with the same seed.

## 4 · How exercises work

Each exercise is two cells:

1. **your cell**, with a function to complete. In your copy of the chapter its body is a line
   `raise NotImplementedError("exercise 00.1: ...")`; the message ends with a hint. Replace that line
   with your code and run the cell;
2. **a check cell** below it, locked, which calls your function on a few inputs. Run it after your
   cell. It prints `✓ 00.1 passed`, or stops with a message that names the input, what was expected
   and what came back.

Here is what both look like, on a made-up exercise 00.0 (not graded). A function not written yet
raises, and its message tells you what to do:
""")

ch.code(r"""
def double(x):
    # YOUR CODE HERE (exercise 00.0)
    raise NotImplementedError("exercise 00.0: return x times 2")


try:
    double(21)
except NotImplementedError as error:
    print("NotImplementedError:", error)
""")

ch.markdown(r"""
And this is the feedback of a check that finds a wrong answer (here, a `double` that adds 2 instead
of multiplying by 2). The check cells use the helpers of `course.checks`; you never need to edit them.
""")

ch.code(r"""
from course.checks import ExerciseCheckFailed, check_function


def double(x):
    return x + 2                      # a bug: right for x = 2, wrong for everything else


try:
    check_function(double, [(2, 4), (21, 42)], exercise="00.0")
except ExerciseCheckFailed as failure:
    print(failure)
""")

ch.markdown(r"""
The first input, 2, happened to give the right answer; the second did not, and the message says which
input it was. When you hand in a chapter, your instructor's grading runs the same checks and a few
more inputs, so make your function right for every input, not only for the ones shown.

## Exercises

Each exercise has a cell for your code and a check cell below it. Replace the
`raise NotImplementedError(...)` lines with your code, run the cell, then run the check: it prints
`✓ passed`, or tells you which input went wrong, what was expected and what came back.

### Exercise 00.1 · A derivative by hand

Here is a function:
""")

ch.code(r"""
def f(x):
    return x ** 3 - 4 * x + 1
""")

ch.markdown(r"""
Work out its derivative $f'(x)$ on paper, then write `df_dx(x)`: given a number `x`, it returns
$f'(x)$ as a number (an `int` or a `float`, not a tensor). Use plain arithmetic on `x`: not autograd
(no `backward`, `grad` or `requires_grad`), and not `f` itself. The check reads your function's
code and watches what it calls to make sure, then computes autograd's answer (`f(x).backward()`,
then `x.grad`) and compares the two.
""")

ch.solution("00.1", points=1, hint=(
    "differentiate term by term with the power rule (x**n becomes n * x**(n - 1)); "
    "a constant term disappears"), source=r"""
def df_dx(x):
    # f(x) = x**3 - 4*x + 1, differentiated by hand
    ### BEGIN SOLUTION
    return 3 * x ** 2 - 4
    ### END SOLUTION
""")

ch.check("00.1", r"""
from course.checks import exercise, check_close, check_equal, check_not_called, check_not_used

RULE = "the derivative worked out by hand, in plain arithmetic on x: not autograd, and not f itself"
AUTOGRAD = ["backward", "grad", "autograd", "requires_grad", "requires_grad_"]

with exercise("00.1"):
    check_not_used(df_dx, AUTOGRAD + ["f"], rule=RULE)
    for value in (2.0, -1.0, 0.0):
        x = torch.tensor(value, requires_grad=True)
        f(x).backward()                             # autograd's answer: x.grad
        answer = check_not_called(df_dx, value, ["torch.Tensor.backward", "torch.autograd.grad"],
                                  rule=RULE)
        check_equal(isinstance(answer, (int, float)), True,
                    name=f"df_dx({value}) returns a number (an int or a float, not a tensor)",
                    inputs={"it returned": answer})
        check_close(answer, x.grad.item(), name=f"df_dx({value})",
                    inputs={"x": value, "autograd's x.grad": x.grad})
""")

ch.hidden_check("00.1", r"""
with exercise("00.1"):
    for value in (0.5, -3.25, 10.0, 3):
        check_equal(isinstance(df_dx(value), (int, float)), True, name=f"df_dx({value!r}) returns a number")
        x = torch.tensor(float(value), dtype=torch.float64, requires_grad=True)
        f(x).backward()
        check_close(df_dx(value), x.grad.item(), name=f"df_dx({value!r})", inputs={"x": value})
""")

ch.markdown(r"""
## What's next

You have met a tensor, its recorded graph and its gradient, and you know how exercises give feedback.
Next, [**01 · Tensors**](01_tensors.ipynb): how a tensor is laid out in memory, what its dtype, shape and strides mean, and
why broadcasting and indexing behave as they do.
""")

if __name__ == "__main__":
    sys.exit(ch.main())
