"""Write course/solutions/05_data.ipynb, the instructor source of chapter 05 (data).

    python course/authoring/build_05_data.py

Edit this file, not the notebook: the notebook is rebuilt from it (``--check``: is it up to date?).
"""
import sys

from notebook_builder import Chapter

ch = Chapter("05", "data")

# why the cells that use the digits are learntorch only (see the banner)
DIGITS = "the digits and their transforms ship with learntorch, as learntorch tensors"

ch.markdown(r"""
# 05 · Data: Datasets, DataLoaders and transforms

A training loop wants batches: a tensor of 64 images and a tensor of their 64 labels, shuffled
differently every epoch. PyTorch splits that job in two. A **`Dataset`** knows how to produce one
sample; a **`DataLoader`** asks it for samples, groups them into batches, shuffles, and can do the work
in parallel worker processes.

**After this chapter you can**

- wrap any data in a `Dataset` (two methods: `__len__` and `__getitem__`);
- let a `DataLoader` batch and shuffle it, repeatably, from a seeded generator;
- predict what the default *collate* function makes of tuples, dicts and numbers, and write your own;
- add transforms (normalise, augment) that run on each sample;
- load in worker processes, and feed a training loop from a `DataLoader`.
""")

ch.code(r"""
import learntorch as torch                     # the same code runs on PyTorch: `import torch`
from learntorch.utils.data import Dataset, DataLoader, TensorDataset, default_collate

torch.manual_seed(0)                           # every random number below is repeatable
print("running on", torch.__name__, torch.__version__)
""", on_pytorch="it prints PyTorch's name and version")

ch.code(r"""
from learntorch.datasets import Digits, load_digits, transforms
""", learntorch_only=DIGITS)

ch.markdown(r"""
> **Same code, real PyTorch.** `torch.utils.data` has the same names in the same place, and every
> code cell of this chapter runs unchanged with `import torch` and prints the same, except the cells
> whose first line says otherwise: `# on PyTorch: ...` (other random numbers) or
> `# learntorch only: ...`. Those use the 8×8 digits, which ship with learntorch so that this
> chapter runs offline. Ready-made datasets and image transforms are not part of PyTorch itself but
> of the separate `torchvision` package: on PyTorch you would use `torchvision.datasets.MNIST` and
> `from torchvision import transforms`.

## 1 · The digits

1797 handwritten digits of 8×8 pixels, split (per class, deterministically) into a training set and
a held-out test set. Each sample is a pair `(image, label)`: a float tensor of shape `(1, 8, 8)` —
one channel, 8 rows, 8 columns, values in $[0, 1]$ — and the digit as an `int`.
""")

ch.code(r"""
train_set = Digits(train=True)
test_set = Digits(train=False)
print(train_set)
print(test_set)

image, label = train_set[0]
print("image:", tuple(image.shape), image.dtype, "| label:", label)
""", learntorch_only=DIGITS)

ch.code(r"""
import matplotlib.pyplot as plt

fig, axes = plt.subplots(1, 10, figsize=(10, 1.4))
for i, ax in enumerate(axes):
    image, label = train_set[i]
    ax.imshow(image[0].numpy(), cmap="gray_r")
    ax.set_title(label)
    ax.axis("off")
plt.show()
""", learntorch_only=DIGITS)

ch.markdown(r"""
## 2 · A Dataset is two methods

A map-style dataset answers two questions: how many samples (`__len__`), and what is sample `i`
(`__getitem__`). It can compute each sample when asked, so a dataset may be far bigger than memory
(images read from disk one by one) or not stored at all:
""")

ch.code(r"""
class Squares(Dataset):
    # sample i is (x, x**2) for x = i: computed when asked, never stored

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, index):
        if not 0 <= index < self.n:
            raise IndexError(f"Squares has {self.n} samples, index {index} is out of range")
        x = torch.tensor([float(index)])
        return x, x ** 2


squares = Squares(10)
print(len(squares), squares[3])
""")

ch.markdown(r"""
When the data already sits in tensors, `TensorDataset` does the indexing for you: sample `i` is
`(images[i], labels[i])`.
""")

ch.code(r"""
images, labels = load_digits()                 # all 1797: (1797, 1, 8, 8) floats, (1797,) ints
everything = TensorDataset(images, labels)
image, label = everything[0]
print(len(everything), tuple(image.shape), label)
""", learntorch_only=DIGITS)

ch.markdown(r"""
## 3 · DataLoader: from samples to batches

`DataLoader(dataset, batch_size=4)` takes samples 0–3, then 4–7, ..., and hands each group to a
*collate* function that turns a list of samples into one batch. The last batch holds what is left
(`drop_last=True` drops it instead). `len(loader)` is the number of batches.
""")

ch.code(r"""
loader = DataLoader(squares, batch_size=4)
print("batches per epoch:", len(loader))
for xb, yb in loader:
    print(tuple(xb.shape), xb.flatten().tolist(), "->", yb.flatten().tolist())
""")

ch.markdown(r"""
## 4 · Collate: how a list of samples becomes a batch

The default collate function, `default_collate`, keeps the **structure** of a sample and batches each
leaf:

| each sample holds | the batch holds |
| --- | --- |
| a tensor of shape `S` | one tensor of shape `(B, *S)`: the samples **stacked** along a new first dimension |
| a Python `int` / `float` | an `int64` / `float64` tensor of shape `(B,)` |
| a tuple or list | a list with each position collated |
| a dict | a dict with each key collated |
| a string | the strings, as they were |
""")

ch.code(r"""
samples = [train_set[i] for i in range(3)]               # three (image, label) pairs
images_b, labels_b = default_collate(samples)
print("images:", tuple(images_b.shape), images_b.dtype, "| labels:", labels_b)

records = [{"image": train_set[i][0], "label": train_set[i][1], "weight": 0.5, "name": f"digit {i}"}
           for i in range(4)]
batch = default_collate(records)
for key, value in batch.items():
    print(f"{key:6s}", (tuple(value.shape), value.dtype) if isinstance(value, torch.Tensor) else value)
""", learntorch_only=DIGITS)

ch.markdown(r"""
### See it: stacking makes a new first dimension

Three samples of shape `(4,)` become one batch of shape `(3, 4)`. Stacking copies them, one after
the other, into **one** new block of memory: sample `i` starts at storage position `4·i`, and
`batch[i]` is a view that reads exactly those cells. Pick a view and an index in the explorer and
watch which storage cell it reads.
""")

ch.code(r"""
from widgets import TensorExplorer

rows = [torch.tensor([0.0, 1.0, 2.0, 3.0]) + 10 * i for i in range(3)]   # three samples
stacked = default_collate(rows)
print("batch shape", tuple(stacked.shape), "stride", stacked.stride())
TensorExplorer(stacked, views={"batch[1]  (sample 1)": stacked[1], "batch[:, 0]  (feature 0)": stacked[:, 0]})
""", learntorch_only="TensorExplorer is one of learntorch's widgets")

ch.markdown(r"""
Stacking needs samples of equal shape. When they differ — sentences of different lengths, say — the
default collate refuses, and you pass your own `collate_fn`, here one that pads with zeros:
""")

ch.code(r"""
sentences = [torch.tensor([3, 1, 4]), torch.tensor([1, 5]), torch.tensor([9, 2, 6, 5])]
try:
    default_collate(sentences)
except RuntimeError as error:
    print("default_collate:", error)


def pad_collate(batch):
    # pad every sequence with zeros to the longest one; also return the true lengths
    longest = max(len(seq) for seq in batch)
    padded = torch.zeros(len(batch), longest, dtype=torch.int64)
    for i, seq in enumerate(batch):
        padded[i, :len(seq)] = seq
    return padded, torch.tensor([len(seq) for seq in batch])


for tokens, lengths in DataLoader(sentences, batch_size=3, collate_fn=pad_collate):
    print(tokens, lengths)
""")

ch.markdown(r"""
(A plain Python list is a valid dataset: it has `__len__` and `__getitem__`.)

## 5 · Shuffling, repeatably

`shuffle=True` draws a new order of the samples at the start of every epoch. The order comes from a
random generator: pass your own, seeded, and the whole sequence of epochs repeats exactly — the
same run twice gives the same batches, so a result can be reproduced and a bug found again.
""")

ch.code(r"""
ten = TensorDataset(torch.arange(10))
loader = DataLoader(ten, batch_size=5, shuffle=True, generator=torch.Generator().manual_seed(0))
for epoch in range(2):
    print(f"epoch {epoch}:", [xb.tolist() for (xb,) in loader])

again = DataLoader(ten, batch_size=5, shuffle=True, generator=torch.Generator().manual_seed(0))
print("new loader, same seed:", [xb.tolist() for (xb,) in again])
""", on_pytorch="another order: PyTorch draws its own random numbers")

ch.markdown(r"""
Without `generator=`, the loader draws its seed from the global generator, so `torch.manual_seed`
at the top of a notebook makes the run repeatable too. (The numbers are not PyTorch's: learntorch has
its own random number generator, so the same seed gives a different, but equally repeatable, order.)

## 6 · Transforms: work done on each sample

A dataset's `transform` is a function applied to every image as it is fetched. Two kinds:

- **preprocessing**, the same for every sample — e.g. `Normalize(mean, std)`, which shifts and scales
  pixels to mean 0 and standard deviation 1 (many models train faster on such inputs);
- **augmentation**, random — e.g. a random shift of a pixel or so, so that the model sees a slightly
  different picture every epoch and learns the digit rather than its exact position.

`transforms.Compose([...])` chains several. The statistics for `Normalize` come from the training set
(one batch holding all of it):
""")

ch.code(r"""
all_train_images, _ = next(iter(DataLoader(train_set, batch_size=len(train_set))))
mean, std = all_train_images.mean().item(), all_train_images.std().item()
print(f"training pixels: mean {mean:.4f}, std {std:.4f}")

normalize = transforms.Normalize(mean=[mean], std=[std])      # one value per channel
normalized_set = Digits(train=True, transform=normalize)
image, _ = normalized_set[0]
print(f"a normalised image: mean {image.mean().item():.3f}, min {image.min().item():.3f}, max {image.max().item():.3f}")
""", learntorch_only=DIGITS)

ch.code(r"""
augment = transforms.Compose([
    transforms.RandomCrop(8, padding=1),      # pad by 1 pixel, cut a random 8x8 window: a shift of up to 1 pixel
    normalize,
])
augmented_set = Digits(train=True, transform=augment)

fig, axes = plt.subplots(1, 6, figsize=(6, 1.2))
for ax in axes:                                # sample 0, fetched six times: six different shifts
    ax.imshow(augmented_set[0][0][0].numpy(), cmap="gray_r")
    ax.axis("off")
plt.show()
""", learntorch_only=DIGITS)

ch.markdown(r"""
## 7 · Worker processes

With `num_workers=2`, two worker processes fetch and collate batches while your loop trains on the
previous ones; the loader still hands you the batches **in order**. `get_worker_info()` tells code
running inside a worker which worker it is (in the main process it returns `None`):
""")

ch.code(r"""
from learntorch.utils.data import get_worker_info


class WhoLoadedMe(Dataset):
    # sample i is (i, id of the worker process that fetched it; -1 for the main process)

    def __len__(self):
        return 8

    def __getitem__(self, index):
        info = get_worker_info()
        return index, -1 if info is None else info.id


for indices, workers in DataLoader(WhoLoadedMe(), batch_size=2, num_workers=2):
    print("samples", indices.tolist(), "fetched by worker", workers.tolist())
for indices, workers in DataLoader(WhoLoadedMe(), batch_size=4):
    print("samples", indices.tolist(), "fetched by worker", workers.tolist())
""")

ch.markdown(r"""
Each worker builds whole batches, taking turns. Workers pay off when fetching a sample is slow —
reading and decoding files, heavy augmentation; for data that already sits in memory, like the
digits, starting processes costs more than it saves. Random transforms inside workers stay
repeatable: each worker's generator is seeded from the loader's seed and the worker's id.

## 8 · All together: a training loop fed by DataLoaders

A small MLP on the normalised digits, with a live dashboard of loss and accuracy (optimizers come
with their own chapter; here `Adam` just does its job). A few seconds of training reach well over
90% on test digits the model never saw.
""")

ch.code(r"""
from learntorch import nn
import learntorch.nn.functional as F
from widgets import TrainingDashboard

torch.manual_seed(0)
train_loader = DataLoader(Digits(train=True, transform=normalize), batch_size=64, shuffle=True,
                          generator=torch.Generator().manual_seed(0))
test_loader = DataLoader(Digits(train=False, transform=normalize), batch_size=256)

model = nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
epochs = 5
dashboard = TrainingDashboard(epochs=epochs, steps_per_epoch=len(train_loader), model=model)

for epoch in range(epochs):
    model.train()
    for xb, yb in train_loader:
        scores = model(xb)
        loss = F.cross_entropy(scores, yb)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        accuracy = (scores.argmax(dim=1) == yb).float().mean().item()
        dashboard.step(loss=loss.item(), accuracy=accuracy, batch_size=len(xb))

    model.eval()
    with torch.no_grad():
        test_loss, correct = 0.0, 0
        for xb, yb in test_loader:
            scores = model(xb)
            test_loss += F.cross_entropy(scores, yb, reduction="sum").item()
            correct += (scores.argmax(dim=1) == yb).sum().item()
    dashboard.epoch_end(val_loss=test_loss / len(test_set), val_accuracy=correct / len(test_set))

dashboard.close()
print(f"test accuracy after {epochs} epochs: {correct / len(test_set):.3f}")
""", learntorch_only=DIGITS)

ch.markdown(r"""
## Exercises

Each exercise has a cell for your code and a check cell below it. Replace the
`raise NotImplementedError(...)` lines with your code, run the cell, then run the check: it prints
`✓ passed`, or tells you which input went wrong, what was expected and what came back.

### Exercise 05.1 · A Dataset for the digits

`Digits` is only a few lines over the raw data. Write your own: `DigitsDataset(transform=None)`
holds all 1797 digits, starting from the raw pixel counts that `load_digits(raw=True)` gives
(`uint8`, shape `(1797, 8, 8)`, values 0..16, and the labels, `int64`, shape `(1797,)`).

- `len(dataset)` is 1797;
- `dataset[i]` is `(image, label)`: `image` a `float32` tensor of shape `(1, 8, 8)` with values
  scaled to $[0, 1]$ (pixel / 16), `label` the digit as a Python `int` (not a tensor: the default
  collate turns ints into an `int64` batch);
- when `transform` is given, `dataset[i]` returns `(transform(image), label)`. A transform may
  change the image it is given in place (many do, to save memory): `dataset[i]` must still give the
  same image every time, so hand it an image of its own, not the one your dataset keeps.

Tip: convert all images once in `__init__`, not in every `__getitem__`.
""")

ch.solution("05.1", points=3, learntorch_only=DIGITS, hint=(
    "convert once in __init__: pixels.float() / 16, then .unsqueeze(1) for the channel; "
    "__getitem__ returns (image, int(label)), the image a copy"), source=r"""
class DigitsDataset(Dataset):
    # the 1797 digits as (image float32 (1, 8, 8) in [0, 1], label int)

    def __init__(self, transform=None):
        pixels, labels = load_digits(raw=True)   # uint8 (1797, 8, 8) in 0..16, int64 (1797,)
        self.transform = transform
        ### BEGIN SOLUTION
        self.images = pixels.float().div(16).unsqueeze(1)    # (1797, 1, 8, 8): converted once
        self.labels = labels
        ### END SOLUTION

    def __len__(self):
        ### BEGIN SOLUTION
        return len(self.labels)
        ### END SOLUTION

    def __getitem__(self, index):
        ### BEGIN SOLUTION
        image = self.images[index].clone()     # a copy: an in-place transform must not edit the data
        if self.transform is not None:
            image = self.transform(image)
        return image, int(self.labels[index])
        ### END SOLUTION
""")

ch.check("05.1", r"""
from course.checks import exercise, check_close, check_equal, check_shape

reference_images, reference_labels = load_digits()      # float32 (1797, 1, 8, 8) in [0, 1]

with exercise("05.1"):
    dataset = DigitsDataset()
    check_equal(len(dataset), 1797, name="len(DigitsDataset())")
    for i in (0, 1, 1796):
        image, label = dataset[i]
        check_shape(image, (1, 8, 8), name=f"DigitsDataset()[{i}] image")
        check_equal(image.dtype, torch.float32, name=f"DigitsDataset()[{i}] image dtype")
        check_close(image, reference_images[i], name=f"DigitsDataset()[{i}] image (pixel counts / 16)")
        check_equal(int(label), reference_labels[i].item(), name=f"DigitsDataset()[{i}] label")

    check_equal(type(dataset[3][1]).__name__, "int", name="the type of DigitsDataset()[3]'s label (a Python int)",
                inputs={"label": dataset[3][1]})
    doubled = DigitsDataset(transform=lambda image: image * 2)
    check_close(doubled[5][0], reference_images[5] * 2,
                name="DigitsDataset(transform=lambda image: image * 2)[5] image")
    in_place = DigitsDataset(transform=lambda image: image.mul_(2))
    for call in (1, 2):
        check_close(in_place[5][0], reference_images[5] * 2,
                    name=f"DigitsDataset(transform=lambda image: image.mul_(2))[5] image, call {call} (an in-place "
                         f"transform must get an image of its own, not the one the dataset keeps)")

    xb, yb = next(iter(DataLoader(dataset, batch_size=32)))
    check_shape(xb, (32, 1, 8, 8), name="first batch of DataLoader(DigitsDataset(), batch_size=32): images")
    check_equal(yb, reference_labels[:32], name="first batch of DataLoader(DigitsDataset(), batch_size=32): labels")
    check_equal(yb.dtype, torch.int64, name="labels of a batch (an int label collates to int64)")
""", learntorch_only=DIGITS)

ch.hidden_check("05.1", r"""
with exercise("05.1"):
    dataset = DigitsDataset()
    for i in torch.randint(0, 1797, (20,), generator=torch.Generator().manual_seed(5)).tolist():
        image, label = dataset[i]
        check_close(image, reference_images[i], name=f"DigitsDataset()[{i}] image")
        check_equal(int(label), reference_labels[i].item(), name=f"DigitsDataset()[{i}] label")

    all_images, all_labels = next(iter(DataLoader(dataset, batch_size=1797)))
    check_close(all_images, reference_images, name="all 1797 images, collated")
    check_equal(all_labels, reference_labels, name="all 1797 labels, collated")

    shapes = DigitsDataset(transform=lambda image: image.flatten())
    check_shape(shapes[0][0], (64,), name="DigitsDataset(transform=flatten)[0] image")
    check_equal(shapes[0][1], reference_labels[0].item(), name="DigitsDataset(transform=...)[0] label")
""")

ch.markdown(r"""
### Exercise 05.2 · A random shift, repeatable

Write the augmentation `RandomShift(max_shift, generator=None)`: called on an image of shape
`(C, H, W)` it returns a **new** tensor in which the picture has moved `dy` rows down and `dx`
columns right (negative: up, left), every channel by the same amount, with zeros where nothing moved
in; the input stays unchanged.

- Draw `dy` and `dx` uniformly from the integers `-max_shift, ..., max_shift` (both ends included),
  with `torch`'s random numbers from `self.generator`: `torch.randint(..., generator=self.generator)`
  does it. A seeded generator then repeats the same shifts, whatever else uses the global random
  numbers; with `generator=None`, `torch.randint` uses the global generator, so `torch.manual_seed`
  repeats them. The check tries both, and wants to see every shift.
- `RandomShift(0)` changes nothing. You may assume `max_shift` is smaller than `H` and `W`.

Tip: start from `torch.zeros_like(image)` and copy the part of the image that stays inside the
frame with one slice assignment.
""")

ch.solution("05.2", points=3, hint=(
    "torch.randint(-m, m + 1, (2,), generator=self.generator) gives dy and dx; fill a "
    "torch.zeros_like(image) with one slice assignment"), source=r"""
class RandomShift:
    # move an image (C, H, W) by up to max_shift pixels in each direction, zeros filling the gap

    def __init__(self, max_shift, generator=None):
        self.max_shift = max_shift
        self.generator = generator

    def __call__(self, image):
        ### BEGIN SOLUTION
        m = self.max_shift
        dy, dx = torch.randint(-m, m + 1, (2,), generator=self.generator).tolist()
        _, height, width = image.shape
        shifted = torch.zeros_like(image)
        # source rows/columns that stay inside the frame, and where they land
        shifted[:, max(dy, 0):height + min(dy, 0), max(dx, 0):width + min(dx, 0)] = \
            image[:, max(-dy, 0):height + min(-dy, 0), max(-dx, 0):width + min(-dx, 0)]
        return shifted
        ### END SOLUTION
""")

ch.check("05.2", r"""
import numpy as np
from course.checks import exercise, check_close, check_equal, check_shape


def find_shift(original, result):
    # (dy, dx) if `result` is `original` moved dy rows down and dx columns right with zeros
    # filling the gap, else None.  `original` holds distinct non-zero values, so any surviving
    # pixel tells where it came from; then every pixel is compared.
    src, out = original.numpy(), result.detach().numpy()
    if out.shape != src.shape or not out.any():
        return None
    r, c = np.argwhere(out[0] != 0)[0]
    found = np.argwhere(src[0] == out[0, r, c])
    if len(found) == 0:
        return None
    dy, dx = int(r - found[0][0]), int(c - found[0][1])
    _, h, w = src.shape
    expected = np.zeros_like(src)
    for i in range(h):
        for j in range(w):
            if 0 <= i - dy < h and 0 <= j - dx < w:
                expected[:, i, j] = src[:, i - dy, j - dx]
    return (dy, dx) if np.array_equal(out, expected) else None


with exercise("05.2"):
    image = torch.arange(1.0, 65.0).reshape(1, 8, 8)       # every pixel different, none zero
    untouched = image.clone()
    shift = RandomShift(1, generator=torch.Generator().manual_seed(0))
    seen = set()
    for call in range(100):
        result = shift(image)
        check_equal(isinstance(result, torch.Tensor), True, name=f"RandomShift(1) call {call} returns a tensor")
        check_shape(result, (1, 8, 8), name=f"RandomShift(1) call {call}")
        check_equal(result.dtype, image.dtype, name=f"RandomShift(1) call {call}: dtype (the input's)")
        check_equal(image, untouched, name=f"the input image after call {call} (a transform must not change its input)")
        moved = find_shift(image, result)
        check_equal(moved is not None and max(abs(moved[0]), abs(moved[1])) <= 1, True,
                    name=f"RandomShift(1) call {call}: the image moved by at most 1 pixel each way, zeros filling the gap",
                    inputs={"image": image, "returned": result})
        seen.add(moved)
    hint = ""
    if seen and all(None not in (moved,) and 1 not in moved for moved in seen):
        hint = " (never 1: the upper end of torch.randint is left out, so draw from -m to m + 1)"
    check_equal(sorted(seen, key=str), [(dy, dx) for dy in (-1, 0, 1) for dx in (-1, 0, 1)],
                name="the (dy, dx) shifts seen in 100 calls of RandomShift(1)" + hint)

    same = RandomShift(0)(image)
    check_close(same, image, name="RandomShift(0)(image): no shift at all", inputs={"image": image})
    check_equal(same is image or same.data_ptr() == image.data_ptr(), False,
                name="RandomShift(0)(image) shares the input's memory (return a new tensor)")


    def shifts(generator_seed, global_seed, calls=20):
        torch.manual_seed(global_seed)
        transform = RandomShift(2, generator=torch.Generator().manual_seed(generator_seed))
        return [find_shift(image, transform(image)) for _ in range(calls)]

    check_equal(shifts(7, global_seed=1), shifts(7, global_seed=2),
                name="RandomShift(2) with a generator seeded 7: the same shifts whatever torch.manual_seed says")
    check_equal(shifts(7, global_seed=1) != shifts(8, global_seed=1), True,
                name="RandomShift(2): generators seeded 7 and 8 give different shifts")

    # no generator: the global one, so torch.manual_seed repeats the shifts
    torch.manual_seed(3)
    first = [find_shift(image, RandomShift(1)(image)) for _ in range(20)]
    torch.manual_seed(3)
    again = [find_shift(image, RandomShift(1)(image)) for _ in range(20)]
    check_equal(first, again, name="RandomShift(1) without a generator, twice after torch.manual_seed(3)")

    # every channel by the same amount, a frame that is not square
    color = torch.arange(1.0, 106.0).reshape(3, 5, 7)
    shift = RandomShift(2, generator=torch.Generator().manual_seed(1))
    for call in range(50):
        moved = find_shift(color, shift(color))
        check_equal(moved is not None and max(abs(moved[0]), abs(moved[1])) <= 2, True,
                    name=f"RandomShift(2) call {call} on a (3, 5, 7) image: all channels moved by the same amount, "
                         f"at most 2 pixels", inputs={"image": color})
""")

ch.hidden_check("05.2", r"""
with exercise("05.2"):
    # three channels move together; a frame that is not square; every shift of up to 2 pixels
    color = torch.arange(1.0, 106.0).reshape(3, 5, 7)
    shift = RandomShift(2, generator=torch.Generator().manual_seed(1))
    seen = set()
    for call in range(600):
        result = shift(color)
        check_equal(result.dtype, torch.float32, name="RandomShift(2) on a float32 image: dtype")
        moved = find_shift(color, result)
        check_equal(moved is not None and max(abs(moved[0]), abs(moved[1])) <= 2, True,
                    name=f"RandomShift(2) call {call} on a (3, 5, 7) image: all channels moved by at most 2",
                    inputs={"image": color, "returned": result})
        seen.add(moved)
    check_equal(len(seen), 25, name="number of different shifts seen in 600 calls of RandomShift(2)")

    torch.manual_seed(3)
    first = [find_shift(image, RandomShift(1)(image)) for _ in range(20)]
    torch.manual_seed(4)
    other = [find_shift(image, RandomShift(1)(image)) for _ in range(20)]
    check_equal(other != first, True,
                name="RandomShift(1) without a generator: torch.manual_seed(3) and (4) give different shifts")
""")

ch.markdown(r"""
## What's next

You can now turn any data into batches: a `Dataset` says what one sample is, a `DataLoader` batches,
shuffles and parallelises, transforms prepare and augment. Next, [**06 · Training**](06_training.ipynb)
puts model, loss, optimizer and loaders together into the training loop, and asks whether the model
works on digits it has never seen.
""")

if __name__ == "__main__":
    sys.exit(ch.main())
