"""``DistributedDataParallel``: one model per rank, kept identical by averaging gradients.

Data parallelism in three moves:

1. at construction, rank 0's parameters and buffers are **broadcast** to every
   rank, so all replicas start equal (and the ranks are checked to hold the same
   model: same names, shapes and dtypes);
2. each rank runs forward and backward on its own shard of the batch; during
   backward the ``Reducer`` (``reducer.py``) **all-reduces the gradients in
   buckets** (``_buckets.py``) as they become ready, and writes the average back
   into ``.grad`` before ``backward()`` returns;
3. every rank's optimizer then takes the same step from the same parameters
   with the same averaged gradient, so the replicas stay equal -- and since the
   mean of the shards' mean gradients is the whole batch's mean gradient, N ranks
   on shards of a batch train exactly like one process on the whole batch.

``no_sync()`` skips step 2 for the forward/backward passes inside it (the
gradients accumulate locally) and the next backward outside it averages the
accumulated sum: gradient accumulation with one all-reduce instead of many.

The wrapped model is ``ddp.module``; ``ddp.state_dict()`` has its keys with the
prefix ``module.``, as torch's (save ``ddp.module.state_dict()`` to load the
weights into a plain model).
"""
from contextlib import contextmanager

from ... import is_grad_enabled, Tensor
from ...distributed._checks import array_of
from ...distributed._collectives import broadcast_array
from ...distributed._process_group import resolve
from ..modules import Module
from . import _buckets
from .reducer import Reducer


class DistributedDataParallel(Module):
    """Wrap ``module`` so that training it on every rank averages its gradients over the ranks.

    Parameters not listed here are not offered.  ``bucket_cap_mb`` (default 25)
    is the size of a gradient bucket; ``find_unused_parameters=True`` walks the
    autograd graph of each output to find the parameters forward did not use, so
    that backward does not wait for their gradients; ``broadcast_buffers``
    copies rank 0's buffers (BatchNorm's running statistics) to every rank at
    each forward.  ``device_ids`` and ``output_device`` are for GPU modules in
    torch and must be left None for CPU modules (the only kind here), as in torch.
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 init_sync=True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False):
        super().__init__()
        pg = resolve(process_group)
        if device_ids or output_device is not None:
            raise ValueError(
                "DistributedDataParallel device_ids and output_device arguments only work with "
                "single-device/multiple-device GPU modules or CPU modules, but got device_ids "
                f"{device_ids}, output_device {output_device}, and module parameters "
                f"{{{', '.join(sorted({repr(p.device) for p in module.parameters()}))}}}.  "
                "For a CPU module leave both None")
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        if not named:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have "
                               "any parameter that requires a gradient.")
        for name, p in named:
            if p.device.type != "cpu":
                raise RuntimeError(f"DistributedDataParallel: parameter {name} is on {p.device}; "
                                   "learntorch's mpi backend trains CPU modules")
        self.module = module
        self.dim = dim
        self.device_ids = device_ids
        self.output_device = output_device
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.process_group = pg
        _verify_same_model(pg, module)
        if init_sync:
            self._sync_module_states()
        cap_mb = _buckets.DEFAULT_BUCKET_CAP_MB if bucket_cap_mb is None else bucket_cap_mb
        self.bucket_bytes_cap = int(cap_mb * 1024 * 1024)
        indices = _buckets.assign([p for _, p in named], self.bucket_bytes_cap)
        self.reducer = Reducer(named, indices, pg, find_unused_parameters)

    def _sync_module_states(self):
        """Rank 0's parameters and buffers, copied to every rank."""
        for tensor in list(self.module.parameters()) + list(self.module.buffers()):
            broadcast_array(self.process_group, array_of(tensor, "DistributedDataParallel"),
                            src=0)

    def _sync_buffers(self):
        for buffer in self.module.buffers():
            broadcast_array(self.process_group, array_of(buffer, "DistributedDataParallel"),
                            src=0)

    def forward(self, *inputs, **kwargs):
        sync = is_grad_enabled() and self.require_backward_grad_sync
        if sync:
            self.reducer.check_previous_finished()
            if self.broadcast_buffers:
                self._sync_buffers()
        output = self.module(*inputs, **kwargs)
        if sync:
            unused = _unused_parameters(self.module, output) if self.find_unused_parameters else ()
            self.reducer.prepare_for_backward(unused)
        return output

    @contextmanager
    def no_sync(self):
        """Inside, forward and backward accumulate gradients locally, without communication;
        the first backward after it averages the accumulated gradients.  Put the forward
        inside too: whether to average is decided at forward time, as in torch."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous


def _verify_same_model(pg, module):
    """Every rank wraps the same architecture: same parameter (and buffer) names, shapes and
    dtypes -- after this check, DDP's broadcasts need no per-call check."""
    mine = [(n, tuple(p.shape), str(p.dtype)) for n, p in
            list(module.named_parameters()) + list(module.named_buffers())]
    everyone = pg._comm.allgather(mine)
    for rank, theirs in enumerate(everyone):
        if len(theirs) != len(everyone[0]):
            raise RuntimeError(
                f"DDP expects same model across all ranks, but Rank {rank} has {len(theirs)} "
                f"parameters and buffers, while rank 0 has inconsistent {len(everyone[0])}.  "
                "Build the same model on every rank")
        for (n0, s0, d0), (n, s, d) in zip(everyone[0], theirs):
            if (n0, s0, d0) != (n, s, d):
                raise RuntimeError(
                    f"DDP expects same model across all ranks, but rank {rank} has "
                    f"{n} of shape {s} ({d}) where rank 0 has {n0} of shape {s0} ({d0}).  Build "
                    "the same model on every rank")


def _tensors_in(output):
    if isinstance(output, Tensor):
        yield output
    elif isinstance(output, (list, tuple)):
        for item in output:
            yield from _tensors_in(item)
    elif isinstance(output, dict):
        for item in output.values():
            yield from _tensors_in(item)


def _unused_parameters(module, output):
    """The parameters no output depends on: not reached walking back from the outputs'
    ``grad_fn`` through ``next_functions`` to the leaves' AccumulateGrad nodes."""
    reached, seen = set(), set()
    stack = [t.grad_fn for t in _tensors_in(output) if t.grad_fn is not None]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if variable is not None:
            reached.add(id(variable))
        stack.extend(next_node for next_node, _ in node.next_functions)
    return [p for p in module.parameters() if p.requires_grad and id(p) not in reached]
