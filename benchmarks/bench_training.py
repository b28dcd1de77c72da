"""Training steps: an MLP and a small CNN, forward + backward + optimizer step + zero_grad.

What a learner waits for in a training loop.  One call is one whole step on a
fixed random batch: ``loss = F.cross_entropy(model(x), y); loss.backward();
opt.step(); opt.zero_grad()``, with SGD (momentum 0.9).  learntorch and PyTorch
run the very same code (the model is built by one function taking the library
as ``torch``); numpy's column, for the MLP, is the same step written by hand
(forward, the backward formulas, momentum SGD): the arithmetic without any
autograd bookkeeping.  The metric is milliseconds per step.

The last cases start a fresh Python process that builds the MLP and takes *one*
step, with a cold and a warm Numba cache (as in bench_startup.py): the wait
before the first training step of a notebook.
"""
import learntorch
import numpy as np

from .bench_startup import _cold, _has_warmup, _warm
from .suite import case, Contenders, Metric, Target, as_fast_as, float32, torch


def milliseconds_per_step():
    return Metric("ms/step", 1, per_second=False, scale=1e-3)


def at_most_times(factor, library, text):
    """learntorch's time is at most ``factor`` times ``library``'s."""
    def check(row):
        ratio = row["ratios"][f"vs_{library}"]
        ours = row["seconds"]["learntorch"]["median"] * 1e3
        if ratio is None:
            return f"{ours:.3g} ms ({library} not measured)", None
        theirs = row["seconds"][library]["median"] * 1e3
        return (f"{ours:.3g} ms vs {library} {theirs:.3g} ms "
                f"(takes {ratio:.2f}× {library}'s time)", ratio <= factor)
    return Target(text, check)


# ---- the models, written once for both libraries ----------------------------------------

def mlp(torch, widths):
    nn = torch.nn
    layers = []
    for fan_in, fan_out in zip(widths[:-2], widths[1:-1]):
        layers += [nn.Linear(fan_in, fan_out), nn.ReLU()]
    return nn.Sequential(*layers, nn.Linear(widths[-2], widths[-1]))


def cnn(torch, size):
    nn = torch.nn
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(16 * (size // 4) ** 2, 10))


def train_step(torch, model, x, y):
    """One zero-argument call = one SGD step of ``model`` on the batch (x, y)."""
    torch.manual_seed(0)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    inputs, targets = torch.from_numpy(x), torch.from_numpy(y)
    cross_entropy = torch.nn.functional.cross_entropy

    def step():
        loss = cross_entropy(model(inputs), targets)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    return step


def _batch(batch, *shape):
    x = float32(batch, *shape, seed=1)
    y = np.random.default_rng(2).integers(0, 10, batch, dtype=np.int64)
    return x, y


def _seeded(library, build, *args):
    library.manual_seed(0)
    return build(library, *args)


# ---- the MLP step by hand, in numpy: what the arithmetic alone costs --------------------

def numpy_mlp_step(widths, x, y, lr=0.01, momentum=0.9):
    rng = np.random.default_rng(0)
    params = []
    for fan_in, fan_out in zip(widths[:-1], widths[1:]):
        bound = 1 / np.sqrt(fan_in)
        params += [rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32),
                   rng.uniform(-bound, bound, fan_out).astype(np.float32)]
    velocity = [np.zeros_like(p) for p in params]
    one_hot = np.eye(widths[-1], dtype=np.float32)[y]

    def step():
        activations = [x]
        for i in range(0, len(params), 2):            # forward: h = relu(h W^T + b)
            h = activations[-1] @ params[i].T + params[i + 1]
            activations.append(np.maximum(h, 0) if i + 2 < len(params) else h)
        logits = activations.pop()
        shifted = logits - logits.max(axis=1, keepdims=True)
        probs = np.exp(shifted)
        probs /= probs.sum(axis=1, keepdims=True)
        grad = (probs - one_hot) / len(x)              # d mean cross-entropy / d logits
        grads = [None] * len(params)
        for i in range(len(params) - 2, -1, -2):      # backward, last layer first
            h = activations.pop()
            grads[i], grads[i + 1] = grad.T @ h, grad.sum(axis=0)
            if i:
                grad = (grad @ params[i]) * (h > 0)
        for p, v, g in zip(params, velocity, grads):  # SGD with momentum, in place
            v *= momentum
            v += g
            p -= lr * v
    return step


# ---- cases -------------------------------------------------------------------------------

@case("MLP 784-256-128-10 train step, batch 128 (SGD momentum)", batch=128, inputs=784,
      tiny=dict(batch=4, inputs=16),
      target=as_fast_as("torch", "MLP 784-256-128-10 train step (batch 128) ≤ PyTorch's time"))
def mlp_step(batch, inputs):
    widths = (inputs, 256, 128, 10)
    x, y = _batch(batch, inputs)
    return Contenders(
        learntorch=train_step(learntorch, _seeded(learntorch, mlp, widths), x, y),
        numpy=numpy_mlp_step(widths, x, y),
        torch=train_step(torch, _seeded(torch, mlp, widths), x, y) if torch else None,
        metric=milliseconds_per_step())


@case("CNN 2×(conv3×3, relu, maxpool) + linear train step, 32×1×28×28 (SGD momentum)",
      batch=32, size=28, tiny=dict(batch=2, size=8),
      target=at_most_times(1.5, "torch", "CNN train step (32×1×28×28) ≤ 1.5× PyTorch's time"))
def cnn_step(batch, size):
    x, y = _batch(batch, 1, size, size)
    return Contenders(
        learntorch=train_step(learntorch, _seeded(learntorch, cnn, size), x, y),
        torch=train_step(torch, _seeded(torch, cnn, size), x, y) if torch else None,
        metric=milliseconds_per_step())


def in_reference_tier(step):
    """``step`` run in the reference tier (the engine as written, numpy backend): what a
    learner runs with ``LEARNTORCH_REFERENCE=1``."""
    def reference_step():
        with learntorch.tiers.use("reference"):
            step()
    return reference_step


@case("MLP 784-256-128-10 train step, batch 128, reference tier (numpy column: the fast "
      "tier)", batch=128, inputs=784, tiny=dict(batch=4, inputs=16),
      target=at_most_times(5, "numpy", "the reference tier ≤ 5× the fast tier's time on the "
                                       "MLP step"))
def mlp_step_reference(batch, inputs):
    """What reading the engine as written costs: the same step in both tiers, so vs_numpy is
    the reference tier's slowdown (chapters must still run in it)."""
    widths = (inputs, 256, 128, 10)
    x, y = _batch(batch, inputs)
    model = _seeded(learntorch, mlp, widths)
    return Contenders(
        learntorch=in_reference_tier(train_step(learntorch, model, x, y)),
        numpy=train_step(learntorch, _seeded(learntorch, mlp, widths), x, y),
        torch=train_step(torch, _seeded(torch, mlp, widths), x, y) if torch else None,
        note="numpy column = learntorch's fast tier",
        metric=milliseconds_per_step())


def autocast_train_step(torch, model, x, y):
    """``train_step`` with the forward pass and the loss in ``torch.autocast("cpu")``
    (bfloat16 linear layers, a float32 loss), backward and the step outside, as torch's
    recipe has it."""
    torch.manual_seed(0)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    inputs, targets = torch.from_numpy(x), torch.from_numpy(y)
    cross_entropy = torch.nn.functional.cross_entropy

    def step():
        with torch.autocast("cpu"):
            loss = cross_entropy(model(inputs), targets)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    return step


@case("small MLP 64-64-10 train step under autocast('cpu'), batch 32 (numpy column: learntorch "
      "without autocast)", batch=32, inputs=64, tiny=dict(batch=4, inputs=16),
      target=at_most_times(1.3, "numpy", "autocast's overhead on a small MLP step ≤ 1.3× the "
                                         "same step without autocast"))
def mlp_step_autocast(batch, inputs):
    """What autocast adds to a step whose ops are small enough that dispatch dominates: the
    cast of every weight and input to bfloat16, the policy lookup at each op, bfloat16
    arithmetic in numpy (computed in float32 and rounded) and the casts back in backward.
    The numpy column is learntorch's own step without autocast, so vs_numpy is the
    overhead factor; PyTorch's column is its step under its own autocast."""
    widths = (inputs, 64, 10)
    x, y = _batch(batch, inputs)
    return Contenders(
        learntorch=autocast_train_step(learntorch, _seeded(learntorch, mlp, widths), x, y),
        numpy=train_step(learntorch, _seeded(learntorch, mlp, widths), x, y),
        torch=autocast_train_step(torch, _seeded(torch, mlp, widths), x, y) if torch else None,
        note="numpy column = learntorch without autocast",
        metric=milliseconds_per_step())


# ---- the first step in a fresh process ------------------------------------------------------

FIRST_STEP = """import learntorch as torch
nn = torch.nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear({n}, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                      nn.Linear(128, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
x, y = torch.randn(128, {n}), torch.randint(0, 10, (128,))
loss = nn.functional.cross_entropy(model(x), y)
loss.backward()
optimizer.step()
optimizer.zero_grad()
loss.item()
"""


@case("import + build MLP + first train step, cold Numba cache", inputs=784, cache="cold",
      tiny=dict(inputs=16, cache="cold"))
@case("import + build MLP + first train step, warm Numba cache", inputs=784, cache="warm",
      tiny=dict(inputs=16, cache="warm", prefill=False))
def first_mlp_step(inputs, cache, prefill=True):
    script = FIRST_STEP.format(n=inputs)

    def sampler(text):
        return _cold(text) if cache == "cold" else _warm(text, prefill)
    note = ""
    if cache == "warm":
        note = ("cache filled by learntorch.backends.warmup() and one run"
                if prefill and _has_warmup() else "cache filled by one run")
    return Contenders(learntorch=sampler(script),
                      torch=sampler(script.replace("import learntorch", "import torch", 1))
                      if torch else None,
                      note=note)
