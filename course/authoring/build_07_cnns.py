"""Write course/solutions/07_cnns.ipynb, the instructor source of chapter 07 (convolutional networks).

    python course/authoring/build_07_cnns.py

Edit this file, not the notebook: the notebook is rebuilt from it (``--check``: is it up to date?).
"""
import sys

from notebook_builder import Chapter

ch = Chapter("07", "cnns")

# why the cells that use the digits are learntorch only (see the banner)
DIGITS = "the digits ship with learntorch, as learntorch tensors"
WIDGET = "the widgets are learntorch's own"

ch.markdown(r"""
# 07 · Convolutional networks: sliding windows, pooling, batch norm

Chapter 06's MLP reads a digit as 64 unrelated numbers: move the digit one pixel and, to the MLP, it
is a different list of numbers. Images have structure an MLP ignores — a pixel matters together with
its neighbours, and a stroke is a stroke wherever it is. **Convolutional networks** build that in:
one small set of weights slides over the whole image.

**After this chapter you can**

- compute a convolution three ways — with loops, with `F.conv2d`, and as **im2col + one matrix
  product** (the way the engine and every fast library does it) — and say why they agree;
- predict a convolution's output size from its padding, stride and dilation, and count the weights
  of a layer with channels and groups;
- say where the gradient of max and average pooling goes, and what batch norm does in `train()` and
  in `eval()` mode;
- work out the **receptive field** of a pixel deep in a network;
- train a small CNN that beats chapter 06's MLP on the digits — with fewer weights, and far more
  robust to a one-pixel shift — and look at what its first layer learned.
""")

ch.code(r"""
import math

import learntorch as torch                     # the same code runs on PyTorch: `import torch`
from learntorch import nn
import learntorch.nn.functional as F
from learntorch.utils.data import DataLoader, TensorDataset, random_split

torch.manual_seed(0)                           # every random number below is repeatable
print("running on", torch.__name__, torch.__version__)
""", on_pytorch="it prints PyTorch's name and version")

ch.code(r"""
from learntorch.datasets import Digits
from widgets import ConvExplorer
""", learntorch_only=DIGITS)

ch.markdown(r"""
> **Same code, real PyTorch.** Every code cell runs unchanged with `import torch`, `from torch import nn`,
> `import torch.nn.functional as F` and `from torch.utils.data import ...`, and prints the same,
> except the cells whose first line says otherwise: `# learntorch only: ...` marks the cells that use
> the shipped 8×8 `Digits` or a widget, `# on PyTorch: ...` the cells whose random numbers differ
> (learntorch has its own random number generator).

The digits as in chapter 06: the same 80/20 split of the training digits into training and
validation, the test set kept for the end. Here each set becomes two tensors — all its images,
(N, 1, 8, 8), and all its labels — since the whole set fits in memory many times over.
""")

ch.code(r"""
digits, test_digits = Digits(train=True), Digits(train=False)
train_part, val_part = random_split(digits, [0.8, 0.2], generator=torch.Generator().manual_seed(0))


def as_tensors(dataset):
    # every (image, label) of a dataset, stacked: images (N, 1, 8, 8), labels (N,)
    images, labels = zip(*[dataset[i] for i in range(len(dataset))])
    return torch.stack(images), torch.tensor(labels)


train_images, train_labels = as_tensors(train_part)
val_images, val_labels = as_tensors(val_part)
test_images, test_labels = as_tensors(test_digits)
print("training", tuple(train_images.shape), "validation", tuple(val_images.shape),
      "test", tuple(test_images.shape))
""", learntorch_only=DIGITS)

ch.markdown(r"""
## 1 · What an MLP does not know: pixels have neighbours

Two helpers for the whole chapter: `train_model` is chapter 06's loop (Adam, batches of 64, a
learning rate that first rises and then falls over the run: `OneCycleLR`), and `accuracy` measures
a model on a set of images in `eval()` mode without a graph.
""")

ch.code(r"""
def train_model(model, epochs, lr=1e-2):
    # train `model` on the training images for `epochs` epochs; returns the model
    loader = DataLoader(TensorDataset(train_images, train_labels), batch_size=64, shuffle=True,
                        generator=torch.Generator().manual_seed(0))
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=lr, total_steps=epochs * len(loader))
    for epoch in range(epochs):
        model.train()
        for images, labels in loader:
            loss = F.cross_entropy(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
    return model


def accuracy(model, images, labels):
    # the share of `images` whose highest score is the right label
    model.eval()
    with torch.no_grad():
        return (model(images).argmax(dim=1) == labels).float().mean().item()


def count_parameters(model):
    return sum(p.numel() for p in model.parameters())
""")

ch.code(r"""
torch.manual_seed(0)
mlp = train_model(nn.Sequential(nn.Flatten(), nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10)), epochs=8)
print(f"chapter 06's MLP: {count_parameters(mlp)} parameters, "
      f"validation accuracy {accuracy(mlp, val_images, val_labels):.3f}")
""", learntorch_only=DIGITS)

ch.markdown(r"""
Now move every test digit one pixel to the right. `shift` pads one side with a column of zeros
and cuts the other side off, so the digit itself is unchanged — just one pixel further along.
""")

ch.code(r"""
def shift(images, down, right):
    # every image moved `down` rows and `right` columns (negative: up / left); what enters is 0
    H, W = images.shape[-2:]
    padded = F.pad(images, (max(right, 0), max(-right, 0), max(down, 0), max(-down, 0)))
    top, left = max(-down, 0), max(-right, 0)
    return padded[..., top:top + H, left:left + W]


example = torch.tensor([[[[1., 2., 0.], [3., 4., 0.], [0., 0., 0.]]]])
print(shift(example, 0, 1)[0, 0].tolist())      # one column to the right
print(shift(example, 1, 0)[0, 0].tolist())      # one row down
""")

ch.code(r"""
moved = shift(test_images, 0, 1)
mlp.eval()
with torch.no_grad():
    p_still = F.softmax(mlp(test_images), dim=1)
    p_moved = F.softmax(mlp(moved), dim=1)
rows = torch.arange(len(test_labels))
confidence_still = p_still[rows, test_labels]        # the probability of the right digit
confidence_moved = p_moved[rows, test_labels]
print("digit  label  P(right) as is  P(right) one pixel right")
for i in range(6):
    print(f"{i:5d}  {test_labels[i].item():5d}  {confidence_still[i].item():14.3f}  {confidence_moved[i].item():24.3f}")
print(f"mean over the {len(test_labels)} test digits: {confidence_still.mean().item():.3f} -> "
      f"{confidence_moved.mean().item():.3f}")
print(f"test accuracy: {accuracy(mlp, test_images, test_labels):.3f} as is, "
      f"{accuracy(mlp, moved, test_labels):.3f} moved one pixel right")
""", learntorch_only=DIGITS)

ch.markdown(r"""
A person would not notice the move; the MLP's confidence in the right digit drops and so does its
accuracy. The reason is in its first layer: `nn.Linear(64, 128)` has its own weight for every
(pixel, unit) pair. What it learned about "a stroke at pixel (3, 4)" says nothing about "the same
stroke at pixel (3, 5)": those are different weights, trained on whatever happened to be there.

A convolution makes the opposite assumption: **the same small detector is useful everywhere**. It
has one small kernel — say 3×3 weights — and applies it at every position of the image. A stroke
moved one pixel gives the same response, moved one pixel. And 9 weights instead of 64 × 128.

## 2 · One convolution, three ways

### By hand

Put the 3×3 kernel on the top-left corner of the image, multiply each weight with the pixel under
it, add up the nine products: that is output pixel (0, 0). Slide one pixel right for (0, 1), and so
on. An 8×8 image has 6×6 positions where a 3×3 window fits.
""")

ch.code(r"""
def conv2d_by_hand(image, kernel):
    # one channel, no padding, stride 1: out[i, j] = sum of image window (i, j) * kernel
    H, W = image.shape
    kh, kw = kernel.shape
    out = torch.zeros(H - kh + 1, W - kw + 1)
    for i in range(H - kh + 1):
        for j in range(W - kw + 1):
            out[i, j] = (image[i:i + kh, j:j + kw] * kernel).sum()
    return out


edge = torch.tensor([[-1., 0., 1.],
                     [-1., 0., 1.],
                     [-1., 0., 1.]])           # right column minus left column: a vertical edge
example = torch.tensor([[0., 0., 1., 1., 1.]] * 4)   # dark on the left, bright on the right
print(conv2d_by_hand(example, edge))
""")

ch.markdown(r"""
The kernel answers "is it brighter on the right than on the left?": big where a dark-to-bright
edge is under the window, 0 where the window sees a flat area.

### With `F.conv2d`

`F.conv2d(input, weight)` does the same for a whole batch at once. Its input is 4-D,
(N, C, H, W): N images of C channels; the weight is (out channels, in channels, kh, kw). One image
of one channel and one kernel is `image[None, None]` and `kernel[None, None]`.

(A note on the name: a convolution in mathematics flips the kernel before sliding it. Deep learning
libraries do not flip — strictly it is a cross-correlation — and since the kernel is learned, the
difference does not matter. `F.conv2d` does not flip, and neither do our loops.)
""")

ch.code(r"""
digit = test_images[0, 0]                            # a test digit, (8, 8)
by_hand = conv2d_by_hand(digit, edge)
with_F = F.conv2d(digit[None, None], edge[None, None])[0, 0]
print("shapes", tuple(by_hand.shape), tuple(with_F.shape))
print("largest difference:", (by_hand - with_F).abs().max().item())
""", learntorch_only=DIGITS)

ch.markdown(r"""
The explorer below slides the window for you. Move **position** (or press play): the red frame is
the window, the sum of products under the grids is the output pixel. Try **padding** 1 (a border
of zeros: the output keeps the input's size), **stride** 2 (the window jumps two pixels: half the
size) and **dilation** 2 (the kernel's taps spread apart: a 3×3 kernel covers 5×5 pixels). The
matrix at the bottom is the next subsection.
""")

ch.code(r"""
ConvExplorer(digit, edge, padding=1)
""", learntorch_only=WIDGET)

ch.markdown(r"""
### As one matrix product: im2col

Loops in Python are slow, and a convolution is a lot of small dot products — all with the same
kernel. The trick every fast library uses: **copy every window into one row of a matrix**
("image to columns", im2col). Then all the dot products are one matrix product with the kernel
flattened into a column, which BLAS runs at full speed. The explorer's matrix shows it: one row per
output pixel, one column per kernel tap; the highlighted row is the window in the red frame.

PyTorch exposes the copy as `F.unfold` (it stores the windows as columns: the matrix transposed).
""")

ch.code(r"""
windows = F.unfold(digit[None, None], kernel_size=3)      # (N, kh*kw, positions): one column per window
print("unfold:", tuple(windows.shape))
as_matmul = (edge.reshape(1, 9) @ windows).reshape(6, 6)  # (1, 9) @ (9, 36) -> 36 outputs
print("largest difference to F.conv2d:", (as_matmul - with_F).abs().max().item())
""", learntorch_only=DIGITS)

ch.markdown(r"""
This is exactly how the engine computes `F.conv2d` on the CPU. Its reference tier (the readable
numpy version every fast path is tested against) is short — read it:
""")

ch.code(r"""
import inspect
from learntorch.backends.numpy_families.conv import ConvFamily

print(inspect.getsource(ConvFamily.conv2d))
""", learntorch_only="it prints the source of learntorch's own convolution")

ch.markdown(r"""
With C input channels a window holds C·kh·kw numbers, and with O kernels the weight is an
(O, C·kh·kw) matrix: all channels of all windows of all kernels in one product. The price is
memory — every pixel is copied into up to kh·kw windows — which is why the engine keeps the input,
not the matrix, for the backward pass (the docstring of `numpy_families/conv.py` explains the
backward: it is a matrix product too, followed by `col2im`, which adds the copies back).

## 3 · Padding, stride, dilation, groups: the output size

For an input of size H along one side, a kernel of size k, padding p, stride s and dilation d:

$$H_{out} = \left\lfloor \frac{H + 2p - d\,(k - 1) - 1}{s} \right\rfloor + 1$$

Read it as: the padded input is H + 2p long; a dilated kernel spans d(k − 1) + 1 pixels; the
window can start at every s-th position while it still fits. `padding=k // 2` with stride 1 and an
odd kernel keeps the size ("same" padding: `padding="same"` does it for you).
""")

ch.code(r"""
def output_size(size, kernel, padding=0, stride=1, dilation=1):
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


x = torch.randn(1, 1, 8, 8)
w = torch.randn(1, 1, 3, 3)
print("padding stride dilation  F.conv2d  formula")
for padding, stride, dilation in [(0, 1, 1), (1, 1, 1), (1, 2, 1), (0, 1, 2), (2, 3, 2), (0, 2, 1)]:
    out = F.conv2d(x, w, padding=padding, stride=stride, dilation=dilation)
    print(f"{padding:7d} {stride:6d} {dilation:8d}  {str(tuple(out.shape[-2:])):8s}  "
          f"{output_size(8, 3, padding, stride, dilation)}")
""")

ch.markdown(r"""
**Groups** split the channels into independent parts. With `groups=g`, the C input channels are cut
into g slices; each output channel looks only at the C/g channels of its slice, so the weight is
(O, C/g, kh, kw) and the layer has g times fewer weights. `groups=C` (one channel per group) is a
**depthwise** convolution: every channel filtered on its own — the building block of efficient
mobile networks.
""")

ch.code(r"""
for groups in (1, 2, 8):
    conv = nn.Conv2d(8, 16, kernel_size=3, groups=groups)
    print(f"groups={groups}: weight {tuple(conv.weight.shape)}, {count_parameters(conv)} parameters")
""")

ch.markdown(r"""
## 4 · Channels and filters

A colour image has 3 channels; the output of a convolution layer with 16 kernels has 16. A layer
`nn.Conv2d(C, O, k)` holds O **filters**, each a stack of C kernels of k×k — one per input channel.
Output channel o is the sum, over the input channels, of each channel convolved with its own
kernel of filter o, plus one bias. So a layer has O·C·k·k + O parameters, whatever the image size.
""")

ch.code(r"""
conv = nn.Conv2d(in_channels=3, out_channels=4, kernel_size=3)
x = torch.randn(2, 3, 8, 8)
y = conv(x)
print("input", tuple(x.shape), "-> output", tuple(y.shape), "; weight", tuple(conv.weight.shape),
      "; parameters", count_parameters(conv), "= 4·3·3·3 + 4")

# output channel 1, rebuilt: each input channel with its own kernel of filter 1, summed, plus the bias
rebuilt = sum(F.conv2d(x[:, c:c + 1], conv.weight[1:2, c:c + 1]) for c in range(3)) + conv.bias[1]
print("output channel 1 rebuilt channel by channel:", torch.allclose(y[:, 1:2], rebuilt, atol=1e-5))
""")

ch.markdown(r"""
## 5 · Pooling, and where its gradient goes

A **pooling** layer shrinks a feature map: `MaxPool2d(2)` keeps the largest of every 2×2 block,
`AvgPool2d(2)` their mean. No weights at all. Pooling halves the size, so later layers see a larger
part of the image, and it makes the output care a little less about exactly where a feature was.

Its backward pass is worth seeing once:
""")

ch.code(r"""
x = torch.tensor([[[[1., 3., 2., 0.],
                    [4., 2., 1., 5.],
                    [0., 1., 3., 2.],
                    [2., 6., 1., 1.]]]], requires_grad=True)
pooled = F.max_pool2d(x, 2)
pooled.sum().backward()
print("max pool:", pooled.detach()[0, 0].tolist())
print("its gradient:", x.grad[0, 0].tolist())

x.grad = None
F.avg_pool2d(x, 2).sum().backward()
print("average pool's gradient:", x.grad[0, 0].tolist())
""")

ch.markdown(r"""
- **Max pooling** sends each output's gradient to the **one** input that won: the 4, 5, 6 and 3 get
  a 1, the other twelve pixels get nothing. Only the winner influenced the output, so only the
  winner is told how to change. (In a tie, PyTorch picks the first maximum.)
- **Average pooling** spreads each gradient **evenly**: every pixel of a 2×2 block contributed a
  quarter of the output, so each gets a quarter of its gradient.

## 6 · Batch norm: train vs eval

`nn.BatchNorm2d(C)` normalises each channel over the batch and the positions: it subtracts the
channel's mean and divides by its standard deviation, then scales and shifts with two learned
numbers per channel (`weight`, `bias`: 1 and 0 at the start). This keeps the values flowing into
the next layer in a steady range, which lets a deep network train faster and with larger learning
rates.

The mean and variance come from **the batch** — in training. At test time there may be a single
image, and its prediction must not depend on what else is in the batch. So in training the layer
also keeps **running averages** (`running_mean`, `running_var`: each batch moves them 10% of the
way, `momentum=0.1`), and in `eval()` mode it uses those instead.
""")

ch.code(r"""
bn = nn.BatchNorm2d(2)
x = torch.randn(16, 2, 4, 4) * 3 + 5             # mean about 5, standard deviation about 3
y = bn(x)                                         # training mode: this batch's statistics
print("batch mean per channel   ", [round(v, 3) for v in x.mean(dim=(0, 2, 3)).tolist()])
print("train: output mean, std  ", [round(v, 3) for v in y.mean(dim=(0, 2, 3)).tolist()],
      [round(v, 3) for v in y.std(dim=(0, 2, 3)).tolist()])
print("running_mean after 1 batch", [round(v, 3) for v in bn.running_mean.tolist()], "(10% of the way from 0)")

bn.eval()                                         # inference: the running averages, not the batch
y_eval = bn(x)
print("eval: output mean        ", [round(v, 3) for v in y_eval.mean(dim=(0, 2, 3)).tolist()])
""", on_pytorch="other random numbers")

ch.markdown(r"""
In training mode the output has mean 0 and standard deviation 1 per channel, as promised. In eval
mode, after a single batch, the running mean is still far from 5 — so the same input gives quite a
different output. After many training batches the running averages settle near the data's
statistics, and eval outputs look like training ones. Forgetting `model.eval()` before evaluating
(or `model.train()` after) is the classic batch-norm bug: predictions then depend on the batch.

## 7 · Receptive fields

One output pixel of a 3×3 convolution depends on a 3×3 patch of the input: its **receptive
field**. Stack layers and it grows: a second 3×3 convolution sees 3×3 pixels of the first one's
output, each of which sees 3×3 of the input — 5×5 in all. A pooling layer with stride 2 makes
every later step count double. Walking from the input, with `size` the field and `jump` the
distance between two neighbouring pixels, measured in input pixels:

    size += dilation · (kernel - 1) · jump        jump *= stride

The gradient shows it directly: which input pixels change one output pixel? Below, a probe network
with every weight 1 and no nonlinearity, so no gradient is hidden by a zero:
""")

ch.code(r"""
probe = nn.Sequential(nn.Conv2d(1, 1, 3, padding=1, bias=False), nn.AvgPool2d(2),
                      nn.Conv2d(1, 1, 3, padding=1, bias=False))
for layer in probe:
    if isinstance(layer, nn.Conv2d):
        nn.init.ones_(layer.weight)
x = torch.ones(1, 1, 12, 12, requires_grad=True)
out = probe(x)                                     # (1, 1, 6, 6)
out[0, 0, 2, 3].backward()                         # one output pixel
for row in (x.grad[0, 0] != 0).int().tolist():     # 1: this input pixel changes the output pixel
    print(" ".join(str(v) for v in row))
# the formula: conv 3x3 -> size 3, jump 1; pool 2 -> size 4, jump 2; conv 3x3 -> size 4 + 2·2 = 8
""")

ch.markdown(r"""
An 8×8 block of input pixels influences that one output pixel: 3, then 4, then 8, as the formula
says. This is how a CNN sees whole shapes: early layers see strokes, deeper layers combine them
into loops and corners over larger and larger areas.

## 8 · A CNN for the digits

Two convolution blocks — convolution, batch norm, ReLU, max pooling — take the 8×8 digit to 16
feature maps of 4×4 and then 32 maps of 2×2; a linear layer turns those 128 numbers into 10
scores. Each pixel of the last maps has a 10×10 receptive field: it sees the whole digit.
""")

ch.code(r"""
def make_cnn():
    return nn.Sequential(
        nn.Conv2d(1, 16, kernel_size=3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),   # 16 x 4 x 4
        nn.Conv2d(16, 32, kernel_size=3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),  # 32 x 2 x 2
        nn.Flatten(),
        nn.Linear(32 * 2 * 2, 10),
    )


torch.manual_seed(0)
cnn = train_model(make_cnn(), epochs=8)
print(f"CNN: {count_parameters(cnn)} parameters (the MLP: {count_parameters(mlp)}), "
      f"validation accuracy {accuracy(cnn, val_images, val_labels):.3f}")
""", learntorch_only=DIGITS)

ch.markdown(r"""
Both models are fixed now; the test set, once, and the same test digits moved by one pixel in each
direction:
""")

ch.code(r"""
moves = {"as is": (0, 0), "right": (0, 1), "left": (0, -1), "down": (1, 0), "up": (-1, 0)}
print(f"{'test digits':12s}  {'MLP':>6s}  {'CNN':>6s}")
results = {}
for name, (down, right) in moves.items():
    images = shift(test_images, down, right)
    results[name] = (accuracy(mlp, images, test_labels), accuracy(cnn, images, test_labels))
    print(f"{name:12s}  {results[name][0]:6.3f}  {results[name][1]:6.3f}")
moved_mlp = sum(r[0] for n, r in results.items() if n != "as is") / 4
moved_cnn = sum(r[1] for n, r in results.items() if n != "as is") / 4
print(f"{'moved, mean':12s}  {moved_mlp:6.3f}  {moved_cnn:6.3f}")
print(f"parameters    {count_parameters(mlp):6d}  {count_parameters(cnn):6d}")
""", learntorch_only=DIGITS)

ch.markdown(r"""
The CNN is more accurate on the test digits as they are, with fewer parameters than the MLP — and
a one-pixel move costs it much less. The shared kernels respond to a stroke wherever it is, and max
pooling forgives a little movement. It is not fully shift-proof: at 8×8, one pixel is an eighth of
the image, strokes are cut off at the border, and the last linear layer still reads each of the
2×2 positions with its own weights.

## 9 · What the first layer learned

The 16 filters of the first layer, each a 3×3 kernel (red: positive weight, blue: negative):
""")

ch.code(r"""
import matplotlib.pyplot as plt

filters = cnn[0].weight.detach()                   # (16, 1, 3, 3)
fig, axes = plt.subplots(2, 8, figsize=(10, 2.8))
for k, ax in enumerate(axes.flat):
    kernel = filters[k, 0]
    limit = kernel.abs().max().item()
    ax.imshow(kernel.numpy(), cmap="RdBu_r", vmin=-limit, vmax=limit)
    ax.set_title(f"filter {k}", fontsize=8)
    ax.axis("off")
plt.show()
""", learntorch_only=DIGITS)

ch.markdown(r"""
Tiny digits and eight epochs give rough filters, but look for a pattern: several have a positive
side and a negative side, like the edge kernel we wrote by hand in section 2, at various angles;
others are harder to read. (Networks trained longer on large photographs learn strikingly clean
edge detectors in their first layer.) What a filter does is easier to see in what it makes of a
digit.

The explorer shows the trained network at work: choose a **layer** and a **channel** to see its
filters and the feature map it computes for a test **digit**; choose a pixel (**row**, **col**) of
the feature map to see its receptive field framed in red on the digit. Layer `4` is the second
convolution: its filters have 16 kernels each, one per channel of the first layer's output, and its
pixels see larger parts of the digit.
""")

ch.code(r"""
ConvExplorer.on_model(cnn, test_images[:10], layer="0", channel=0, pixel=(3, 3))
""", learntorch_only=WIDGET)

ch.markdown(r"""
## Exercises

Each exercise has a cell for your code and a check cell below it. Replace the
`raise NotImplementedError(...)` lines with your code, run the cell, then run the check: it prints
`✓ passed`, or tells you what went wrong.

### Exercise 07.1 · A convolution with loops

Write two functions:

- `conv_output_size(size, kernel, padding=0, stride=1, dilation=1)`: the output size along one
  side (section 3's formula), an `int`;
- `conv2d_loops(x, weight, bias=None, stride=1, padding=0)`: the convolution of a batch `x`
  (N, C, H, W) with `weight` (O, C, kh, kw) and an optional `bias` (O,), as
  `F.conv2d(x, weight, bias, stride=stride, padding=padding)` computes it (`stride` and `padding`
  are ints, the same for both sides). Loop over the output positions; at each one, take the window
  of the zero-padded input and multiply-add it with the weight (one position can do all images and
  all output channels at once). Rules: no `F.conv2d`, `F.unfold` or `nn.Conv2d` — the point is to
  do their job — but `F.pad` is fine. The result must be a tensor that carries gradients back to
  `x` and `weight` (no detour through numpy or `.item()`).
""")

ch.solution("07.1", points=3, hint=(
    "pad once with F.pad(x, (padding,) * 4); window (i, j) starts at row i·stride, column j·stride "
    "of the padded input; (window[:, None] * weight[None]).sum(dim=(2, 3, 4)) is (N, O); "
    "collect the positions and torch.stack them"), source=r"""
def conv_output_size(size, kernel, padding=0, stride=1, dilation=1):
    ### BEGIN SOLUTION
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1
    ### END SOLUTION


def conv2d_loops(x, weight, bias=None, stride=1, padding=0):
    # x (N, C, H, W), weight (O, C, kh, kw), bias (O,) or None -> (N, O, Ho, Wo)
    ### BEGIN SOLUTION
    N, C, H, W = x.shape
    O, _, kh, kw = weight.shape
    Ho, Wo = conv_output_size(H, kh, padding, stride), conv_output_size(W, kw, padding, stride)
    padded = F.pad(x, (padding, padding, padding, padding))
    rows = []
    for i in range(Ho):
        row = []
        for j in range(Wo):
            window = padded[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]   # (N, C, kh, kw)
            row.append((window[:, None] * weight[None]).sum(dim=(2, 3, 4)))             # (N, O)
        rows.append(torch.stack(row, dim=-1))                                           # (N, O, Wo)
    out = torch.stack(rows, dim=-2)                                                     # (N, O, Ho, Wo)
    if bias is not None:
        out = out + bias[None, :, None, None]
    return out
    ### END SOLUTION
""")

ch.check("07.1", r"""
from course.checks import exercise, check_equal, check_close, check_shape, check_function, \
    check_not_called, check_not_used

RULE = "no F.conv2d, F.unfold or nn.Conv2d: loop over the output positions yourself"


def compare_with_conv2d(N, C, H, W, O, kh, kw, stride, padding, bias, seed, why, fn=None,
                        forbidden=("F.conv2d", "F.unfold", "torch.nn.Conv2d.forward"), rule=RULE,
                        shape_hint="Ho = conv_output_size(H, kh, padding, stride), the same for Wo"):
    # fn (conv2d_loops unless given) against F.conv2d on random numbers: the output, and the
    # gradients of x, weight and bias; exercise 07.2 uses it too
    fn = fn or conv2d_loops
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(N, C, H, W, generator=g, requires_grad=True)
    weight = torch.randn(O, C, kh, kw, generator=g, requires_grad=True)
    b = torch.randn(O, generator=g, requires_grad=True) if bias else None
    call = (f"{fn.__name__}(x {tuple(x.shape)}, weight {tuple(weight.shape)}, "
            f"bias {'(%d,)' % O if bias else None}, stride={stride}, padding={padding})")
    inputs = {"x": x, "weight": weight}
    out = check_not_called(fn, (x, weight, b, stride, padding), list(forbidden), rule=rule, name=call)
    want = F.conv2d(x, weight, b, stride=stride, padding=padding)
    check_shape(out, tuple(want.shape), name=f"shape of {call} (as F.conv2d: {shape_hint})", inputs=inputs)
    check_close(out, want, atol=1e-4, rtol=1e-4, inputs=inputs, name=f"{call} vs F.conv2d{why}")
    check_equal(out.requires_grad, True, name=f"{call}.requires_grad (the result must carry gradients: "
                                               "build it from tensor operations, no numpy or .item())")
    seed_grad = torch.randn(*want.shape, generator=g)
    wrt = [x, weight] + ([b] if bias else [])
    got = torch.autograd.grad((out * seed_grad).sum(), wrt)
    expected = torch.autograd.grad((want * seed_grad).sum(), wrt)
    for what, a, e in zip(["x", "weight", "bias"], got, expected):
        check_close(a, e, atol=1e-4, rtol=1e-4, name=f"the gradient of {call} with respect to {what}")


with exercise("07.1"):
    check_function(conv_output_size, [
        ((8, 3), 6), ((8, 3, 1), 8), ((8, 3, 1, 2), 4), ((7, 3, 1, 2), 4), ((8, 3, 0, 1, 2), 4),
        ((28, 5, 2, 1), 28), ((10, 4, 0, 3), 3), ((5, 5), 1), ((9, 3, 2, 3, 2), 3),
    ], name="conv_output_size (size, kernel, padding, stride, dilation; a window that does not fit is not "
            "counted: the division rounds down, //)")
    check_equal(type(conv_output_size(8, 3, 1, 2)).__name__, "int",
                name="type of conv_output_size(8, 3, 1, 2) (a size is an int: floor division //)")
    check_not_used(conv2d_loops, ["conv2d", "unfold", "Conv2d"], rule=RULE)
    compare_with_conv2d(1, 1, 5, 5, 1, 3, 3, stride=1, padding=0, bias=False, seed=0,
                        why=" (one image, one channel: out[i, j] is the sum of window (i, j) times the "
                            "kernel, not flipped)")
    compare_with_conv2d(2, 3, 6, 7, 4, 3, 2, stride=1, padding=0, bias=True, seed=1,
                        why=" (channels: output channel o sums over every input channel, plus bias[o])")
    compare_with_conv2d(2, 2, 5, 6, 3, 3, 3, stride=1, padding=1, bias=True, seed=2,
                        why=" (padding: zeros around the image, `padding` pixels on every side)")
    compare_with_conv2d(2, 2, 7, 8, 3, 3, 3, stride=2, padding=0, bias=False, seed=3,
                        why=" (stride: window (i, j) starts at row i·stride, column j·stride)")
    compare_with_conv2d(1, 2, 9, 8, 2, 2, 3, stride=3, padding=2, bias=True, seed=4,
                        why=" (stride and padding together: pad first, then slide by the stride)")
""")

ch.hidden_check("07.1", r"""
with exercise("07.1"):
    check_function(conv_output_size, [((32, 3, 1, 1), 32), ((32, 3, 1, 2), 16), ((31, 7, 3, 2, 1), 16),
                                      ((6, 2, 0, 2, 3), 2), ((1, 1), 1)],
                   name="conv_output_size (size, kernel, padding, stride, dilation)")
    compare_with_conv2d(3, 1, 8, 8, 5, 1, 1, stride=1, padding=0, bias=True, seed=10, why=" (a 1x1 kernel)")
    compare_with_conv2d(2, 3, 10, 6, 2, 5, 3, stride=2, padding=2, bias=False, seed=11,
                        why=" (a tall kernel, stride 2, padding 2)")
    compare_with_conv2d(1, 1, 4, 4, 1, 4, 4, stride=1, padding=0, bias=True, seed=12,
                        why=" (one window covering the whole image)")
""")

ch.markdown(r"""
### Exercise 07.2 · A convolution as one matrix product

Write `conv2d_im2col(x, weight, bias=None, stride=1, padding=0)` with the same meaning as
`conv2d_loops`, the way the engine does it (section 2): `F.unfold` copies the windows —
`F.unfold(x, kernel_size=(kh, kw), padding=padding, stride=stride)` is (N, C·kh·kw, Ho·Wo) — and
**one matrix product** with the weight reshaped to (O, C·kh·kw) gives all the outputs; reshape
them to (N, O, Ho, Wo) and add the bias. Rules: no `F.conv2d` or `nn.Conv2d`, no Python loop
(`for`/`while`, also not in a comprehension), and `F.unfold` must be used. As before, the result
must carry gradients to `x`, `weight` and `bias`.
""")

ch.solution("07.2", points=3, hint=(
    "weight.reshape(O, -1) @ F.unfold(...) broadcasts over the batch: (O, C·kh·kw) @ (N, C·kh·kw, L) "
    "is (N, O, L); Ho and Wo follow from the formula of exercise 07.1"), source=r"""
def conv2d_im2col(x, weight, bias=None, stride=1, padding=0):
    # x (N, C, H, W), weight (O, C, kh, kw), bias (O,) or None -> (N, O, Ho, Wo)
    ### BEGIN SOLUTION
    N, C, H, W = x.shape
    O, _, kh, kw = weight.shape
    Ho = (H + 2 * padding - kh) // stride + 1
    Wo = (W + 2 * padding - kw) // stride + 1
    windows = F.unfold(x, kernel_size=(kh, kw), padding=padding, stride=stride)   # (N, C*kh*kw, Ho*Wo)
    out = (weight.reshape(O, -1) @ windows).reshape(N, O, Ho, Wo)
    if bias is not None:
        out = out + bias.reshape(1, O, 1, 1)
    return out
    ### END SOLUTION
""")

ch.check("07.2", r"""
import dis
from course import observe

RULE_07_2 = "no F.conv2d or nn.Conv2d: F.unfold and one matrix product"


def loops_in(fn):
    # the loops in fn's compiled code, comprehensions included (they are code objects of their own)
    found, pending = [], [fn.__code__]
    while pending:
        code = pending.pop()
        if any(instruction.opname == "FOR_ITER" for instruction in dis.get_instructions(code)):
            found.append("a for loop or comprehension")
        if any(instruction.opname.startswith("JUMP_BACKWARD") for instruction in dis.get_instructions(code)):
            found.append("a loop")
        pending.extend(c for c in code.co_consts if hasattr(c, "co_code"))
    return sorted(set(found))


def compare_im2col(N, C, H, W, O, kh, kw, stride, padding, bias, seed, why):
    # exercise 07.1's comparison with F.conv2d, for conv2d_im2col, which must call F.unfold
    with observe.spying(["F.unfold"], conv2d_im2col.__globals__) as unfold_calls:
        compare_with_conv2d(N, C, H, W, O, kh, kw, stride, padding, bias, seed, why, fn=conv2d_im2col,
                            forbidden=["F.conv2d", "torch.nn.Conv2d.forward"], rule=RULE_07_2,
                            shape_hint="the (N, O, Ho·Wo) product reshaped to (N, O, Ho, Wo)")
    check_equal(len(unfold_calls) >= 1, True,
                name=f"conv2d_im2col(...) with stride={stride}, padding={padding} calls F.unfold "
                     f"(the windows come from F.unfold)")


with exercise("07.2"):
    check_not_used(conv2d_im2col, ["conv2d", "Conv2d"], rule=RULE_07_2)
    check_equal(", ".join(loops_in(conv2d_im2col)) or "no loop", "no loop",
                name="loops in conv2d_im2col (the exercise rules them out: one matrix product does every "
                     "position, every image and every output channel at once)")
    compare_im2col(1, 1, 5, 5, 1, 3, 3, stride=1, padding=0, bias=False, seed=0,
                   why=" (one image, one channel: the weight reshaped to (O, C·kh·kw) times the windows)")
    compare_im2col(3, 2, 6, 7, 4, 2, 3, stride=1, padding=0, bias=True, seed=1,
                   why=" (a batch, channels, a bias per output channel: reshape to (N, O, Ho, Wo), "
                       "the output channels before the positions)")
    compare_im2col(2, 3, 7, 6, 2, 3, 3, stride=2, padding=1, bias=True, seed=2,
                   why=" (stride and padding: pass them to F.unfold and use them in Ho and Wo)")
""")

ch.hidden_check("07.2", r"""
with exercise("07.2"):
    compare_im2col(2, 4, 9, 5, 3, 1, 1, stride=1, padding=0, bias=True, seed=10, why=" (a 1x1 kernel)")
    compare_im2col(1, 1, 10, 12, 5, 5, 3, stride=3, padding=2, bias=False, seed=11,
                   why=" (a tall kernel, stride 3, padding 2)")
""")

ch.markdown(r"""
## What's next

You can now build and read a convolutional network: sliding windows and the one matrix product
behind them, the output-size formula, channels, pooling and its gradient, batch norm's two modes,
receptive fields — and a CNN that beats the MLP with fewer weights. The engine computed every
convolution in this chapter with numpy's matrix product or a Numba kernel behind one backend
method. Next, [**08 · Kernels and devices**](08_kernels_devices.ipynb) opens those kernels up: you
write your own, train a model on them, write a CUDA kernel, and profile a training step.
""")

if __name__ == "__main__":
    sys.exit(ch.main())
