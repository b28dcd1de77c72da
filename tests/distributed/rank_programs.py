"""Programs the multi-rank tests run on every rank (through ``run_ranks``).

They live in an importable module, so ``run_ranks`` sends them to the ranks by
reference.  Each returns plain data (numpy arrays, strings) that the test
compares, in the parent process, against its oracle: numpy for the
collectives, a one-process run for DDP.  Inputs are made by functions of the
rank alone (``rank_input``), so the parent can compute every rank's input too.
"""
import numpy as np

DTYPES = ["float32", "float64", "int64"]
SHAPE = (3, 5)


def rank_input(rank, dtype, shape=SHAPE, salt=0):
    """Rank ``rank``'s input: small integers-valued numbers (exact in every dtype, and
    products that stay small), different on each rank."""
    rng = np.random.default_rng(1000 * rank + salt)
    values = rng.integers(-3, 4, size=shape)
    values[values == 0] = 1 + rank  # no zeros: PRODUCT should not collapse everywhere
    return values.astype(dtype)


def collectives():
    """Every collective, every ReduceOp and dtype; returns {name: this rank's result}."""
    import learntorch as torch
    import learntorch.distributed as dist
    dist.init_process_group(backend="mpi")
    rank, size = dist.get_rank(), dist.get_world_size()
    out = {"rank": rank, "size": size, "backend": dist.get_backend()}
    ops = ["SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"]
    for dtype in DTYPES:
        for name in ops:
            op = getattr(dist.ReduceOp, name)
            if name == "AVG" and dtype == "int64":
                continue  # refused: see the error tests
            if name in ("BAND", "BOR", "BXOR") and dtype != "int64":
                continue
            t = torch.from_numpy(rank_input(rank, dtype))
            dist.all_reduce(t, op=op)
            out[f"all_reduce/{name}/{dtype}"] = t.numpy().copy()
            t = torch.from_numpy(rank_input(rank, dtype))
            work = dist.all_reduce(t, op=op, async_op=True)
            work.wait()
            out[f"all_reduce_async/{name}/{dtype}"] = t.numpy().copy()
            t = torch.from_numpy(rank_input(rank, dtype))
            dist.ring.all_reduce(t, op=op)
            out[f"ring/{name}/{dtype}"] = t.numpy().copy()
            t = torch.from_numpy(rank_input(rank, dtype))
            dist.reduce(t, dst=size - 1, op=op)
            out[f"reduce/{name}/{dtype}"] = t.numpy().copy()
            # reduce_scatter: rank r gets the reduction of everyone's input_list[r]
            inputs = [torch.from_numpy(rank_input(rank, dtype, salt=j)) for j in range(size)]
            output = torch.zeros(SHAPE, dtype=getattr(torch, dtype))
            dist.reduce_scatter(output, inputs, op=op)
            out[f"reduce_scatter/{name}/{dtype}"] = output.numpy().copy()
            big = torch.from_numpy(np.concatenate([rank_input(rank, dtype, salt=j)
                                                   for j in range(size)]))
            output = torch.zeros(SHAPE, dtype=getattr(torch, dtype))
            dist.reduce_scatter_tensor(output, big, op=op, async_op=True).wait()
            out[f"reduce_scatter_tensor/{name}/{dtype}"] = output.numpy().copy()
        t = torch.from_numpy(rank_input(rank, dtype))
        dist.broadcast(t, src=size - 1)
        out[f"broadcast/{dtype}"] = t.numpy().copy()
        gathered = [torch.zeros(SHAPE, dtype=getattr(torch, dtype)) for _ in range(size)]
        dist.all_gather(gathered, torch.from_numpy(rank_input(rank, dtype)))
        out[f"all_gather/{dtype}"] = np.stack([g.numpy() for g in gathered])
        whole = torch.zeros((size * SHAPE[0], SHAPE[1]), dtype=getattr(torch, dtype))
        dist.all_gather_into_tensor(whole, torch.from_numpy(rank_input(rank, dtype)))
        out[f"all_gather_into_tensor/{dtype}"] = whole.numpy().copy()
        gathered = [torch.zeros(SHAPE, dtype=getattr(torch, dtype)) for _ in range(size)]
        dist.gather(torch.from_numpy(rank_input(rank, dtype)),
                    gathered if rank == 0 else None, dst=0)
        if rank == 0:
            out[f"gather/{dtype}"] = np.stack([g.numpy() for g in gathered])
        received = torch.zeros(SHAPE, dtype=getattr(torch, dtype))
        pieces = [torch.from_numpy(rank_input(0, dtype, salt=j)) for j in range(size)]
        dist.scatter(received, pieces if rank == 0 else None, src=0)
        out[f"scatter/{dtype}"] = received.numpy().copy()
    # point to point round a ring: each rank sends its input right, receives from the left
    right, left = (rank + 1) % size, (rank - 1) % size
    mine = torch.from_numpy(rank_input(rank, "float64"))
    got = torch.zeros(SHAPE, dtype=torch.float64)
    if rank % 2 == 0:
        dist.send(mine, dst=right)
        sender = dist.recv(got, src=left)
    else:
        sender = dist.recv(got)  # from any rank
        dist.send(mine, dst=right)
    out["send_recv"] = (got.numpy().copy(), sender)
    got = torch.zeros(SHAPE, dtype=torch.float64)
    works = [dist.isend(mine, dst=right), dist.irecv(got, src=left)]
    for w in works:
        w.wait()
    out["isend_irecv"] = (got.numpy().copy(), works[1].is_completed())
    # an async collective on a temporary: the Work keeps its memory alive until wait()
    from learntorch.distributed._collectives import all_reduce_array
    work = all_reduce_array(dist.group.WORLD, np.full(200_000, float(rank + 1)),
                            dist.ReduceOp.SUM, async_op=True)
    import gc
    gc.collect()
    scratch = [np.zeros(200_000) for _ in range(4)]  # would take over freed memory
    work.wait()
    out["temporary_buffer_survives"] = float(sum(s.sum() for s in scratch))
    dist.barrier()
    dist.destroy_process_group()
    return out


def ring_trace(numel, op_name, dtype):
    """The ring all-reduce of rank_input, with this rank's buffer after every step."""
    import learntorch as torch
    import learntorch.distributed as dist
    dist.init_process_group("mpi")
    rank = dist.get_rank()
    t = torch.from_numpy(rank_input(rank, dtype, shape=(numel,)))
    trace = []
    dist.ring.all_reduce(t, op=getattr(dist.ReduceOp, op_name), trace=trace)
    dist.destroy_process_group()
    return [(step.index, buffer) for step, buffer in trace], t.numpy().copy()


# ---------------------------------------------------------------- DDP
BATCH = 60  # divides by 2 and 3: equal shards, so the mean of shard means is the batch mean
STEPS = 4


def digits_batch():
    """The first BATCH digits, flattened, float64 -- and their labels."""
    import learntorch as torch
    images, labels = torch.datasets.load_digits()
    return images[:BATCH].flatten(1).double(), labels[:BATCH]


def digits_mlp(seed=0):
    import learntorch as torch
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(),
                               torch.nn.Linear(32, 10)).double()


def make_optimizer(name, params):
    import learntorch as torch
    if name == "SGD":
        return torch.optim.SGD(params, lr=0.5, momentum=0.9)
    return torch.optim.Adam(params, lr=0.01)


def train(model, x, y, optimizer_name, steps=STEPS):
    """Plain training: the same loop on one process and on each rank (with its shard)."""
    import learntorch as torch
    optimizer = make_optimizer(optimizer_name, model.parameters())
    for _ in range(steps):
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    return model


def numpy_state(module):
    return {k: v.detach().numpy().copy() for k, v in module.state_dict().items()}


def ddp_proof():
    """Train the digits MLP with DDP, each rank on its shard of the batch, with SGD and Adam."""
    import learntorch.distributed as dist
    from learntorch.nn.parallel import DistributedDataParallel as DDP
    dist.init_process_group("mpi")
    rank, size = dist.get_rank(), dist.get_world_size()
    x, y = digits_batch()
    shard = slice(rank * BATCH // size, (rank + 1) * BATCH // size)
    out = {}
    for name in ("SGD", "Adam"):
        # each rank starts from other weights: DDP must broadcast rank 0's
        ddp = DDP(digits_mlp(seed=rank))
        train(ddp, x[shard], y[shard], name)
        out[name] = numpy_state(ddp.module)
    dist.destroy_process_group()
    return out


class TwoBranches:
    """A module whose branch ``b`` is used only when asked (built lazily: importable)."""

    @staticmethod
    def build():
        import learntorch as torch

        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                torch.manual_seed(0)
                self.a = torch.nn.Linear(3, 2).double()
                self.b = torch.nn.Linear(3, 2).double()

            def forward(self, x, use_b):
                out = self.a(x)
                return out + self.b(x) if use_b else out
        return Net()


def ddp_behaviour():
    """DDP's other promises, each returning what the test compares."""
    import learntorch as torch
    import learntorch.distributed as dist
    from learntorch.nn.parallel import DistributedDataParallel as DDP
    dist.init_process_group("mpi")
    rank, size = dist.get_rank(), dist.get_world_size()
    x, y = digits_batch()
    loss_fn = torch.nn.functional.cross_entropy
    out = {}

    # buckets of one parameter each: launched in reverse order, during backward
    ddp = DDP(digits_mlp(), bucket_cap_mb=1e-6)
    loss_fn(ddp(x[:10]), y[:10]).backward()
    out["events"] = list(ddp.reducer.events)
    out["buckets"] = [b.names for b in ddp.reducer.buckets]
    out["state_dict_keys"] = list(ddp.state_dict().keys())

    # no_sync: two micro-batches per rank, one inside no_sync, averaged once at the end
    ddp = DDP(digits_mlp())
    a = slice(10 * rank, 10 * rank + 5)
    b = slice(10 * rank + 5, 10 * rank + 10)
    with ddp.no_sync():
        loss_fn(ddp(x[a]), y[a]).backward()
    out["no_sync_local_grad"] = ddp.module[0].weight.grad.numpy().copy()
    loss_fn(ddp(x[b]), y[b]).backward()
    out["no_sync_then_sync_grad"] = ddp.module[0].weight.grad.numpy().copy()

    # find_unused_parameters: b is used by the last rank only, then by nobody
    net = DDP(TwoBranches.build(), find_unused_parameters=True)
    inputs = torch.ones(4, 3, dtype=torch.float64) * (rank + 1)
    net(inputs, use_b=(rank == size - 1)).sum().backward()
    out["partly_used_grad"] = net.module.b.weight.grad.numpy().copy()
    net.zero_grad()
    net(inputs, use_b=False).sum().backward()
    out["unused_grad_is_none"] = net.module.b.weight.grad is None
    out["used_grad"] = net.module.a.weight.grad.numpy().copy()

    # without find_unused_parameters, an unused parameter is reported at the next forward
    net = DDP(TwoBranches.build())
    net(inputs, use_b=False).sum().backward()
    try:
        net(inputs, use_b=False)
    except RuntimeError as error:
        out["unfinished_error"] = str(error)

    # buffers: rank 0's are copied at construction and at each forward
    bn = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.BatchNorm1d(3)).double()
    with torch.no_grad():
        bn[1].running_mean.fill_(float(rank + 1))
    ddp = DDP(bn)
    out["buffer_after_init"] = bn[1].running_mean.numpy().copy()
    with torch.no_grad():
        bn[1].running_mean.fill_(float(10 + rank))
    bn.eval()
    ddp(inputs)
    out["buffer_after_forward"] = bn[1].running_mean.numpy().copy()

    # misuse
    try:
        DDP(digits_mlp(), device_ids=[0])
    except ValueError as error:
        out["device_ids_error"] = str(error)
    different = digits_mlp() if rank == 0 else torch.nn.Linear(64, 10).double()
    try:
        DDP(different)
    except RuntimeError as error:
        out["different_model_error"] = str(error)
    dist.destroy_process_group()
    return out


# ---------------------------------------------------------------- misuse and failures
def caught(fn, *args, **kwargs):
    """(exception type name, message) of what ``fn`` raised, or None if it did not raise."""
    try:
        fn(*args, **kwargs)
    except Exception as error:  # the tests check the type
        return type(error).__name__, str(error)
    return None


def misuse():
    import learntorch as torch
    import learntorch.distributed as dist
    import os
    out = {"wrong_world_size": caught(dist.init_process_group, "mpi", world_size=5)}
    launcher_says, os.environ["WORLD_SIZE"] = os.environ["WORLD_SIZE"], "7"  # as if torchrun's
    out["wrong_env_world_size"] = caught(dist.init_process_group, "mpi")
    os.environ["WORLD_SIZE"] = launcher_says
    dist.init_process_group("mpi")
    rank = dist.get_rank()
    out["twice"] = caught(dist.init_process_group, "mpi")
    out["shape"] = caught(dist.all_reduce, torch.zeros(3 + rank))
    out["dtype"] = caught(dist.all_reduce, torch.zeros(3, dtype=torch.float64 if rank
                                                       else torch.float32))
    if rank == 0:
        out["different_collectives"] = caught(dist.all_reduce, torch.zeros(3))
    else:
        out["different_collectives"] = caught(dist.broadcast, torch.zeros(3), src=0)
    out["non_contiguous"] = caught(dist.all_reduce, torch.zeros(3, 4).t())
    out["avg_of_ints"] = caught(dist.all_reduce, torch.zeros(3, dtype=torch.int64),
                                op=dist.ReduceOp.AVG)
    out["not_a_tensor"] = caught(dist.all_reduce, [1.0, 2.0])
    out["bad_src"] = caught(dist.broadcast, torch.zeros(3), src=7)
    out["send_to_self"] = caught(dist.send, torch.zeros(3), dst=rank)
    out["gather_list_length"] = caught(dist.all_gather, [torch.zeros(3)], torch.zeros(3))
    if rank == 0:
        dist.send(torch.zeros(3, dtype=torch.float64), dst=1)
    else:
        out["recv_too_small"] = caught(dist.recv, torch.zeros(2, dtype=torch.float64), src=0)
    dist.barrier()  # still in step after all that: the errors left nothing half-done
    dist.destroy_process_group()
    out["after_destroy"] = caught(dist.get_rank)
    return out


def raise_on_rank_1():
    """Rank 1 raises while rank 0 waits for it in a collective."""
    import learntorch as torch
    import learntorch.distributed as dist
    dist.init_process_group("mpi")
    if dist.get_rank() == 1:
        print("rank 1 is about to fail")
        return 1 / 0
    dist.all_reduce(torch.ones(3))  # never matched: the job must still end at once
    return "unreachable"


def wait_forever():
    """Rank 0 waits for a message nobody sends: only the timeout ends it."""
    import learntorch as torch
    import learntorch.distributed as dist
    dist.init_process_group("mpi")
    if dist.get_rank() == 0:
        dist.recv(torch.zeros(1), src=1)
    return "rank 1 returned"


def report(greeting):
    """Prints to stdout and stderr, returns its rank's view of the job."""
    import os
    import sys
    import learntorch.distributed as dist
    dist.init_process_group("mpi")
    print(f"{greeting} from rank {dist.get_rank()}")
    print(f"a warning from rank {dist.get_rank()}", file=sys.stderr)
    env = {k: os.environ.get(k) for k in ("RANK", "LOCAL_RANK", "WORLD_SIZE",
                                          "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
                                          "OMP_NUM_THREADS")}
    return dist.get_rank(), dist.get_world_size(), env
