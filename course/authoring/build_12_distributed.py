"""Write course/solutions/12_distributed.ipynb, the instructor source of chapter 12 (distributed).

    python course/authoring/build_12_distributed.py

Edit this file, not the notebook: the notebook is rebuilt from it (``--check``: is it up to date?).
"""
import sys

from notebook_builder import Chapter

ch = Chapter("12", "distributed")

# why the cells that start ranks are learntorch only (see the banner)
RANKS = "run_ranks starts ranks from a notebook cell; PyTorch starts them from a terminal (torchrun)"
DIGITS = "the digits ship with learntorch, as learntorch tensors"
RING = "the ring, step by step, is learntorch's (in PyTorch it is inside NCCL)"
WIDGET = "the widget is learntorch's"

ch.markdown(r"""
# 12 · Distributed: one model, several processes

One process trains one model on one batch at a time. When that is too slow, PyTorch's answer is
**data parallelism**: start N copies of the same program, give each a different part of every batch,
and make them agree on one gradient before every step. The copies can run on the cores of one
machine, on the GPUs of one machine or on a thousand machines; the code is the same. This chapter
runs it for real: several operating-system processes, talking through **MPI**, the message-passing
library supercomputers use (PyTorch has an `mpi` backend too), installed by pip with the course.

**After this chapter you can**

- show numerically why averaging the gradients of the shards of a batch gives the gradient of the
  whole batch;
- start N processes (**ranks**) that run one function, from a notebook cell or from a terminal, and
  say what `rank` and `world_size` are;
- use the **collectives** — `all_reduce`, `broadcast`, `all_gather`, `reduce_scatter` — and
  `send`/`recv`;
- follow the **ring all-reduce** step by step and say what it costs: each rank sends 2(N−1)/N of
  the tensor, whatever N is;
- train the digits MLP with `DistributedDataParallel` on 2 ranks and get the model one process gets;
- split a dataset between ranks with `DistributedSampler`, and say why `set_epoch` matters;
- say what changes on several machines, and what PyTorch adds (NCCL, FSDP).
""")

ch.code(r"""
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import learntorch as torch                     # the same code runs on PyTorch: `import torch`
from learntorch import nn
import learntorch.nn.functional as F
import learntorch.distributed as dist
from learntorch.nn.parallel import DistributedDataParallel as DDP
from learntorch.utils.data import DataLoader, DistributedSampler

torch.manual_seed(0)                           # every random number below is repeatable
print("running on", torch.__name__, torch.__version__)
""", on_pytorch="it prints PyTorch's name and version")

ch.markdown(r"""
> **Same code, real PyTorch.** The code that trains runs unchanged with `import torch` (and
> `import torch.distributed as dist`, `from torch.nn.parallel import ...`,
> `from torch.utils.data import ...`), except the cells whose first line says otherwise.
> `# learntorch only: ...` marks the cells that use what PyTorch does not have: `dist.run_ranks`,
> which starts ranks **from a notebook cell** (PyTorch starts them from a terminal with `torchrun`,
> see section 2), the ring written out step by step (`dist.ring`), the widget and the digits.
> `# on PyTorch: ...` marks cells whose numbers differ: learntorch has its own random number
> generator, so the same seed gives different, equally repeatable numbers.

## 1 · Why data parallelism works

A loss with `reduction="mean"` is the mean of the per-sample losses, and a gradient of a mean is the
mean of the gradients. Cut a batch of 8 into two shards of 4: the gradient of the whole batch is the
average of the two shards' gradients. So two processes, each with a copy of the model and half of
the batch, can compute half the work each and then average — and take exactly the step one process
would take on the whole batch.
""")

ch.code(r"""
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10)).double()
x, y = torch.randn(8, 64, dtype=torch.float64), torch.randint(0, 10, (8,))


def gradients(model, x, y):
    # the gradient of the mean cross-entropy on (x, y), one tensor per parameter
    model.zero_grad()
    F.cross_entropy(model(x), y).backward()
    return [p.grad.clone() for p in model.parameters()]


def largest_difference(grads_a, grads_b):
    return max((a - b).abs().max().item() for a, b in zip(grads_a, grads_b))


whole = gradients(model, x, y)
shard_0, shard_1 = gradients(model, x[:4], y[:4]), gradients(model, x[4:], y[4:])
averaged = [(a + b) / 2 for a, b in zip(shard_0, shard_1)]
print(f"whole batch vs average of two shards of 4: largest difference {largest_difference(whole, averaged):.1e}")

# shards of unequal size: the plain average is wrong, an average weighted by size is right
small, large = gradients(model, x[:2], y[:2]), gradients(model, x[2:], y[2:])
plain = [(a + b) / 2 for a, b in zip(small, large)]
weighted = [(2 * a + 6 * b) / 8 for a, b in zip(small, large)]
print(f"shards of 2 and 6, plain average:    largest difference {largest_difference(whole, plain):.1e}")
print(f"shards of 2 and 6, weighted average: largest difference {largest_difference(whole, weighted):.1e}")
""", on_pytorch="other random numbers, so other differences (the same sizes: rounding, or not)")

ch.markdown(r"""
In float64 the equal shards agree with the whole batch to rounding (differences around 1e-17), the unequal
shards' plain average does not: it gives the 2 samples of the small shard as much weight as the 6
of the large one. That is why distributed training gives every rank a shard of **the same size**
(section 6 shows how `DistributedSampler` makes sure of it), and then a plain average is right.

## 2 · Processes, ranks, world size

The copies are separate **processes**: separate Python interpreters with separate memory, which can
run on separate cores or machines. They are numbered 0 to N−1; the number is the process's **rank**
and N is the **world size**. Every rank runs the same code and learns which one it is from
`dist.get_rank()`; it joins the others with `dist.init_process_group(backend="mpi")`, and leaves
with `dist.destroy_process_group()`.

`dist.run_ranks(function, nprocs=N)` starts N ranks from a notebook cell, runs `function` on each,
prints what each printed (marked `[rank r]`) when they are done, and returns what each returned.
It sends the function to the ranks as source code, with the notebook's imports (`torch`, `dist`,
`nn`, ...) and the notebook functions it calls; anything else it needs goes in `args=`.
""")

ch.code(r"""
def hello(notebook_pid):
    dist.init_process_group(backend="mpi")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    print(f"I am rank {rank} of a world of {world_size}; a process of my own: {os.getpid() != notebook_pid}")
    dist.destroy_process_group()
    return rank * 10


results = dist.run_ranks(hello, nprocs=3, args=(os.getpid(),))
print("what the ranks returned:", [r.value for r in results])
""", learntorch_only=RANKS)

ch.markdown(r"""
Outside a notebook the same thing is a script started by a **launcher**, which starts N Python
processes on it and tells each its rank. PyTorch's launcher is `torchrun`; learntorch's takes the
same flags and starts the MPI job with MPI's own launcher (`mpiexec`):

```
torchrun --nproc-per-node 2 train.py                              # PyTorch (backend="gloo")
python -m learntorch.distributed.run --nproc-per-node 2 train.py  # learntorch (backend="mpi")
```

Here is a script, written to a temporary folder and started by the launcher, as you would from a
terminal:
""")

ch.code(r'''
script = """
import learntorch as torch
import learntorch.distributed as dist

dist.init_process_group(backend="mpi")
t = torch.tensor([float(dist.get_rank() + 1)])
dist.all_reduce(t)                                   # every rank ends with 1 + 2 = 3
print(f"rank {dist.get_rank()} of {dist.get_world_size()}: {t.item()}", flush=True)
dist.destroy_process_group()
"""
with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, "train.py")
    with open(path, "w") as f:
        f.write(script)
    done = subprocess.run([sys.executable, "-m", "learntorch.distributed.run", "--nproc-per-node", "2", path],
                          capture_output=True, text=True, timeout=120)
print("exit status", done.returncode)
print("".join(sorted(done.stdout.splitlines(keepends=True))))   # the ranks print in any order
''', learntorch_only="learntorch's launcher (PyTorch's is torchrun, with the same flags)")

ch.markdown(r"""
## 3 · Collectives: every rank calls, all take part

The ranks share no memory: they exchange tensors by messages. A **collective** is an operation that
every rank calls at the same point of its program, each with its own tensor, and that combines them.
Each works **in place** on the tensors it is given, as in PyTorch:

| collective | before | after |
| --- | --- | --- |
| `all_reduce(t, op)` | rank r holds `t_r` | every rank holds `t_0 + t_1 + ...` (or the max, the mean, ... with `op=dist.ReduceOp.MAX`, `AVG`, ...) |
| `broadcast(t, src)` | rank `src` holds `t` | every rank holds rank `src`'s `t` |
| `all_gather(list, t)` | rank r holds `t_r` | every rank's `list` holds `[t_0, t_1, ...]` |
| `reduce_scatter(out, list, op)` | rank r holds a list of N tensors | rank r's `out` is the sum over ranks of their r-th tensor |
| `send(t, dst)` / `recv(t, src)` | one rank sends | the other receives: two ranks, not all |

Three ranks, each starting with its own numbers:
""")

ch.code(r"""
def collectives():
    dist.init_process_group(backend="mpi")
    rank, world_size = dist.get_rank(), dist.get_world_size()

    t = torch.tensor([1.0, 2.0]) * 10 ** rank                 # rank 0: [1, 2], rank 1: [10, 20], ...
    dist.all_reduce(t)                                        # sum over the ranks, on every rank
    print("all_reduce (sum):    ", t.tolist())

    t = torch.tensor([float(rank), float(-rank)])
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    print("all_reduce (max):    ", t.tolist())

    t = torch.tensor([float(rank)] * 2)
    dist.broadcast(t, src=2)                                  # rank 2's tensor, everywhere
    print("broadcast from 2:    ", t.tolist())

    gathered = [torch.zeros(1) for _ in range(world_size)]
    dist.all_gather(gathered, torch.tensor([rank * 1.5]))
    print("all_gather:          ", [g.item() for g in gathered])

    out = torch.zeros(1)
    dist.reduce_scatter(out, [torch.tensor([float(10 * rank + k)]) for k in range(world_size)])
    print("reduce_scatter:      ", out.tolist(), "= the sum of every rank's entry", rank)

    if rank == 0:
        dist.send(torch.tensor([42.0]), dst=1)                # only ranks 0 and 1 take part
    elif rank == 1:
        received = torch.zeros(1)
        dist.recv(received, src=0)
        print("recv from rank 0:    ", received.tolist())

    work = dist.all_reduce(torch.ones(3), async_op=True)      # starts, returns at once
    work.wait()                                               # ... until it is done
    dist.destroy_process_group()


results = dist.run_ranks(collectives, nprocs=3)
""", learntorch_only=RANKS)

ch.markdown(r"""
Every rank must call the same collectives in the same order with tensors of the same shape and
dtype. When one does not, the others would wait for it forever, or sum numbers that do not belong
together. learntorch's ranks first tell each other what they are about to do, so a mismatch is an
error that names what each rank passed, and a rank that fails makes the whole job fail — the other
ranks are stopped, no process is left behind, and `run_ranks` raises `ChildFailedError` (a
`RuntimeError`) with the rank and its error:
""")

ch.code(r"""
def mismatched():
    dist.init_process_group(backend="mpi")
    t = torch.ones(2 + dist.get_rank())                       # rank 0: 2 elements, rank 1: 3
    dist.all_reduce(t)


try:
    dist.run_ranks(mismatched, nprocs=2, show_output=False)
except dist.ChildFailedError as error:
    lines = str(error).splitlines()
    print(lines[0])                                                 # which rank failed ...
    print(next(line for line in lines if line.startswith("RuntimeError")))   # ... and its error
""", learntorch_only=RANKS)

ch.markdown(r"""
## 4 · The ring all-reduce, step by step

How is an all-reduce done? The obvious way — every rank sends its tensor to rank 0, which adds
them up and sends the sum back — makes rank 0 receive N−1 tensors and send N−1: its link is the
bottleneck, and it gets worse with every rank added. The **ring all-reduce** (the algorithm NCCL
uses for large tensors on GPUs) has no centre. The ranks stand in a ring, rank r sends to rank r+1
(the last to rank 0), and each cuts its tensor into N chunks:

- **reduce-scatter**, N−1 steps: at each step every rank sends one chunk to its right neighbour,
  which **adds** it into its own copy of that chunk. A chunk travels round the ring collecting one
  more rank's numbers at each step; after N−1 steps rank r holds chunk r+1 complete.
- **all-gather**, N−1 steps: the complete chunks travel on round the ring, each **replacing** what
  the receiver held, until every rank holds every complete chunk.

In the widget, rank r starts with 10^r in every element, so the digits of a number say which ranks'
numbers it holds (1011 = ranks 0, 1 and 3). Step through it: the red outlines are the chunks sent at
that step, the colour says how many ranks' numbers a cell holds (green: all of them), and the last
line counts the bytes rank 0 has sent.
""")

ch.code(r"""
from widgets import RingAllReduce

ring_widget = RingAllReduce(world_size=4, numel=8)
ring_widget
""", learntorch_only=WIDGET)

ch.markdown(r"""
The widget's states are not a drawing of the idea: they are what `dist.ring.replay` computes, which
runs the schedule (`dist.ring.schedule`) the engine's own `dist.ring.all_reduce` runs between real
ranks. Its text form says the same:
""")

ch.code(r"""
ring_widget.go_to(3)                # after the 3 reduce-scatter steps
print(ring_widget.describe())
ring_widget.reset()
""", learntorch_only=WIDGET)

ch.markdown(r"""
**The cost.** At every one of the 2(N−1) steps each rank sends one chunk, 1/N of the tensor. In
all, each rank sends 2(N−1)/N of the tensor — less than twice the tensor however many ranks there
are, and every link of the ring busy at every step. Counted from the schedule for a tensor of a
million elements:
""")

ch.code(r"""
numel = 1_000_000
print(" N  steps  elements rank 0 sends  / tensor  2(N-1)/N   rank 0 of 'all to rank 0' receives + sends")
for n in (2, 3, 4, 8, 16, 64):
    steps = dist.ring.schedule(n, numel)
    sent = dist.ring.elements_sent(steps, rank=0)
    print(f"{n:2d}  {len(steps):5d}  {sent:21,d}  {sent / numel:8.3f}  {2 * (n - 1) / n:8.3f}"
          f"   {2 * (n - 1) * numel:,d}")
""", learntorch_only=RING)

ch.markdown(r"""
The ring runs for real too: `dist.ring.all_reduce(t, trace=trace)` runs the schedule between the
ranks with point-to-point messages (MPI's `Sendrecv`) and appends each step's buffer to `trace`.
Four ranks record a trace here; the widget shows it, and checks it against its replay, bit for bit:
""")

ch.code(r"""
def starting_numbers(rank, numel):
    return torch.arange(float(numel)) + 100 * rank


def ring_with_trace(numel):
    dist.init_process_group(backend="mpi")
    t = starting_numbers(dist.get_rank(), numel)
    trace = []
    dist.ring.all_reduce(t, op=dist.ReduceOp.SUM, trace=trace)
    dist.destroy_process_group()
    return [(step.index, buffer) for step, buffer in trace]   # plain data back to the notebook


traces = [r.value for r in dist.run_ranks(ring_with_trace, nprocs=4, args=(8,))]
recorded = RingAllReduce(arrays=[starting_numbers(r, 8) for r in range(4)], trace=traces)
print("the real run's steps equal the replay's:", recorded.matches_replay())
recorded.run_to_end()
print("what every rank holds at the end:", recorded.values()[0].tolist())
recorded
""", learntorch_only=RING)

ch.markdown(r"""
`dist.all_reduce` itself hands the tensor to MPI's `MPI_Allreduce`, which picks its own algorithm
by size (a ring, a tree, recursive doubling): what you call in practice. The ring above is there to
be read.

## 5 · DistributedDataParallel: the digits on 2 ranks

`DistributedDataParallel` (DDP) turns a model into a data-parallel one:

- when it is made, it **broadcasts** rank 0's parameters, so every rank starts from the same model;
- during `loss.backward()` it **averages the gradients** over the ranks with all-reduces — in
  buckets of several parameters, started as soon as a bucket's gradients are ready, while backward
  is still computing the earlier layers' — so that when `backward()` returns every rank holds the
  whole batch's gradient;
- the optimizer steps on every rank with the same gradient, so the copies stay identical.

Each rank reads its own part of the data through a `DistributedSampler` (section 6). The function
below is a whole training script: run on 1 rank it is ordinary training on batches of 64; on 2
ranks each rank takes 32 of every 64.
""")

ch.code(r"""
from learntorch.datasets import Digits


def accuracy(model, dataset):
    images, labels = next(iter(DataLoader(dataset, batch_size=len(dataset))))
    with torch.no_grad():
        return (model(images).argmax(dim=1) == labels).float().mean().item()


def train_digits(epochs, batch_size):
    dist.init_process_group(backend="mpi")
    world_size = dist.get_world_size()
    train_set, test_set = Digits(train=True), Digits(train=False)
    torch.manual_seed(0)
    model = DDP(nn.Sequential(nn.Flatten(), nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10)))
    sampler = DistributedSampler(train_set, shuffle=True, seed=0)        # this rank's share
    loader = DataLoader(train_set, batch_size=batch_size // world_size, sampler=sampler)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    start = time.perf_counter()
    for epoch in range(epochs):
        sampler.set_epoch(epoch)                                         # a new shuffle each epoch
        for images, labels in loader:
            optimizer.zero_grad()
            F.cross_entropy(model(images), labels).backward()            # gradients averaged here
            optimizer.step()
    seconds = time.perf_counter() - start
    test_accuracy = accuracy(model.module, test_set)
    weights = {name: p.detach().numpy().copy() for name, p in model.module.named_parameters()}
    dist.destroy_process_group()
    return seconds, test_accuracy, weights, len(loader)


one = dist.run_ranks(train_digits, nprocs=1, args=(5, 64), show_output=False)
two = dist.run_ranks(train_digits, nprocs=2, args=(5, 64), show_output=False)
for name, results in (("1 rank ", one), ("2 ranks", two)):
    for r in results:
        seconds, test_accuracy, _, batches = r.value
        print(f"{name}, rank {r.rank}: {batches} batches per epoch, test accuracy {test_accuracy:.4f}, "
              f"training took {seconds:.2f} s")


def weight_difference(a, b):
    return max(np.abs(a[name] - b[name]).max() for name in a)


print(f"largest weight difference, 2 ranks vs 1 rank: {weight_difference(two[0].value[2], one[0].value[2]):.1e}")
print(f"largest weight difference, rank 0 vs rank 1:  {weight_difference(two[0].value[2], two[1].value[2]):.1e}")
""", learntorch_only=DIGITS)

ch.markdown(r"""
The two runs reach the same test accuracy, and the same weights to float32 rounding: on 2 ranks the
union of the two ranks' batches is, batch by batch, the 1-rank run's batch (the sampler deals the
shuffled indices out in turn: rank 0 the 1st, 3rd, 5th, ..., rank 1 the 2nd, 4th, ...), and DDP
averages the two halves' gradients into the whole batch's. The two ranks hold exactly the same
weights: they took the same steps with the same averaged gradients.

**And the time?** Read the printed seconds honestly. This machine has 2 cores. One process uses
both for its matrix products (Numba's threads); two ranks get one core each (the launcher shares the
cores out) and, besides computing, exchange all their gradients at every step. With a small MLP and
batches of 64 a step is short, so the exchange is a large part of it: expect the 2 ranks to take
about as long as one process, not half. Data parallelism pays when each rank brings cores (or a GPU)
of its own and a step has much more computing than communicating: large models, large batches.

## 6 · DistributedSampler and `set_epoch`

`DistributedSampler(dataset, num_replicas, rank)` gives each rank its share of the indices: every
`num_replicas`-th index, starting at `rank`. When the length does not divide evenly, it **pads**
by repeating indices from the start, so that every rank has the same number of samples — and the
same number of batches: a rank with one batch fewer would skip the last all-reduce and leave the
others waiting. With `drop_last=True` it cuts the tail instead.
""")

ch.code(r"""
data = list(range(10))                        # any dataset: the sampler only needs its length
for drop_last in (False, True):
    print(f"10 samples, 3 ranks, drop_last={drop_last}:")
    for rank in range(3):
        sampler = DistributedSampler(data, num_replicas=3, rank=rank, shuffle=False, drop_last=drop_last)
        print(f"  rank {rank}: {list(sampler)}")
""")

ch.markdown(r"""
With `shuffle=True` (the default) every rank draws the same permutation — from a generator seeded
with `seed + epoch`, so the ranks need no message to agree — and takes its share of it. The epoch
comes from `sampler.set_epoch(epoch)`: forget to call it and every epoch repeats the order of
epoch 0.
""")

ch.code(r"""
for epoch in range(2):
    shares = []
    for rank in range(2):
        sampler = DistributedSampler(data, num_replicas=2, rank=rank, shuffle=True, seed=0)
        sampler.set_epoch(epoch)
        shares.append(list(sampler))
    print(f"epoch {epoch}: rank 0 {shares[0]}, rank 1 {shares[1]}, "
          f"together {sorted(shares[0] + shares[1]) == data}")

forgetful = DistributedSampler(data, num_replicas=2, rank=0, shuffle=True, seed=0)
print("without set_epoch:", list(forgetful), list(forgetful))
""", on_pytorch="PyTorch's generator gives other permutations")

ch.markdown(r"""
## 7 · Several machines, and what PyTorch adds

**Several machines.** Nothing in the training code changes: ranks are ranks wherever they run. The
launcher changes: MPI reads a **hostfile** listing the machines (one `host:slots` a line) and starts
ranks on each over ssh — `python -m learntorch.distributed.run --nnodes 2 --hostfile hosts
--nproc-per-node 4 train.py` starts 8 ranks on 2 machines. The machines need the same Python
environment and must reach each other on the network. `torchrun` does the same with a rendezvous
server every machine contacts (`--nnodes 2 --rdzv-endpoint host:port`).

**What PyTorch adds.**

- **NCCL**, NVIDIA's collectives library (`backend="nccl"`): the same all-reduce, broadcast, ...
  between GPUs, over NVLink inside a machine and InfiniBand between machines, with rings and trees
  like the one above. `gloo` is its CPU counterpart; `mpi` exists when PyTorch is built with it.
- **FSDP** (Fully Sharded Data Parallel): DDP keeps a whole copy of the model, its gradients and the
  optimizer's state on every rank. FSDP keeps only 1/N of each on each rank, gathers a layer's
  parameters with `all_gather` just before it is used, and sums the gradients with `reduce_scatter`
  so each rank receives only its part — the two halves of the ring all-reduce, used separately. It
  trains models that do not fit on one GPU.
- Model and pipeline parallelism (one layer, or groups of layers, split across GPUs), elastic jobs
  that survive a machine leaving, and `torch.distributed.checkpoint` to save sharded models.

## Exercises

Each exercise has a cell for your code and a check cell below it. Replace the
`raise NotImplementedError(...)` lines with your code, run the cell, then run the check: it prints
`✓ passed`, or tells you what went wrong.

### Exercise 12.1 · Each rank's share of the indices

Write `split_for_rank(indices, num_replicas, rank, drop_last=False)`, the split at the heart of
`DistributedSampler`. `indices` is a list (the dataset's indices in the order of this epoch, shuffled
or not); return the list of the ones rank `rank` of `num_replicas` reads, exactly as
`DistributedSampler` does:

- with `drop_last=False`, every rank reads `math.ceil(n / num_replicas)` indices (`n = len(indices)`):
  the list is first **padded** to `num_replicas` times that by repeating indices **from its start**
  (if it needs more padding than it has indices — fewer samples than ranks — repeat the whole list as
  often as needed);
- with `drop_last=True`, every rank reads `n // num_replicas`: the list is **cut** to
  `num_replicas` times that;
- then rank `rank` takes every `num_replicas`-th index, starting at position `rank` (interleaved,
  not a block);
- `indices` itself is left unchanged, and `DistributedSampler` is not used.
""")

ch.solution("12.1", points=3, hint=(
    "work out the length each rank gets first; padding is indices + indices[:padding] "
    "(or more copies of indices when padding > n); then a slice with a step"), source=r"""
import math


def split_for_rank(indices, num_replicas, rank, drop_last=False):
    # the indices rank `rank` of `num_replicas` reads, as DistributedSampler splits them
    ### BEGIN SOLUTION
    n = len(indices)
    per_rank = n // num_replicas if drop_last else math.ceil(n / num_replicas)
    total = per_rank * num_replicas
    if drop_last:
        indices = indices[:total]
    else:
        padding = total - n
        indices = indices + (indices * math.ceil(padding / n))[:padding] if padding else list(indices)
    return indices[rank:total:num_replicas]
    ### END SOLUTION
""")

ch.check("12.1", r"""
from course.checks import exercise, check_equal, check_not_used


def sampler_share(n, num_replicas, rank, drop_last, seed=None, epoch=0):
    # (the order of the epoch, what DistributedSampler gives rank `rank`)
    shuffle = seed is not None
    if shuffle:
        order = torch.randperm(n, generator=torch.Generator().manual_seed(seed + epoch)).tolist()
    else:
        order = list(range(n))
    sampler = DistributedSampler(list(range(n)), num_replicas=num_replicas, rank=rank,
                                 shuffle=shuffle, seed=seed or 0, drop_last=drop_last)
    sampler.set_epoch(epoch)
    return order, list(sampler)


def check_split(n, num_replicas, drop_last, seed=None, epoch=0, why=""):
    for rank in range(num_replicas):
        order, expected = sampler_share(n, num_replicas, rank, drop_last, seed, epoch)
        given = list(order)
        got = split_for_rank(given, num_replicas, rank, drop_last=drop_last)
        call = (f"split_for_rank(<{n} indices{', shuffled' if seed is not None else ''}>, num_replicas={num_replicas}, "
                f"rank={rank}, drop_last={drop_last})")
        check_equal(list(got) if isinstance(got, (list, tuple)) else got, expected,
                    inputs={"indices": order}, name=f"{call}{why}")
        check_equal(given, order, name=f"the indices list after {call} (leave it unchanged: build a new list)")


with exercise("12.1"):
    check_not_used(split_for_rank, ["DistributedSampler"], rule="write the split yourself")
    got = split_for_rank(list(range(8)), 2, 0)
    check_equal(type(got).__name__, "list", name="the type split_for_rank(...) returns")
    check_split(8, 2, False, why=" (every 2nd index, starting at position rank: interleaved, not a block)")
    check_split(10, 3, False, why=" (pad to 12 by repeating indices from the start: every rank reads 4; "
                                  "every 3rd index from position rank, not a block)")
    check_split(10, 3, True, why=" (drop_last=True: cut to 9, every rank reads 3)")
    check_split(11, 4, False, seed=0, epoch=1, why=" (a shuffled order: pad with its first indices)")
    check_split(11, 4, True, seed=0, epoch=1)
    check_split(2, 5, False, why=" (fewer samples than ranks: repeat the whole list as often as needed)")
    check_split(3, 8, False, seed=5, why=" (fewer samples than ranks: repeat the whole list as often as needed)")
""")

ch.hidden_check("12.1", r"""
with exercise("12.1"):
    for n, num_replicas, seed, epoch in [(1438, 2, 0, 3), (1438, 3, 1, 0), (100, 8, None, 0), (7, 7, 2, 4),
                                         (1, 3, None, 0), (5, 2, 9, 9), (13, 6, 4, 1)]:
        for drop_last in (False, True):
            check_split(n, num_replicas, drop_last, seed=seed, epoch=epoch)
""")

ch.markdown(r"""
### Exercise 12.2 · Average the gradients yourself

DDP's core is one line per parameter. Write `average_gradients(model)`, which every rank calls after
`loss.backward()` and before `optimizer.step()`:

- afterwards, on **every** rank, each parameter's `.grad` holds the **mean** over the ranks of that
  parameter's gradients — whatever the world size (`dist.get_world_size()`);
- with the collectives of section 3 (`dist.all_reduce` is the one made for it), not with
  `DistributedDataParallel`;
- parameters whose `.grad` is `None` (frozen ones, `requires_grad=False`) are left alone.

The check starts 2 ranks, then 3: each builds the same model (one frozen parameter), takes its
shard of a batch, runs backward and calls your function. It compares every rank's gradients with the
gradient of the whole batch on one process, and with what DDP computes on the same ranks.
""")

ch.solution("12.2", points=3, hint=(
    "dist.all_reduce(p.grad) sums in place on every rank; then divide by dist.get_world_size() "
    "(or all_reduce with op=dist.ReduceOp.AVG)"), source=r"""
def average_gradients(model):
    # every rank: each parameter's .grad becomes the mean over the ranks of its gradient
    ### BEGIN SOLUTION
    world_size = dist.get_world_size()
    for p in model.parameters():
        if p.grad is not None:
            dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)
            p.grad /= world_size
    ### END SOLUTION
""")

ch.check("12.2", r"""
from course.checks import exercise, check_close, check_equal, check_not_used


def check_model(seed):
    # the model every rank builds, with a frozen parameter (no .grad)
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(64, 16), nn.Tanh(), nn.Linear(16, 10))
    model[0].bias.requires_grad_(False)
    return model


def check_batch(seed, batch):
    generator = torch.Generator().manual_seed(seed + 1)
    return torch.randn(batch, 64, generator=generator), torch.randint(0, 10, (batch,), generator=generator)


def gradients_on_ranks(average, seed, batch):
    # on every rank: backward on this rank's shard, then the learner's average, then DDP's
    dist.init_process_group(backend="mpi")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    x, y = check_batch(seed, batch)
    shard = slice(rank * batch // world_size, (rank + 1) * batch // world_size)
    model = check_model(seed)
    F.cross_entropy(model(x[shard]), y[shard]).backward()
    own = {name: p.grad.numpy().copy() for name, p in model.named_parameters() if p.grad is not None}
    average(model)
    averaged = {name: (None if p.grad is None else p.grad.numpy().copy()) for name, p in model.named_parameters()}
    ddp = DDP(check_model(seed))
    F.cross_entropy(ddp(x[shard]), y[shard]).backward()
    by_ddp = {name: p.grad.numpy().copy() for name, p in ddp.module.named_parameters() if p.grad is not None}
    dist.destroy_process_group()
    return own, averaged, by_ddp


def whole_batch_gradients(seed, batch):
    model = check_model(seed)
    x, y = check_batch(seed, batch)
    F.cross_entropy(model(x), y).backward()
    return {name: p.grad.numpy().copy() for name, p in model.named_parameters() if p.grad is not None}


def what_it_looks_like(got, whole, own, world_size, rank):
    # a name for the usual mistakes, from the numbers
    if got is None:
        return " (the .grad became None)"
    if np.allclose(got, own, atol=1e-7):
        return " (this is the rank's own shard gradient: it was not averaged)"
    if np.allclose(got, whole * world_size, atol=1e-6):
        return f" (this is the sum over the ranks: divide by the world size, {world_size})"
    if np.allclose(got, whole * world_size / 2, atol=1e-6):
        return f" (this is the sum divided by 2: divide by the world size, {world_size})"
    if rank > 0:
        return " (only rank 0 got the mean? every rank needs it: all_reduce, not reduce)"
    return ""


def check_average(world_size, seed, batch):
    try:
        results = dist.run_ranks(gradients_on_ranks, nprocs=world_size, args=(average_gradients, seed, batch),
                                 show_output=False)
        failure = "no rank raised"
    except dist.ChildFailedError as error:
        results, failure = None, str(error).strip().splitlines()[-1]
        if failure.startswith("NotImplementedError"):      # the stub, not written yet
            raise NotImplementedError(failure.split(": ", 1)[-1]) from None
    check_equal(failure, "no rank raised", name=f"average_gradients on {world_size} ranks: what a rank raised "
                "(a frozen parameter's .grad is None: leave it alone)")
    whole = whole_batch_gradients(seed, batch)
    for r in results:
        own, averaged, by_ddp = r.value
        check_equal(averaged["0.bias"], None, name=f"rank {r.rank}'s 0.bias.grad (frozen: leave it None)")
        for name, expected in whole.items():
            got = averaged[name]
            check_close(got, expected, atol=1e-6, rtol=1e-5, inputs={"ranks": world_size, "batch": batch},
                        name=f"rank {r.rank}'s {name}.grad after average_gradients on {world_size} ranks, vs the "
                             f"gradient of the whole batch on one process"
                             f"{what_it_looks_like(got, expected, own[name], world_size, r.rank)}")
            check_close(got, by_ddp[name], atol=1e-6, rtol=1e-5,
                        name=f"rank {r.rank}'s {name}.grad: your average vs DDP's ({world_size} ranks)")


with exercise("12.2"):
    check_not_used(average_gradients, ["DistributedDataParallel", "DDP"], rule="average with dist.all_reduce")
    check_average(world_size=2, seed=0, batch=24)
    check_average(world_size=3, seed=1, batch=24)
""", learntorch_only=RANKS)

ch.hidden_check("12.2", r"""
with exercise("12.2"):
    check_average(world_size=4, seed=2, batch=32)
""")

ch.markdown(r"""
## What's next

You have trained one model on several processes: shards of each batch, gradients averaged with an
all-reduce, every rank stepping the same way, and a sampler that deals out the data. The same script
runs on PyTorch with `torchrun` and `backend="gloo"` — or `"nccl"` on GPUs. Chapters 07 to 11 and 13
of the course's second part are still being written: this is the last chapter for now.
""")

if __name__ == "__main__":
    sys.exit(ch.main())
