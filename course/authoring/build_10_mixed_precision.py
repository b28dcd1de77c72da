"""Write course/solutions/10_mixed_precision.ipynb, the instructor source of chapter 10 (mixed
precision).

    python course/authoring/build_10_mixed_precision.py

Edit this file, not the notebook: the notebook is rebuilt from it (``--check``: is it up to date?).
"""
import sys

from notebook_builder import Chapter

ch = Chapter("10", "mixed_precision")

# why the cells that use the digits are learntorch only (see the banner)
DIGITS = "the digits ship with learntorch, as learntorch tensors"

ch.markdown(r"""
# 10 · Mixed precision: float16, bfloat16, autocast and loss scaling

Every number so far has been a float32: four bytes, about seven significant digits. A GPU multiplies
16-bit floats several times faster than 32-bit ones, and moves half the bytes. **Mixed precision**
training runs the heavy operations (matrix products, convolutions) in 16 bits and keeps everything
that needs the digits — the weights, the sums, the losses — in float32. PyTorch does it with two tools:
`torch.autocast`, which picks each operation's precision, and `torch.amp.GradScaler`, which keeps small
float16 gradients from vanishing. This chapter shows what the 16-bit formats can and cannot hold, and
why each tool exists.

**After this chapter you can**

- read a float's bits — sign, exponent, mantissa — in float16, bfloat16, float32 and float64, and say
  what `torch.finfo` tells you about each: range, precision, the smallest number;
- explain why a long sum in float16 goes wrong, and why PyTorch's kernels add up in float32;
- see small gradients **underflow** to zero in float16, and rescue them with **loss scaling**;
- train a model under `torch.autocast`, predict the dtype of each operation in it, and measure what
  it gains or costs in speed and memory on the CPU in front of you;
- follow `GradScaler`'s state machine — scale, skipped steps, back-off, growth — and write its update
  rule yourself.
""")

ch.code(r"""
import statistics
import time

import numpy as np

import learntorch as torch                     # the same code runs on PyTorch: `import torch`
from learntorch import nn
import learntorch.nn.functional as F
from learntorch.utils.data import DataLoader

torch.manual_seed(0)
print("running on", torch.__name__, torch.__version__)
""", on_pytorch="it prints PyTorch's name and version")

ch.code(r"""
from learntorch.datasets import Digits
""", learntorch_only=DIGITS)

ch.markdown(r"""
> **Same code, real PyTorch.** Every code cell runs unchanged with `import torch`, `from torch import nn`,
> `import torch.nn.functional as F` and `from torch.utils.data import ...`, and prints the same, except
> the cells whose first line says otherwise. `# learntorch only: ...` marks the cells that use the 8×8
> `Digits` (they ship with learntorch so the chapter runs offline) and the widget; `# on PyTorch: ...`
> marks the cells whose numbers differ (timings, for instance).

## 1 · How a float is built

A floating-point number is three fields of bits:

- a **sign** bit `s` (0 for +, 1 for −);
- an **exponent** `E` of a few bits, stored with a **bias** added so that it is never negative;
- a **mantissa** (or fraction) `M`: the digits after the binary point of a number between 1 and 2.

A normal number's value is `(−1)^s · 2^(E − bias) · (1 + M / 2^m)`, where `m` is the mantissa's
width. The four float dtypes differ only in how many bits each field gets:

| dtype | sign | exponent | mantissa | bias |
| --- | --- | --- | --- | --- |
| `float16` (half) | 1 | 5 | 10 | 15 |
| `bfloat16` ("brain float") | 1 | 8 | 7 | 127 |
| `float32` | 1 | 8 | 23 | 127 |
| `float64` (double) | 1 | 11 | 52 | 1023 |

We can read the bits of any tensor: `t.view(torch.int16)` reinterprets the same bytes as integers.
""")

ch.code(r"""
EXPONENT_BITS = {torch.float16: 5, torch.bfloat16: 8, torch.float32: 8, torch.float64: 11}
SAME_SIZE_INT = {torch.float16: torch.int16, torch.bfloat16: torch.int16,
                 torch.float32: torch.int32, torch.float64: torch.int64}


def name(dtype):
    return str(dtype).split(".")[-1]           # "float16", without the library's name


def bits(x, dtype):
    # (sign, exponent, mantissa): the bits of the number x stored as dtype
    t = torch.tensor([x], dtype=torch.float64).to(dtype)
    width = torch.finfo(dtype).bits
    word = t.view(SAME_SIZE_INT[dtype]).item() & ((1 << width) - 1)   # the bits, as a non-negative int
    text = format(word, f"0{width}b")
    e = EXPONENT_BITS[dtype]
    return text[0], text[1:1 + e], text[1 + e:]


for dtype in EXPONENT_BITS:
    sign, exponent, mantissa = bits(0.1, dtype)
    stored = torch.tensor([0.1], dtype=torch.float64).to(dtype).double().item()
    print(f"{name(dtype):8s} {sign} {exponent} {mantissa[:23]}{'...' if len(mantissa) > 23 else ''}"
          f"  = {stored!r}")
""")

ch.markdown(r"""
0.1 has no exact binary form (like 1/3 in decimal), so each dtype stores the nearest number it can:
the more mantissa bits, the closer. Decode the float16 bits by hand with the formula above:
""")

ch.code(r"""
sign, exponent, mantissa = bits(0.1, torch.float16)
E, M = int(exponent, 2), int(mantissa, 2)
value = (-1) ** int(sign) * 2.0 ** (E - 15) * (1 + M / 2 ** 10)
print(f"E = {E}, M = {M}: (-1)^{sign} * 2^({E} - 15) * (1 + {M}/1024) = {value!r}")
print("the same as float16's 0.1:", value == torch.tensor(0.1).half().item())
""")

ch.markdown(r"""
bfloat16 is float32 with its mantissa rounded to the first 7 bits: same sign, same 8 exponent bits
(compare the rows above; for 0.1 the last bit kept rounds up). That makes converting between the two cheap, and gives bfloat16 float32's **range**
at a quarter of its **precision**. float16 spent its bits the other way round: more mantissa, far less
exponent.

## 2 · Range and precision: `torch.finfo`

`torch.finfo(dtype)` gives the numbers that matter:

- `eps`: the gap between 1.0 and the next representable number — the relative precision, `2^−m`;
- `tiny` (also `smallest_normal`): the smallest positive **normal** number, `2^(1 − bias)`;
- `max`: the largest finite number;
- `resolution`: roughly how many decimal digits are trustworthy, as a power of ten.

Below `tiny` a dtype still has **subnormal** numbers, which give up mantissa bits to reach further
down — the smallest is `tiny · eps`. Anything smaller than half of that rounds to 0: it **underflows**.
""")

ch.code(r"""
print(f"{'dtype':8s} {'bits':>4s} {'eps':>10s} {'tiny':>10s} {'smallest subnormal':>19s} {'max':>10s}  resolution")
for dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
    info = torch.finfo(dtype)
    print(f"{name(dtype):8s} {info.bits:4d} {info.eps:10.3g} {info.tiny:10.3g} {info.tiny * info.eps:19.3g} "
          f"{info.max:10.3g}  {info.resolution:g}")
""")

ch.markdown(r"""
The trade shows at once. float16 holds nothing above 65504 and nothing below 6e-08; bfloat16 reaches
3e+38 like float32, but its `eps` is 8 times coarser than float16's: about two decimal digits.
""")

ch.code(r"""
big = torch.tensor([70000.0])
print("70000 as float16:", big.half().item(), "| as bfloat16:", big.bfloat16().item())
one = torch.tensor(1.0)
for dtype in (torch.float16, torch.bfloat16):
    eps = torch.finfo(dtype).eps
    print(f"{name(dtype):8s} 1 + eps = {(one.to(dtype) + eps).item()!r:12}  1 + eps/2 = {(one.to(dtype) + eps / 2).item()!r}")
print("256 + 1 in bfloat16:", (torch.tensor(256.0, dtype=torch.bfloat16) + 1).item())
""")

ch.markdown(r"""
70000 overflows float16 to `inf`; bfloat16 holds it, rounded to 70144. Adding half an `eps` to 1 changes
nothing: the exact result lies halfway between two neighbours and rounds to the even one, 1. And in
bfloat16, with 8 significant bits, 256 + 1 is 256: the numbers between 256 and 512 are 2 apart.

## 3 · Summing in 16 bits

That last line is the whole problem with long sums. Add 0.1 ten thousand times, keeping the running
total in float16 (numpy's `float16` rounds after every addition, like a float16 register would):
""")

ch.code(r"""
values = np.full(10_000, 0.1, dtype=np.float16)
total16, total32 = np.float16(0), np.float32(0)
stalled_at = None
for v in values:
    new16 = np.float16(total16 + v)
    if new16 == total16 and stalled_at is None:
        stalled_at = float(total16)
    total16, total32 = new16, np.float32(total32 + np.float32(v))
print(f"float16 running total: {float(total16)!r} (stuck from {stalled_at!r} on)")
print(f"float32 running total: {float(total32)!r}")
print(f"exact sum of the float16 values: {float(values.astype(np.float64).sum())!r}")
print(f"float16 spacing at 256: {float(np.spacing(np.float16(256)))!r}, half of it: {float(np.spacing(np.float16(256))) / 2!r}")
""")

ch.markdown(r"""
The float16 total is stuck: at 256 the neighbouring float16 numbers are 0.25 apart, so 256 + 0.1 is
closer to 256 than to 256.25 and rounds back, forever. The float32 total has 13 more mantissa bits and
here comes out exact (0.1 as a float16 is 0.0999755859375, so the exact sum is 999.755859375, not 1000).

PyTorch's kernels never add like the first loop. A reduction over float16 or bfloat16 loads each
number into a float32 register, adds up in float32 (the "opmath" type) and rounds **once**, when it
stores the result. learntorch's do the same:
""")

ch.code(r"""
x = torch.full((10_000,), 0.1, dtype=torch.float16)
print("x.sum():", x.sum().item(), x.sum().dtype)
print("x.cumsum(0)[-1]:", x.cumsum(0)[-1].item())
print("x.float().sum():", x.float().sum().item())
""")

ch.markdown(r"""
The float16 result 1000.0 is the float32 total 999.7559 rounded once to float16, whose neighbours near
1000 are 0.5 apart. The same holds for matrix products (each output is a sum of products) and for
softmax, norms and losses: the storage is 16 bits, the arithmetic inside a kernel is 32. That is what
makes 16-bit training work at all.

## 4 · Small gradients underflow; loss scaling rescues them

Gradients are often tiny. Numbers below float16's `tiny` (6.1e-05) lose mantissa bits, and below
3e-08 they become exactly 0:
""")

ch.code(r"""
print(torch.tensor([1e-8, 3e-6, 1e-4]).half())
""")

ch.markdown(r"""
Where do tiny gradients come from? A well-trained classifier is confident: the gradient of the mean
cross-entropy with respect to a logit is `(probability − target) / batch size`, and for a sample the
model gets right with probability 0.99999 that is about 1e-5 divided by the batch. Let us train
chapter 06's MLP on the digits (10 epochs of Adam) and look at the gradients of its loss over the
whole training set, computed three ways: in float32; with the forward pass in float16 (autocast with
`dtype=torch.float16` on the CPU — the backward pass then carries float16 gradients through each
float16 operation); and the same with the loss multiplied by `2**16` before `backward()` and the
gradients divided by `2**16` after.
""")

ch.code(r"""
train_set, test_set = Digits(train=True), Digits(train=False)
train_loader = DataLoader(train_set, batch_size=64, shuffle=True, generator=torch.Generator().manual_seed(0))
all_images, all_labels = next(iter(DataLoader(train_set, batch_size=len(train_set))))
test_images, test_labels = next(iter(DataLoader(test_set, batch_size=len(test_set))))


def make_model():
    return nn.Sequential(nn.Flatten(), nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))


def train(model, epochs, use_autocast=False):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for epoch in range(epochs):
        for images, labels in train_loader:
            with torch.autocast("cpu", enabled=use_autocast):
                loss = F.cross_entropy(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return model


def accuracy(model):
    with torch.no_grad():
        return (model(test_images).argmax(dim=1) == test_labels).float().mean().item()


torch.manual_seed(0)
model = train(make_model(), epochs=10)
print(f"float32 model: test accuracy {accuracy(model):.4f}")


def gradients(model, dtype=None, scale=1.0):
    # every parameter's gradient of the loss over the whole training set, as one flat vector
    model.zero_grad()
    with torch.autocast("cpu", dtype=dtype or torch.bfloat16, enabled=dtype is not None):
        loss = F.cross_entropy(model(all_images), all_labels)
    (loss * scale).backward()
    return torch.cat([p.grad.reshape(-1) / scale for p in model.parameters()])


reference = gradients(model)
print(f"{reference.numel()} gradients, {(reference != 0).sum().item()} of them nonzero in float32; "
      f"median |g| {reference.abs().median().item():.2e}")
for name, dtype, scale in [("float16", torch.float16, 1.0), ("float16, loss x 2**16", torch.float16, 2.0 ** 16),
                           ("bfloat16", torch.bfloat16, 1.0)]:
    g = gradients(model, dtype, scale)
    lost = ((g == 0) & (reference != 0)).sum().item()
    error = ((g - reference).norm() / reference.norm()).item()
    print(f"{name:22s}: {lost:4d} nonzero gradients became 0; relative error {error:.4f}")
""", learntorch_only=DIGITS)

ch.markdown(r"""
In float16 a share of the gradients vanish — the count is printed above: they were nonzero in float32
and came out as exactly 0. It happens in the backward pass: the gradients of the logits and hidden
activations are float16 inside a float16 region, and the smallest of them underflow before they are
ever multiplied into a weight's gradient. Multiplying the loss by `2**16` multiplies every gradient
by `2**16`, lifting them into float16's normal range; dividing the (float32) weight gradients
afterwards gives the right values, and none is lost. bfloat16 loses none either without any scaling —
it has float32's range — but its relative error is larger: fewer mantissa bits.

The widget shows it gradient by gradient. It draws the model's float32 weight gradients (the
`reference` above, one per parameter) as a histogram of their magnitudes on a log2 axis, with the
chosen dtype's zones behind: red what rounds to 0, orange the subnormal range. The counts below it
come from casting the scaled gradients to the dtype with the engine. Move the **loss scale** slider
right and watch the histogram slide out of the red; switch to **bfloat16** to see float32's range; push
the scale to the top and the largest gradients overflow past 65504. On the right: one number's bits in
the four dtypes (type another into **number**).
""")

ch.code(r"""
from widgets import PrecisionExplorer

reference = gradients(model)       # float32 gradients in each parameter's .grad
PrecisionExplorer(model, dtype="float16", title="the digits MLP's gradients")
""", learntorch_only="the widget is learntorch's own")

ch.markdown(r"""
The widget is also an object you can ask: here are its counts for a few loss scales (the float32
weight gradients times the scale, cast to float16 by the engine). Gradients that are exactly 0 already
in float32 — mostly the weights of hidden units whose ReLU never fires on these digits, and of pixels
that are blank in every digit — are left out of the counts; how many there are is printed first.
""")

ch.code(r"""
counter = PrecisionExplorer(model, dtype="float16")
print(f"{counter.counts()['already_zero']} of {counter.counts()['total']} gradients are exactly 0 in float32")
for power in (0, 8, 16, 24):
    counter.set(loss_scale=2.0 ** power)
    c = counter.counts()
    print(f"loss scale 2**{power:<2d}: {c['flushed_to_zero']:4d} flushed to 0, {c['subnormal']:4d} subnormal, "
          f"{c['overflow']:3d} overflow, of {c['total'] - c['already_zero']}")
""", learntorch_only="the widget is learntorch's own")

ch.markdown(r"""
Loss scaling has a catch: the right scale depends on the gradients, which change as training goes.
Too small, gradients underflow; too large, some overflow to `inf`, and a step taken with an `inf`
gradient ruins the weights. `GradScaler` (section 6) finds the scale as it goes.

## 5 · `torch.autocast` on a training step

You do not cast a model by hand. Inside `with torch.autocast("cpu"):` (bfloat16 by default on the CPU,
float16 on a GPU) every operation picks its own precision from PyTorch's lists:

- **16 bits** for the operations that are fast there and safe: `matmul`, `linear`, `conv`, `bmm`, …;
- **float32** for those that need the digits: on the CPU the losses (`mse_loss`, `cross_entropy`,
  `nll_loss`, …), `prod`, `cdist`; on a GPU also `exp`, `log`, `softmax`, `sum`, `layer_norm`, …;
- **the widest input** for operations that combine tensors, like `cat` and `stack`: float32 if any
  input is float32;
- everything else (`relu`, `+`, `softmax` on the CPU, `sum`, …) runs in whatever dtype its inputs
  have, with the usual promotion (`bfloat16 + float32` is float32).

The model itself stays float32: autocast casts a **copy** of each weight as an operation needs it, and
the backward pass casts each gradient back, so every `.grad` is float32 and the optimizer updates
float32 weights.
""")

ch.code(r"""
torch.manual_seed(0)
mlp = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
x, y = torch.randn(32, 64), torch.randint(0, 10, (32,))
with torch.autocast("cpu"):
    hidden = mlp[1](mlp[0](x))
    logits = mlp[2](hidden)
    loss = F.cross_entropy(logits, y)
loss.backward()
print("hidden:", hidden.dtype, "| logits:", logits.dtype, "| loss:", loss.dtype)
print("weight:", mlp[0].weight.dtype, "| weight.grad:", mlp[0].weight.grad.dtype)
""")

ch.markdown(r"""
Now train the digits model the same way under autocast (same seed, same 10 epochs) and compare it with
the float32 model of section 4:
""")

ch.code(r"""
torch.manual_seed(0)
mixed_model = train(make_model(), epochs=10, use_autocast=True)
print(f"float32 training:   test accuracy {accuracy(model):.4f}")
print(f"autocast bfloat16:  test accuracy {accuracy(mixed_model):.4f}")
with torch.no_grad():
    disagree = (model(test_images).argmax(1) != mixed_model(test_images).argmax(1)).sum().item()
    apart = max((a - b).abs().max().item() for a, b in zip(model.parameters(), mixed_model.parameters()))
print(f"the two models answer differently on {disagree} of {len(test_labels)} test digits; "
      f"their weights differ by up to {apart:.3f}")
""", learntorch_only=DIGITS)

ch.markdown(r"""
The bfloat16 products round differently, so the two runs took different paths and ended with different
weights (the largest difference is printed); compare the two accuracies printed above them — on a task
this size bfloat16's coarser arithmetic costs little or nothing.

**Is it faster?** Measure one training step of the same MLP on a batch of 64, with and without autocast,
taking turns (so that a busy moment of the machine slows both alike), the median of 7 rounds of 20
steps:
""")

ch.code(r"""
def step_seconds(use_autocast, steps=20):
    # seconds per training step of `mlp` on a batch of 64 random inputs
    optimizer = torch.optim.SGD(mlp.parameters(), lr=0.01)
    x, y = torch.randn(64, 64), torch.randint(0, 10, (64,))
    start = time.perf_counter()
    for _ in range(steps):
        with torch.autocast("cpu", enabled=use_autocast):
            loss = F.cross_entropy(mlp(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return (time.perf_counter() - start) / steps


step_seconds(False), step_seconds(True)                      # warm up
rounds = {False: [], True: []}
for _ in range(7):
    for use_autocast in (False, True):                        # taking turns
        rounds[use_autocast].append(step_seconds(use_autocast))
plain, mixed = statistics.median(rounds[False]), statistics.median(rounds[True])
ratios = sorted(m / p for p, m in zip(rounds[False], rounds[True]))
print(f"float32 step {1e6 * plain:.0f} µs, autocast step {1e6 * mixed:.0f} µs (medians): "
      f"autocast takes {mixed / plain:.2f}x the time")
print(f"round by round, autocast took {ratios[0]:.2f}x to {ratios[-1]:.2f}x the float32 time")
""", on_pytorch="timings differ from machine to machine and library to library")

ch.markdown(r"""
Compare the medians, and look at the spread of the rounds below them: on a busy or shared machine
single rounds scatter widely, which is why the rounds take turns and the medians are compared. What
you should not expect, in learntorch on a CPU, is a real gain from autocast — on a quiet machine it
costs time — and the reasons are worth knowing:

- **No bfloat16 arithmetic underneath.** Neither numpy nor learntorch's kernels have bfloat16
  arithmetic: a bfloat16 matrix product is widened to float32, multiplied in float32, and rounded back
  (the Numba backend does the three in one kernel for small matrices; larger ones go through float32
  BLAS). It does all the float32 work *plus* the conversions.
- **The casts cost.** Autocast inserts a cast in front of every 16-bit operation (the inputs, and a copy
  of each weight once per region) and one in the backward pass for each gradient. On a model this
  small, where each operation takes microseconds, those extra operations are a large share of a step.
- **What the hardware has.** Some CPUs have bfloat16 instructions; the cell below reads this one's
  flags (Linux only). PyTorch's CPU kernels (oneDNN) can use them for large matrix products; numpy never
  does. On a GPU the picture changes completely: **tensor cores** multiply float16/bfloat16 matrices
  many times faster than float32 ones, and halving the bytes halves the memory traffic — that is where
  mixed precision pays.
""")

ch.code(r"""
try:
    with open("/proc/cpuinfo") as f:
        flags = set(f.read().split())
    print("CPU bfloat16 instructions:", sorted(flags & {"avx512_bf16", "amx_bf16"}) or "none")
except OSError:
    print("no /proc/cpuinfo here (not Linux): cannot tell")
""", on_pytorch="another machine has other CPU flags")

ch.markdown(r"""
**Memory.** What mixed precision saves is the activations kept for the backward pass: each one is
half the bytes. The weights do not shrink (they stay float32; autocast adds a bfloat16 copy of each
while a region runs):
""")

ch.code(r"""
x = torch.randn(64, 64)
for use_autocast in (False, True):
    with torch.autocast("cpu", enabled=use_autocast):
        h = mlp[0](x)
    print(f"autocast {str(use_autocast):5s}: first layer's output {h.dtype}, "
          f"{h.element_size() * h.nelement():,} bytes")
weight_bytes = sum(p.element_size() * p.nelement() for p in mlp.parameters())
print(f"the parameters: {weight_bytes:,} bytes either way (float32)")
""")

ch.markdown(r"""
For a model this small the savings are a few kilobytes; for a large one, whose activations for a batch
take gigabytes, halving them is often what lets the batch fit at all.

## 6 · `GradScaler`: the scale, found as training goes

`torch.amp.GradScaler` automates section 4's trick with a simple feedback rule:

1. `scaler.scale(loss)` multiplies the loss by the current scale `S` (65536 to start); `backward()` then
   computes `S` times every gradient;
2. `scaler.step(optimizer)` divides the gradients by `S` (in place, float32) and checks them: if any is
   `inf` or `nan`, it **skips** `optimizer.step()` — the weights stay as they were;
3. `scaler.update()` picks the next `S`: after a skipped step it **backs off**, `S *= backoff_factor`
   (0.5), and the count of good steps starts again at 0; after `growth_interval` (2000) good steps in a
   row it **grows**, `S *= growth_factor` (2), and the count starts again.

So `S` hovers just below the largest scale that does not overflow. Watch it on a toy problem with
`growth_interval=3`, where we make the loss infinite on purpose at some steps (as an overflow would):
""")

ch.code(r"""
weight = nn.Parameter(torch.ones(2))
optimizer = torch.optim.SGD([weight], lr=0.1)
scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 16, growth_interval=3)
overflow_at = {3, 8, 9}
print("step  overflow  scale used  step taken  scale after  good steps in a row")
for step in range(12):
    optimizer.zero_grad()
    loss = (weight * weight).sum() * (float("inf") if step in overflow_at else 1.0)
    used = scaler.get_scale()
    scaler.scale(loss).backward()
    before = weight.detach().clone()
    scaler.step(optimizer)
    scaler.update()
    taken = bool((weight != before).any())
    print(f"{step:4d}  {str(step in overflow_at):8s}  {used:10.0f}  {str(taken):10s}  "
          f"{scaler.get_scale():11.0f}  {scaler._get_growth_tracker():d}")
""")

ch.markdown(r"""
Read it row by row: three good steps in a row and the scale doubles (step 2); the overflow at step 3
skips the step and halves the scale; two overflows in a row (steps 8, 9) halve it twice. A skipped step
costs one batch; a scale that is a little too large is corrected within one step, while one that is too
small would silently lose gradients — which is why the scaler starts high and grows.

With **bfloat16** none of this is needed: its range is float32's, nothing underflows, and PyTorch's
recipes for bfloat16 use autocast alone. `GradScaler` belongs with **float16**, which is what most
GPUs' fastest units have run since mixed precision began (and what `torch.autocast("cuda")` picks by
default). The usual float16 loop on a GPU:

```python
scaler = torch.amp.GradScaler("cuda")
for x, y in loader:
    optimizer.zero_grad()
    with torch.autocast("cuda"):                  # float16 on a GPU
        loss = loss_fn(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)                         # unscale, check, step (or skip)
    scaler.update()
```

## Exercises

Each exercise has a cell for your code and a check cell below it. Replace the
`raise NotImplementedError(...)` lines with your code, run the cell, then run the check: it prints
`✓ passed`, or tells you what went wrong.

### Exercise 10.1 · Predict autocast's dtypes

Write `predict_dtype(op, dtypes)`: the dtype of the result of operation `op` run inside
`torch.autocast("cpu")` (bfloat16), when its floating-point tensor inputs have the dtypes in the list
`dtypes` (each one `torch.float32`, `torch.bfloat16` or `torch.float16`). Return a torch dtype. The
operations are:

- `"matmul"` (`a @ b`) and `"linear"` (`F.linear(x, w)`): on the CPU's **16-bit** list;
- `"mse_loss"`, `"cross_entropy"` (of the logits, with integer targets) and `"prod"`: on the CPU's
  **float32** list;
- `"cat"` (`torch.cat(tensors)`): **the widest input** — float32 if any input is float32, else bfloat16
  (the checks never mix float16 into a `cat`);
- `"relu"`, `"add"` (`a + b`), `"softmax"` and `"sum"`: on **no list**, so they run in their inputs'
  dtype; with two inputs of different dtypes, ordinary type promotion decides (`torch.promote_types`).

Do not run the operation: the point is to know the rules. The check runs each one under autocast and
compares.
""")

ch.solution("10.1", points=3, hint=(
    "three sets of op names (16-bit, float32, widest input) and, for the rest, "
    "torch.promote_types over the input dtypes"), source=r"""
def predict_dtype(op, dtypes):
    # the dtype of op's result inside torch.autocast("cpu"), its tensor inputs of these dtypes
    ### BEGIN SOLUTION
    if op in ("matmul", "linear"):
        return torch.bfloat16
    if op in ("mse_loss", "cross_entropy", "prod"):
        return torch.float32
    if op == "cat":
        return torch.float32 if torch.float32 in dtypes else torch.bfloat16
    result = dtypes[0]
    for dtype in dtypes[1:]:
        result = torch.promote_types(result, dtype)
    return result
    ### END SOLUTION
""")

ch.check("10.1", r"""
from course.checks import exercise, check_equal, check_not_used


def run_under_autocast(op, dtypes):
    # the dtype the operation really gives inside torch.autocast("cpu")
    torch.manual_seed(0)
    xs = [torch.randn(4, 4).to(dtype) for dtype in dtypes]
    with torch.autocast("cpu"):
        out = {"matmul": lambda: xs[0] @ xs[1],
               "linear": lambda: F.linear(xs[0], xs[1]),
               "mse_loss": lambda: F.mse_loss(xs[0], xs[1]),
               "cross_entropy": lambda: F.cross_entropy(xs[0], torch.tensor([0, 1, 2, 3])),
               "prod": lambda: xs[0].prod(),
               "cat": lambda: torch.cat(xs),
               "relu": lambda: torch.relu(xs[0]),
               "add": lambda: xs[0] + xs[1],
               "softmax": lambda: torch.softmax(xs[0], dim=1),
               "sum": lambda: xs[0].sum()}[op]()
    return out.dtype


def check_prediction(op, dtypes, rule):
    call = f"predict_dtype({op!r}, [{', '.join(str(d) for d in dtypes)}])"
    got = predict_dtype(op, list(dtypes))
    check_equal(type(got).__name__, "dtype", name=f"the type of what {call} returns (a torch dtype)")
    check_equal(got, run_under_autocast(op, dtypes), name=f"{call}: {rule}")


LOWER = "matmul and linear are on the CPU's 16-bit list: bfloat16, whatever their inputs"
FP32 = "the losses and prod are on the CPU's float32 list"
WIDEST = "cat runs in the widest input dtype: float32 if any input is float32"
NO_LIST = "on no list: it runs in its inputs' dtype (softmax and sum are on the float32 list only on a GPU)"
PROMOTE = "on no list: two inputs of different dtypes promote (torch.promote_types)"

with exercise("10.1"):
    check_not_used(predict_dtype, ["autocast"],
                   rule="predict from the rules: do not run the operation under autocast")
    check_prediction("matmul", [torch.float32, torch.float32], LOWER)
    check_prediction("linear", [torch.bfloat16, torch.float32], LOWER)
    check_prediction("mse_loss", [torch.bfloat16, torch.bfloat16], FP32)
    check_prediction("cross_entropy", [torch.bfloat16], FP32)
    check_prediction("cat", [torch.bfloat16, torch.float32], WIDEST)
    check_prediction("cat", [torch.bfloat16, torch.bfloat16], WIDEST)
    check_prediction("relu", [torch.float32], NO_LIST)
    check_prediction("softmax", [torch.bfloat16], NO_LIST)
    check_prediction("sum", [torch.bfloat16], NO_LIST)
    check_prediction("add", [torch.bfloat16, torch.float32], PROMOTE)
    check_prediction("add", [torch.bfloat16, torch.bfloat16], PROMOTE)
""")

ch.hidden_check("10.1", r"""
with exercise("10.1"):
    check_prediction("matmul", [torch.float16, torch.float16], LOWER)
    check_prediction("linear", [torch.float32, torch.float32], LOWER)
    check_prediction("prod", [torch.bfloat16], FP32)
    check_prediction("mse_loss", [torch.float16, torch.float32], FP32)
    check_prediction("cat", [torch.float32, torch.bfloat16, torch.bfloat16], WIDEST)
    check_prediction("relu", [torch.float16], NO_LIST)
    check_prediction("softmax", [torch.float32], NO_LIST)
    check_prediction("sum", [torch.float16], NO_LIST)
    check_prediction("add", [torch.float16, torch.bfloat16], PROMOTE)
    check_prediction("add", [torch.float32, torch.float16], PROMOTE)
""")

ch.markdown(r"""
### Exercise 10.2 · The loss scale's update rule

Write `update_scale(scale, growth_tracker, found_inf, growth_factor=2.0, backoff_factor=0.5,
growth_interval=2000)`: one iteration of `GradScaler`'s rule from section 6. `scale` is the current
scale (a float), `growth_tracker` the number of good steps in a row so far (an int), `found_inf` whether
this iteration's gradients held an `inf` or `nan`. Return the tuple `(new_scale, new_growth_tracker,
step_taken)`:

- if `found_inf`: the optimizer step is **skipped** (`step_taken` is False), the scale **backs off**
  (`scale * backoff_factor`) and the count of good steps goes back to **0**;
- otherwise the step is taken, and it is one more good step: when that makes `growth_interval` good steps
  in a row, the scale **grows** (`scale * growth_factor`) and the count goes back to 0; before that, the
  scale stays and the count goes up by one.

The check runs your rule over sequences of steps, some with an overflow, and compares every step with
a real `torch.amp.GradScaler("cpu")` fed gradients that are finite or infinite in the same order.
""")

ch.solution("10.2", points=3, hint=(
    "if found_inf: return scale * backoff_factor, 0, False; else count this step "
    "(growth_tracker + 1) and compare the count with growth_interval"), source=r"""
def update_scale(scale, growth_tracker, found_inf, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000):
    # (new_scale, new_growth_tracker, step_taken) after one iteration of GradScaler's rule
    ### BEGIN SOLUTION
    if found_inf:
        return scale * backoff_factor, 0, False
    growth_tracker += 1
    if growth_tracker == growth_interval:
        return scale * growth_factor, 0, True
    return scale, growth_tracker, True
    ### END SOLUTION
""")

ch.check("10.2", r"""
from course.checks import exercise, check_equal


def scaler_steps(overflows, init_scale, growth_factor, backoff_factor, growth_interval):
    # (scale after, good steps in a row, step taken) of a real GradScaler, step by step
    weight = nn.Parameter(torch.ones(3))
    optimizer = torch.optim.SGD([weight], lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=init_scale, growth_factor=growth_factor,
                                  backoff_factor=backoff_factor, growth_interval=growth_interval)
    seen = []
    for overflow in overflows:
        optimizer.zero_grad()
        loss = (weight * weight).sum() * (float("inf") if overflow else 1.0)
        scaler.scale(loss).backward()
        before = weight.detach().clone()
        scaler.step(optimizer)
        scaler.update()
        seen.append((scaler.get_scale(), scaler._get_growth_tracker(), bool((weight != before).any())))
    return seen


def check_sequence(overflows, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                   growth_interval=3):
    expected = scaler_steps(overflows, init_scale, growth_factor, backoff_factor, growth_interval)
    scale, tracker = init_scale, 0
    for step, (overflow, want) in enumerate(zip(overflows, expected)):
        call = (f"update_scale({scale!r}, {tracker!r}, found_inf={overflow}, growth_factor={growth_factor}, "
                f"backoff_factor={backoff_factor}, growth_interval={growth_interval})")
        got = update_scale(scale, tracker, overflow, growth_factor=growth_factor,
                           backoff_factor=backoff_factor, growth_interval=growth_interval)
        check_equal(type(got).__name__ == "tuple" and len(got), 3,
                    name=f"{call}: a tuple of three (new_scale, new_growth_tracker, step_taken)")
        if overflow:
            rule = ("an inf or nan: the step is skipped (step_taken False), the scale backs off "
                    "(scale * backoff_factor) and the count of good steps goes back to 0")
        elif tracker + 1 == growth_interval:
            rule = (f"good step {growth_interval} of growth_interval={growth_interval} in a row: "
                    "the scale grows (scale * growth_factor) and the count goes back to 0")
        else:
            rule = "a good step: the scale stays the same and the count goes up by one"
        check_equal((float(got[0]), got[1], got[2]), want,
                    name=f"step {step} of the sequence {['inf' if o else 'ok' for o in overflows]}: {call} ({rule})")
        scale, tracker = got[0], got[1]


with exercise("10.2"):
    check_sequence([False, False, False, False])
    check_sequence([False, True, False, False, False, False])
    check_sequence([False, False, True, True, False, False, False, False, False, False, False])
    check_sequence([False] * 5 + [True] + [False] * 4, init_scale=1024.0, growth_factor=4.0,
                   backoff_factor=0.25, growth_interval=2)
""")

ch.hidden_check("10.2", r"""
with exercise("10.2"):
    check_sequence([True, True, True, False, False, False, False], init_scale=8.0)
    check_sequence([False] * 9 + [True, False, True, False], growth_interval=4)
    check_sequence([False, True] * 4 + [False] * 3, init_scale=2.0 ** 20, growth_factor=2.0,
                   backoff_factor=0.5, growth_interval=1)
""")

ch.markdown(r"""
## What's next

You can now read a float's bits, say what float16 and bfloat16 can hold, see why kernels add up in
float32, rescue underflowing gradients with a loss scale, and train under `torch.autocast` knowing what
it costs on a CPU and what it buys on a GPU. Next, [**11 · Compile**](11_compile.ipynb) turns a model's
Python into a graph and fuses its operations into generated kernels: the other way to make the same
model faster.
""")

if __name__ == "__main__":
    sys.exit(ch.main())
