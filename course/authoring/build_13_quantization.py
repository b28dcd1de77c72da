"""Write course/solutions/13_quantization.ipynb, the instructor source of chapter 13 (quantization).

    python course/authoring/build_13_quantization.py

Edit this file, not the notebook: the notebook is rebuilt from it (``--check``: is it up to date?).
"""
import sys

from notebook_builder import Chapter

ch = Chapter("13", "quantization")

# why the cells that use the digits are learntorch only (see the banner)
DIGITS = "the digits ship with learntorch, as learntorch tensors"

ch.markdown(r"""
# 13 · Quantization: int8 weights, a smaller and faster model

A trained model's weights are float32: four bytes each. Most of those bits are noise as far as the
model's answers go. **Quantization** stores each weight — and, at run time, each activation — as a
one-byte integer plus a shared scale, and multiplies integers instead of floats. The model gets about
four times smaller, often faster, and almost always just as accurate. This chapter shows how, and
where it goes wrong.

**After this chapter you can**

- say how an 8-bit integer stands for a range of real numbers: **scale**, **zero point**, rounding
  and **clipping**, and compute the error each one causes;
- tell apart quantizing **weights** (known in advance, once) and **activations** (measured while the
  model runs), and **per-tensor** from **per-channel** scales;
- quantize the digits MLP with `quantize_dynamic` and measure its size in bytes, its accuracy and its
  speed against float32;
- explain why a single outlier can ruin a quantized layer, and what **calibration** with an
  **observer** does about it;
- write `quantize` / `dequantize` and choose a scale and zero point yourself.

A word on versions: PyTorch 2.13 still ships `torch.ao.quantization.quantize_dynamic`, the API this
chapter uses, but marks it **deprecated** in favour of the separate **torchao** library (section 7).
The ideas are the same in both; learntorch mirrors the API torch 2.13 still has.
""")

ch.code(r"""
import copy
import io
import time
import warnings

import learntorch as torch                     # the same code runs on PyTorch: `import torch`
from learntorch import nn
import learntorch.nn.functional as F
from learntorch.ao.quantization import (MinMaxObserver, MovingAverageMinMaxObserver,
                                        per_channel_dynamic_qconfig, quantize_dynamic)
from learntorch.utils.data import DataLoader

# PyTorch 2.13 warns on every use of torch.ao.quantization that it is deprecated in favour of
# torchao (section 7 says why); the warning says nothing new after the first time
warnings.filterwarnings("ignore", message=".*deprecated.*")
torch.manual_seed(0)
print("running on", torch.__name__, torch.__version__)
""", on_pytorch="it prints PyTorch's name and version")

ch.code(r"""
from learntorch.datasets import Digits
""", learntorch_only=DIGITS)

ch.markdown(r"""
> **Same code, real PyTorch.** Every code cell runs unchanged with `import torch`, `from torch import nn`,
> `import torch.nn.functional as F`, `from torch.ao.quantization import ...` and
> `from torch.utils.data import ...`, and prints the same, except the cells whose first line says
> otherwise. `# learntorch only: ...` marks the cells that use the 8×8 `Digits` (they ship with
> learntorch so the chapter runs offline) and the widget; `# on PyTorch: ...` marks the cells whose
> numbers differ (timings, for instance).

## 1 · Eight bits for a range of real numbers

An `int8` holds one of 256 whole numbers, −128 … 127. To make it stand for a real number we pick two
things:

- a **scale** `s` (a positive float): the distance between two neighbouring representable values;
- a **zero point** `z` (an integer code): the code that stands for exactly 0.0.

A code `q` then means `s · (q − z)`. Going the other way — **quantizing** a real number `x` — is

```
q = clamp(round(x / s) + z, qmin, qmax)
```

Two things can go wrong, and they are different:

- **rounding**: `x` lies between two grid values and moves to the nearer one. The error is at most
  `s / 2`.
- **clipping**: `x` lies beyond the grid's ends, `s · (qmin − z)` and `s · (qmax − z)`, and is moved to
  the end. That error has no bound: it is as large as `x` is far outside.

`torch.quantize_per_tensor` does exactly this and returns a **quantized tensor**: it holds the codes
(`int_repr()`, one byte each) together with its scale and zero point (`q_scale()`, `q_zero_point()`);
`dequantize()` turns it back into float32. With `s = 0.1` and `z = 0` the grid runs from −12.8 to 12.7:
""")

ch.code(r"""
x = torch.tensor([-1.0, -0.33, 0.0, 0.04, 0.26, 1.27, 3.0, 20.0])
q = torch.quantize_per_tensor(x, scale=0.1, zero_point=0, dtype=torch.qint8)
print("dtype", q.dtype, "| scale", q.q_scale(), "| zero point", q.q_zero_point(),
      "| bytes per element", q.element_size())
print("codes  ", q.int_repr().tolist())
print("values ", [round(v, 4) for v in q.dequantize().tolist()])
print("error  ", [round(v, 4) for v in (q.dequantize() - x).tolist()])
""")

ch.markdown(r"""
Every value inside the grid is off by at most 0.05 (half the scale): −0.33 became −0.3, 0.04 became 0.0.
The last one, 20.0, is beyond the end, became 12.7 (code 127), and is off by 7.3 — clipping.

The second dtype, `quint8`, holds codes 0 … 255. With `z = 0` it can only represent values ≥ 0 (handy
after a ReLU); a zero point in the middle shifts the grid so that it covers negative numbers too. That is
what the zero point is for: putting the grid where the data is, **asymmetrically** if need be.
""")

ch.code(r"""
for zero_point in (0, 128, 50):
    q = torch.quantize_per_tensor(x, scale=0.1, zero_point=zero_point, dtype=torch.quint8)
    low, high = 0.1 * (0 - zero_point), 0.1 * (255 - zero_point)
    print(f"quint8, zero point {zero_point:3d}: grid [{low:6.1f}, {high:5.1f}]  ->",
          [round(v, 2) for v in q.dequantize().tolist()])
""")

ch.markdown(r"""
Choosing `s` is a trade: a small scale makes a fine grid (small rounding error) that covers a short
range (more clipping); a large one covers everything but rounds coarsely. The usual choice covers the
data's range exactly: `s = (max − min) / (qmax − qmin)` — exercise 13.2 writes it.

## 2 · A real layer's weights on the grid

Let us get a real model: chapter 06's MLP for the 8×8 digits, trained the same way (8 epochs of Adam).
""")

ch.code(r"""
train_set, test_set = Digits(train=True), Digits(train=False)
train_loader = DataLoader(train_set, batch_size=64, shuffle=True, generator=torch.Generator().manual_seed(0))
test_images, test_labels = next(iter(DataLoader(test_set, batch_size=len(test_set))))   # all 359 at once

torch.manual_seed(0)
model = nn.Sequential(nn.Flatten(), nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(8):
    for images, labels in train_loader:
        loss = F.cross_entropy(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
model.eval()


def accuracy(model):
    # the share of the 359 test digits the model gets right
    with torch.no_grad():
        return (model(test_images).argmax(dim=1) == test_labels).float().mean().item()


print(f"float32 test accuracy: {accuracy(model):.4f}")
""", learntorch_only=DIGITS)

ch.markdown(r"""
The widget shows the first layer's 8,192 weights as a histogram, with the `qint8` grid over it (a tick
per grid value; when they are too dense to tell apart, one tick per few values) and the region the
grid cannot reach shaded red. Beside it, each weight's error `dequantize(quantize(w)) − w`. It opens
with the scale a **min/max observer** chooses (section 3): the grid just covers the weights, and every
error stays within ±`s/2`. Move the **scale** slider left: the grid gets finer, the red region eats into
the histogram, and the clipped weights' errors shoot up. Move it right: nothing is clipped, but the
band of rounding errors widens. **fit min/max** puts it back.
""")

ch.code(r"""
from widgets import QuantizationExplorer

QuantizationExplorer(model[1].weight, title="first layer's weights")
""", learntorch_only="the widget is learntorch's own")

ch.markdown(r"""
## 3 · Weights and activations; observers

A Linear layer multiplies two things, and both can be int8: its **weights** and its **input
activations**.

- **Weights** are fixed once training ends. We can look at all of them, choose their scale once, and
  store only the codes: that is where the size saving comes from.
- **Activations** depend on the input. Their range is unknown until the model runs. There are two ways:
  **dynamic** quantization measures each batch's min and max as it arrives and quantizes with a scale
  made for that batch (no preparation, a small cost per call); **static** quantization fixes the
  scale in advance, from a **calibration** run over sample data.

Either way, something has to watch values and turn their range into a scale and a zero point. In
`torch.ao.quantization` that is an **observer**: a module you call on tensors, which records their range,
and whose `calculate_qparams()` gives `(scale, zero_point)`. `MinMaxObserver` keeps the smallest and
largest value it ever saw; `MovingAverageMinMaxObserver` keeps a running average of each batch's min
and max, so that one unusual batch moves it only a little.

Here both watch the first layer's output after the ReLU, batch by batch — and the fifth batch holds a
corrupted image, its pixels 20 times too bright:
""")

ch.code(r"""
def hidden(images):
    # the first layer's activations after the ReLU: what the second layer gets as input
    with torch.no_grad():
        return model[2](model[1](model[0](images)))


batches = [test_images[i:i + 64] for i in range(0, 320, 64)]
batches[4] = batches[4].clone()
batches[4][0] *= 20                                   # one corrupted image in the fifth batch

observers = {"min/max": MinMaxObserver(dtype=torch.quint8),
             "moving average": MovingAverageMinMaxObserver(dtype=torch.quint8)}
print("batch  its max  | min/max observer's max  moving average's max")
for k, batch in enumerate(batches):
    activations = hidden(batch)
    for observer in observers.values():
        observer(activations)
    print(f"{k + 1:5d}  {activations.max().item():7.2f}  | {observers['min/max'].max_val.item():22.2f}"
          f"  {observers['moving average'].max_val.item():20.2f}")
""", learntorch_only=DIGITS)

ch.markdown(r"""
The min/max observer's range jumps to the outlier and stays there; the moving average barely moves.
What does that do to the ordinary activations? Quantize the clean batches with each observer's
`(scale, zero_point)` and measure the error:
""")

ch.code(r"""
clean = hidden(torch.cat(batches[:4]))
for name, observer in observers.items():
    scale, zero_point = observer.calculate_qparams()
    q = torch.quantize_per_tensor(clean, scale.item(), int(zero_point.item()), torch.quint8)
    error = (q.dequantize() - clean).abs()
    clipped = (error > scale.item() / 2 + 1e-6).float().mean().item()
    print(f"{name:15s} scale {scale.item():.4f}: mean |error| {error.mean().item():.4f}, "
          f"max |error| {error.max().item():.3f}, clipped {100 * clipped:.2f}% of the values")
""", learntorch_only=DIGITS)

ch.markdown(r"""
The outlier stretched the min/max observer's grid, so every ordinary activation is rounded more
coarsely: compare the two scales and the two mean errors. The moving average kept a grid close to the
ordinary batches' range; had it been narrower than some of their values, those would have been
clipped — the price of a fine grid. That is **calibration**: choosing the range from representative
data, and deciding how much of the tail to give up for precision everywhere else (torch also has observers that pick the range from a
histogram, minimising the total error). Dynamic quantization sidesteps the question for activations —
every batch gets its own range — which is why it needs no calibration data at all.

## 4 · Per tensor or per channel

One scale for a whole weight matrix is **per-tensor** quantization. But the rows of a Linear layer's
weight (one per output unit) can have very different ranges: a row of small weights then sits on a
grid made for the largest row and uses only a few of its codes. **Per-channel** quantization gives
every row its own scale and zero point (`torch.quantize_per_channel(w, scales, zero_points, axis=0,
dtype)`): a few more floats to store, a finer grid for most rows.
""")

ch.code(r"""
weight = model[1].weight.detach()
row_max = weight.abs().amax(dim=1)
print(f"largest |weight| per row: from {row_max.min().item():.3f} to {row_max.max().item():.3f}")

scale = weight.abs().max().item() / 127              # per tensor, symmetric: one scale, codes -127..127
per_tensor = torch.quantize_per_tensor(weight, scale, 0, torch.qint8)

scales = (row_max / 127).double()                    # per channel: one scale per row
per_channel = torch.quantize_per_channel(weight, scales, torch.zeros(128, dtype=torch.long), 0, torch.qint8)

errors = {}
for name, q in (("per tensor", per_tensor), ("per channel", per_channel)):
    errors[name] = (q.dequantize() - weight).abs().mean().item()
    largest_code = q.int_repr().long().abs().amax(dim=1).float()   # per row: how far out it reaches
    print(f"{name:11s}: mean |error| {errors[name]:.6f}, largest code per row on average "
          f"{largest_code.mean().item():.1f} of 127")
print(f"per channel / per tensor mean error: {errors['per channel'] / errors['per tensor']:.2f}")
""", learntorch_only=DIGITS)

ch.markdown(r"""
The same weights, a smaller mean error (the ratio printed last): per tensor, a typical row reaches
only part of the way to code 127 and leaves the rest of the codes unused; per channel, every row spreads
over all of them.

## 5 · Dynamic quantization of the digits MLP

`quantize_dynamic(model, {nn.Linear}, dtype=torch.qint8)` does all of it for every Linear layer: it copies
the model, observes each weight (symmetric, per tensor by default), stores the int8 codes, and replaces
the layer with a `DynamicQuantizedLinear`. At run time that layer measures each input batch's range,
quantizes the batch to `quint8`, multiplies integers, adding up the products in 32-bit integers so that
nothing overflows, and turns the sums back into float32 with the two scales.
""")

ch.code(r"""
quantized = quantize_dynamic(model, {nn.Linear}, dtype=torch.qint8)
print(quantized)
layer = quantized[1]
print("weight:", layer.weight().dtype, "scale", round(layer.weight().q_scale(), 6), "zero point",
      layer.weight().q_zero_point(), "| bias:", layer.bias().dtype)
print("trainable parameters left:", len(list(quantized.parameters())))
""", learntorch_only=DIGITS)

ch.markdown(r"""
It has no parameters any more: an int8 model is for inference only (training needs the small
gradient steps that a grid of 256 values cannot take).

Now the three numbers that matter. **Size**: the bytes of the state dict's tensors (what the weights
take in memory), and the bytes of the file `torch.save(model.state_dict(), f)` writes.
""")

ch.code(r"""
def tensor_bytes(model):
    # bytes of every tensor in the state dict (a quantized layer keeps (weight, bias) as a tuple)
    total = 0
    for value in model.state_dict().values():
        for t in value if isinstance(value, tuple) else (value,):
            if isinstance(t, torch.Tensor):
                total += t.numel() * t.element_size()
    return total


def file_bytes(model):
    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    return len(buffer.getvalue())
""")

ch.code(r"""
for name, measure in (("weights in memory", tensor_bytes), ("saved file", file_bytes)):
    f32, i8 = measure(model), measure(quantized)
    print(f"{name:17s}: float32 {f32:6,d} bytes, int8 {i8:6,d} bytes -> {f32 / i8:.2f}x smaller")
""", learntorch_only=DIGITS)

ch.markdown(r"""
The weights shrink 4× (one byte instead of four); the biases stay float32, and each layer adds a scale
and a zero point, so the whole state dict is a little under 4× smaller. A file also carries
headers for every tensor it stores, and the quantized model stores more, smaller tensors: on a model
this small the file shrinks less than the weights do. On a big model the weights dominate and both
approach 4×.

**Accuracy** on the test digits:
""")

ch.code(r"""
float_accuracy, int8_accuracy = accuracy(model), accuracy(quantized)
print(f"float32 {float_accuracy:.4f}, int8 {int8_accuracy:.4f}: "
      f"{100 * (int8_accuracy - float_accuracy):+.2f} percentage points")
with torch.no_grad():
    agree = (model(test_images).argmax(1) == quantized(test_images).argmax(1)).float().mean().item()
    gap = (model(test_images) - quantized(test_images)).abs().max().item()
print(f"the two models give the same answer on {100 * agree:.1f}% of the digits; "
      f"their scores differ by at most {gap:.3f}")
""", learntorch_only=DIGITS)

ch.markdown(r"""
**Speed**: one forward pass on a batch of 256 digits, timed as the median of 7 runs of 50 calls each
(timings vary from run to run and machine to machine; compare the two numbers, not their digits).
""")

ch.code(r"""
def forward_seconds(model, x, runs=7, calls=50):
    # median seconds per call of model(x), without a graph
    times = []
    with torch.no_grad():
        model(x)                                         # warm up (compiles the kernels once)
        for _ in range(runs):
            start = time.perf_counter()
            for _ in range(calls):
                model(x)
            times.append((time.perf_counter() - start) / calls)
    return sorted(times)[runs // 2]


batch = test_images[:256]
float_seconds, int8_seconds = forward_seconds(model, batch), forward_seconds(quantized, batch)
print(f"float32 {1e6 * float_seconds:.0f} µs, int8 {1e6 * int8_seconds:.0f} µs per forward of 256 digits "
      f"(int8 takes {int8_seconds / float_seconds:.2f}x the float32 time)")
""", learntorch_only=DIGITS)

ch.markdown(r"""
Where does int8 speed come from? Four times less memory to read for the weights, and integer
multiply-adds that a CPU's SIMD units do four times as many of per instruction as float32 ones. Against
that stand the extra steps: measuring and quantizing the input, and converting the sums back. On a
layer this small those steps are a large part of the work, so the gain is modest and depends on the
machine; on the big matrix products of a large model it approaches the hardware's ratio.
(`python -m benchmarks.quantization` measures the same three figures with repeats, its spread, and
PyTorch's own int8 kernels beside learntorch's.)

## 6 · Where quantization hurts: outliers

A per-tensor scale is set by the **largest** value. One weight far larger than the rest stretches the
grid for all of them. To see it, give one weight of the first layer a value 100 times the largest —
on the input pixel in the top-left corner, which is 0 in every digit, so the float model's answers do not
change at all:
""")

ch.code(r"""
outlier_model = copy.deepcopy(model)
with torch.no_grad():
    outlier_model[1].weight[5, 0] = 100 * model[1].weight.abs().max()
print("the corner pixel is 0 in every test digit:", test_images[:, 0, 0, 0].abs().max().item() == 0)
print(f"float32 with the outlier: {accuracy(outlier_model):.4f} (unchanged)")

per_tensor_model = quantize_dynamic(outlier_model, {nn.Linear}, dtype=torch.qint8)
per_channel_model = quantize_dynamic(outlier_model, {nn.Linear: per_channel_dynamic_qconfig}, dtype=torch.qint8)
print(f"int8 per tensor:  {accuracy(per_tensor_model):.4f} (scale {per_tensor_model[1].weight().q_scale():.4f}: "
      f"most weights are now 0 or ±1 code)")
print(f"int8 per channel: {accuracy(per_channel_model):.4f} (only row 5 has the coarse grid)")
""", learntorch_only=DIGITS)

ch.markdown(r"""
One weight that does not even matter to the float model wrecks the per-tensor int8 model, and
per-channel scales confine the damage to its own row. Real models have outliers like this —
large language models are famous for a few activation channels hundreds of times larger than the rest
— and most of the research on quantization is about them: per-channel and per-group scales, clipping
the range on purpose (calibration), keeping the few outlier channels in higher precision, or moving
the scale from activations into weights before quantizing.

## 7 · torchao and hardware int8, in plain words

- **Why torch is moving on.** `torch.ao.quantization` was built around swapping modules (`nn.Linear` ->
  `DynamicQuantizedLinear`) and CPU kernels from the fbgemm library. **torchao** is a separate library
  that quantizes through tensor subclasses: the weight *becomes* a quantized tensor inside the same
  `nn.Linear`, which composes with `torch.compile`, with GPUs, and with training (quantization-aware
  training, low-precision optimizers). It adds int4 and float8 weights, per-group scales (one scale per
  block of, say, 128 weights — between per-tensor and per-channel) and the techniques for outliers
  above. The ideas of this chapter — scale, zero point, observers, per-channel — are the same there.
- **Hardware int8 units.** CPUs have instructions that multiply 8-bit integers and add groups of them
  into 32-bit sums in one step (x86 VNNI, Arm's dot-product instructions); GPUs have int8 tensor cores
  with two to four times the float16 throughput. That, plus moving a quarter of the bytes, is where
  quantized models get their speed: a model that is limited by memory traffic (most large models,
  generating one token at a time) speeds up almost as much as it shrinks.

## Exercises

Each exercise has a cell for your code and a check cell below it. Replace the
`raise NotImplementedError(...)` lines with your code, run the cell, then run the check: it prints
`✓ passed`, or tells you what went wrong.

### Exercise 13.1 · quantize and dequantize

Write the two functions of section 1 yourself, without `torch.quantize_per_tensor` or `dequantize`:

- `quantize(x, scale, zero_point, qmin, qmax)` takes a float tensor and returns its codes as an
  **int64** tensor of the same shape: `round(x / scale) + zero_point`, rounded to the **nearest** integer
  (`torch.round`; ties go to the even number, as in torch), then **clamped** to `[qmin, qmax]`;
- `dequantize(q, scale, zero_point)` takes such codes and returns the **float32** values
  `scale * (q - zero_point)`.

`qmin, qmax` is `-128, 127` for qint8 and `0, 255` for quint8. The check compares your codes and values
with `torch.quantize_per_tensor`'s on values inside and outside the range.
""")

ch.solution("13.1", points=3, hint=(
    "torch.round, then + zero_point, then torch.clamp(..., qmin, qmax), then .long(); "
    "dequantize subtracts the zero point before multiplying"), source=r"""
def quantize(x, scale, zero_point, qmin, qmax):
    # the int64 codes of float tensor x: round(x / scale) + zero_point, clamped to [qmin, qmax]
    ### BEGIN SOLUTION
    return torch.clamp(torch.round(x / scale) + zero_point, qmin, qmax).long()
    ### END SOLUTION


def dequantize(q, scale, zero_point):
    # the float32 values the codes q stand for: scale * (q - zero_point)
    ### BEGIN SOLUTION
    return scale * (q - zero_point).float()
    ### END SOLUTION
""")

ch.check("13.1", r"""
from course.checks import exercise, check_equal, check_close, check_not_used

RANGES = {torch.qint8: (-128, 127), torch.quint8: (0, 255)}


def check_codes(x, scale, zero_point, dtype):
    # quantize/dequantize against torch.quantize_per_tensor, values inside the grid and beyond it
    qmin, qmax = RANGES[dtype]
    call = f"quantize(x, scale={scale}, zero_point={zero_point}, qmin={qmin}, qmax={qmax})"
    expected = torch.quantize_per_tensor(x, scale, zero_point, dtype)
    codes = quantize(x, scale, zero_point, qmin, qmax)
    check_equal(codes.dtype, torch.int64, name=f"the dtype of {call} (the codes as an int64 tensor: .long())")
    inside = (x / scale + zero_point >= qmin) & (x / scale + zero_point <= qmax)
    check_equal(codes[inside], expected.int_repr().long()[inside], inputs={"x": x[inside]},
                name=f"{call} on values inside the grid (round to the nearest integer with torch.round, "
                     f"then add zero_point)")
    check_equal(codes[~inside], expected.int_repr().long()[~inside], inputs={"x": x[~inside]},
                name=f"{call} on values beyond the grid (clamp the codes to [qmin, qmax] = [{qmin}, {qmax}])")
    check_close(dequantize(codes, scale, zero_point), expected.dequantize(), check_dtype=True,
                inputs={"q": codes}, name=f"dequantize(q, scale={scale}, zero_point={zero_point}): "
                                          f"float32 values scale * (q - zero_point)")


with exercise("13.1"):
    check_not_used(quantize, ["quantize_per_tensor", "quantize_per_channel", "dequantize"],
                   rule="write the formula yourself, without torch's quantization functions")
    check_not_used(dequantize, ["quantize_per_tensor", "quantize_per_channel", "dequantize"],
                   rule="write the formula yourself, without torch's quantization functions")
    x = torch.tensor([-1.0, -0.33, 0.0, 0.04, 0.26, 1.27, 3.0, 20.0, -20.0])
    check_codes(x, 0.1, 0, torch.qint8)
    check_codes(x, 0.1, 7, torch.qint8)
    check_codes(x, 0.05, 128, torch.quint8)
    check_codes(x, 0.02, 0, torch.quint8)
    grid = torch.tensor([[-0.71, 0.12], [0.5, 0.93]])                    # any shape: a 2-d tensor
    check_codes(grid, 0.01, -3, torch.qint8)
""")

ch.hidden_check("13.1", r"""
with exercise("13.1"):
    torch.manual_seed(13)
    values = torch.randn(6, 5) * 3
    for scale, zero_point, dtype in [(0.03, 0, torch.qint8), (0.021, -100, torch.qint8),
                                     (0.04, 200, torch.quint8), (0.5, 10, torch.quint8)]:
        check_codes(values, scale, zero_point, dtype)
""")

ch.markdown(r"""
### Exercise 13.2 · A scale and zero point for an asymmetric range

Write `choose_qparams(min_val, max_val, qmin, qmax)`: given the smallest and largest value an observer
saw (Python floats), return `(scale, zero_point)` — a Python `float` and a Python `int` — such that the
grid covers the range, as `MinMaxObserver` (affine) computes them:

- first **extend the range to include 0** (`min(min_val, 0)` and `max(max_val, 0)`): 0.0 must be exactly
  representable, because padding and ReLU produce exact zeros everywhere;
- `scale = (max − min) / (qmax − qmin)` of that extended range; if that is 0 (every value was 0), use
  float32's epsilon instead, `1.1920928955078125e-07`, so that nothing divides by zero;
- `zero_point = qmin − round(min / scale)` (Python's `round`: ties to even), clamped to `[qmin, qmax]`.

For example `choose_qparams(-1.0, 3.0, 0, 255)` is `(4 / 255, 64)`.
""")

ch.solution("13.2", points=3, hint=(
    "min_val = min(min_val, 0.0), max_val = max(max_val, 0.0); scale = max(scale, eps); "
    "the zero point is the code of 0.0: qmin - round(min_val / scale)"), source=r"""
EPS = 1.1920928955078125e-07        # float32's epsilon (torch.finfo(torch.float32).eps)


def choose_qparams(min_val, max_val, qmin, qmax):
    # (scale, zero_point) of an affine grid of codes qmin..qmax covering [min_val, max_val] and 0
    ### BEGIN SOLUTION
    min_val, max_val = min(min_val, 0.0), max(max_val, 0.0)
    scale = max((max_val - min_val) / (qmax - qmin), EPS)
    zero_point = qmin - round(min_val / scale)
    return float(scale), int(min(max(zero_point, qmin), qmax))
    ### END SOLUTION
""")

ch.check("13.2", r"""
from course.checks import exercise, check_equal, check_close


def observed_qparams(min_val, max_val, dtype):
    # what MinMaxObserver (affine) computes after seeing min_val and max_val
    observer = MinMaxObserver(dtype=dtype, qscheme=torch.per_tensor_affine)
    observer(torch.tensor([min_val, max_val]))
    scale, zero_point = observer.calculate_qparams()
    return scale.item(), int(zero_point.item())


def check_qparams(min_val, max_val, dtype, why):
    qmin, qmax = RANGES[dtype]
    call = f"choose_qparams({min_val}, {max_val}, {qmin}, {qmax})"
    want_scale, want_zero_point = observed_qparams(min_val, max_val, dtype)
    scale, zero_point = choose_qparams(min_val, max_val, qmin, qmax)
    check_equal((type(scale).__name__, type(zero_point).__name__), ("float", "int"),
                name=f"the types of {call}'s (scale, zero_point): a Python float and a Python int")
    check_close(scale, want_scale, rtol=1e-6, atol=0,
                name=f"the scale of {call}: (max - min) / (qmax - qmin){why}")
    check_equal(zero_point, want_zero_point,
                name=f"the zero point of {call}: qmin - round(min_val / scale), clamped{why}")


with exercise("13.2"):
    check_qparams(-1.0, 3.0, torch.quint8, " (the range is 4.0 over 255 steps)")
    check_qparams(-0.3, 1.0, torch.qint8, " (qint8: qmin is -128)")
    check_qparams(0.5, 2.0, torch.quint8, " (extend the range to include 0: min(min_val, 0))")
    check_qparams(-3.0, -1.0, torch.quint8, " (extend the range to include 0: max(max_val, 0))")
    try:
        scale, zero_point = choose_qparams(0.0, 0.0, 0, 255)
    except ZeroDivisionError:
        scale, zero_point = "ZeroDivisionError", None
    want_scale, want_zero_point = observed_qparams(0.0, 0.0, torch.quint8)
    check_equal((scale, zero_point), (want_scale, want_zero_point),
                name="choose_qparams(0.0, 0.0, 0, 255): every value was 0, so the scale would be 0: "
                     "use float32's epsilon 1.1920928955078125e-07 instead")
""")

ch.hidden_check("13.2", r"""
with exercise("13.2"):
    for min_val, max_val, dtype in [(-2.7, 0.9, torch.quint8), (-0.013, 0.41, torch.qint8),
                                    (0.0, 6.1, torch.quint8), (-5.3, -0.2, torch.qint8),
                                    (-1e-3, 1e-3, torch.quint8)]:
        check_qparams(min_val, max_val, dtype, "")
    # an observer's range after real activations: the clean batches of section 3
    check_qparams(clean.min().item(), clean.max().item(), torch.quint8, " (the clean activations of section 3)")
""")

ch.markdown(r"""
## What's next

You can now say what an int8 code means, pick a scale and a zero point, tell rounding from clipping,
quantize a model with `quantize_dynamic`, and measure what it gains (size, often speed) and what it
costs (a little accuracy, a lot with outliers). The last chapter, [14 · Moving to PyTorch](14_to_pytorch.ipynb),
takes a training script from this course, changes one import, and runs it on PyTorch itself.
""")

if __name__ == "__main__":
    sys.exit(ch.main())
