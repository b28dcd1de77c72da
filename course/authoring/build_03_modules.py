"""Write course/solutions/03_modules.ipynb, the instructor source of chapter 03 (modules).

    python course/authoring/build_03_modules.py

Edit this file, not the notebook: the notebook is rebuilt from it (``--check``: is it up to date?).
"""
import sys

from notebook_builder import Chapter

ch = Chapter("03", "modules")

ch.markdown(r"""
# 03 · Modules: packaging parameters with the computation that uses them

In the autograd chapter, weights were loose tensors with `requires_grad=True` that you passed around
by hand. Real models have dozens of them. `nn.Module` keeps them together with the code that uses
them, and from that one idea come parameter lists for optimizers, saving and loading, and switching
between training and evaluation.

**After this chapter you can**

- say what makes a tensor an `nn.Parameter`, and how a module finds its parameters (it registers
  whatever you assign to it);
- predict the names and order that `named_parameters()` gives, like `body.0.weight`;
- build a Linear layer from scratch, with PyTorch's default initialisation, and an MLP out of modules;
- save and restore a model's weights with `state_dict()` / `load_state_dict()`;
- switch a model between `train()` and `eval()` and say what changes (Dropout);
- read a model's printed tree, and see its graph grouped by module.
""")

ch.code(r"""
import math

import learntorch as torch          # the same code runs on PyTorch: write `import torch` instead
from learntorch import nn
import learntorch.nn.functional as F

torch.manual_seed(0)                # every random number below is repeatable
print("running on", torch.__name__, torch.__version__)
""", on_pytorch="it prints PyTorch's name and version")

ch.markdown(r"""
> **Same code, real PyTorch.** Every code cell of this chapter runs unchanged with `import torch`,
> `from torch import nn` and `import torch.nn.functional as F`, and prints the same, except the cells
> whose first line says otherwise: `# learntorch only: ...` (the widgets, which draw learntorch's own
> graph, and the digits, which ship with learntorch as learntorch tensors) or `# on PyTorch: ...`
> (other random numbers: the same seed gives PyTorch's own initial weights).

## 1 · A Parameter is a tensor that says "train me"

`nn.Parameter` is a `Tensor` subclass. It behaves like any other tensor in arithmetic; the two
differences are that it requires grad by default, and that a module registers it when you assign it
as an attribute.
""")

ch.code(r"""
w = nn.Parameter(torch.randn(3, 2))
print(type(w).__name__, "| a Tensor:", isinstance(w, torch.Tensor),
      "| requires_grad:", w.requires_grad, "| leaf:", w.is_leaf)
w
""", on_pytorch="other random numbers")

ch.markdown(r"""
## 2 · A Module registers what you assign to it

Subclass `nn.Module`, call `super().__init__()` first, assign parameters and sub-modules as
attributes, and write `forward`. `Module.__setattr__` sorts every assignment: a `Parameter` goes into
the module's parameter registry, a `Module` into its children, anything else stays a plain attribute.
""")

ch.code(r"""
class Affine(nn.Module):
    # y = scale * x + shift, elementwise: the smallest useful module

    def __init__(self, size):
        super().__init__()                     # creates the registries: always call it first
        self.scale = nn.Parameter(torch.ones(size))
        self.shift = nn.Parameter(torch.zeros(size))
        self.size = size                       # a plain int: just an attribute

    def forward(self, x):
        return self.scale * x + self.shift


affine = Affine(3)
for name, p in affine.named_parameters():
    print(f"{name:6s} shape {tuple(p.shape)}")
affine(torch.tensor([1.0, 2.0, 3.0]))          # call the module, not .forward: hooks run too
""")

ch.markdown(r"""
Modules nest. **Predict before you run the next cell:** in what order, and under which names, will
`TwoStep`'s five parameters come out?
""")

ch.code(r"""
class TwoStep(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = Affine(3)
        self.gain = nn.Parameter(torch.tensor(2.0))
        self.second = Affine(3)

    def forward(self, x):
        return self.second(self.gain * self.first(x))


two = TwoStep()
[name for name, _ in two.named_parameters()]
""")

ch.markdown(r"""
A module lists **its own** parameters first (in assignment order), then walks its children in
assignment order, prefixing their names with the attribute name and a dot. These names are the
addresses of the parameters: `two.get_parameter("first.scale") is two.first.scale`.

Registration only sees what you assign directly. A plain Python list hides the modules inside it,
and an optimizer given `model.parameters()` would then silently train nothing. `nn.ModuleList` (and
`nn.Sequential`, `nn.ModuleDict`) are lists and dicts that register what they hold:
""")

ch.code(r"""
class Forgetful(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = [Affine(3), Affine(3)]                  # a list: Module never looks inside


class Remembers(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Affine(3), Affine(3)])   # registered, named layers.0, layers.1


print("Forgetful:", [name for name, _ in Forgetful().named_parameters()])
print("Remembers:", [name for name, _ in Remembers().named_parameters()])
""")

ch.markdown(r"""
## 3 · Linear, the workhorse

`nn.Linear(in_features, out_features)` computes $y = x W^\top + b$. Its weight has shape
`(out_features, in_features)`: one row per output unit, so row $j$ holds the weights that output
$j$ gives to each input. That is why the formula has `W.T`.
""")

ch.code(r"""
layer = nn.Linear(4, 3)
x = torch.randn(2, 4)                          # a batch of 2 inputs with 4 features each
by_hand = x @ layer.weight.T + layer.bias
print("weight", tuple(layer.weight.shape), "bias", tuple(layer.bias.shape))
print("layer(x) equals x @ W.T + b:", torch.allclose(layer(x), by_hand))
""")

ch.markdown(r"""
**Initialisation.** PyTorch fills both `weight` and `bias` with numbers drawn uniformly from
$[-1/\sqrt{\text{in\_features}},\ 1/\sqrt{\text{in\_features}}]$. Each output adds up `in_features`
products; shrinking the range as $1/\sqrt{\text{in}}$ keeps the size of the outputs the same however
many inputs a layer has (for inputs of standard deviation 1, outputs of about $1/\sqrt{3} \approx 0.58$,
a little more in a tiny layer, where the bias adds its share),
so a deep stack of layers neither explodes nor fades away at the start of training:
""")

ch.code(r"""
for fan_in in (4, 64, 1024):
    wide = nn.Linear(fan_in, 256)
    bound = 1 / math.sqrt(fan_in)
    out = wide(torch.randn(512, fan_in))
    print(f"in_features={fan_in:5d}  bound={bound:.4f}  largest |w|={wide.weight.abs().max().item():.4f}"
          f"  output std={out.std().item():.3f}")
""", on_pytorch="other random numbers")

ch.markdown(r"""
## 4 · Models out of modules, and the printed tree

Bigger models are modules that hold modules. `nn.Sequential` runs its children one after the other
and names them `0`, `1`, `2`, ...; a class of your own gives them meaningful names. Printing a module
shows the tree: one line per child, `(name): Type(settings)`, nested children indented.
""")

ch.code(r"""
class DigitClassifier(nn.Module):
    # 8x8 digit images -> 10 class scores

    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()                             # (N, 1, 8, 8) -> (N, 64)
        self.body = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Dropout(p=0.2))
        self.head = nn.Linear(32, 10)

    def forward(self, images):
        return self.head(self.body(self.flatten(images)))


model = DigitClassifier()
print(model)
print("parameters:", sum(p.numel() for p in model.parameters()))
""")

ch.markdown(r"""
$64 \cdot 32 + 32 + 32 \cdot 10 + 10 = 2410$ numbers to train; `ReLU`, `Dropout` and `Flatten` have
none. Run the model on a batch of 16 real digits (the data chapter shows how to load data properly),
compute a loss, and call `backward()`: every registered parameter receives a gradient, because each
one is a leaf of the recorded graph.
""")

ch.code(r"""
from learntorch.datasets import load_digits

images, labels = load_digits()                 # (1797, 1, 8, 8) floats in [0, 1], (1797,) ints
xb, yb = images[:16], labels[:16]

loss = F.cross_entropy(model(xb), yb)
loss.backward()
for name, p in model.named_parameters():
    print(f"{name:14s} shape {str(tuple(p.shape)):9s} grad norm {p.grad.norm().item():.4f}")
""", learntorch_only="load_digits ships with learntorch and gives learntorch tensors, which PyTorch's modules do not take (on PyTorch: torchvision.datasets, see the data chapter)")

ch.markdown(r"""
### See it: the graph, grouped by module

`show_graph` draws the graph that autograd recorded behind `loss`, left to right as the forward pass
ran. Passing `params=dict(model.named_parameters())` labels each parameter with its name: the
names you just printed. The first picture shows every operation; the second (`model=model,
collapse_modules=True`) draws one box per module that owns parameters, named after it: this is how
you read the graph of a big model.
""")

ch.code(r"""
from widgets import show_graph

show_graph(loss, params=dict(model.named_parameters()))
""", learntorch_only="show_graph is one of learntorch's widgets")

ch.code(r"""
show_graph(loss, model=model, collapse_modules=True)
""", learntorch_only="show_graph is one of learntorch's widgets")

ch.markdown(r"""
Two things to spot: the `Mul` between `Relu` and the head's `Linear` is Dropout at work (in training
mode it multiplies by a random mask of zeros and $1/(1-p)$), and `Flatten` left no trace, because the
images do not require grad, so autograd had nothing to record for them.
""")

ch.markdown(r"""
## 5 · `state_dict`: a model's weights as a dictionary

`state_dict()` maps each parameter's name to its tensor, detached: the same numbers without the
autograd history. They share memory with the parameters, so they change when training goes on;
`copy.deepcopy(model.state_dict())` keeps a snapshot. It also holds **buffers**: state that is saved with the model but not trained, such as the
running mean of a BatchNorm layer. Saving a model means saving this dictionary; loading means
copying the tensors into a model of the same architecture, key by key.
""")

ch.code(r"""
state = model.state_dict()
for key, value in state.items():
    print(f"{key:14s} {tuple(value.shape)}")

print("\nBatchNorm1d(4) has parameters", [n for n, _ in nn.BatchNorm1d(4).named_parameters()],
      "\n  and a state_dict with", list(nn.BatchNorm1d(4).state_dict()))
""")

ch.code(r"""
import io

file = io.BytesIO()                            # a file in memory; a path like "digits.pt" works too
torch.save(model.state_dict(), file)

model.eval()                                   # no dropout, so that the outputs can be compared (section 6)
fresh = DigitClassifier().eval()               # new random weights
probe = torch.rand(16, 1, 8, 8)                # 16 made-up images: any input shows whether two models agree
print("before loading, same outputs:", torch.allclose(fresh(probe), model(probe)))
file.seek(0)
print(fresh.load_state_dict(torch.load(file)))
print("after loading,  same outputs:", torch.allclose(fresh(probe), model(probe)))
""")

ch.markdown(r"""
`torch.save` in learntorch writes tensors and plain containers only and `torch.load` never runs
code from a file (PyTorch's `torch.load` does the same since version 2.6, with `weights_only=True`).

Loading checks every key and every shape, and says exactly what does not fit:
""")

ch.code(r"""
narrow = nn.Linear(64, 16)
try:
    narrow.load_state_dict(nn.Linear(64, 32).state_dict())
except RuntimeError as error:
    print(error)
""")

ch.markdown(r"""
## 6 · `train()` and `eval()`

Some layers behave differently while training. `nn.Dropout(p)` zeroes each element with probability
`p` and multiplies the survivors by $1/(1-p)$, so the expected value of every element stays the same;
in evaluation mode it passes its input through untouched.
""")

ch.code(r"""
drop = nn.Dropout(p=0.5)
ones = torch.ones(10)
print("training:  ", drop.training, drop(ones))
drop.eval()
print("evaluation:", drop.training, drop(ones))
""", on_pytorch="other random numbers")

ch.markdown(r"""
`model.train()` and `model.eval()` set the `training` flag of the module **and every module inside
it**. So a model in training mode gives a different answer each time; in evaluation mode it is a
plain function of its input:
""")

ch.code(r"""
model.train()
print("train mode, two calls agree:", torch.allclose(model(probe), model(probe)))
model.eval()
print("eval mode,  two calls agree:", torch.allclose(model(probe), model(probe)))
print([(name or "(model)", m.training) for name, m in model.named_modules()])
""")

ch.markdown(r"""
`eval()` does not stop autograd from recording: for inference, also wrap the forward pass in
`with torch.no_grad():` so no graph is built.
""")

ch.code(r"""
with torch.no_grad():
    scores = model(probe)
print(scores.requires_grad, scores.grad_fn)
""")

ch.markdown(r"""
## Exercises

Each exercise has a cell for your code and a check cell below it. Replace the
`raise NotImplementedError(...)` lines with your code, run the cell, then run the check: it prints
`✓ passed`, or tells you which input went wrong, what was expected and what came back.

### Exercise 03.1 · Linear from scratch

Write `MyLinear(in_features, out_features, bias=True)`, a module that does what `nn.Linear` does,
built from `nn.Parameter`s (not from `nn.Linear`):

- a parameter `weight` of shape `(out_features, in_features)`, then a parameter `bias` of shape
  `(out_features,)`, registered in that order so the names match `nn.Linear`'s;
  with `bias=False` there is no bias: `self.register_parameter("bias", None)`, so that `self.bias`
  is `None` and `named_parameters()` lists the weight only;
- both filled uniformly from $[-1/\sqrt{\text{in\_features}},\ 1/\sqrt{\text{in\_features}}]$, with
  `torch`'s own random numbers (e.g. `Tensor.uniform_(low, high)`), so `torch.manual_seed` repeats
  them (numpy's or Python's random numbers would not follow the seed);
- `forward(x)` returns `x @ weight.T + bias` (no bias with `bias=False`) for `x` of shape
  `(..., in_features)`: a batch of vectors, or a batch of sequences of them.

The check builds your layer with and without bias, loads `nn.Linear`'s weights into it and compares
outputs and gradients, and looks at its parameters' names, shapes, values and sub-modules.
""")

ch.solution("03.1", points=3, hint=(
    "weight has shape (out_features, in_features); fill it with Tensor.uniform_(-bound, bound), "
    "bound = 1 / math.sqrt(in_features); forward is the formula of section 3"), source=r"""
class MyLinear(nn.Module):
    # y = x @ weight.T + bias, with nn.Linear's parameters and initialisation

    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        ### BEGIN SOLUTION
        bound = 1 / math.sqrt(in_features)
        self.weight = nn.Parameter(torch.empty(out_features, in_features).uniform_(-bound, bound))
        if bias:
            self.bias = nn.Parameter(torch.empty(out_features).uniform_(-bound, bound))
        else:
            self.register_parameter("bias", None)
        ### END SOLUTION

    def forward(self, x):
        ### BEGIN SOLUTION
        out = x @ self.weight.T
        if self.bias is not None:
            out = out + self.bias
        return out
        ### END SOLUTION
""")

ch.check("03.1", r"""
from course.checks import exercise, check_close, check_equal

with exercise("03.1"):
    torch.manual_seed(0)
    mine = MyLinear(4, 3)
    # built from nn.Parameter: no nn.Linear in it, nor under it
    check_equal(isinstance(mine, nn.Linear), False, name="MyLinear is an nn.Linear (build it from nn.Parameter)")
    check_equal([name for name, _ in mine.named_children()], [],
                name="MyLinear(4, 3)'s sub-modules (build it from nn.Parameter, not from nn.Linear)")
    check_equal([(name, tuple(p.shape)) for name, p in mine.named_parameters()],
                [("weight", (3, 4)), ("bias", (3,))], name="MyLinear(4, 3): named parameters")
    check_equal([p.dtype for p in mine.parameters()], [torch.float32] * 2,
                name="MyLinear(4, 3): dtypes of the parameters (float32, as nn.Linear's)")

    # the same numbers in both layers: outputs and gradients must then agree
    reference = nn.Linear(4, 3)
    mine.load_state_dict(reference.state_dict())
    x = torch.randn(5, 4, requires_grad=True)
    x_ref = x.detach().clone().requires_grad_(True)
    out, out_ref = mine(x), reference(x_ref)
    check_close(out, out_ref, name="MyLinear(4, 3)(x), with nn.Linear's weights", inputs={"x": x})
    (out * out).sum().backward()
    (out_ref * out_ref).sum().backward()
    check_close(mine.weight.grad, reference.weight.grad, name="weight.grad after (y * y).sum().backward()")
    check_close(mine.bias.grad, reference.bias.grad, name="bias.grad after (y * y).sum().backward()")
    check_close(x.grad, x_ref.grad, name="x.grad after (y * y).sum().backward()")

    # initialisation: uniform on [-1/sqrt(400), 1/sqrt(400)] = [-0.05, 0.05]
    wide = MyLinear(400, 300)
    for name in ("weight", "bias"):
        values = getattr(wide, name).detach()
        check_equal(bool(values.abs().max() <= 0.05), True,
                    name=f"MyLinear(400, 300).{name}: every value within the bound 1/sqrt(400) = 0.05",
                    inputs={f"largest |{name}|": values.abs().max()})
        check_equal(bool(values.abs().max() > 0.045), True,
                    name=f"MyLinear(400, 300).{name}: values spread up to the bound 0.05 (uniform)",
                    inputs={f"largest |{name}|": values.abs().max()})
    spread = wide.weight.detach().std().item()
    check_close(spread, 0.05 / math.sqrt(3), rtol=0.05,
                name="MyLinear(400, 300).weight.std(): a uniform distribution on [-0.05, 0.05] has std 0.05/sqrt(3)")

    # torch's random numbers: the seed repeats them
    torch.manual_seed(1)
    first = MyLinear(5, 2)
    torch.manual_seed(1)
    again = MyLinear(5, 2)
    check_close(again.weight, first.weight,
                name="MyLinear(5, 2).weight twice after torch.manual_seed(1) (draw it with torch's random numbers)")

    # bias=False: no bias at all
    no_bias = MyLinear(4, 3, bias=False)
    check_equal([name for name, _ in no_bias.named_parameters()], ["weight"],
                name="MyLinear(4, 3, bias=False): named parameters")
    check_equal(no_bias.bias, None, name="MyLinear(4, 3, bias=False).bias")
    reference = nn.Linear(4, 3, bias=False)
    no_bias.load_state_dict(reference.state_dict())
    x = torch.randn(6, 4)
    check_close(no_bias(x), reference(x), name="MyLinear(4, 3, bias=False)(x)", inputs={"x": x})

    # a batch of sequences: (2, 5, 4) -> (2, 5, 3), as nn.Linear
    reference = nn.Linear(4, 3)
    mine.load_state_dict(reference.state_dict())
    x = torch.randn(2, 5, 4)
    check_close(mine(x), reference(x), name="MyLinear(4, 3)(x) for x of shape (2, 5, 4)", inputs={"x": x})
""")

ch.hidden_check("03.1", r"""
with exercise("03.1"):
    for n_in, n_out in [(1, 1), (7, 2)]:
        mine, reference = MyLinear(n_in, n_out), nn.Linear(n_in, n_out)
        mine.load_state_dict(reference.state_dict())
        x = torch.randn(3, 2, 4, n_in)
        check_close(mine(x), reference(x), name=f"MyLinear({n_in}, {n_out})(x) for x of shape {tuple(x.shape)}",
                    inputs={"x": x})
    no_bias, reference = MyLinear(3, 5, bias=False), nn.Linear(3, 5, bias=False)
    no_bias.load_state_dict(reference.state_dict())
    x = torch.randn(4, 3, requires_grad=True)
    no_bias(x).sum().backward()
    check_equal([name for name, p in no_bias.named_parameters() if p.grad is None], [],
                name="parameters of MyLinear(3, 5, bias=False) without a gradient after backward()")
""")

ch.markdown(r"""
### Exercise 03.2 · An MLP made of modules

Write `MLP(sizes)`, a multi-layer perceptron: `sizes = [64, 32, 10]` means
`Linear(64, 32) → ReLU → Linear(32, 10)`. In general there is an `nn.Linear(sizes[i], sizes[i + 1])`
for each pair of neighbouring sizes, and an `nn.ReLU()` after every Linear except the last.

- Keep the layers in an `nn.Sequential` assigned to `self.net`, so that the `state_dict` keys are
  `net.0.weight`, `net.0.bias`, `net.2.weight`, `net.2.bias`, ... (a ReLU has no parameters but
  takes a place in the numbering).
- `forward(x)` first flattens everything after the batch dimension (`x.flatten(1)`), so that a batch
  of digit images `(N, 1, 8, 8)` goes straight in, and returns scores of shape `(N, sizes[-1])`.

Use `nn.Linear` and `nn.ReLU` here (this exercise does not depend on your `MyLinear`). The check
reads the layers in `self.net` and compares your MLP with the same layers written out by hand, for
one, two and three Linears.
""")

ch.solution("03.2", points=3, hint=(
    "build a Python list of layers, then self.net = nn.Sequential(*layers); "
    "no ReLU after the last Linear"), source=r"""
class MLP(nn.Module):
    # Linear -> ReLU -> Linear -> ... -> Linear, through the sizes given

    def __init__(self, sizes):
        super().__init__()
        ### BEGIN SOLUTION
        layers = []
        for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
            layers.append(nn.Linear(n_in, n_out))
            if i < len(sizes) - 2:
                layers.append(nn.ReLU())
        self.net = nn.Sequential(*layers)
        ### END SOLUTION

    def forward(self, x):
        ### BEGIN SOLUTION
        return self.net(x.flatten(1))
        ### END SOLUTION
""")

ch.check("03.2", r"""
from course.checks import exercise, check_close, check_equal, check_shape


def mlp_by_hand(state, x, n_linear):
    # the MLP written out with F.linear and F.relu, reading the weights from its state_dict
    h = x.flatten(1)
    for i in range(n_linear):
        h = F.linear(h, state[f"net.{2 * i}.weight"], state[f"net.{2 * i}.bias"])
        if i < n_linear - 1:
            h = F.relu(h)
    return h


with exercise("03.2"):
    torch.manual_seed(0)
    mlp = MLP([64, 32, 10])
    state = mlp.state_dict()
    check_equal([(key, tuple(value.shape)) for key, value in state.items()],
                [("net.0.weight", (32, 64)), ("net.0.bias", (32,)),
                 ("net.2.weight", (10, 32)), ("net.2.bias", (10,))],
                name="MLP([64, 32, 10]).state_dict(): keys and shapes")
    check_equal(sum(p.numel() for p in mlp.parameters()), 2410,
                name="MLP([64, 32, 10]): number of parameters")

    x = torch.randn(5, 64)
    check_shape(mlp(x), (5, 10), name="MLP([64, 32, 10])(x)", inputs={"x": x})
    scores = mlp(x)
    hint = " (no score is negative: a ReLU after the last Linear?)" if bool((scores >= 0).all()) else ""
    check_close(scores, mlp_by_hand(state, x, 2), name=f"MLP([64, 32, 10])(x) against Linear -> ReLU -> Linear{hint}",
                inputs={"x": x})
    digits = torch.rand(3, 1, 8, 8)
    check_close(mlp(digits), mlp_by_hand(state, digits, 2), name="MLP([64, 32, 10]) on images of shape (3, 1, 8, 8)",
                inputs={"images": digits})

    deep = MLP([8, 16, 16, 3])
    check_equal(isinstance(deep.net, nn.Sequential), True, name="MLP([8, 16, 16, 3]).net is an nn.Sequential")
    check_equal([type(layer).__name__ for layer in deep.net], ["Linear", "ReLU", "Linear", "ReLU", "Linear"],
                name="the layers of MLP([8, 16, 16, 3]).net (a ReLU after every Linear except the last)")
    x = torch.randn(7, 8)
    check_close(deep(x), mlp_by_hand(deep.state_dict(), x, 3), name="MLP([8, 16, 16, 3])(x)", inputs={"x": x})
    single = MLP([4, 2])
    check_equal([type(layer).__name__ for layer in single.net], ["Linear"],
                name="the layers of MLP([4, 2]).net (one Linear, no ReLU after it)")
""")

ch.hidden_check("03.2", r"""
with exercise("03.2"):
    deep = MLP([8, 16, 16, 3])
    state = deep.state_dict()
    check_equal(list(state), ["net.0.weight", "net.0.bias", "net.2.weight", "net.2.bias",
                              "net.4.weight", "net.4.bias"], name="MLP([8, 16, 16, 3]).state_dict() keys")
    five = MLP([5, 3, 3, 3, 2])
    x = torch.randn(2, 5, 1)
    check_close(five(x), mlp_by_hand(five.state_dict(), x, 4), name="MLP([5, 3, 3, 3, 2])(x), x of shape (2, 5, 1)",
                inputs={"x": x})

    # one layer only: no ReLU at all, so negative scores survive
    single = MLP([4, 2])
    check_equal(list(single.state_dict()), ["net.0.weight", "net.0.bias"], name="MLP([4, 2]).state_dict() keys")
    x = torch.randn(9, 4)
    check_close(single(x), mlp_by_hand(single.state_dict(), x, 1), name="MLP([4, 2])(x): no ReLU after the last Linear",
                inputs={"x": x})

    deep(torch.randn(4, 8)).sum().backward()
    check_equal([name for name, p in deep.named_parameters() if p.grad is None], [],
                name="parameters of MLP([8, 16, 16, 3]) without a gradient after backward()")
""")

ch.markdown(r"""
## What's next

You can now package parameters into modules, save them and switch their mode. Next,
[**04 · Losses and optimizers**](04_losses_optimizers.ipynb): a loss says how wrong a model is, and an
optimizer takes `model.parameters()` and updates them from their gradients. Then the data chapter
feeds a model batches of digits with `Dataset` and `DataLoader`: together they make a training loop.
""")

if __name__ == "__main__":
    sys.exit(ch.main())
