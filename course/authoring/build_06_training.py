"""Write course/solutions/06_training.ipynb, the instructor source of chapter 06 (training).

    python course/authoring/build_06_training.py

Edit this file, not the notebook: the notebook is rebuilt from it (``--check``: is it up to date?).
"""
import sys

from notebook_builder import Chapter

ch = Chapter("06", "training")

# why the cells that use the digits are learntorch only (see the banner)
DIGITS = "the digits ship with learntorch, as learntorch tensors"

ch.markdown(r"""
# 06 · Training: the loop, validation, and overfitting

You have all the parts: tensors that record a graph, modules that hold parameters, optimizers that
step, loaders that batch. This chapter puts them together into **the training loop** every PyTorch
project is built around, and then asks the question that decides whether a model is any good: does
it work on data it has never seen?

**After this chapter you can**

- split data into training, validation and test sets, repeatably, with `random_split`;
- write the training loop (forward, loss, `zero_grad`, `backward`, `step`) and an evaluation loop
  (`eval()`, `no_grad()`), and watch both live on a dashboard;
- recognise **overfitting** — training loss falling while validation loss rises — and make it happen
  on purpose;
- fight it with **dropout**, **weight decay** and **early stopping**, and keep the best weights with a
  checkpoint;
- train an MLP to over 95% validation accuracy on handwritten digits, in seconds.
""")

ch.code(r"""
import copy
import math

import learntorch as torch                     # the same code runs on PyTorch: `import torch`
from learntorch import nn
import learntorch.nn.functional as F
from learntorch.utils.data import DataLoader, Subset, random_split

torch.manual_seed(0)                           # every random number below is repeatable
print("running on", torch.__name__, torch.__version__)
""", on_pytorch="it prints PyTorch's name and version")

ch.code(r"""
from learntorch.datasets import Digits
""", learntorch_only=DIGITS)

ch.markdown(r"""
> **Same code, real PyTorch.** Every code cell runs unchanged with `import torch`, `from torch import nn`,
> `import torch.nn.functional as F` and `from torch.utils.data import ...`, and prints the same,
> except the cells whose first line says otherwise. `# learntorch only: ...` marks the cells that use
> the two things that are not part of PyTorch: the 8×8 `Digits` (they ship with learntorch so the
> chapter runs offline; on PyTorch use `torchvision.datasets.MNIST` or the `Dataset` from chapter 05)
> and the widgets (learntorch's own). `# on PyTorch: ...` marks the cells whose numbers differ:
> learntorch has its own random number generator, so the same seed gives different — but equally
> repeatable — weights and shuffles.

## 1 · Three piles of data

A model is trained on one pile of data and judged on another, because what we want is a model that
works on **new** digits, not one that remembers old ones. In practice there are three piles:

| set | used for | how often |
| --- | --- | --- |
| **training** | computing gradients, updating weights | every step |
| **validation** | choosing: the learning rate, the model size, when to stop, which run is best | every epoch |
| **test** | the final, honest number you report | once, at the very end |

Why not choose with the test set? Every choice made by looking at a set leaks a little of that set
into the model. After enough choices the model is tuned to that set, and its score there is too
optimistic. The validation set absorbs that leak, so the test set stays new.

`Digits(train=False)` is our test set (359 digits). We split the 1438 training digits once more,
80/20, with `random_split`. Its `generator=` makes the split repeatable: the same seed, the same
split, on every run — so a result measured today can be compared with one measured tomorrow.
""")

ch.code(r"""
digits = Digits(train=True)
test_set = Digits(train=False)
train_set, val_set = random_split(digits, [0.8, 0.2], generator=torch.Generator().manual_seed(0))
print(f"training {len(train_set)}, validation {len(val_set)}, test {len(test_set)}")

# the two parts of a random_split never overlap: each index of `digits` goes to exactly one
print("shared samples:", len(set(train_set.indices) & set(val_set.indices)))

# a random 20% keeps roughly the class balance of the whole (each digit is about 10%)
val_labels = torch.tensor([label for _, label in val_set])
print("validation digits per class:", [(val_labels == d).sum().item() for d in range(10)])
""", learntorch_only=DIGITS)

ch.code(r"""
train_loader = DataLoader(train_set, batch_size=64, shuffle=True, generator=torch.Generator().manual_seed(0))
val_loader = DataLoader(val_set, batch_size=512)      # no shuffle: evaluation order does not matter
test_loader = DataLoader(test_set, batch_size=512)
print(f"{len(train_loader)} training batches per epoch, {len(val_loader)} validation batch")
""", learntorch_only=DIGITS)

ch.markdown(r"""
## 2 · The loop

One training **step** is five lines, always in this order:

```python
scores = model(images)                    # 1. forward: build the graph
loss = F.cross_entropy(scores, labels)    # 2. one number to make smaller
optimizer.zero_grad()                     # 3. forget the previous step's gradients (.grad accumulates!)
loss.backward()                           # 4. fill every parameter's .grad
optimizer.step()                          # 5. move the parameters a little against their gradient
```

An **epoch** is one pass of such steps over the training loader. After each epoch we **evaluate**:
run the model on the validation set without training it. Two switches matter there:

- `model.eval()` puts layers that behave differently in training (Dropout, BatchNorm) into their
  inference behaviour; `model.train()` switches back. Forgetting `train()` after an evaluation is a
  classic bug: the rest of training then runs without dropout.
- `torch.no_grad()` records no graph: evaluation needs no gradients, and skipping the graph saves
  time and memory.

The evaluation helper below returns the mean loss **per sample** (batches may differ in size, so we
add up `reduction="sum"` losses and divide by the number of samples) and the accuracy.
""")

ch.code(r"""
def evaluate(model, loader):
    # (mean loss per sample, accuracy) of `model` on every sample of `loader`; trains nothing
    model.eval()                                   # inference behaviour (dropout off)
    total_loss, correct, count = 0.0, 0, 0
    with torch.no_grad():                          # no graph: faster, less memory
        for images, labels in loader:
            scores = model(images)
            total_loss += F.cross_entropy(scores, labels, reduction="sum").item()
            correct += (scores.argmax(dim=1) == labels).sum().item()
            count += len(labels)
    return total_loss / count, correct / count
""")

ch.markdown(r"""
Now the whole loop, on a small MLP: 64 pixels in, 128 hidden units, 10 scores out. The dashboard
below it is updated from inside the loop — `dashboard.step(...)` after every batch and
`dashboard.epoch_end(...)` after every epoch — and shows the per-batch training loss (noisy, pale),
its smoothed version, the training mean per epoch, and the validation numbers; with
`grad_norms=True` also the size of each layer's gradient at the latest step.
""")

ch.code(r"""
from widgets import TrainingDashboard

torch.manual_seed(0)
digits_model = nn.Sequential(nn.Flatten(), nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
optimizer = torch.optim.Adam(digits_model.parameters(), lr=1e-2)
epochs = 8
dashboard = TrainingDashboard(epochs=epochs, steps_per_epoch=len(train_loader), model=digits_model, grad_norms=True)

for epoch in range(epochs):
    digits_model.train()                       # training behaviour (after evaluate switched it off)
    for images, labels in train_loader:
        scores = digits_model(images)
        loss = F.cross_entropy(scores, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        accuracy = (scores.argmax(dim=1) == labels).float().mean().item()
        dashboard.step(loss=loss.item(), accuracy=accuracy, batch_size=len(labels))
    val_loss, val_accuracy = evaluate(digits_model, val_loader)
    dashboard.epoch_end(val_loss=val_loss, val_accuracy=val_accuracy)

dashboard.close()
print(f"validation accuracy after {epochs} epochs: {val_accuracy:.3f}")
""", learntorch_only=DIGITS)

ch.markdown(r"""
What to see in the curves:

- the per-batch loss jumps around: each batch is a different 64 digits. The trend is what counts.
- The training curve is measured **while** the weights change, over the whole epoch; the validation
  point is measured **after** the epoch. That is why, early on, validation can look better than
  training.
- Both curves fall together: the model learns things about digits that hold for digits it has not
  seen. That is generalisation, and it is not guaranteed — next we break it on purpose.

## 3 · Overfitting: a model that memorises

Give a big model little data and it can fit the training set perfectly without learning anything
that carries over. Here: 100 training digits, and an MLP with two hidden layers of 256 units —
85,002 parameters, 850 per training example.

To compare runs fairly, the helper below measures after every epoch the loss and accuracy on the
training data **and** on the validation data, both in `eval()` mode. It also keeps a
**checkpoint**: a copy of the weights from the epoch with the lowest validation loss so far
(`copy.deepcopy`, because `state_dict()` returns tensors that share memory with the parameters and
would change with them).
""")

ch.code(r"""
small_batch_size = 25                                      # 4 steps per epoch on 100 digits


def big_mlp(dropout=0.0):
    # far too big for 100 examples: 64 -> 256 -> 256 -> 10, optional dropout after each hidden layer
    return nn.Sequential(
        nn.Flatten(),
        nn.Linear(64, 256), nn.ReLU(), nn.Dropout(dropout),
        nn.Linear(256, 256), nn.ReLU(), nn.Dropout(dropout),
        nn.Linear(256, 10),
    )


def run_experiment(model, optimizer, train_data, epochs, dashboard=None):
    # train `model` on `train_data`; after each epoch measure train and validation loss/accuracy.
    # Returns (history: dict of per-epoch lists, the state_dict of the lowest validation loss).
    # every run sees the same batches in the same order: a fair comparison
    loader = DataLoader(train_data, batch_size=small_batch_size, shuffle=True,
                        generator=torch.Generator().manual_seed(0))
    all_train_data = DataLoader(train_data, batch_size=len(train_data))
    history = {"train_loss": [], "train_accuracy": [], "val_loss": [], "val_accuracy": []}
    best_val_loss, best_state = math.inf, None
    for epoch in range(epochs):
        model.train()
        for images, labels in loader:
            loss = F.cross_entropy(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if dashboard is not None:
                dashboard.step(loss=loss.item(), batch_size=len(labels))
        train_loss, train_accuracy = evaluate(model, all_train_data)   # in eval mode, like validation
        val_loss, val_accuracy = evaluate(model, val_loader)
        for key, value in [("train_loss", train_loss), ("train_accuracy", train_accuracy),
                           ("val_loss", val_loss), ("val_accuracy", val_accuracy)]:
            history[key].append(value)
        if dashboard is not None:
            dashboard.epoch_end(val_loss=val_loss, val_accuracy=val_accuracy)
        if val_loss < best_val_loss:           # a new best: keep a copy of these weights
            best_val_loss, best_state = val_loss, copy.deepcopy(model.state_dict())
    if dashboard is not None:
        dashboard.close()
    return history, best_state
""")

ch.code(r"""
small_train_set = Subset(train_set, range(100))            # the first 100 training digits
overfit_epochs = 30
torch.manual_seed(0)
plain_model = big_mlp()
print("parameters:", sum(p.numel() for p in plain_model.parameters()))
optimizer = torch.optim.Adam(plain_model.parameters(), lr=1e-2)
dashboard = TrainingDashboard(epochs=overfit_epochs, steps_per_epoch=len(small_train_set) // small_batch_size)
plain_history, plain_best_state = run_experiment(plain_model, optimizer, small_train_set, overfit_epochs, dashboard)

print("epoch  train loss  train acc   val loss  val acc")
for epoch in (1, 5, 10, 20, 30):
    h = {key: values[epoch - 1] for key, values in plain_history.items()}
    print(f"{epoch:5d}  {h['train_loss']:10.4f}  {h['train_accuracy']:9.3f}  {h['val_loss']:9.4f}  {h['val_accuracy']:7.3f}")
""", learntorch_only=DIGITS)

ch.markdown(r"""
Training accuracy reaches 100% and the training loss goes to almost exactly zero: the model has
memorised the 100 digits. The validation loss tells the other half of the story: it falls for the
first dozen or so epochs, then **rises** again, while validation accuracy stalls around 90%. The model keeps
getting *more confident* on the training digits, and that confidence does not carry over: when it is
wrong on a new digit, it is now very sure of the wrong answer, and cross-entropy punishes exactly
that. The distance between the two curves is the **generalisation gap**.

The plot below puts the numbers side by side (training loss on a log scale: it keeps falling long
after the validation loss has turned).
""")

ch.code(r"""
import matplotlib.pyplot as plt


def plot_histories(histories):
    # loss and accuracy per epoch: solid = validation, dashed = training
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(11, 3.6))
    for color, (name, history) in zip(["C0", "C1", "C2", "C3"], histories.items()):
        epochs = range(1, len(history["val_loss"]) + 1)
        ax_loss.plot(epochs, history["train_loss"], "--", color=color, label=f"{name} (train)")
        ax_loss.plot(epochs, history["val_loss"], "-", color=color, label=f"{name} (validation)")
        ax_acc.plot(epochs, history["train_accuracy"], "--", color=color)
        ax_acc.plot(epochs, history["val_accuracy"], "-", color=color, label=name)
    ax_loss.set(yscale="log", xlabel="epoch", title="loss (log scale)")
    ax_acc.set(xlabel="epoch", title="accuracy", ylim=(0.5, 1.01))
    ax_loss.legend(fontsize=7)
    ax_acc.legend(fontsize=7, loc="lower right")
    plt.show()


plot_histories({"no regularisation": plain_history})
""", learntorch_only=DIGITS)

ch.markdown(r"""
The best cure for overfitting is **more data**: the same kind of model trained on all 1151 training
digits (section 2) generalised fine. When more data is not available, three tools help.

## 4 · Dropout

`nn.Dropout(p)` zeroes each value passing through it with probability `p` — a different random
selection on every forward pass — and multiplies the survivors by `1 / (1 - p)`, so that the
expected value of each output stays what it was. No unit can rely on any other particular unit
being there, so the network cannot build fragile, memorising co-adaptations; it has to spread what
it learns. In `eval()` mode dropout does nothing at all: at test time we want the whole network and
a deterministic answer.
""")

ch.code(r"""
drop = nn.Dropout(p=0.5)
x = torch.ones(2, 8)
print("training mode:\n", drop(x))        # about half zeroed, the rest scaled to 1 / (1 - 0.5) = 2
drop.eval()
print("eval mode:\n", drop(x))            # untouched
""", on_pytorch="other random numbers")

ch.markdown(r"""
The same big model, with `Dropout(0.5)` after each hidden layer, on the same 100 digits:
""")

ch.code(r"""
torch.manual_seed(0)
dropout_model = big_mlp(dropout=0.5)
optimizer = torch.optim.Adam(dropout_model.parameters(), lr=1e-2)
dropout_history, _ = run_experiment(dropout_model, optimizer, small_train_set, overfit_epochs)
""", learntorch_only=DIGITS)

ch.markdown(r"""
## 5 · Weight decay

Weight decay shrinks every weight a little toward zero at every step. Big weights are what a model
needs to make extreme, overconfident predictions on a few memorised examples; the decay makes such
weights cost something, so the model keeps only those the data keeps asking for.

`torch.optim.AdamW(params, lr, weight_decay=wd)` does it *decoupled* from the gradient: each step,
besides the Adam update, `w ← w − lr · wd · w`. (`SGD` and `Adam` also take `weight_decay=`, but
there it means adding `wd · w` to the gradient — an L2 penalty on the loss. For SGD the two are the
same thing; for Adam they differ, and AdamW's version usually works better.)
""")

ch.code(r"""
torch.manual_seed(0)
decay_model = big_mlp()
optimizer = torch.optim.AdamW(decay_model.parameters(), lr=1e-2, weight_decay=1.0)
decay_history, _ = run_experiment(decay_model, optimizer, small_train_set, overfit_epochs)


def weight_norm(model):
    # the length of all weights as one long vector
    return math.sqrt(sum((p ** 2).sum().item() for p in model.parameters()))


print(f"weight norm without decay {weight_norm(plain_model):.1f}, with decay {weight_norm(decay_model):.1f}")
""", learntorch_only=DIGITS)

ch.markdown(r"""
All three runs together:
""")

ch.code(r"""
histories = {"no regularisation": plain_history, "dropout 0.5": dropout_history, "weight decay 1.0": decay_history}
plot_histories(histories)

print(f"{'':18s}  best val loss (epoch)  final val loss  final val acc  final train acc")
for name, h in histories.items():
    best = min(range(overfit_epochs), key=lambda e: h["val_loss"][e])
    print(f"{name:18s}  {h['val_loss'][best]:8.4f} ({best + 1:2d})        {h['val_loss'][-1]:10.4f}"
          f"  {h['val_accuracy'][-1]:13.3f}  {h['train_accuracy'][-1]:15.3f}")
""", learntorch_only=DIGITS)

ch.markdown(r"""
Both regularisers reach a lower best validation loss than the plain model, and reach it later: they
slow the memorising down and keep the model from becoming as overconfident. Where the curves end is
noisier, and so is accuracy: with 100 training and 287 validation digits (one digit is 0.35%), runs
with other seeds differ by a few points — try it. Neither makes 100 examples as good as 1151. Regularisation
narrows the gap; it does not create information that the data does not have.

## 6 · Early stopping

Look again at the validation loss without regularisation: it was lowest after a dozen or so epochs,
and the epochs after that made the model worse on new data. **Early stopping** watches the
validation loss and stops training when it has not improved for `patience` epochs in a row, then
goes back to the weights of the best epoch — the checkpoint `run_experiment` kept.

Why wait `patience` epochs instead of stopping at the first bad one? Validation loss is noisy: one
bad epoch is often followed by a new best. `patience` trades a little wasted training for not
stopping too early. You will write the stopping rule yourself in exercise 06.2.
""")

ch.code(r"""
best_epoch = min(range(overfit_epochs), key=lambda e: plain_history["val_loss"][e])
print(f"lowest validation loss {plain_history['val_loss'][best_epoch]:.4f} after epoch {best_epoch + 1}")
print(f"after epoch {overfit_epochs}: {evaluate(plain_model, val_loader)[0]:.4f}")

plain_model.load_state_dict(plain_best_state)          # back to the checkpoint
print(f"restored the checkpoint: {evaluate(plain_model, val_loader)[0]:.4f}")
""", learntorch_only=DIGITS)

ch.markdown(r"""
## 7 · The test set, once

All the choices are made; the model of section 2 is our final one. Now, and only now, the test set:
""")

ch.code(r"""
test_loss, test_accuracy = evaluate(digits_model, test_loader)
print(f"test accuracy {test_accuracy:.3f} (validation said {evaluate(digits_model, val_loader)[1]:.3f})")
""", learntorch_only=DIGITS)

ch.markdown(r"""
Expect the test number to be close to the validation one, and often a little lower: the validation
set helped choose the model, and a few hundred digits are a small sample (one digit is 0.3%). Had we
tried fifty models and kept the one with the best *test* score, that score would no longer tell us
how the model does on new digits. Keep the test set for the end.

## Exercises

Each exercise has a cell for your code and a check cell below it. Replace the
`raise NotImplementedError(...)` lines with your code, run the cell, then run the check: it prints
`✓ passed`, or tells you what went wrong.

### Exercise 06.1 · Your training loop

Write `train(model, train_loader, val_loader, epochs)`, the function you would put at the heart of
a project:

- it creates its own optimizer for `model.parameters()` (your choice of optimizer and learning rate;
  a learning-rate scheduler is welcome);
- for each of the `epochs` epochs: one pass over `train_loader` in training mode, updating the
  weights; then the validation loss and accuracy on `val_loader`, in eval mode, without a graph;
- it returns a dict of per-epoch lists, one entry per epoch:
  `{"train_loss": [...], "val_loss": [...], "val_accuracy": [...]}`. `train_loss` is the mean loss
  of the epoch's training batches; `val_loss` the mean loss per validation **sample**, as in
  `evaluate` above (you may call `evaluate`);
- when it returns, `model` holds the weights of the epoch with the best validation accuracy (keep a
  checkpoint), not necessarily those of the last epoch.

The check trains the section 2 MLP (from `torch.manual_seed(0)`) for 8 epochs and wants at least
**95% validation accuracy**.
""")

ch.solution("06.1", points=4, hint=(
    "section 2's loop, with evaluate() after each epoch; a checkpoint is "
    "copy.deepcopy(model.state_dict()), and load_state_dict puts it back"), source=r"""
def train(model, train_loader, val_loader, epochs):
    # train `model` for `epochs` epochs; returns {"train_loss", "val_loss", "val_accuracy"} per epoch
    # and leaves `model` with the weights of its best validation accuracy
    ### BEGIN SOLUTION
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    # the learning rate glides from 1e-2 down to 0: big steps first, a calm last epoch or two
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
    history = {"train_loss": [], "val_loss": [], "val_accuracy": []}
    best_accuracy, best_state = -1.0, None
    for epoch in range(epochs):
        model.train()
        total, count = 0.0, 0
        for images, labels in train_loader:
            loss = F.cross_entropy(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(labels)
            count += len(labels)
        scheduler.step()
        val_loss, val_accuracy = evaluate(model, val_loader)
        history["train_loss"].append(total / count)
        history["val_loss"].append(val_loss)
        history["val_accuracy"].append(val_accuracy)
        if val_accuracy > best_accuracy:
            best_accuracy, best_state = val_accuracy, copy.deepcopy(model.state_dict())
    model.load_state_dict(best_state)
    return history
    ### END SOLUTION
""")

ch.check("06.1", r"""
import numpy as np

from course.checks import exercise, check_close, check_equal


class TrainingWitness(nn.Module):
    # wraps a model and watches train() use it: records (batch size, training mode?, graph recorded?)
    # for every forward pass, the scores of every training pass, and the weights and accuracy at
    # every validation pass (a batch of all len(val_set) samples, in order).  At the first training
    # batch of the last epoch it scrambles the weights, as a diverging run would: then the last
    # epoch is not the best one, and only a restored checkpoint gives the best weights back.

    def __init__(self, inner, epochs, steps_per_epoch, val_labels):
        super().__init__()
        self.inner = inner
        self.scramble_at = (epochs - 1) * steps_per_epoch
        self.val_labels = val_labels
        self.calls, self.val_passes, self.train_scores = [], [], []

    def weights(self):
        return {name: value.detach().numpy().copy() for name, value in self.inner.state_dict().items()}

    def forward(self, x):
        graph = torch.is_grad_enabled()
        if graph and len(self.train_scores) == self.scramble_at:
            with torch.no_grad():
                for layer in self.inner:
                    if isinstance(layer, nn.Linear):
                        layer.reset_parameters()
        self.calls.append((x.shape[0], self.training, graph))
        scores = self.inner(x)
        if x.shape[0] == len(self.val_labels):
            accuracy = (scores.argmax(dim=1) == self.val_labels).float().mean().item()
            self.val_passes.append((accuracy, self.weights()))
        elif graph:
            self.train_scores.append(scores.detach())
        return scores


class RecordingLoader:
    # the batches of a DataLoader, unchanged; remembers the labels of each batch it hands out
    def __init__(self, loader):
        self.loader, self.labels = loader, []

    def __len__(self):
        return len(self.loader)

    def __iter__(self):
        for images, labels in self.loader:
            self.labels.append(labels)
            yield images, labels


def watched_run(seed, epochs, dropout=0.0, batch_size=64):
    # train() on a witnessed MLP; every number the checks below compare with
    torch.manual_seed(seed)
    loader = RecordingLoader(DataLoader(train_set, batch_size=batch_size, shuffle=True,
                                        generator=torch.Generator().manual_seed(seed)))
    all_val = DataLoader(val_set, batch_size=len(val_set))    # one batch: its size marks validation passes
    labels = torch.tensor([label for _, label in val_set])
    mlp = nn.Sequential(nn.Flatten(), nn.Linear(64, 128), nn.ReLU(), nn.Dropout(dropout), nn.Linear(128, 10))
    witness = TrainingWitness(mlp, epochs, len(loader), labels)
    return witness, loader, train(witness, loader, all_val, epochs=epochs)


def check_witnessed(witness, loader, history, epochs):
    # how train() used the model: modes, graphs, one pass per epoch, the train_loss it reported,
    # and the weights it left in the model
    steps = len(loader)
    val_calls = [call for call in witness.calls if call[0] == len(witness.val_labels)]
    check_equal(len(val_calls) >= epochs, True, name=f"validation passes in {epochs} epochs (at least one per epoch)")
    check_equal(sum(1 for _, training, graph in val_calls if training or graph), 0,
                name="validation passes that run in training mode or record a graph "
                     "(validate after model.eval(), inside torch.no_grad())")
    train_calls = [call for call in witness.calls if call[2] and call[0] != len(witness.val_labels)]
    check_equal(len(train_calls), epochs * steps,
                name=f"forward passes that record a graph in {epochs} epochs of {steps} batches "
                     f"(one per batch: one pass over train_loader per epoch)")
    check_equal(sum(1 for _, training, _ in train_calls if not training), 0,
                name="training forward passes that run in eval mode (call model.train() at the start of "
                     "every epoch: evaluating switched it off)")
    for epoch in range(epochs):
        batches = range(epoch * steps, (epoch + 1) * steps)
        losses = [F.cross_entropy(witness.train_scores[b], loader.labels[b]).item() for b in batches]
        sizes = [len(loader.labels[b]) for b in batches]
        per_sample = sum(l * n for l, n in zip(losses, sizes)) / sum(sizes)
        per_batch = sum(losses) / len(losses)
        reported = history["train_loss"][epoch]
        nearest = min((per_sample, per_batch), key=lambda mean: abs(mean - reported))
        check_close(reported, nearest, rtol=1e-4, atol=1e-6,
                    name=f'history["train_loss"][{epoch}]: the mean loss of epoch {epoch + 1}\'s training batches, '
                         f"as the model computed them while it trained")

    best_accuracy = max(accuracy for accuracy, _ in witness.val_passes)
    final = witness.weights()
    restored = any(accuracy == best_accuracy and all(np.array_equal(final[k], w[k]) for k in final)
                   for accuracy, w in witness.val_passes)
    check_equal(restored, True, inputs={"best validation accuracy": best_accuracy,
                                        "last epoch's": witness.val_passes[-1][0]},
                name="the returned model holds the weights of the best epoch (the check scrambled the weights at "
                     "the start of the last epoch, as a diverging run would: keep a checkpoint with "
                     "copy.deepcopy(model.state_dict()), state_dict() alone shares memory with the parameters, "
                     "and load it at the end)")


with exercise("06.1"):
    # the section 2 MLP for 8 epochs: at least 95% validation accuracy, the best weights returned
    torch.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    loader = DataLoader(train_set, batch_size=64, shuffle=True, generator=torch.Generator().manual_seed(0))
    history = train(model, loader, val_loader, epochs=8)

    check_equal(isinstance(history, dict), True, name=f"train(...) returns a dict (it returned {type(history).__name__})")
    check_equal(sorted(history), ["train_loss", "val_accuracy", "val_loss"], name="keys of the dict train(...) returns")
    for key in ("train_loss", "val_loss", "val_accuracy"):
        check_equal(len(history[key]), 8, name=f'len(history["{key}"]) after train(..., epochs=8)')
    check_equal(history["train_loss"][-1] < history["train_loss"][0], True, inputs={"train_loss": history["train_loss"]},
                name='history["train_loss"] falls from the first epoch to the last (are the weights updated? '
                     "is optimizer.step() called?)")

    val_loss, val_accuracy = evaluate(model, val_loader)
    print(f"validation accuracy of the returned model: {val_accuracy:.3f} "
          f"(per epoch: {', '.join(f'{a:.3f}' for a in history['val_accuracy'])})")
    check_equal(val_accuracy >= 0.95, True, inputs={"validation accuracy": val_accuracy},
                name="the trained model reaches at least 0.95 validation accuracy (try Adam with lr=1e-2, and check "
                     "that each batch makes one step)")
    check_close(val_accuracy, max(history["val_accuracy"]),
                name='accuracy of the returned model vs max(history["val_accuracy"]) (restore the best weights: keep '
                     "a checkpoint with copy.deepcopy(model.state_dict()), state_dict() alone shares memory with the "
                     "parameters, and load it at the end)")
    # several epochs may share the best accuracy: compare with the one whose loss is nearest
    best_epochs = [e for e, a in enumerate(history["val_accuracy"]) if a == max(history["val_accuracy"])]
    best = min(best_epochs, key=lambda e: abs(history["val_loss"][e] - val_loss))
    check_close(val_loss, history["val_loss"][best], atol=1e-4, rtol=1e-4,
                name=f'validation loss of the returned model vs history["val_loss"] of its best epoch ({best + 1}) '
                     f"(the mean per sample, as evaluate computes it)")

    # a witnessed run: how train() uses the model, and what it leaves in it
    check_witnessed(*watched_run(seed=2, epochs=5), epochs=5)
""", learntorch_only=DIGITS)

ch.hidden_check("06.1", r"""
with exercise("06.1"):
    witness, loader, history = watched_run(seed=1, epochs=6, dropout=0.1, batch_size=50)
    check_equal([len(history[k]) for k in ("train_loss", "val_loss", "val_accuracy")], [6] * 3,
                name="lengths of the history lists after train(..., epochs=6)")
    check_witnessed(witness, loader, history, epochs=6)
    best_accuracy = max(accuracy for accuracy, _ in witness.val_passes)
    check_equal(best_accuracy >= 0.93, True, inputs={"best validation accuracy": best_accuracy},
                name="with seed 1 and dropout, the best of 5 good epochs reaches at least 0.93 validation accuracy")
""")


ch.markdown(r"""
### Exercise 06.2 · Early stopping

Write the class `EarlyStopping(patience, min_delta=0.0)`. A training loop calls
`stopper.step(val_loss)` once per epoch with that epoch's validation loss (a number), and stops when
it returns `True`:

- the loss **improves** when it is lower than the best so far by **more than** `min_delta`
  (`val_loss < best_loss - min_delta`); the first loss always improves on `best_loss = math.inf`;
- on an improvement: `best_loss` becomes that loss, `best_epoch` the index of this call (0 for the
  first call, 1 for the second, ...), and `bad_epochs` goes back to 0;
- otherwise `bad_epochs` grows by 1 (a NaN loss is never an improvement);
- `step` returns `True` once `bad_epochs` has reached `patience`, else `False`.

Before the first call: `best_loss` is `math.inf`, `best_epoch` is `None`, `bad_epochs` is 0.
Used in a loop, it looks like this:

```python
stopper = EarlyStopping(patience=5)
for epoch in range(100):
    ...                                          # train one epoch, then validate
    if stopper.step(val_loss):
        break
    if stopper.best_epoch == epoch:              # this epoch is the new best: checkpoint
        best_state = copy.deepcopy(model.state_dict())
```
""")

ch.solution("06.2", points=3, hint=(
    "step() must know which call it is to set best_epoch; a comparison with NaN is always False, "
    "so the improvement test can handle NaN by itself"), source=r"""
class EarlyStopping:
    # stop when the validation loss has not improved (by more than min_delta) for `patience` epochs

    def __init__(self, patience, min_delta=0.0):
        self.patience = patience
        self.min_delta = min_delta
        self.best_loss = math.inf
        self.best_epoch = None
        self.bad_epochs = 0
        # whatever else step() needs to remember between calls:
        ### BEGIN SOLUTION
        self.epoch = -1                       # index of the latest call to step
        ### END SOLUTION

    def step(self, val_loss):
        ### BEGIN SOLUTION
        self.epoch += 1
        if val_loss < self.best_loss - self.min_delta:     # False for NaN: never an improvement
            self.best_loss, self.best_epoch, self.bad_epochs = val_loss, self.epoch, 0
        else:
            self.bad_epochs += 1
        return self.bad_epochs >= self.patience
        ### END SOLUTION
""")

ch.check("06.2", r"""
from course.checks import exercise, check_equal


def replay(losses, patience, min_delta=0.0):
    # feed `losses` to a new EarlyStopping until it says stop; (what each call returned, the stopper)
    stopper = EarlyStopping(patience, min_delta)
    answers = []
    for loss in losses:
        answers.append(stopper.step(loss))
        if answers[-1]:
            break
    return answers, stopper


with exercise("06.2"):
    fresh = EarlyStopping(patience=3)
    check_equal((fresh.best_loss, fresh.best_epoch, fresh.bad_epochs), (math.inf, None, 0),
                name="(best_loss, best_epoch, bad_epochs) of a new EarlyStopping(patience=3)")

    nan = float("nan")
    cases = [
        # (losses, patience, min_delta, what step returns call by call, best_loss, best_epoch, bad_epochs, why)
        ([1.0, 0.8, 0.6, 0.65, 0.62, 0.7, 0.5], 3, 0.0, [False, False, False, False, False, True], 0.6, 2, 3, ""),
        ([1.0, 0.9, 0.95, 0.97, 0.85, 0.9, 0.91, 0.92], 3, 0.0, [False] * 7 + [True], 0.85, 4, 3, ""),
        ([1.0, 0.99, 0.98, 0.97], 2, 0.05, [False, False, True], 1.0, 0, 2,
         " (improving means lower than the best by more than min_delta)"),
        ([0.5, 0.4, 0.3, 0.2, 0.1], 1, 0.0, [False] * 5, 0.1, 4, 0, ""),
        ([1.0, 1.0, 1.0], 2, 0.0, [False, False, True], 1.0, 0, 2,
         " (an equal loss is no improvement: the test is <, not <=)"),
        ([1.0, 0.75, 0.8], 5, 0.25, [False, False, False], 1.0, 0, 2,
         " (exactly min_delta lower is not enough: val_loss < best_loss - min_delta)"),
        ([1.0, nan, nan, 0.9], 3, 0.0, [False, False, False, False], 0.9, 3, 0, " (a NaN loss is never an improvement)"),
        ([1.0, nan, nan, 0.9], 2, 0.0, [False, False, True], 1.0, 0, 2, " (a NaN loss is never an improvement)"),
    ]
    for losses, patience, min_delta, want_answers, want_best, want_epoch, want_bad, why in cases:
        call = f"EarlyStopping(patience={patience}, min_delta={min_delta}) fed {losses}"
        answers, stopper = replay(losses, patience, min_delta)
        check_equal(answers, want_answers, name=f"{call}: what step(...) returned, call by call, until True{why}")
        check_equal((stopper.best_loss, stopper.best_epoch, stopper.bad_epochs), (want_best, want_epoch, want_bad),
                    name=f"{call}: (best_loss, best_epoch, bad_epochs) at the end{why}")
""")

ch.hidden_check("06.2", r"""
with exercise("06.2"):
    answers, stopper = replay([nan, 2.0, nan, 1.0, 1.0], patience=3)     # a NaN first: still no improvement
    check_equal((answers, stopper.best_loss, stopper.best_epoch, stopper.bad_epochs),
                ([False] * 5, 1.0, 3, 1), name="EarlyStopping(patience=3) fed [nan, 2.0, nan, 1.0, 1.0]: "
                                               "(answers, best_loss, best_epoch, bad_epochs)")

    # the validation losses of the overfitting run of section 3, against the rule written out
    losses = plain_history["val_loss"]
    for patience in (1, 3, 5, 10):
        best, best_epoch, bad, expected_stop = math.inf, None, 0, None
        for epoch, loss in enumerate(losses):
            if loss < best:
                best, best_epoch, bad = loss, epoch, 0
            else:
                bad += 1
            if bad >= patience:
                expected_stop = epoch
                break
        answers, stopper = replay(losses, patience)
        stopped = len(answers) - 1 if answers[-1] else None
        check_equal((stopped, stopper.best_epoch), (expected_stop, best_epoch),
                    name=f"EarlyStopping(patience={patience}) on the section 3 validation losses: "
                         f"(epoch it stops at, best_epoch)")
""")

ch.markdown(r"""
## What's next

You can now train a model and tell whether it generalises: a validation set to choose with, a test
set to report once, curves that show overfitting, and dropout, weight decay and early stopping to
fight it. The MLP saw each digit as 64 unrelated numbers; convolutional networks look at the
digits as images — nearby pixels together — and need fewer parameters to do better. Next,
[**07 · Convolutional networks**](07_cnns.ipynb) computes a convolution by hand and as one matrix
product, adds pooling and batch norm, and trains a CNN that beats this chapter's MLP on the digits.
""")

if __name__ == "__main__":
    sys.exit(ch.main())
